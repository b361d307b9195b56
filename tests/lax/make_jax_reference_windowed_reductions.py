"""Records JAX's results for windowed reductions where NumPy gives no reference: which element
of a max/min window receives the gradient when elements tie (and with NaNs, infinities,
padding and dilation), the tangent `select_and_gather_add` picks, initial values that are not
the identity (XLA skips padding and holes), 'SAME'/'SAME_LOWER' padding with dilations, and the
generic `select_and_scatter` (JAX exports its primitive only; its internal helper binds it).
The tests (`tests/lax/test_windowed_reductions.py`) never import JAX; they compare with
`tests/lax/data/windowed_reductions.npz`. To regenerate it, in a virtualenv with `jax==0.10.2`
(CPU), from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_windowed_reductions.py

`CASES` is also the tests' table: each entry is `name -> (fun(jax, select_and_scatter, *args),
args)`, called with `jax` and JAX's helper here and with `tracejit` and its
`window_selection.select_and_scatter` there; a result is an array or a tuple of arrays, stored
as `<name>/<i>`.
"""

from __future__ import annotations

import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "windowed_reductions.npz"

NAN, INF = np.float32(np.nan), np.float32(np.inf)
TIES = np.array([[1, 3, 3, 0], [3, 2, 3, 3], [0, 3, 1, 3]], np.float32)
SPECIAL = np.array([1, NAN, 2, 3, -0.0, 0, -0.0, -INF, -INF, 5], np.float32)
EDGES = np.array([-INF, 1, -INF, -INF], np.float32)
PLATEAU = np.ones((4, 5), np.float32)
DISTINCT = np.random.default_rng(1).permutation(12).reshape(3, 4).astype(np.float32)


JAX_MODULES = ("jax._src.lax.windowed_reductions",)  # (imported for main by tools/jax_reference.py)


def _window(op, init, *geometry):
    return lambda jax, x: jax.lax.reduce_window(x, init, op(jax.lax), *geometry)


def _grad(op, init, *geometry):
    """The gradient of sum(cotangent * windows), cotangent 1, 2, 3, ...: where each goes."""

    def fun(jax, x):
        window = _window(op, init, *geometry)
        out_shape = jax.eval_shape(lambda v: window(jax, v), x).shape
        ct = np.arange(1, np.prod(out_shape) + 1, dtype=np.float32).reshape(out_shape)
        return jax.grad(lambda v: (window(jax, v) * ct).sum())(x)

    return fun


def _jvp(op, init, *geometry):
    """The tangent output for the tangent 1, 2, 3, ... of the operand's elements."""

    def fun(jax, x):
        window = _window(op, init, *geometry)
        t = np.arange(1, x.size + 1, dtype=np.float32).reshape(x.shape)
        return jax.jvp(lambda v: window(jax, v), (x,), (t,))

    return fun


def _max(lax):
    return lax.max


def _min(lax):
    return lax.min


def _add(lax):
    return lax.add


def _mul(lax):
    return lax.mul


def _scatter(select, scatter, init, *geometry):
    def fun(jax, select_and_scatter, x, source):
        window, strides, padding = geometry
        return select_and_scatter(
            x, select(jax.lax), window, strides, padding, source, init, scatter
        )

    return fun


