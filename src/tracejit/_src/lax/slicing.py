"""Slicing primitives: static slices, and slices and updates at run-time start indices.

`slice` takes static start/limit/stride tuples. `dynamic_slice` and `dynamic_update_slice` take
their start indices as scalar integer *operands* (all of one dtype), so they may be traced:

    lax.dynamic_slice(x, (i, 0), (1, 2))
        c:bool[] = lt b 0:i32[]
        d:i32[] = add b 4:i32[]
        e:i32[] = select_n c b d
        f:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a e 0:i32[]

As in JAX, the wrappers first wrap negative indices around (Python-style) unless
`allow_negative_indices=False`: concrete indices (Python and NumPy integers, Arrays) in Python,
traced ones with the `lt`/`add`/`select_n` equations above. The primitives then clamp each start
index into `[0, operand_dim - slice_dim]`, as XLA does, so that a slice or an update never
reaches past the operand's edge and no index is ever out of bounds.

Under vmap, start indices that differ between batch members make the dynamic primitives a
`gather` (`dynamic_slice`) or a `scatter` (`dynamic_update_slice`) of one window per member, in
CLIP mode, which clamps each member's starts as the primitives do (`lax/gather.py`).

The `*_in_dim` wrappers are compositions: `slice_in_dim` and `index_in_dim` bind `slice` (and
`squeeze` unless `keepdims`), the dynamic ones bind the dynamic primitives on one axis.
Results keep the operand's weak type (`dynamic_update_slice`: weak only when every operand is).
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array
from tracejit._src.core import Primitive, ShapedArray, Tracer, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, move_batch_dim
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import binary, comparison, gather, scatter, selection, shapes
from tracejit._src.lax.standard import check_same_dtypes, int_bounds, static_ints, weak_if_all_weak
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

_py_slice = builtins.slice  # `slice` below is the primitive's wrapper, as in JAX


def _normalize_axis(name: str, axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise IndexError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


# --- slice ----------------------------------------------------------------------------------
slice_p = Primitive("slice")


def slice(operand, start_indices, limit_indices, strides=None):
    """The elements of `operand` from `start_indices` (inclusive) to `limit_indices`
    (exclusive) with step `strides` (default 1) along each dimension; all static."""
    start_indices = static_ints("slice", "start_indices", start_indices)
    limit_indices = static_ints("slice", "limit_indices", limit_indices)
    if strides is not None:
        strides = static_ints("slice", "strides", strides)
    return slice_p.bind(
        operand, start_indices=start_indices, limit_indices=limit_indices, strides=strides
    )


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`slice` along one `axis`; `None` means the axis's start/end, negative indices count from
    the end."""
    shape = shape_of(operand)
    axis = _normalize_axis("slice_in_dim", axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = (start + size if start < 0 else start), (limit + size if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The `index`-th slice of `operand` along `axis` (negative counts from the end), with that
    axis kept (size 1) or, if not `keepdims`, squeezed out."""
    shape = shape_of(operand)
    axis = _normalize_axis("index_in_dim", axis, len(shape))
    size = shape[axis]
    index = operator.index(index)
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else shapes.squeeze(result, (axis,))


def _slice_shape(shape, start_indices, limit_indices, strides) -> tuple:
    strides = strides or (1,) * len(shape)
    return tuple(
        (limit - start + stride - 1) // stride
        for start, limit, stride in zip(start_indices, limit_indices, strides, strict=True)
    )


@slice_p.def_impl
def _slice_impl(operand, *, start_indices, limit_indices, strides):
    if strides is None:
        return operand[tuple(map(_py_slice, start_indices, limit_indices))]
    return operand[tuple(map(_py_slice, start_indices, limit_indices, strides))]


@slice_p.def_abstract_eval
def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides):
    shape = operand.shape
    if len(start_indices) != len(shape):
        raise TypeError(
            "slice start_indices must have length equal to the number of dimensions of the "
            f"operand, got indices {start_indices} for operand shape {shape}."
        )
    if len(limit_indices) != len(start_indices):
        raise TypeError(
            "slice limit_indices must have the same length as start_indices, got start_indices "
            f"{start_indices} and limit_indices {limit_indices}."
        )
    if strides is not None and len(strides) != len(shape):
        raise TypeError(
            "slice strides must have length equal to the number of dimensions of the operand, "
            f"got strides {strides} for operand shape {shape}."
        )
    if any(limit > size for limit, size in zip(limit_indices, shape, strict=True)):
        raise TypeError(
            "slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {shape}."
        )
    if any(start < 0 for start in start_indices):
        raise TypeError(
            f"slice start_indices must have every element be nonnegative, got {start_indices}."
        )
    if any(limit < start for start, limit in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if strides is not None and any(stride <= 0 for stride in strides):
        raise TypeError(f"slice strides must have every element be positive, got {strides}.")
    result = _slice_shape(shape, start_indices, limit_indices, strides)
    return ShapedArray(result, operand.dtype, operand.weak_type)


slice_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(slice_p)


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
    # Spread the cotangent back over the operand's shape: zeros before the start, between the
    # strided elements (interior padding) and after the last one taken.
    shape = operand.aval.shape
    strides = strides or (1,) * len(shape)
    config = []
    for size, start, stride, taken in zip(shape, start_indices, strides, ct.shape, strict=True):
        spread = taken + max(taken - 1, 0) * (stride - 1)
        config.append((start, size - start - spread, stride - 1))
    return [shapes.pad(ct, np.zeros((), ct.dtype), config)]


transpose_rules[slice_p] = _slice_transpose


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    attributes = {
        "start_indices": hlo.i64_array(start_indices),
        "limit_indices": hlo.i64_array(limit_indices),
        "strides": hlo.i64_array(strides or (1,) * len(start_indices)),
    }
    return ctx.op("stablehlo.slice", [x], attributes)


lowering_rules[slice_p] = _slice_lowering


def _slice_batch(values, dims, *, start_indices, limit_indices, strides):
    (operand,), (bd,) = values, dims
    size = shape_of(operand)[bd]
    starts = start_indices[:bd] + (0,) + start_indices[bd:]
    limits = limit_indices[:bd] + (size,) + limit_indices[bd:]
    if strides is not None:
        strides = strides[:bd] + (1,) + strides[bd:]
    out = slice_p.bind(operand, start_indices=starts, limit_indices=limits, strides=strides)
    return out, bd


batch_rules[slice_p] = _slice_batch


# --- start indices of the dynamic primitives ------------------------------------------------
def _start_indices(name: str, shape: tuple, start_indices, allow_negative_indices) -> list:
    """The start index operands: one scalar per dimension, negative ones wrapped around."""
    if isinstance(start_indices, Tracer):  # a traced vector of indices: one scalar each
        if len(start_indices.shape) != 1:
            raise ValueError(
                f"{name} start_indices must be a sequence of scalars or a 1D array, got "
                f"shape {start_indices.shape}"
            )
        count = start_indices.shape[0]
        indices = [index_in_dim(start_indices, k, keepdims=False) for k in range(count)]
    elif isinstance(start_indices, (np.ndarray, Array)):
        indices = list(np.asarray(start_indices))
    else:
        indices = list(start_indices)
    if len(indices) != len(shape):
        raise ValueError(
            "Length of slice indices must match number of operand dimensions "
            f"({len(indices)} vs {shape})"
        )
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = (allow_negative_indices,) * len(shape)
    allow = tuple(allow_negative_indices)
    if len(allow) != len(shape):
        raise ValueError(
            f"{name}: allow_negative_indices has {len(allow)} entries for an operand of rank "
            f"{len(shape)}"
        )
    return [
        _start_index(index, size, wrap)
        for index, size, wrap in zip(indices, shape, allow, strict=True)
    ]


def _start_index(index, size: int, wrap_negative: bool):
    if type(index) is int:
        dtype, value = dtypes.default_int_dtype(), index
    elif isinstance(index, Tracer):
        if wrap_negative and dtypes.is_int(index.dtype):
            dtype = index.dtype
            is_negative = comparison.lt(index, dtype.type(0))
            index = selection.select_n(is_negative, index, binary.add(index, dtype.type(size)))
        return index
    else:  # a concrete value: NumPy integer, Array
        dtype = getattr(index, "dtype", None)
        if dtype is None or dtype.kind not in "iu" or np.ndim(index):
            return index  # not an integer scalar: the abstract evaluation reports it
        dtype, value = dtypes.canonicalize_dtype(dtype), int(index)
    if value < 0:
        if not wrap_negative:
            raise ValueError(
                f"Index {value} is out of bounds for dimension {size} if "
                "allow_negative_indices=False"
            )
        value += size
    low, high = int_bounds(dtype)
    return dtype.type(value if low <= value <= high else min(max(value, low), high))


def _check_start_indices(name: str, operand: ShapedArray, indices, colon: str) -> None:
    if len(indices) != operand.ndim:
        raise ValueError(
            "Length of slice indices must match number of operand dimensions "
            f"({len(indices)} vs {operand.shape})"
        )
    if any(index.shape for index in indices):
        raise TypeError(
            f"start_indices arguments to {name} must be scalars,  got indices {tuple(indices)}"
        )
    index_dtypes = [index.dtype for index in indices]
    if any(not dtypes.is_int(d) for d in index_dtypes) or len(set(index_dtypes)) > 1:
        got = ", ".join(d.name for d in index_dtypes)
        raise TypeError(
            f"index arguments to {name} must be integers of the same type, got{colon} {got}"
        )


def _with_batch_index(indices, position: int) -> list:
    """The start indices with a zero for the batch dimension inserted at `position`."""
    dtype = dtypes.dtype_of(indices[0]) if indices else dtypes.default_int_dtype()
    indices = list(indices)
    indices.insert(position, dtype.type(0))
    return indices


def _index_vectors(indices, dims, size: int):
    """Batched start indices (some scalars batched, some not) as one integer array of shape
    (size, rank): each member's index vector, for a gather or scatter."""
    columns = [
        shapes.broadcast_in_dim(index, (size, 1), () if dim is None else (0,))
        for index, dim in zip(indices, dims, strict=True)
    ]
    return columns[0] if len(columns) == 1 else shapes.concatenate(columns, 1)


def _batched_window_dnums(rank: int, operand_batched: bool) -> tuple:
    """(offset or window dims, start index map, operand batching dims, index batching dims) of
    the gather/scatter that takes one window per batch member at its own start indices: the
    window dims follow the result's batch dim 0; a batched operand (its batch dim first) pairs
    its batch dim with the indices' (batch member i reads or writes operand slice i)."""
    window = tuple(range(1, rank + 1))
    if operand_batched:
        return window, window, (0,), (0,)
    return window, tuple(range(rank)), (), ()


# --- dynamic_slice --------------------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice")


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The slice of static shape `slice_sizes` starting at run-time `start_indices` (scalars,
    or a 1D integer array), each clamped so that the slice stays within `operand`."""
    indices = _start_indices(
        "dynamic_slice", shape_of(operand), start_indices, allow_negative_indices
    )
    slice_sizes = static_ints("dynamic_slice", "slice_sizes", slice_sizes)
    return dynamic_slice_p.bind(operand, *indices, slice_sizes=slice_sizes)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    """`dynamic_slice` of `slice_size` elements along one `axis`, the whole of the others."""
    shape = shape_of(operand)
    axis = _normalize_axis("dynamic_slice_in_dim", axis, len(shape))
    zero = 0 if type(start_index) is int else dtypes.dtype_of(start_index).type(0)
    starts = [zero] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [True] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """The `index`-th (run-time) slice along `axis`, kept as a size-1 axis or squeezed out."""
    axis = _normalize_axis("dynamic_index_in_dim", axis, len(shape_of(operand)))
    result = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return result if keepdims else shapes.squeeze(result, (axis,))


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(operand, *indices, slice_sizes):
    slices = []
    for index, dim, size in zip(indices, operand.shape, slice_sizes, strict=True):
        start = max(min(int(index), dim - size), 0)  # clamped as XLA does
        slices.append(_py_slice(start, start + size))
    return operand[tuple(slices)]


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(operand, *indices, slice_sizes):
    _check_start_indices("dynamic_slice", operand, indices, ":")
    if len(slice_sizes) != operand.ndim:
        raise ValueError(
            "dynamic_slice slice_sizes must have one size per operand dimension, got "
            f"slice_sizes {slice_sizes} for operand shape {operand.shape}."
        )
    if any(size < 0 for size in slice_sizes):
        raise TypeError(
            "dynamic_slice slice_sizes must be greater than or equal to zero, got slice_sizes "
            f"of {slice_sizes}."
        )
    if any(size > dim for size, dim in zip(slice_sizes, operand.shape, strict=True)):
        raise TypeError(
            "dynamic_slice slice_sizes must be less than or equal to operand shape, got "
            f"slice_sizes {slice_sizes} for operand shape {operand.shape}."
        )
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


dynamic_slice_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])  # the operand's
ad.defjvp_linear_in(dynamic_slice_p, 0)  # the start indices are integers: no derivative


def _dynamic_slice_transpose(ct, operand, *indices, slice_sizes):
    # The primitive clamps the start indices as dynamic_update_slice does, so the cotangent
    # lands where the slice was taken.
    zeros = ad.zeros_like_aval(operand.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
# stablehlo.dynamic_slice clamps the start indices as the impl does.
lowering_rules[dynamic_slice_p] = lambda ctx, x, *indices, slice_sizes: ctx.op(
    "stablehlo.dynamic_slice", [x, *indices], {"slice_sizes": hlo.i64_array(slice_sizes)}
)


def _dynamic_slice_batch(values, dims, *, slice_sizes):
    """Unbatched start indices: a dynamic_slice taking the whole batch dimension. Batched ones:
    a gather of one window per member (CLIP mode clamps each start as dynamic_slice does)."""
    (operand, *indices), (bd, *index_dims) = values, dims
    if all(d is None for d in index_dims):
        size = shape_of(operand)[bd]
        sizes = slice_sizes[:bd] + (size,) + slice_sizes[bd:]
        out = dynamic_slice_p.bind(operand, *_with_batch_index(indices, bd), slice_sizes=sizes)
        return out, bd
    size = next(shape_of(x)[0] for x, d in zip(indices, index_dims, strict=True) if d is not None)
    window, start_map, operand_batching, index_batching = _batched_window_dnums(
        len(slice_sizes), bd is not None
    )
    if bd is not None:
        operand = move_batch_dim(operand, bd, 0)
        slice_sizes = (1, *slice_sizes)
    dnums = gather.GatherDimensionNumbers(window, (), start_map, operand_batching, index_batching)
    out = gather.gather_p.bind(
        operand,
        _index_vectors(indices, index_dims, size),
        dimension_numbers=dnums,
        slice_sizes=slice_sizes,
        indices_are_sorted=False,
        unique_indices=False,
        mode=gather.GatherScatterMode.CLIP,
        fill_value=None,
    )
    return out, 0


batch_rules[dynamic_slice_p] = _dynamic_slice_batch

# --- dynamic_update_slice -------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice")


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with `update` written at run-time `start_indices`, each clamped so that the
    update lies within `operand`."""
    indices = _start_indices(
        "dynamic_update_slice", shape_of(operand), start_indices, allow_negative_indices
    )
    return dynamic_update_slice_p.bind(operand, update, *indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    """`dynamic_update_slice` at `start_index` along one `axis` (0 along the others)."""
    shape = shape_of(operand)
    axis = _normalize_axis("dynamic_update_slice_in_dim", axis, len(shape))
    zero = 0 if type(start_index) is int else dtypes.dtype_of(start_index).type(0)
    starts = [zero] * len(shape)
    starts[axis] = start_index
    allow = [True] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """Writes `update` as the `index`-th slice along `axis`; `update` may lack that axis."""
    shape = shape_of(operand)
    axis = _normalize_axis("dynamic_update_index_in_dim", axis, len(shape))
    update_shape = shape_of(update)
    if len(update_shape) == len(shape) - 1:
        update = shapes.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(operand, update, *indices):
    if not indices:  # rank 0: the update replaces the operand
        return update
    slices = []
    for index, dim, size in zip(indices, operand.shape, update.shape, strict=True):
        start = max(min(int(index), dim - size), 0)  # clamped as XLA does
        slices.append(_py_slice(start, start + size))
    out = operand.copy()
    out[tuple(slices)] = update
    return out


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(operand, update, *indices):
    check_same_dtypes("dynamic_update_slice", operand, update)
    if update.ndim != operand.ndim:
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update shape "
            f"{update.shape} for operand shape {operand.shape}."
        )
    if any(u > d for u, d in zip(update.shape, operand.shape, strict=True)):
        raise TypeError(
            "dynamic_update_slice update shape must be smaller than operand shape, got update "
            f"shape {update.shape} for operand shape {operand.shape}."
        )
    _check_start_indices("dynamic_update_slice", operand, indices, "")
    weak = operand.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return ShapedArray(operand.shape, operand.dtype, weak)


dynamic_update_slice_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_linear_in(dynamic_update_slice_p, 0, 1)  # linear in operand and update jointly


def _dynamic_update_slice_transpose(ct, operand, update, *indices):
    update_aval = update.aval if is_undefined_primal(update) else get_aval(update)
    ct_operand = ct_update = None
    if is_undefined_primal(operand):  # what the update overwrote gets no cotangent
        zeros = ad.zeros_like_aval(ad.tangent_aval(update_aval))
        ct_operand = dynamic_update_slice_p.bind(ct, zeros, *indices)
    if is_undefined_primal(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [ct_operand, ct_update] + [None] * len(indices)


transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose
lowering_rules[dynamic_update_slice_p] = lambda ctx, x, update, *indices: ctx.op(
    "stablehlo.dynamic_update_slice", [x, update, *indices]
)


def _dynamic_update_slice_batch(values, dims):
    """Operand and update get the batch dimension first (an unbatched one is broadcast).
    Unbatched start indices: one dynamic_update_slice at index 0 of the batch dimension.
    Batched ones: a scatter of one window per member into its own operand slice (CLIP mode
    clamps each start as dynamic_update_slice does; the windows never overlap)."""
    (operand, update, *indices), (bd, update_bd, *index_dims) = values, dims
    size = next(shape_of(x)[d] for x, d in zip(values, dims, strict=True) if d is not None)
    operand = batch_at_front(operand, bd, size)
    update = batch_at_front(update, update_bd, size)
    if all(d is None for d in index_dims):
        out = dynamic_update_slice_p.bind(operand, update, *_with_batch_index(indices, 0))
        return out, 0
    window, start_map, operand_batching, index_batching = _batched_window_dnums(len(indices), True)
    dnums = gather.ScatterDimensionNumbers(window, (), start_map, operand_batching, index_batching)
    out = scatter.scatter_p.bind(
        operand,
        _index_vectors(indices, index_dims, size),
        update,
        dimension_numbers=dnums,
        indices_are_sorted=False,  # (the members' start indices are in any order)
        unique_indices=True,
        mode=gather.GatherScatterMode.CLIP,
        update_jaxpr=None,
        update_consts=(),
    )
    return out, 0


batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch
