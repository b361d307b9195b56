"""Arrays edited by position or by mask: delete, insert, place, put, put_along_axis, choose,
compress, extract.

JAX arrays are immutable, so NumPy's in-place editors (`place`, `put`, `put_along_axis`) return
the edited copy, and refuse to run unless the caller says so with `inplace=False` (their
default, `True`, raises JAX's ValueError rather than silently not editing the argument).
Everything is built from indexing: `.at[].set` scatters, gathers, and the `nonzero`-style
compaction with a static `size`. Where the result's length depends on values (`delete` with
an index array, `compress` and `extract` without `size`), the values must be concrete; a
traced operand raises JAX's ConcretizationTypeError naming the argument.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import arithmetic, creation, manipulation, promotion, sorting, ufuncs
from tracejit._src.numpy.index_tricks import unravel_index
from tracejit._src.numpy.manipulation import normalize_axis
from tracejit._src.numpy.promotion import asarray_operand


def _immutable_error(name: str) -> ValueError:
    return ValueError(
        f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array."
    )


def _concrete(x, name: str, argname: str) -> np.ndarray:
    """The NumPy value of `x`, or JAX's error for a traced one."""
    value = sorting.concrete_value(x)
    if value is None:
        raise sorting.concretization_error(
            x, name, argname, f"The {argname!r} argument of jnp.{name}() must be concrete."
        )
    return value


def _along(axis: int, index) -> tuple:
    """The index tuple selecting `index` along `axis` and everything along the axes before."""
    return (slice(None),) * axis + (index,)


