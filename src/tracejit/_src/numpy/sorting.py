"""Sorting and searching: sort, argsort, lexsort, searchsorted, digitize, nonzero, flatnonzero,
argwhere, unique, bincount.

Everything here is built from the multi-operand `sort` primitive (which orders NaNs last, as
NumPy does, and is always stable), gathers, scatters and cumulative sums:

- `argsort` sorts an `iota` of positions riding along with the keys, and `lexsort` sorts by
  several keys at once (`num_keys`), the last key of the user's sequence primary;
- descending order sorts the reversed operand and reverses the result back, so that equal
  keys keep their original order, as JAX's `descending=True` does;
- `searchsorted` is a binary search unrolled to `bit_length(len(a))` steps of one gather each
  (`method='scan'`), or one all-pairs comparison summed (`method='compare_all'`);
- functions whose result's length depends on the values (`nonzero`, `unique`, `bincount`)
  read the length from a concrete operand; a traced one needs the static `size`/`length`
  (a `ConcretizationTypeError` otherwise, as in JAX). With a static size they compact with a
  scatter: element `i` of the operand goes to slot `cumsum(mask)[i] - 1`, slots past `size`
  are dropped and unwritten slots padded.

Index results are of the default integer type (int64 with x64), as in JAX; `searchsorted`
and `digitize` always give int32.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import bitwise as lax_bitwise
from tracejit._src.lax import cumulative as lax_cumulative
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.advanced_indexing import take
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.promotion import asarray_operand, check_placement

_BOOL = np.dtype(bool)
_I32 = np.dtype(np.int32)


def _index_dtype() -> np.dtype:
    return dtypes.default_int_dtype()


def concretization_error(x, name: str, argname: str, advice: str) -> ConcretizationTypeError:
    """The error for a traced operand whose values would decide a result's shape."""
    return ConcretizationTypeError(
        "Abstract tracer value encountered where concrete value is expected: traced array "
        f"with shape {x.aval.str_short()}\nThe error arose for the argument {argname!r} of "
        f"jnp.{name}(): its result's shape depends on the values, which a traced function "
        f"cannot know. {advice}"
    )


def _check_sort_args(name: str, kind, order):
    if kind is not None:
        raise TypeError(
            f"'kind' argument to {name} is not supported. Use stable=True or stable=False to "
            "specify sort stability."
        )
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _flat_or_axis(x, axis):
    """(operand, axis): the flattened operand along 0 for axis None, else the normalized axis."""
    if axis is None:
        return manipulation.ravel(x), 0
    return x, manipulation.normalize_axis(axis, x.ndim)


# --------------------------------------------------------------------------------------------
# sort, argsort, lexsort


