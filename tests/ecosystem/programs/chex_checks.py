"""chex on jax: asserts, `chex.dataclass`, and a `chex.TestCase` whose test runs in the
variants with and without jit (and with and without device placement); prints JSON
{case: outcome}.

Runs unchanged on real JAX (`make_jax_reference_ecosystem.py` records its output) and on
tracejit (`python -m tracejit.as_jax chex_checks.py`)."""

import json
import sys
import unittest

import chex
import jax
import jax.numpy as jnp
import numpy as np


def raises(fn):
    """'ok' if fn passes, else the exception's class name."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001  (the class is the outcome compared)
        return type(err).__name__
    return "ok"


def asserts():
    x = jnp.ones((2, 3))
    tree = {"a": x, "b": [jnp.arange(3), 1.0]}
    close = {"a": x + 1e-7, "b": [jnp.arange(3), 1.0]}
    far = {"a": x + 1e-2, "b": [jnp.arange(3), 1.0]}
    arrays = {"a": x, "b": [jnp.ones((2, 1))]}
    return {
        "assert_shape": raises(lambda: chex.assert_shape(x, (2, 3))),
        "assert_shape_bad": raises(lambda: chex.assert_shape(x, (3, 2))),
        "assert_shape_wildcard": raises(lambda: chex.assert_shape([x, x], (2, None))),
        "assert_rank": raises(lambda: chex.assert_rank(x, 2)),
        "assert_type": raises(lambda: chex.assert_type(x, float)),
        "assert_type_bad": raises(lambda: chex.assert_type(x, int)),
        "assert_equal_shape": raises(lambda: chex.assert_equal_shape([x, x * 2])),
        "assert_trees_all_close": raises(lambda: chex.assert_trees_all_close(tree, close)),
        "assert_trees_all_close_bad": raises(lambda: chex.assert_trees_all_close(tree, far)),
        "assert_trees_all_equal_shapes": raises(
            lambda: chex.assert_trees_all_equal_shapes(arrays, arrays)
        ),
        "assert_trees_all_equal_shapes_bad": raises(
            lambda: chex.assert_trees_all_equal_shapes(arrays, {"a": x, "b": [jnp.ones(2)]})
        ),
        "assert_tree_all_finite": raises(lambda: chex.assert_tree_all_finite(tree)),
        "assert_tree_all_finite_bad": raises(
            lambda: chex.assert_tree_all_finite({"a": jnp.array([1.0, jnp.nan])})
        ),
        "assert_max_traces": _max_traces(),
        "assert_scalar_positive": raises(lambda: chex.assert_scalar_positive(1.0)),
        "assert_tree_shape_prefix": raises(lambda: chex.assert_tree_shape_prefix(arrays, (2,))),
        "assert_numerical_grads": raises(
            lambda: chex.assert_numerical_grads(lambda v: jnp.sum(v**3), (x,), order=1)
        ),
    }


def _max_traces():
    @jax.jit
    @chex.assert_max_traces(n=1)
    def f(x):
        return x + 1

    f(jnp.ones(2))
    f(jnp.ones(2))
    return raises(lambda: f(jnp.ones(3)))


@chex.dataclass
class Params:
    w: jnp.ndarray
    b: jnp.ndarray


def dataclass():
    p = Params(w=jnp.ones(2), b=jnp.zeros(()))
    leaves = jax.tree.leaves(jax.tree.map(lambda v: v * 2, p))
    doubled = jax.jit(lambda q: q.replace(w=q.w * 2))(p)
    return {
        "leaves": [np.asarray(v).tolist() for v in leaves],
        "replace_under_jit": np.asarray(doubled.w).tolist(),
        "is_pytree_node": len(jax.tree.leaves(p)),
        "mappable": sorted(p.keys()),
    }


class VariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True, with_device=True, without_device=True)
    def test_square(self):
        @self.variant
        def square(x):
            return x * x

        chex.assert_trees_all_close(square(jnp.arange(3.0)), jnp.array([0.0, 1.0, 4.0]))


def variants():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(VariantsTest)
    result = unittest.TestResult()
    suite.run(result)
    return {
        "run": result.testsRun,
        "failures": [str(test) for test, _ in result.failures + result.errors],
    }


def main(names):
    results = {}
    for case in (asserts, dataclass, variants):
        if names and case.__name__ not in names:
            continue
        try:
            results[case.__name__] = case()
        except Exception as err:  # noqa: BLE001  (recorded: the comparison says which fail where)
            results[case.__name__] = {"error": f"{type(err).__name__}: {err}"[:300]}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