# --------------------------------------------------------------------------------------------
# delete and insert


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries `obj` (an int, a slice, an index array or a boolean mask)
    along `axis` (of the flattened `arr` for None). Only unique integer indices
    (`assume_unique_indices=True`) may be traced: the kept positions are then computed."""
    a = asarray_operand("delete", arr)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, (int, np.integer)):
        i = normalize_axis(obj, n)
        before = a[_along(axis, slice(0, i))]
        return manipulation.concatenate([before, a[_along(axis, slice(i + 1, None))]], axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = creation.arange(n)[obj], True
    obj = promotion.asarray_operand("delete", promotion.to_operand("delete", obj, 1))
    if dtypes.is_int(obj.dtype) and obj.dtype != np.dtype(bool) and assume_unique_indices:
        return a[_along(axis, _kept_positions(obj, n))]
    value = _concrete(obj, "delete", "obj")
    if value.dtype == np.dtype(bool):
        if value.shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                "length matching specified axis."
            )
        mask = ~value
    elif np.issubdtype(value.dtype, np.integer):
        mask = np.ones(n, dtype=bool)
        mask[value] = False
    else:
        raise ValueError(
            f"np.delete(arr, obj): got obj.dtype={value.dtype}; must be integer or bool."
        )
    return a[_along(axis, mask)]


def _kept_positions(obj, n: int):
    """The positions of `range(n)` not among the unique (possibly traced) indices `obj`: the
    i-th kept position is i plus the number of deleted positions at or before it."""
    deleted = manipulation.ravel(obj)
    deleted = ufuncs.clip(ufuncs.where(ufuncs.less(deleted, 0), deleted + n, deleted), 0, n)
    deleted = sorting.sort(deleted)
    deleted = deleted - creation.arange(deleted.shape[0], dtype=deleted.dtype)
    kept = creation.arange(n - deleted.shape[0], dtype=deleted.dtype)
    passed = ufuncs.greater_equal(kept[None, :], deleted[:, None])
    return kept + passed.sum(0, dtype=kept.dtype)


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the positions `obj` (an int, a slice or a 1-D
    integer array) along `axis` (of the flattened `arr` for None)."""
    a = asarray_operand("insert", arr)
    if not isinstance(obj, slice):
        promotion.to_operand("insert", obj, 1)
    values = asarray_operand("insert", values, 2)
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    n_input = a.shape[axis]
    if isinstance(obj, slice):
        indices = creation.arange(*obj.indices(n_input))
    else:
        indices = creation.asarray(obj)
    if indices.ndim > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}"
        )
    if not dtypes.is_int(indices.dtype) or indices.dtype == np.dtype(bool):
        if indices.size == 0 and not isinstance(obj, Tracer):
            indices = creation.astype(indices, dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values = creation.array(values, ndmin=a.ndim, dtype=a.dtype, copy=False)
    if indices.size == 1:
        index = manipulation.ravel(indices)[0]
        if indices.ndim == 0:
            values = manipulation.moveaxis(values, 0, axis)
        indices = creation.full(values.shape[axis], index)
    n_insert = promotion.broadcast_shapes(indices.shape, (values.shape[axis],))[0]
    out_shape = a.shape[:axis] + (n_input + n_insert,) + a.shape[axis + 1 :]
    out = creation.zeros_like(a, shape=out_shape)
    indices = ufuncs.where(ufuncs.less(indices, 0), indices + n_input, indices)
    indices = ufuncs.clip(indices, 0, n_input)
    # Inserted values shift each other: the k-th in sorted order lands k places further on.
    shift = creation.arange(n_insert, dtype=indices.dtype)
    values_at = indices.at[sorting.argsort(indices)].add(shift)
    kept = creation.ones(n_input + n_insert, dtype=bool).at[values_at].set(False)
    kept_at = sorting.nonzero(kept, size=n_input)[0]
    out = out.at[_along(axis, values_at)].set(values)
    return out.at[_along(axis, kept_at)].set(a)


# --------------------------------------------------------------------------------------------
# place, put, put_along_axis


def _tile_to_size(x, size: int):
    """The 1-D `x` repeated cyclically (or cut) to length `size`."""
    if x.size < size:
        x = manipulation.tile(x, -(-size // x.size))
    return x[:size] if x.size > size else x


def place(arr, mask, vals, *, inplace=True):
    """`arr` with the positions where `mask` is true set to `vals`, in order, repeated
    cyclically (NumPy's `place`, returning the result)."""
    data = asarray_operand("place", arr)
    mask = asarray_operand("place", mask, 1)
    vals = manipulation.ravel(asarray_operand("place", vals, 2))
    if inplace:
        raise _immutable_error("place")
    if data.size != mask.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    where_true = sorting.nonzero(manipulation.ravel(mask), size=mask.size, fill_value=mask.size)
    positions = where_true[0]
    vals = _tile_to_size(vals, positions.shape[0])
    flat = manipulation.ravel(data).at[positions].set(vals, mode="drop")
    return manipulation.reshape(flat, data.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """`a` with its flat positions `ind` set to `v` (repeated cyclically). Out-of-bound
    positions are dropped (`mode=None`), clipped or wrapped; 'raise' cannot be checked in a
    traced function and is not supported, as in JAX."""
    if inplace:
        raise _immutable_error("put")
    x = asarray_operand("put", a)
    ind = manipulation.ravel(asarray_operand("put", ind, 1))
    v = manipulation.ravel(asarray_operand("put", v, 2))
    if not x.size or not ind.size or not v.size:
        return x
    v = _tile_to_size(v, ind.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind, scatter_mode = ufuncs.clip(ind, 0, x.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, scatter_mode = arithmetic.remainder(ind, x.size), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    return x.at[unravel_index(ind, x.shape)].set(v, mode=scatter_mode)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """`arr` with `values` written at `indices` along `axis`, matched position by position
    along the other axes (the inverse of `take_along_axis`)."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array."
        )
    x = asarray_operand("put_along_axis", arr)
    indices = asarray_operand("put_along_axis", indices, 1)
    values = asarray_operand("put_along_axis", values, 2)
    original_shape = x.shape
    if axis is None:
        x, axis = manipulation.ravel(x), 0
    if x.ndim != indices.ndim:
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={x.ndim} and indices.ndim={indices.ndim}."
        )
    try:
        values = manipulation.broadcast_to(values, indices.shape)
    except ValueError:
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={values.shape} and indices.shape={indices.shape}."
        ) from None
    axis = normalize_axis(axis, x.ndim)
    index = []
    for d in range(x.ndim):
        if d == axis:
            index.append(indices)
        else:
            shape = (1,) * d + (x.shape[d],) + (1,) * (x.ndim - d - 1)
            index.append(lax_shapes.broadcasted_iota(dtypes.default_int_dtype(), shape, d))
    out = x.at[tuple(index)].set(values, mode=mode)
    return manipulation.reshape(out, original_shape)


# --------------------------------------------------------------------------------------------
# choose, compress, extract


def choose(a, choices, out=None, mode="raise"):
    """Elementwise `choices[a]`: each element of the integer `a` picks the array (all
    broadcast together) whose element it takes. `mode='raise'` checks the range, which needs a
    concrete `a`; 'wrap' and 'clip' fold it into range."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = asarray_operand("choose", a)
    choices = [asarray_operand("choose", c, i + 1) for i, c in enumerate(choices)]
    if not dtypes.is_int(a.dtype) or a.dtype == np.dtype(bool):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        value = sorting.concrete_value(a)
        if value is None:
            raise sorting.concretization_error(
                a,
                "choose",
                "a",
                "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
                "mode='wrap' or mode='clip' instead.",
            )
        if ((value < 0) | (value >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = arithmetic.remainder(a, n)
    elif mode == "clip":
        a = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *choices = manipulation.broadcast_arrays(a, *choices)
    stacked = creation.array(choices)
    grids = [
        lax_shapes.broadcasted_iota(dtypes.default_int_dtype(), a.shape, d) for d in range(a.ndim)
    ]
    return stacked[(a, *grids)]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` (of the flattened `a` for None) where `condition` is
    true. With a static `size` the result has that length, padded with `fill_value`, and the
    condition may be traced."""
    condition = asarray_operand("compress", condition)
    x = asarray_operand("compress", a, 1)
    fill_value = asarray_operand("compress", fill_value, 2)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    condition = creation.astype(condition, bool)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        x, axis = manipulation.ravel(x), 0
    else:
        x = manipulation.moveaxis(x, axis, 0)
    n = x.shape[0]
    extra, condition = condition[n:], condition[:n]
    x = x[: condition.shape[0]]
    if size is None:
        if _concrete(extra, "compress", "condition").any():
            raise ValueError("condition contains entries that are out of bounds")
        result = x[_concrete(condition, "compress", "condition")]
    else:
        if isinstance(size, Tracer):
            raise sorting.concretization_error(
                size, "compress", "size", "The size argument of jnp.compress must be static."
            )
        size = operator.index(size)
        if not 0 <= size <= x.shape[0]:
            raise ValueError(
                "size must be positive and not greater than the size of the array axis; got "
                f"size={size} for a.shape[axis]={x.shape[0]}"
            )
        mask = manipulation.expand_dims(condition, tuple(range(1, x.ndim)))
        x = ufuncs.where(mask, x, creation.array(fill_value, dtype=x.dtype))
        result = x[sorting.argsort(condition, stable=True, descending=True)][:size]
    return manipulation.moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of `arr` where `condition` is true, both flattened (see `compress`)."""
    condition = asarray_operand("extract", condition)
    arr = asarray_operand("extract", arr, 1)
    return compress(
        manipulation.ravel(condition), manipulation.ravel(arr), size=size, fill_value=fill_value
    )
