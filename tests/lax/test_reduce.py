"""`lax.reduce` with any computation (`lax/reduce.py`): known monoids with their identity become
the reduction primitives as in JAX; other computations are a `reduce` holding their jaxpr, over
pytrees of operands, eagerly (in XLA's order, so non-associative computations agree with jit),
staged, compiled, differentiated in both modes and batched."""

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.test_util import check_grads

X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize(
    "computation, init, primitive, dtype",
    [
        (lax.add, 0.0, "reduce_sum", np.float32),
        (lax.add, 0, "reduce_sum", np.int32),
        (lax.mul, 1.0, "reduce_prod", np.float32),
        (lax.max, -np.inf, "reduce_max", np.float32),
        (lax.min, np.iinfo(np.int32).max, "reduce_min", np.int32),
        (lax.bitwise_or, False, "reduce_or", np.bool_),
        (lax.bitwise_and, True, "reduce_and", np.bool_),
        (lax.bitwise_xor, 0, "reduce_xor", np.int32),
        (lax.bitwise_and, np.uint8(255), "reduce_and", np.uint8),
    ],
)
def test_known_monoids_with_their_identity_become_reduction_primitives(
    computation, init, primitive, dtype
):
    x = np.ones((2, 3), dtype)
    text = jaxpr_text(lambda v: lax.reduce(v, init, computation, (0,)), x)
    params = "axes=(0,) out_sharding=None" if primitive == "reduce_sum" else "axes=(0,)"
    assert f"= {primitive}[{params}] a" in text


def test_other_computations_stage_a_reduce_holding_their_jaxpr():
    text = jaxpr_text(lambda x: lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,)), X)
    assert "= reduce[\n      computation=<function" in text
    assert "dimensions=(0,)\n      jaxpr={ lambda ; c:f32[] d:f32[]. let" in text
    assert "] a 0.0:f32[]" in text
    # a known monoid with another initial value is not its primitive either
    assert "= reduce[" in jaxpr_text(lambda x: lax.reduce(x, 1.0, lax.add, (0,)), X)


def test_non_associative_computation_folds_in_xla_order():
    """JAX on CPU gives acc = acc + 2 * x, element by element from 0: 2 * 1 + 2 * 4 = 10."""
    fun = lambda x: lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,))
    check_eager_jit_numpy(fun, [X], np.array([10.0, 14.0, 18.0], np.float32))


def test_pytrees_of_operands():
    def fun(x):
        return lax.reduce(
            {"s": x, "p": x}, {"s": 0.0, "p": 1.0}, lambda a, b: {"s": a["s"] + b["s"],
                                                              "p": a["p"] * b["p"]}, (1,)
        )  # fmt: skip

    check_eager_jit_numpy(fun, [X], {"s": X.sum(1), "p": X.prod(1)})


def test_several_dimensions_none_and_empty():
    fun = lambda dims: lambda x: lax.reduce(x, 0.0, lambda a, b: a + b * b, dims)
    check_eager_jit_numpy(fun((0, 1)), [X], np.float32((X * X).sum()))
    check_eager_jit_numpy(fun(()), [X], X)  # XLA's (and JAX's): the operand as it is
    check_eager_jit_numpy(fun((0,)), [np.ones((0, 3), np.float32)], np.zeros(3, np.float32))


def test_derivatives_forward_and_reverse():
    product = lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (1,))
    check_grads(product, [X.astype(np.float64)], 2, modes=("fwd", "rev"))
    maximum = lambda x: lax.reduce(x, -np.inf, jnp.maximum, (0, 1))
    assert_close(tracejit.grad(maximum)(X), (X == X.max()).astype(np.float32))
    pair = lambda x: lax.reduce((x, x), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,))
    check_grads(pair, [X.astype(np.float64)], 1, modes=("fwd", "rev"))


def test_vmap_matches_a_loop():
    batch = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 10
    fun = lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (1,))
    for axis in (0, 1, 2):
        check_vmap(fun, [batch], [axis], tol=1e-6, jit=True)


def test_weak_type_follows_the_operand():
    assert lax.reduce(2.0, 0.0, lambda a, b: a + b, ()).weak_type
    assert not lax.reduce(X, 0.0, lambda a, b: a + b, (0,)).weak_type


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: lax.reduce(X, (0.0, 1.0), lax.add, (0,)), ValueError, "same tree structure"),
        (lambda: lax.reduce(X, 0, lambda a, b: a + b, (0,)), TypeError, "one dtype"),
        (lambda: lax.reduce(X, 0.0, lambda a, b: (a, b), (0,)), TypeError, "structure"),
        (lambda: lax.reduce(X, 0.0, lambda a, b: a + b, (2,)), ValueError, "out of bounds"),
        (lambda: lax.reduce(X, 0.0, lambda a, b: a + b, (-1,)), ValueError, "out of bounds"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_computation_closing_over_a_tracer_is_not_supported():
    with pytest.raises(NotImplementedError, match="close over Tracers"):
        tracejit.jit(lambda x, c: lax.reduce(x, 0.0, lambda a, b: a + b * c, (0,)))(X, 2.0)
