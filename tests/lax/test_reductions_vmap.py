"""vmap of reductions, arg reductions, cumulative reductions, dot_general and sort: the
vectorized result equals stacking the per-example results, for every batched axis position,
several batched arguments and unbatched ones, and the vmapped jaxpr does not grow with the
batch size (one primitive application over the whole batch)."""

import numpy as np
import pytest
from helpers import b, check_vmap, f32, i8, i32

import tracejit
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.jaxpr import check_jaxpr


def _example(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(-3 if dtype.kind == "i" else 0, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _batched_args(shapes, dtypes, in_axes, size, seed=0):
    """Arguments with a batch axis of `size` inserted at each `in_axes` entry (None: none)."""
    rng = np.random.default_rng(seed)
    args = []
    for shape, dtype, axis in zip(shapes, dtypes, in_axes, strict=True):
        if axis is None:
            args.append(_example(rng, shape, dtype))
            continue
        full = list(shape)
        full.insert(axis % (len(shape) + 1), size)
        args.append(_example(rng, tuple(full), dtype))
    return args


def check_vmap_size_independent(fun, shapes, dtypes, in_axes, out_axes=0, size=3):
    """vmap(fun) equals the per-example results stacked along `out_axes`, and its jaxpr has
    as many equations for batch sizes 2 and 7."""
    in_axes = tuple(in_axes)
    check_vmap(fun, _batched_args(shapes, dtypes, in_axes, size), in_axes, out_axes, tol=1e-5)

    def eqn_count(n):
        closed = make_jaxpr(tracejit.vmap(fun, in_axes=in_axes, out_axes=out_axes))(
            *_batched_args(shapes, dtypes, in_axes, n)
        )
        check_jaxpr(closed.jaxpr)
        return len(closed.jaxpr.eqns)

    assert eqn_count(2) == eqn_count(7)


# --- reductions -----------------------------------------------------------------------------

REDUCTIONS = [
    (lax.reduce_sum, f32),
    (lax.reduce_max, f32),
    (lax.reduce_min, i32),
    (lax.reduce_prod, f32),
    (lax.reduce_and, b),
    (lax.reduce_or, i32),
    (lax.reduce_xor, i32),
]
# (per-example shape, axes, in_axis)
REDUCTION_CASES = [
    ((5,), (0,), 0),
    ((5,), (0,), 1),
    ((3, 4), (0,), 0),
    ((3, 4), (1,), 1),
    ((3, 4), (0,), -1),
    ((3, 4), (0, 1), 1),
    ((3, 4), (), 2),
    ((2, 3, 4), (0, 2), 1),
    ((2, 3, 4), (1,), 2),
    ((2, 3, 4), (-1,), 0),
]


@pytest.mark.parametrize("op,dtype", REDUCTIONS, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("shape,axes,in_axis", REDUCTION_CASES)
def test_reduction(op, dtype, shape, axes, in_axis):
    check_vmap_size_independent(lambda x: op(x, axes), [shape], [dtype], [in_axis])


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_reduction_out_axes(out_axes):
    check_vmap_size_independent(lambda x: lax.reduce_sum(x, (1,)), [(3, 4)], [f32], [1], out_axes)


def test_reduction_of_unbatched_and_batched_sum():
    def f(x, y):
        return lax.reduce_max(x, (0,)), lax.reduce_sum(y, (1,))

    check_vmap_size_independent(f, [(3, 4), (2, 5)], [f32, f32], [None, 1])
    check_vmap_size_independent(f, [(3, 4), (2, 5)], [f32, f32], [2, 0])


@pytest.mark.parametrize("op", [lax.argmax, lax.argmin])
@pytest.mark.parametrize("dtype", [f32, i32])
@pytest.mark.parametrize(
    "shape,axis,in_axis",
    [
        ((5,), 0, 0),
        ((5,), 0, 1),
        ((3, 4), 0, 1),
        ((3, 4), 1, 0),
        ((3, 4), -1, -1),
        ((2, 3, 4), 1, 2),
    ],
)
def test_arg_reduction(op, dtype, shape, axis, in_axis):
    check_vmap_size_independent(lambda x: op(x, axis, np.int32), [shape], [dtype], [in_axis])


# --- cumulative reductions ------------------------------------------------------------------

CUMULATIVE = [
    (lax.cumsum, f32),
    (lax.cumprod, i32),
    (lax.cummax, f32),
    (lax.cummin, i32),
    (lax.cumlogsumexp, f32),
]


@pytest.mark.parametrize("op,dtype", CUMULATIVE, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    "shape,axis,in_axis",
    [
        ((5,), 0, 0),
        ((5,), 0, 1),
        ((3, 4), 0, 0),
        ((3, 4), 1, 1),
        ((3, 4), 0, -1),
        ((2, 3, 4), -1, 1),
    ],
)
def test_cumulative(op, dtype, reverse, shape, axis, in_axis):
    check_vmap_size_independent(lambda x: op(x, axis, reverse), [shape], [dtype], [in_axis])


# --- dot_general ----------------------------------------------------------------------------

MATMUL = (((1,), (0,)), ((), ()))
# (lhs shape, rhs shape, dimension numbers)
DOT_CASES = [
    ((3, 4), (4, 5), MATMUL),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    ((2, 3), (4, 5), (((), ()), ((), ()))),  # outer product
    ((2, 3, 4), (3, 4, 5), (((1, 2), (0, 1)), ((), ()))),
]
DOT_AXES = [(0, 0), (1, 0), (0, -1), (-1, 1), (0, None), (1, None), (-1, None), (None, 0)]
DOT_AXES += [(None, 1), (None, -1)]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", DOT_CASES)
@pytest.mark.parametrize("in_axes", DOT_AXES)
def test_dot_general(lhs_shape, rhs_shape, dims, in_axes):
    def f(x, y):
        return lax.dot_general(x, y, dims)

    check_vmap_size_independent(f, [lhs_shape, rhs_shape], [f32, f32], in_axes)


@pytest.mark.parametrize("in_axes", [(0, 1), (1, None), (None, 0)])
def test_dot_general_keeps_params(in_axes):
    def f(x, y):
        return lax.dot_general(
            x, y, MATMUL, precision=lax.Precision.HIGHEST, preferred_element_type=np.int32
        )

    check_vmap_size_independent(f, [(3, 4), (4, 2)], [i8, i8], in_axes)
    args = _batched_args([(3, 4), (4, 2)], [i8, i8], in_axes, 2)
    eqns = make_jaxpr(tracejit.vmap(f, in_axes=in_axes))(*args).jaxpr.eqns
    (eqn,) = [e for e in eqns if e.primitive is lax.dot_general_p]
    assert eqn.params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
    assert eqn.params["preferred_element_type"] == np.int32


def test_dot_general_chain_with_unbatched_weights():
    def mlp(x, w1, w2):
        h = lax.dot(w1, x)
        return lax.reduce_sum(lax.dot(w2, h), (0,))

    check_vmap_size_independent(mlp, [(4,), (3, 4), (2, 3)], [f32] * 3, [0, None, None], size=5)
    check_vmap_size_independent(mlp, [(4,), (3, 4), (2, 3)], [f32] * 3, [None, 2, 0])


# --- sort -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [f32, i32])
@pytest.mark.parametrize(
    "shape,dimension,in_axis",
    [
        ((5,), 0, 0),
        ((5,), 0, 1),
        ((3, 4), 0, 1),
        ((3, 4), 1, 0),
        ((3, 4), -1, -1),
        ((2, 3, 4), 1, 2),
    ],
)
def test_sort_single(dtype, shape, dimension, in_axis):
    check_vmap_size_independent(lambda x: lax.sort(x, dimension), [shape], [dtype], [in_axis])


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (-1, None), (None, 1), (None, -1)])
@pytest.mark.parametrize("dimension", [0, 1])
def test_sort_key_val(in_axes, dimension):
    check_vmap_size_independent(
        lambda k, v: lax.sort_key_val(k, v, dimension), [(3, 4), (3, 4)], [i32, f32], in_axes
    )


@pytest.mark.parametrize("in_axes", [(0, 1, 2), (None, 0, None), (2, None, 0), (None, None, 1)])
def test_sort_two_keys(in_axes):
    def f(a, b, c):
        return lax.sort((a, b, c), dimension=1, num_keys=2)

    check_vmap_size_independent(f, [(2, 6), (2, 6), (2, 6)], [i32, i32, f32], in_axes)
