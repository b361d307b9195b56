"""Index tricks: the grid and concatenation objects (`mgrid`, `ogrid`, `r_`, `c_`, `s_`,
`index_exp`) and the functions that make or convert index arrays (`indices`, `ix_`, the
diagonal and triangle indices, `mask_indices`, `ravel_multi_index`, `unravel_index`).

The objects are indexed with slices: `jnp.mgrid[0:3, 0:1:5j]` reads each slice as an `arange`
(or, with an imaginary step, a `linspace` with that many points), so the slices' bounds must
be concrete. Triangle indices are the `nonzero` of a triangle of ones with the static count of
its entries, so they stage without needing a concrete value.

    >>> jnp.r_['0,2', [1, 2, 3], [4, 5, 6]]  # a directive: axis 0, at least 2-D
    Array([[1, 2, 3],
           [4, 5, 6]], dtype=int32)
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import (
    arithmetic,
    creation,
    lib,
    manipulation,
    promotion,
    sorting,
    ufuncs,
)
from tracejit._src.numpy.promotion import asarray_operand

# --------------------------------------------------------------------------------------------
# Grids and concatenation by slicing


def _concrete_bound(value, name: str, what: str):
    if isinstance(value, Tracer):
        raise sorting.concretization_error(
            value, name, f"slice {what}", f"The slice {what} of jnp.{name} must be concrete."
        )
    return value


def _grid_from_slice(s: slice, name: str):
    """`arange(start, stop, step)`, or `linspace(start, stop, n)` for an imaginary step `nj`."""
    start = _concrete_bound(s.start, name, "start") or 0
    stop = _concrete_bound(s.stop, name, "stop")
    step = _concrete_bound(s.step, name, "step") or 1
    if np.iscomplex(step):
        return creation.linspace(start, stop, int(abs(step)))
    return creation.arange(start, stop, step)


class _Mgrid:
    """`jnp.mgrid[...]`: a dense grid (one stacked array, 'ij' indexing) from slices."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        if not key:
            return creation.arange(0)
        axes = promotion.promote_dtypes(*(_grid_from_slice(k, "mgrid") for k in key))
        return manipulation.stack(lib.meshgrid(*axes, indexing="ij", sparse=False), 0)


class _Ogrid:
    """`jnp.ogrid[...]`: an open grid (a list of broadcastable arrays) from slices."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        if not key:
            return []
        axes = promotion.promote_dtypes(*(_grid_from_slice(k, "ogrid") for k in key))
        return lib.meshgrid(*axes, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenation by indexing: slices (read as by `mgrid`), scalars and arrays joined
    along `axis`, each made at least `ndmin`-D with its own axes placed by `trans1d`; a
    leading string directive "axis,ndmin,trans1d" (or "r"/"c": a 2-D row/column result)
    overrides them."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            axis, ndmin, trans1d, matrix = _directive(directive, (axis, ndmin, trans1d, matrix))
        parts = [self._part(item, ndmin, trans1d) for item in items]
        out = manipulation.concatenate(parts, axis=axis)
        if matrix != -1 and out.ndim == 1:
            out = manipulation.expand_dims(out, matrix)
        return out

    def _part(self, item, ndmin: int, trans1d: int):
        if isinstance(item, slice):
            part, item_ndim = _grid_from_slice(item, self.name), 0
        elif isinstance(item, str):
            raise ValueError(  # noqa: TRY004 (JAX's class)
                "string directive must be placed at the beginning"
            )
        else:
            part = creation.array(item, copy=False)
            item_ndim = part.ndim
        part = creation.array(part, copy=False, ndmin=ndmin)
        if trans1d != -1 and ndmin - item_ndim > 0:
            shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
            order = tuple(range(ndmin))
            part = manipulation.transpose(part, order[shifts:] + order[:shifts])
        return part

    def __len__(self) -> int:
        return 0


def _directive(directive: str, params: tuple) -> tuple:
    """(axis, ndmin, trans1d, matrix) from a directive string, missing fields from `params`."""
    if directive == "r":
        return (*params[:3], 0)
    if directive == "c":
        return (*params[:3], 1)
    fields = directive.split(",")
    fields = fields[:3] + [params[3]] if len(fields) >= 4 else fields + list(params[len(fields) :])
    try:
        return tuple(int(f) for f in fields)
    except ValueError as err:
        raise ValueError(f"could not understand directive {directive!r}") from err


r_ = _AxisConcat("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _AxisConcat("c_", axis=-1, ndmin=2, trans1d=0)
s_ = np.s_
index_exp = np.index_exp


# --------------------------------------------------------------------------------------------
# Index arrays


def indices(dimensions, dtype=None, sparse=False):
    """The index grid of an array of shape `dimensions`: one stacked array, or with `sparse`
    a tuple of broadcastable ones."""
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "indices")
    dimensions = tuple(operator.index(d) for d in dimensions)
    n = len(dimensions)
    out = []
    for i, dim in enumerate(dimensions):
        shape = (1,) * i + (dim,) + (1,) * (n - i - 1) if sparse else dimensions
        out.append(lax_shapes.broadcast_in_dim(lax_shapes.iota(dtype, dim), shape, (i,)))
    if sparse:
        return tuple(out)
    return manipulation.stack(out, 0) if out else creation.array([], dtype=dtype)


def ix_(*args):
    """The 1-D arrays reshaped to index an open mesh: the i-th along axis i only."""
    operands = [asarray_operand("ix", a, i) for i, a in enumerate(args)]
    n = len(operands)
    out = []
    for i, a in enumerate(operands):
        if a.ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}"
            )
        if a.dtype == np.dtype(bool):
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = (1,) * i + (a.shape[0],) + (1,) * (n - i - 1)
        if a.size == 0:  # NumPy gives empty arrays the integer index type
            a = creation.zeros((0,), dtype=dtypes.default_int_dtype())
        out.append(lax_shapes.broadcast_in_dim(a, shape, (i,)))
    return tuple(out)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an `ndim`-D array of side `n`."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax_shapes.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr):
    """`diag_indices` for the (square, at least 2-D) `arr`."""
    x = asarray_operand("diag_indices_from", arr)
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], ndim=x.ndim)


def _triu_size(n: int, m: int, k: int) -> int:
    """The number of entries of an n x m matrix on or above the k-th diagonal."""
    if k < 0:
        return n * m - _triu_size(m, n, 1 - k)
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def tril_indices(n, k=0, m=None):
    """The (row, column) indices of the lower triangle (on and below the k-th diagonal)."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    ones = creation.ones((n, m))
    return sorting.nonzero(lib.tril(ones, k=k), size=_triu_size(m, n, -k))