CASES = {
    "max_grad_ties": (lambda jax, _, x: _grad(_max, -INF, (2, 3), (1, 1))(jax, x), (TIES,)),
    "max_grad_ties_same": (
        lambda jax, _, x: _grad(_max, -INF, (2, 2), (1, 1), "SAME")(jax, x),
        (TIES,),
    ),
    "max_grad_plateau_strided": (
        lambda jax, _, x: _grad(_max, -INF, (3, 2), (2, 1), ((1, 1), (0, 1)))(jax, x),
        (PLATEAU,),
    ),
    "min_grad_ties": (lambda jax, _, x: _grad(_min, INF, (2, 2), (1, 2))(jax, -x), (TIES,)),
    "max_grad_special": (lambda jax, _, x: _grad(_max, -INF, (2,), (1,))(jax, x), (SPECIAL,)),
    "min_grad_special": (lambda jax, _, x: _grad(_min, INF, (3,), (1,))(jax, x), (SPECIAL,)),
    "max_grad_edges_padded": (
        lambda jax, _, x: _grad(_max, -INF, (2,), (1,), ((1, 1),))(jax, x),
        (EDGES,),
    ),
    "max_grad_base_dilation": (
        lambda jax, _, x: _grad(_max, -INF, (2, 2), (1, 1), "VALID", (2, 1))(jax, x),
        (TIES,),
    ),
    "max_jvp_ties": (lambda jax, _, x: _jvp(_max, -INF, (2, 3), (1, 1))(jax, x), (TIES,)),
    "min_jvp_special": (lambda jax, _, x: _jvp(_min, INF, (3,), (1,))(jax, x), (SPECIAL,)),
    "max_jvp_edges_padded": (
        lambda jax, _, x: _jvp(_max, -INF, (2,), (1,), ((1, 1),))(jax, x),
        (EDGES,),
    ),
    "max_jvp_dilations": (
        lambda jax, _, x: _jvp(_max, -INF, (2, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2))(
            jax, x
        ),
        (TIES,),
    ),
    "add_init_one_padded": (
        lambda jax, _, x: _window(_add, np.float32(1), (3,), (1,), ((1, 1),))(jax, x),
        (np.ones(4, np.float32),),
    ),
    "add_init_one_base_dilation": (
        lambda jax, _, x: _window(_add, np.float32(1), (3,), (1,), ((1, 0),), (2,))(jax, x),
        (np.ones(4, np.float32),),
    ),
    "mul_padded_dilated": (
        lambda jax, _, x: _window(
            _mul, np.float32(1), (2, 2), (1, 2), ((1, 1), (2, 0)), (1, 2), (2, 1)
        )(jax, x),
        (TIES + 1,),
    ),
    "sum_same": (
        lambda jax, _, x: _window(_add, np.float32(0), (2, 3), (2, 2), "SAME", (2, 1), (1, 2))(
            jax, x
        ),
        (TIES,),
    ),
    "sum_same_lower": (
        lambda jax, _, x: _window(_add, np.float32(0), (2, 2), (1, 3), "SAME_LOWER", None, (2, 1))(
            jax, x
        ),
        (TIES,),
    ),
    "select_and_scatter_affine": (
        _scatter(lambda lax: lax.ge, lambda a, b: a * 2 + b, np.float32(0), (2,), (1,), ((1, 1),)),
        (np.array([1, 5, 1], np.float32), np.array([1, 10, 100, 1000], np.float32)),
    ),
    # Ties: a strict comparison gives them to the last element. (Only without padding: with
    # it, XLA's CPU backend visits the elements in an order that depends on which dimensions
    # are padded, which tracejit's eager select_and_scatter does not follow.)
    "select_and_scatter_gt_mul": (
        _scatter(
            lambda lax: lax.gt, lambda a, b: a * b, np.float32(1), (2, 2), (1, 1), ((0, 0),) * 2
        ),
        (TIES, np.arange(2.0, 8.0, dtype=np.float32).reshape(2, 3)),
    ),
    "select_and_scatter_gt_padded": (
        _scatter(
            lambda lax: lax.gt, lambda a, b: a * b, np.float32(1), (2, 2), (1, 1), ((1, 0), (0, 1))
        ),
        (DISTINCT, np.arange(2.0, 14.0, dtype=np.float32).reshape(3, 4)),
    ),
    "select_and_scatter_ge_padded": (
        _scatter(
            lambda lax: lax.ge, lambda a, b: a + b, np.float32(0), (2, 2), (2, 1), ((1, 0), (0, 1))
        ),
        (DISTINCT, np.arange(2.0, 10.0, dtype=np.float32).reshape(2, 4)),
    ),
}


def main(jax):
    _select_and_scatter = jax._src.lax.windowed_reductions._select_and_scatter

    assert jax.__version__ == "0.10.2", jax.__version__
    arrays = {}
    for name, (fun, args) in CASES.items():
        out = fun(jax, _select_and_scatter, *args)
        leaves = jax.tree_util.tree_leaves(out)
        for i, leaf in enumerate(leaves):
            arrays[f"{name}/{i}"] = np.asarray(leaf)
    DATA.parent.mkdir(exist_ok=True)
    np.savez(DATA, **arrays)
    print(f"wrote {len(arrays)} arrays to {DATA}")
