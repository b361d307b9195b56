"""`rankdata`, `mode` and `sem`: SciPy's descriptive statistics with static shapes.

Ranks come from one stable sort: the position of each element in sorted order (its ordinal
rank), the index of its group of equal values (its dense rank) and, through the first
position of each group (`nonzero` with a static `size`), the rank of the group's first and
last members, from which 'min', 'max' and 'average' follow. The mode is the largest count of
`unique(size=n)`. Slices along an axis are mapped by `vmap`.
"""

from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array
from tracejit._src.lax.sort import sort_key_val
from tracejit._src.numpy import manipulation, reductions, sorting
from tracejit._src.numpy.creation import arange, array, full_like, zeros_like
from tracejit._src.numpy.nan_reductions import nanstd
from tracejit._src.numpy.promotion import (
    asarray_operand,
    convert_element_type,
    promote_args_inexact,
)
from tracejit._src.numpy.ufuncs import isnan, sqrt, where
from tracejit._src.vmap import vmap

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    mode: Array
    count: Array


def _check_nan_policy(name, nan_policy):
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function."
        )


def _along_axis(fun, a, axis):
    """`fun` (1-D to 1-D of the same length) applied to every slice of `a` along `axis`."""
    moved = manipulation.moveaxis(a, axis, -1)
    rows = manipulation.reshape(moved, (-1, moved.shape[-1]))
    out = manipulation.reshape(vmap(fun)(rows), moved.shape)
    return manipulation.moveaxis(out, -1, axis)


def _tied_ranks(starts, dense, method, out_dtype):
    """'max', 'min' or 'average' ranks from where groups start in sorted order (`starts`) and
    each element's group (its `dense` rank)."""
    size = starts.shape[0]
    # group_end[g]: the sorted position where group g + 1 starts (`size` after the last one).
    (group_end,) = sorting.nonzero(starts, size=size + 1, fill_value=size)
    group_end = convert_element_type(group_end, out_dtype)
    if method == "max":
        return group_end[dense]
    if method == "min":
        return group_end[dense - 1] + 1
    return 0.5 * (group_end[dense] + group_end[dense - 1] + 1)


def _ranks(a, method):
    """The ranks (1-based, default float dtype) of the 1-D `a`; all NaN if `a` has a NaN."""
    out_dtype = dtypes.default_float_dtype()
    size = a.shape[0]
    arr, sorter = sort_key_val(a, arange(size))
    ordinal = zeros_like(sorter).at[sorter].set(arange(size, dtype=sorter.dtype))
    if method == "ordinal":
        ranks = convert_element_type(ordinal + 1, out_dtype)
    else:
        starts = manipulation.concatenate([array([True]), arr[1:] != arr[:-1]])
        dense = reductions.cumsum(starts)[ordinal]
        if method == "dense":
            ranks = convert_element_type(dense, out_dtype)
        else:
            ranks = _tied_ranks(starts, dense, method, out_dtype)
    return where(reductions.any(isnan(a)), full_like(ranks, np.nan), ranks)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data, ties resolved by `method` ('average', 'min', 'max', 'dense',
    'ordinal'), of the flattened array or along `axis`; NaN ranks for data with NaN."""
    a = asarray_operand("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return _along_axis(lambda row: _ranks(row, method), a, axis)
    return _ranks(manipulation.ravel(a), method)


def _mode_1d(x):
    if x.shape[0] == 0:
        nan = array(np.nan, dtype=dtypes.default_float_dtype())
        return nan, array(0, dtype=dtypes.default_float_dtype())
    vals, counts = sorting.unique(x, return_counts=True, size=x.shape[0])
    return vals[reductions.argmax(counts)], reductions.max(counts)


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along `axis` (the smallest of equally frequent ones) and its
    count; `axis=None` takes the flattened array."""
    x = manipulation.atleast_1d(asarray_operand("mode", a))
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = manipulation.normalize_axis(axis, x.ndim)
    if axis is None:
        output_shape = (1,) * x.ndim if keepdims else ()
        axis, x = 0, manipulation.ravel(x)
    elif keepdims:
        output_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape))
    else:
        output_shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
    x = manipulation.moveaxis(x, axis, 0)
    x = manipulation.reshape(x, (x.shape[0], int(np.prod(x.shape[1:]))))
    vals, counts = vmap(_mode_1d, in_axes=1)(x)
    return ModeResult(
        manipulation.reshape(vals, output_shape), manipulation.reshape(counts, output_shape)
    )


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(ddof) / sqrt(n), along `axis` (None: all);
    `nan_policy='omit'` leaves NaNs out of both."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        std = reductions.std(b, axis, ddof=ddof, keepdims=keepdims)
        return std / convert_element_type(sqrt(size), b.dtype)
    if nan_policy == "omit":
        present = ~isnan(b)
        count = reductions.sum(present, axis, keepdims=keepdims)
        return nanstd(b, axis, ddof=ddof, keepdims=keepdims) / convert_element_type(
            sqrt(count), b.dtype
        )
    raise ValueError(f"{nan_policy} is not supported")
