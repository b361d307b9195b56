"""Primitives that combine elements along axes: reductions, arg reductions, cumulative
reductions, dot_general and sort. References run in float64/complex128, results are rounded
once, so low-precision rows get a wider tolerance (`tol`)."""

import numpy as np
from helpers import FLOATS, INTS, NUMERIC, OpSpec, b, c64, i32, shaped
from numpy.lib.stride_tricks import sliding_window_view

from tracejit import lax

ORDERED = [*FLOATS, *INTS]


def _conv_1d(x, w):
    """The row's convolution, tap by tap: pad 1 before, kernel dilation 2, stride 2."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 0)))
    return sum(
        np.einsum("ncp,oc->nop", padded[:, :, 2 * k : 2 * k + 5 : 2], w[:, :, k]) for k in (0, 1)
    )


BITWISE = [*INTS, b]
SHAPE = ((3, 4),)


def reduction(name, fun, ref, dtypes, differentiable=True, **fields):
    return OpSpec(
        name,
        lambda x: fun(x, (1,)),
        lambda x: ref(x, axis=1),
        dtypes,
        shapes=SHAPE,
        grad_argnums=(0,) if differentiable else (),
        **fields,
    )


def cumulative(name, fun, ref, dtypes, differentiable=True, **fields):
    return OpSpec(
        name,
        lambda x: fun(x, 1),
        lambda x: ref(x, axis=1),
        dtypes,
        shapes=SHAPE,
        grad_argnums=(0,) if differentiable else (),
        **fields,
    )


def _sort_pairs(keys, values):
    order = np.argsort(keys, axis=1, kind="stable")
    return np.take_along_axis(keys, order, 1), np.take_along_axis(values, order, 1)


def windowed(name, computation, init, ref, dtypes, **fields):
    """2x2 windows, two apart along the rows (the geometry's grid: test_windowed_reductions)."""
    return OpSpec(
        name,
        lambda x: lax.reduce_window(x, init, computation, (2, 2), (1, 2), "VALID"),
        lambda x: ref(sliding_window_view(x, (2, 2))[:, ::2], axis=(2, 3)),
        dtypes,
        shapes=SHAPE,
        grad_argnums=(0,),
        **fields,
    )


MATMUL = (((1,), (0,)), ((), ()))


def _descending(x):
    """The two largest along axis 1 and their indices, equal values in index order."""
    order = np.argsort(-x.astype(np.float64), axis=1, kind="stable")[:, :2]
    return np.take_along_axis(x, order, 1), order


REDUCTIONS = [
    reduction("reduce_sum", lax.reduce_sum, np.sum, NUMERIC, tol=2, linear=True),
    reduction("reduce_prod", lax.reduce_prod, np.prod, NUMERIC, tol=2),
    reduction("reduce_max", lax.reduce_max, np.max, ORDERED),
    reduction("reduce_min", lax.reduce_min, np.min, ORDERED),
    reduction("reduce_and", lax.reduce_and, np.bitwise_and.reduce, BITWISE, False),
    reduction("reduce_or", lax.reduce_or, np.bitwise_or.reduce, BITWISE, False),
    reduction("reduce_xor", lax.reduce_xor, np.bitwise_xor.reduce, BITWISE, False),
    OpSpec(
        "argmax",
        lambda x: lax.argmax(x, 1, np.int32),
        lambda x: np.argmax(x, axis=1),
        ORDERED,
        shapes=SHAPE,
        out=lambda d: i32,
    ),
    OpSpec(
        "argmin",
        lambda x: lax.argmin(x, 1, np.int32),
        lambda x: np.argmin(x, axis=1),
        ORDERED,
        shapes=SHAPE,
        out=lambda d: i32,
    ),
    windowed("reduce_window_sum", lax.add, 0, np.sum, NUMERIC, tol=2, linear=True),
    windowed("reduce_window_max", lax.max, -np.inf, np.max, ORDERED),
    windowed("reduce_window_min", lax.min, np.inf, np.min, ORDERED),
    cumulative("cumsum", lax.cumsum, np.cumsum, NUMERIC, tol=2, linear=True),
    cumulative("cumprod", lax.cumprod, np.cumprod, NUMERIC, tol=2),
    cumulative("cummax", lax.cummax, np.maximum.accumulate, ORDERED),
    cumulative("cummin", lax.cummin, np.minimum.accumulate, ORDERED),
    cumulative("cumlogsumexp", lax.cumlogsumexp, np.logaddexp.accumulate, FLOATS, tol=2),
    OpSpec(
        "dot_general",
        lambda x, y: lax.dot_general(x, y, MATMUL),
        np.matmul,
        [*FLOATS, i32, c64],
        shaped(),
        (((2, 3), (3, 4)),),
        tol=4,
        grad_argnums=(0, 1),
    ),
    OpSpec(
        "conv_general_dilated",
        lambda x, w: lax.conv_general_dilated(x, w, (2,), [(1, 0)], rhs_dilation=(2,)),
        _conv_1d,
        [*FLOATS, i32, c64],
        shaped(),
        (((2, 3, 6), (4, 3, 2)),),
        tol=4,
        grad_argnums=(0, 1),
    ),
    OpSpec(
        "sort",
        lambda x: lax.sort(x, 1),
        lambda x: np.sort(x, axis=1),
        [*ORDERED, b],
        shapes=SHAPE,
        grad_argnums=(0,),
    ),
    OpSpec(
        "sort_key_value",
        lambda keys, values: lax.sort((keys, values), 1, num_keys=1),
        _sort_pairs,
        ORDERED,
        shaped(),
        (((3, 4), (3, 4)),),
        primitive="sort",
        grad_argnums=(1,),
    ),
    OpSpec(
        "top_k",
        lambda x: lax.top_k(x, 2)[0],
        lambda x: _descending(x)[0],
        [*ORDERED, b],
        shapes=SHAPE,
        grad_argnums=(0,),
    ),
    OpSpec(
        "top_k_indices",
        lambda x: lax.top_k(x, 2)[1],
        lambda x: _descending(x)[1],
        [*ORDERED, b],
        shapes=SHAPE,
        primitive="top_k",
        out=lambda d: i32,
    ),
    OpSpec(
        "approx_max_k",
        lambda x: lax.approx_max_k(x, 2)[0],
        lambda x: _descending(x)[0],
        FLOATS,
        shapes=SHAPE,
        primitive="approx_top_k",
        grad_argnums=(0,),
    ),
    OpSpec(
        "approx_max_k_indices",
        lambda x: lax.approx_max_k(x, 2)[1],
        lambda x: _descending(x)[1],
        FLOATS,
        shapes=SHAPE,
        primitive="approx_top_k",
        out=lambda d: i32,
    ),
    OpSpec(
        "approx_min_k",
        lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0],
        lambda x: np.sort(x, axis=0)[:2],
        FLOATS,
        shapes=SHAPE,
        primitive="approx_top_k",
        grad_argnums=(0,),
    ),
]
