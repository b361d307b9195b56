"""lax's helpers that make, reshape or read arrays by composing the primitives: no primitive of
their own, so their jaxprs are those of the primitives they bind, as in JAX:

    lax.full((2,), 3.)          b:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 3.0
    lax.collapse(x, 0)          b:f32[6] = reshape[dimensions=None new_sizes=(6,)] a

Filled arrays are weakly typed when the fill value is a Python scalar and no dtype is given
(JAX's rule); `empty` gives zeros, as XLA's uninitialized buffers do on CPU.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array, make_array
from tracejit._src.core import Tracer, get_aval, shape_of
from tracejit._src.lax import binary, comparison, conversions, gather, selection, shapes
from tracejit._src.lax.standard import check_no_sharding, is_array, static_ints


def _fill(fill_value, dtype, weak_type: bool):
    """`fill_value` as a rank-0 operand of `dtype`, weak as asked: a constant (a literal in
    jaxprs) unless it is a traced value."""
    if np.ndim(fill_value) != 0:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape "
            f"{np.shape(fill_value)}."
        )
    if not is_array(fill_value):
        with np.errstate(over="ignore", invalid="ignore"):
            return make_array(np.asarray(fill_value).astype(dtype), weak_type)
    if fill_value.dtype == dtype and fill_value.weak_type == weak_type:
        return fill_value
    return conversions.convert_element_type_p.bind(fill_value, new_dtype=dtype, weak_type=weak_type)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with the scalar `fill_value` (of `dtype`, else of the fill
    value's dtype, weakly typed for a Python scalar)."""
    check_no_sharding("full", sharding)
    shape = static_ints("full", "shape", (shape,) if np.ndim(shape) == 0 else shape)
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dtype = dtypes.dtype_of(fill_value) if dtype is None else dtypes.check_user_dtype(dtype)
    return shapes.broadcast(_fill(fill_value, dtype, weak), shape)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like `x` (its shape, its dtype unless `dtype` is given, and its weak type)
    filled with the scalar `fill_value`; `shape` overrides x's shape."""
    check_no_sharding("full_like", sharding)
    weak = dtype is None and dtypes.is_weakly_typed(x)
    dtype = dtypes.dtype_of(x) if dtype is None else dtypes.check_user_dtype(dtype)
    shape = shape_of(x) if shape is None else static_ints("full_like", "shape", shape)
    return shapes.broadcast(_fill(fill_value, dtype, weak), shape)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose values the program must not read before writing
    them (zeros here: arrays are immutable, so any values would do)."""
    check_no_sharding("empty", out_sharding)
    return full(shape, 0, dtypes.check_user_dtype(dtype))


def broadcast_like(arr, like_arr):
    """`arr` broadcast (leading dimensions added) to the shape of `like_arr`."""
    arr_shape, like_shape = shape_of(arr), shape_of(like_arr)
    dims = tuple(range(len(like_shape) - len(arr_shape), len(like_shape)))
    return shapes.broadcast_in_dim(arr, like_shape, dims)


def broadcast_shapes(*shapes):  # (the module `shapes` is not needed here)
    """The shape arrays of the given shapes broadcast to, with NumPy's rules."""
    if not shapes:
        raise ValueError("broadcast_shapes requires at least one shape")
    shape_tuples = [tuple(map(operator.index, s)) for s in shapes]
    rank = max(map(len, shape_tuples))
    padded = [(1,) * (rank - len(s)) + s for s in shape_tuples]
    result = []
    for sizes in zip(*padded, strict=True):
        others = {d for d in sizes if d != 1}
        if len(others) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shape_tuples}")
        result.append(others.pop() if others else 1)
    return tuple(result)


def collapse(operand, start_dimension, stop_dimension=None):
    """`operand` with dimensions `start_dimension` up to (excluding) `stop_dimension` merged
    into one (to the last dimension when `stop_dimension` is None; negative ones count from
    the end)."""
    shape = shape_of(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}[{lo}:{hi}]")
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return shapes.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def dtype(x):
    """The canonical dtype `x` has as a tracejit value (Python scalars: the default dtypes)."""
    return dtypes.dtype_of(x)


def index_take(src, idxs, axes):
    """The elements of `src` at the integer index arrays `idxs` (one per axis in `axes`, of
    one shape, wrapped modulo the axis sizes as Python indexes are); the remaining axes follow
    the index dimension."""
    axes = static_ints("index_take", "axes", axes)
    src_shape = shape_of(src)
    indices = shapes.concatenate([shapes.expand_dims(i, (1,)) for i in idxs], 1)
    sizes = np.array([src_shape[ax] for ax in axes], get_aval(indices).dtype)
    sizes = shapes.broadcast_to_rank(sizes, len(shape_of(indices)))
    remainder = binary.rem(indices, sizes)
    indices = selection.select(comparison.lt(remainder, 0), binary.add(remainder, sizes), remainder)
    slice_sizes = tuple(1 if ax in axes else n for ax, n in enumerate(src_shape))
    dnums = gather.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(src_shape) - len(axes) + 1)),
        collapsed_slice_dims=axes,
        start_index_map=axes,
    )
    return gather.gather(src, indices, dnums, slice_sizes)


def shape_as_value(shape):
    """`shape` (static sizes) as an int32 vector: a NumPy constant, as JAX gives it (an empty
    shape gives an empty Array)."""
    sizes = static_ints("shape_as_value", "shape", shape)
    return np.array(sizes, np.int32) if sizes else full((0,), 0, np.int32)


def stage(x, /):
    """`x` (an array or a scalar) as a tracejit value: arrays and tracers as they are, NumPy and
    Python values as Arrays of their canonical dtype (weak for Python scalars). Values enter
    a trace as constants when first used, so there is nothing more to lift."""
    if isinstance(x, (Array, Tracer)):  # (device Arrays too)
        return x
    if not (isinstance(x, (np.ndarray, np.generic)) or dtypes.is_python_scalar(x)):
        raise TypeError(
            "Error interpreting argument to stage as a JAX value. The problematic value is of "
            f"type {type(x)} and was passed to stage at position 0."
        )
    return make_array(np.asarray(x).astype(dtypes.dtype_of(x)), dtypes.is_weakly_typed(x))