@jnp_jit(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """`a` sorted along `axis` (flattened for None): ascending, NaNs last, or descending with
    NaNs first (the reverse of the ascending order). The dtype and weak type are kept."""
    _check_sort_args("sort", kind, order)
    x, axis = _flat_or_axis(asarray_operand("sort", a), axis)
    if descending:
        return lax_shapes.rev(lax_sort.sort(lax_shapes.rev(x, (axis,)), axis, stable), (axis,))
    return lax_sort.sort(x, axis, stable)


@jnp_jit(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Positions that sort `a` along `axis` (of the flattened `a` for None): `iota` rides along
    the sort. Descending order sorts the reversed operand with the reversed positions and
    reverses the result, so ties stay in their original order, as in JAX. `dtype` is the
    integer dtype of the positions (default: the default integer type)."""
    _check_sort_args("argsort", kind, order)
    index_dtype = dtypes.check_user_dtype(dtype, "argsort") or _index_dtype()
    if not dtypes.is_int(index_dtype) or index_dtype == _BOOL:
        raise TypeError(f"argsort: dtype must be an integer type, got {index_dtype}")
    x, axis = _flat_or_axis(asarray_operand("argsort", a), axis)
    positions = lax_shapes.broadcasted_iota(index_dtype, x.shape, axis)
    if descending:
        x, positions = lax_shapes.rev(x, (axis,)), lax_shapes.rev(positions, (axis,))
    _, perm = lax_sort.sort((x, positions), axis, stable, num_keys=1)
    return lax_shapes.rev(perm, (axis,)) if descending else perm


@jnp_jit(static_argnames=("axis",))
def lexsort(keys, axis=-1):
    """Positions that sort by several keys along `axis`, the last key primary (NumPy's order):
    one sort with every key as a sort key and `iota` riding along."""
    keys = tuple(keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    operands = [asarray_operand("lexsort", k, i) for i, k in enumerate(keys)]
    if len({k.shape for k in operands}) != 1:
        raise ValueError("all keys need to be the same shape")
    if operands[0].ndim == 0:
        return promotion.convert_element_type(0, _index_dtype(), False)
    axis = manipulation.normalize_axis(axis, operands[0].ndim)
    positions = lax_shapes.broadcasted_iota(_index_dtype(), operands[0].shape, axis)
    outs = lax_sort.sort((*reversed(operands), positions), axis, True, num_keys=len(operands))
    return outs[-1]


# --------------------------------------------------------------------------------------------
# searchsorted and digitize


def _nan_last_less(x, y):
    """`x < y` in the order sort uses: NaNs after everything else (and equal to each other);
    complex numbers by real then imaginary part, those with a NaN part after the others (NaN
    imaginary part, then NaN real part, then both), as NumPy sorts them."""
    if dtypes.is_complex(x.dtype):
        return _complex_less(x, y)
    less = ufuncs.less(x, y)
    if dtypes.is_inexact(x.dtype):
        less = ufuncs.logical_or(
            less, ufuncs.logical_and(ufuncs.isnan(y), ufuncs.logical_not(ufuncs.isnan(x)))
        )
    return less


def _nan_class(z):
    """0 for no NaN part, 1 for a NaN imaginary part only, 2 for a NaN real part only, 3 both."""
    one = promotion.convert_element_type(1, _I32, True)
    real_nan = promotion.convert_element_type(ufuncs.isnan(ufuncs.real(z)), _I32)
    imag_nan = promotion.convert_element_type(ufuncs.isnan(ufuncs.imag(z)), _I32)
    return ufuncs.add(ufuncs.multiply(real_nan, one + one), imag_nan)


def _complex_less(x, y):
    def same(a, b):  # equal, NaNs equal to each other
        both_nan = ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b))
        return ufuncs.logical_or(ufuncs.equal(a, b), both_nan)

    cx, cy = _nan_class(x), _nan_class(y)
    xr, yr, xi, yi = ufuncs.real(x), ufuncs.real(y), ufuncs.imag(x), ufuncs.imag(y)
    parts_less = ufuncs.logical_or(
        _nan_last_less(xr, yr), ufuncs.logical_and(same(xr, yr), _nan_last_less(xi, yi))
    )
    return ufuncs.logical_or(
        ufuncs.less(cx, cy), ufuncs.logical_and(ufuncs.equal(cx, cy), parts_less)
    )


def _goes_right(sorted_values, v, side: str):
    """Whether `v` goes after an element of `a` (the search's monotone predicate)."""
    if side == "left":
        return _nan_last_less(sorted_values, v)
    return ufuncs.logical_not(_nan_last_less(v, sorted_values))


def _search_scan(a, v, side: str):
    """Binary search, each step halving every query's interval [lo, hi) with one gather."""
    n = a.shape[0]
    lo = lax_shapes.broadcast_in_dim(promotion.convert_element_type(0, _I32), v.shape, ())
    hi = lax_shapes.broadcast_in_dim(promotion.convert_element_type(n, _I32), v.shape, ())
    one = promotion.convert_element_type(1, _I32, True)
    for _ in range(n.bit_length()):
        mid = lax_bitwise.shift_right_logical(lax_binary.add(lo, hi), one)
        right = _goes_right(take(a, mid, mode="clip"), v, side)
        active = ufuncs.less(lo, hi)
        lo = ufuncs.where(ufuncs.logical_and(active, right), lax_binary.add(mid, one), lo)
        hi = ufuncs.where(ufuncs.logical_and(active, ufuncs.logical_not(right)), mid, hi)
    return lo


def _search_compare_all(a, v, side: str):
    """The number of elements of `a` that `v` goes after, from all pairs at once."""
    right = _goes_right(a, manipulation.expand_dims(v, -1), side)
    count = promotion.convert_element_type(right, _I32, False)
    return lax_reductions.reduce_sum(count, (count.ndim - 1,))


_SEARCH_METHODS = {
    "scan": _search_scan,
    "scan_unrolled": _search_scan,  # the scan is unrolled already
    "sort": _search_scan,  # a different algorithm in JAX; the same answers
    "compare_all": _search_compare_all,
}


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Where the elements of `v` would be inserted into the sorted 1-D `a` to keep it sorted
    (before equal elements for side='left', after them for 'right'), as int32. `a` and `v`
    are compared in their common dtype, in sort's order (NaNs last)."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCH_METHODS:
        raise ValueError(
            f"invalid argument method={method!r}, expected one of {sorted(_SEARCH_METHODS)}"
        )
    a, v = promotion.promote_dtypes(
        asarray_operand("searchsorted", a, 0), asarray_operand("searchsorted", v, 1)
    )
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter, mode="clip")
    return _SEARCH_METHODS[method](a, v, side)


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each element of `x` (`bins` monotonically increasing or
    decreasing, 1-D), with NumPy's conventions for the open side of each bin, as int32.
    `method` is searchsorted's (default 'scan')."""
    method = "scan" if method is None else method
    x = asarray_operand("digitize", x, 0)
    bins = asarray_operand("digitize", bins, 1)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins.shape}")
    if bins.shape[0] == 0:
        return lax_shapes.broadcast_in_dim(promotion.convert_element_type(0, _I32), x.shape, ())
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side, method=method)
    reversed_bins = lax_shapes.rev(bins, (0,))
    decreasing = lax_binary.sub(
        promotion.convert_element_type(bins.shape[0], _I32, True),
        searchsorted(reversed_bins, x, side, method=method),
    )
    ascending = ufuncs.greater_equal(take(bins, -1), take(bins, 0))
    return ufuncs.where(ascending, increasing, decreasing)


# --------------------------------------------------------------------------------------------
# nonzero, flatnonzero, argwhere


def _is_nonzero(x):
    if x.dtype == _BOOL:
        return x
    return ufuncs.not_equal(x, promotion.convert_element_type(0, x.dtype, False))


def _compact_positions(mask, size: int):
    """(positions, valid): the positions of the first `size` True elements of the 1-D `mask`,
    in order (0 past the last), and which slots hold one."""
    index_dtype = _index_dtype()
    slots = lax_shapes.iota(index_dtype, size)
    if mask.shape[0] == 0 or size == 0:
        zeros = lax_shapes.broadcast_in_dim(
            promotion.convert_element_type(0, index_dtype), (size,), ()
        )
        return zeros, ufuncs.less(slots, promotion.convert_element_type(0, index_dtype, True))
    counts = lax_cumulative.cumsum(promotion.convert_element_type(mask, index_dtype), 0)
    total = take(counts, -1)
    slot = ufuncs.where(mask, lax_binary.sub(counts, promotion.weak_scalar(1, index_dtype)), size)
    zeros = lax_shapes.broadcast_in_dim(promotion.convert_element_type(0, index_dtype), (size,), ())
    positions = zeros.at[slot].set(lax_shapes.iota(index_dtype, mask.shape[0]), mode="drop")
    return positions, ufuncs.less(slots, total)


def _static_size(name: str, x, mask, size, argname="a"):
    if isinstance(size, Tracer):
        raise concretization_error(
            size,
            name,
            "size",
            f"The size argument of jnp.{name} must be statically specified to use jnp.{name} "
            "within JAX transformations.",
        )
    if size is not None:
        return operator.index(size)
    value = concrete_value(mask)
    if value is None:
        raise concretization_error(
            x,
            name,
            argname,
            f"The size argument of jnp.{name} must be statically specified to use "
            f"jnp.{name} within JAX transformations.",
        )
    return int(np.count_nonzero(value))


def concrete_value(x):
    """`x`'s NumPy value when it is known (an Array, or a tracer whose trace knows it, as a
    JVP tracer's under eager evaluation), else None."""
    return x.to_concrete_value() if isinstance(x, Tracer) else np.asarray(x)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` is true, else `y`, broadcast together; with `condition` alone,
    `nonzero(condition, size=size, fill_value=fill_value)`."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError(
            "where requires ndarray or scalar arguments, got <class 'NoneType'> at position "
            f"{1 if x is None else 2}."
        )
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    return ufuncs.where(condition, x, y)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one array per dimension. `size` fixes the count
    (needed when `a` is traced): extra ones are dropped, missing ones are `fill_value` (0, or
    one value per dimension)."""
    x = asarray_operand("nonzero", a)
    if x.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
            "instead."
        )
    mask = _is_nonzero(x)
    size = _static_size("nonzero", x, mask, size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * x.ndim
    if len(fills) != x.ndim:
        raise ValueError(
            f"fill_value must be a scalar or a tuple of length {x.ndim}; got {fill_value}"
        )
    positions, valid = _compact_positions(manipulation.ravel(mask), size)
    index_dtype = positions.dtype
    coords = []
    for dim in reversed(x.shape):
        if dim == 0:
            coords.append(positions)
            continue
        d = promotion.weak_scalar(dim, index_dtype)
        coords.append(lax_binary.rem(positions, d))
        positions = lax_binary.div(positions, d)
    out = []
    for coord, fill in zip(reversed(coords), fills, strict=True):
        if fill is not None:  # promoted with the indices: a float fill gives floats, as in JAX
            coord = ufuncs.where(valid, coord, fill)
        out.append(coord)
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened `a` (see `nonzero`)."""
    return nonzero(manipulation.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements as one (count, ndim) array (see `nonzero`)."""
    x = asarray_operand("argwhere", a)
    result = manipulation.stack(
        nonzero(manipulation.atleast_1d(x), size=size, fill_value=fill_value), axis=1
    )
    return result[:, :0] if x.ndim == 0 else result


# --------------------------------------------------------------------------------------------
# unique and bincount


def _zeros(shape, dtype):
    return lax_shapes.broadcast_in_dim(promotion.convert_element_type(0, dtype), shape, ())


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # fmt: skip
    """The sorted distinct elements of the flattened `ar` (or its distinct slices along
    `axis`), with optionally the index of each one's first occurrence, the inverse (each
    element's position among the distinct ones, in `ar`'s shape; per slice with `axis`) and
    the counts.

    The elements (slices, flattened into rows) are sorted stably with their positions riding
    along, every column a key, the first primary; a group of equal ones starts where a row
    differs from its predecessor (NaNs all equal unless `equal_nan=False`); the starts compact
    as in `nonzero`. With `size`, missing values are `fill_value` (default: the smallest
    value), missing indices those of the smallest value, missing counts 0. The result is always
    sorted (`sorted=False` allows any order)."""
    x = asarray_operand("unique", ar)
    if axis is not None:
        axis = manipulation.normalize_axis(axis, x.ndim)
    rows, inverse_shape = _unique_rows(x, axis)
    n, width = rows.shape
    index_dtype = _index_dtype()
    if n == 0:
        if size and fill_value is None:
            raise ValueError(
                "jnp.unique: for zero-sized input with nonzero size argument, fill_value must "
                "be specified"
            )
        size = size or 0
        fill = promotion.convert_element_type(0 if fill_value is None else fill_value, x.dtype)
        columns = [lax_shapes.broadcast_in_dim(fill, (size,), ())] * max(width, 1)
        extras = [_zeros((size,), index_dtype), _zeros(inverse_shape, index_dtype)]
        extras.append(_zeros((size,), index_dtype))
        values = _unique_values(x, axis, columns, size)
        return _unique_result(values, extras, return_index, return_inverse, return_counts)
    columns = [rows[:, j] for j in range(width)]
    positions = lax_shapes.iota(index_dtype, n)
    if width:
        *columns, perm = lax_sort.sort((*columns, positions), 0, True, num_keys=width)
    else:  # empty slices are all equal
        perm = positions
    starts_mask = _group_starts(columns, n, equal_nan)
    size = _static_size("unique", x, starts_mask, size, "ar")
    starts, valid = _compact_positions(starts_mask, size)
    columns = [take(col, starts, mode="clip") for col in columns]
    if fill_value is not None:
        fill = promotion.convert_element_type(fill_value, x.dtype)
        columns = [ufuncs.where(valid, col, fill) for col in columns]
    group = lax_binary.sub(
        lax_cumulative.cumsum(promotion.convert_element_type(starts_mask, index_dtype), 0),
        promotion.weak_scalar(1, index_dtype),
    )
    extras = [
        take(perm, starts, mode="clip"),
        manipulation.reshape(_zeros((n,), index_dtype).at[perm].set(group), inverse_shape),
        _zeros((size,), index_dtype).at[group].add(1, mode="drop"),
    ]
    values = _unique_values(x, axis, columns, size)
    return _unique_result(values, extras, return_index, return_inverse, return_counts)


def _unique_rows(x, axis):
    """(rows, inverse shape): the elements of `x` as rows of one column (`axis` None), or its
    slices along `axis` flattened into rows."""
    if axis is None:
        return manipulation.reshape(x, (x.size, 1)), x.shape
    moved = manipulation.moveaxis(x, axis, 0)
    width = int(np.prod(moved.shape[1:]))
    return manipulation.reshape(moved, (moved.shape[0], width)), (x.shape[axis],)


def _unique_values(x, axis, columns, size: int):
    """The `size` unique rows, given column by column, as `unique`'s values: elements, or
    slices put back along `axis`."""
    value_shape = () if axis is None else x.shape[:axis] + x.shape[axis + 1 :]
    values = manipulation.stack(columns, axis=1) if columns else _zeros((size, 0), x.dtype)
    values = manipulation.reshape(values, (size,) + value_shape)
    return values if axis is None else manipulation.moveaxis(values, 0, axis)


def _group_starts(columns, n: int, equal_nan: bool):
    """Where a sorted row differs from its predecessor in any column (the first row always
    does); NaNs all equal each other unless `equal_nan` is False."""
    differs = _zeros((n - 1,), _BOOL)
    for col in columns:
        col_differs = ufuncs.not_equal(col[1:], col[:-1])
        if equal_nan and dtypes.is_inexact(col.dtype):
            both_nan = ufuncs.logical_and(ufuncs.isnan(col[1:]), ufuncs.isnan(col[:-1]))
            col_differs = ufuncs.logical_and(col_differs, ufuncs.logical_not(both_nan))
        differs = ufuncs.logical_or(differs, col_differs)
    return manipulation.concatenate([np.ones(1, bool), differs])


def _unique_result(values, extras, return_index, return_inverse, return_counts):
    wanted = (return_index, return_inverse, return_counts)
    chosen = [extra for extra, want in zip(extras, wanted, strict=True) if want]
    return (values, *chosen) if chosen else values


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """Counts of each non-negative integer in the 1-D `x` (sums of `weights` at them): one
    scatter-add. Negative values count as 0 and values past `length` are dropped, as in JAX;
    `length` defaults to max(x) + 1 (at least `minlength`), which needs a concrete `x`."""
    if out_sharding is not None:
        check_placement("bincount", out_sharding=out_sharding)
    x = asarray_operand("bincount", x, 0)
    if not dtypes.is_int(x.dtype) and x.dtype != _BOOL:
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if x.dtype == _BOOL:  # counted as 0 and 1
        x = promotion.convert_element_type(x, _index_dtype())
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative, got {minlength}")
    if length is None:
        values = concrete_value(x)
        if values is None:
            raise concretization_error(
                x, "bincount", "x", "To avoid this error, pass a static `length` argument."
            )
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    length = operator.index(length)
    if weights is None:
        dtype, updates = _index_dtype(), 1
    else:
        updates = asarray_operand("bincount", weights, 1)
        if updates.dtype == _BOOL:
            raise TypeError("bincount: weights must be numeric, got bool")
        if updates.shape != x.shape:
            raise ValueError(
                "type of weights must match type of x. Got typeof(x)="
                f"{x.aval.str_short()} and typeof(weights)={updates.aval.str_short()}"
            )
        updates = promotion.convert_element_type(updates, updates.dtype, False)
        dtype = updates.dtype
    indices = ufuncs.maximum(x, promotion.convert_element_type(0, x.dtype, True))
    return _zeros((length,), dtype).at[indices].add(updates, mode="drop")