def triu_indices(n, k=0, m=None):
    """The (row, column) indices of the upper triangle (on and above the k-th diagonal)."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    ones = creation.ones((n, m))
    return sorting.nonzero(lib.triu(ones, k=k), size=_triu_size(n, m, k))


def _matrix_shape(name: str, arr) -> tuple:
    shape = arr.shape if hasattr(arr, "shape") else asarray_operand(name, arr).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr, k=0):
    """`tril_indices` for the shape of the 2-D `arr`."""
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
    """`triu_indices` for the shape of the 2-D `arr`."""
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where `mask_func(ones((n, n)), k)` is nonzero (`size`: as in `nonzero`)."""
    return sorting.nonzero(mask_func(creation.ones((n, n)), k), size=size)


# --------------------------------------------------------------------------------------------
# Flat and multi-dimensional indices


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat positions of the coordinates `multi_index` in an array of shape `dims`.
    `mode='raise'` checks the range, which needs concrete coordinates; 'wrap' and 'clip' fold
    them into range, 'ignore' trusts them."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(operator.index(d) for d in dims)
    coords = [asarray_operand("ravel_multi_index", c, i) for i, c in enumerate(multi_index)]
    if dtype is None:
        dtype = dtypes.result_type(int, *coords)
    else:
        dtype = dtypes.check_user_dtype(dtype, "ravel_multi_index")
    if not dtypes.is_int(dtype) or dtype == np.dtype(bool):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if int(np.prod(dims, dtype=object)) - 1 > np.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold flattened index "
            f"for dims={dims}. Use the dtype argument to pass a suitable dtype (e.g. "
            "dtype=np.min_scalar_type(prod(dims)))."
        )
    coords = _checked_coordinates(coords, dims, mode)
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = creation.array(0, dtype=dtype)
    for coord, stride in zip(coords, strides, strict=True):
        result = result + creation.astype(coord, dtype) * int(stride)
    return result


def _checked_coordinates(coords, dims, mode):
    for c in coords:
        if mode == "raise" and sorting.concrete_value(c) is None:
            raise sorting.concretization_error(
                c,
                "ravel_multi_index",
                "multi_index",
                "The error occurred because ravel_multi_index was jit-compiled with "
                "mode='raise'. Use mode='wrap' or mode='clip' instead.",
            )
        if not dtypes.is_int(c.dtype) or c.dtype == np.dtype(bool):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        values = [sorting.concrete_value(c) for c in coords]
        if any(((v < 0) | (v >= d)).any() for v, d in zip(values, dims, strict=True)):
            raise ValueError("invalid entry in coordinates array")
        return coords
    if mode == "clip":
        return [ufuncs.clip(c, 0, d - 1) for c, d in zip(coords, dims, strict=True)]
    if mode == "wrap":
        return [arithmetic.remainder(c, d) for c, d in zip(coords, dims, strict=True)]
    if mode == "ignore":
        return coords
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")


def unravel_index(indices, shape):
    """The coordinates of the flat positions `indices` in an array of `shape`. Negative
    positions count from the end once; positions past either end are clipped to the first or
    last element, as in JAX."""
    flat = asarray_operand("unravel_index", indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    coords = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        flat, coords[i] = arithmetic.divmod(flat, s)
    past_end = ufuncs.greater(flat, 0)
    before_start = ufuncs.less(flat, -1) if not dtypes.is_unsigned(flat.dtype) else False
    return tuple(
        ufuncs.where(past_end, s - 1, ufuncs.where(before_start, 0, c))
        for s, c in zip(shape, coords, strict=True)
    )
