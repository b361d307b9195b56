"""Primitives that move, reshape, pad or join values, one block each.

They change shapes (broadcast_in_dim, reshape, transpose, squeeze, rev, pad, concatenate) or
make values (iota); dtype changes are in `conversions`, choosing elements in `selection`. Shapes and axes in params are tuples of non-negative Python ints: the public
wrappers normalize user input, and wrappers such as `broadcast`, `expand_dims` and `select` are
compositions that bind these primitives, as JAX's are:

    lax.expand_dims(x, (0,))        b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a

A wrapper whose result would be its operand (an identity reshape, transpose, broadcast or
conversion of an Array or tracer) returns the operand without binding, as JAX does.

The eval trace checks each eager signature with the abstract evaluation before it runs an impl,
so impls assume valid operands and params and are plain NumPy calls. Most results keep their
operands' weak type (weak when all are); iota is never weak.

This module is the base of the families: their derivative and batching rules broadcast, reshape
and transpose with it, and `broadcasting` builds their batch rules on it while they are being
defined. So it imports no family at module level, and the few of its rules that need one
(transposes summing with `reductions`, slicing with `slicing`, pad's batching selecting with
`selection`) import it when they run: importing this module first never starts a family that
needs it complete.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad, structural
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    move_batch_dim,
    no_batched_operands,
)
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax.standard import (
    check_no_sharding,
    check_same_dtypes,
    is_array,
    never_weak,
    static_ints,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_map

# --- broadcast_in_dim -----------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcasts `operand` to `shape`: operand dimension `i` becomes result dimension
    `broadcast_dimensions[i]` (its size must be 1 or equal to that dimension's size)."""
    check_no_sharding("broadcast_in_dim", out_sharding)
    shape = static_ints("broadcast_in_dim", "shape", shape)
    dims = static_ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if is_array(operand) and operand.shape == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims)


def broadcast(operand, sizes, *, out_sharding=None):
    """Adds leading dimensions of the given `sizes`: the result has shape
    `(*sizes, *operand.shape)`."""
    check_no_sharding("broadcast", out_sharding)
    sizes = static_ints("broadcast", "sizes", sizes)
    if not sizes and is_array(operand):
        return operand
    ndim = len(shape_of(operand))
    dims = tuple(range(len(sizes), len(sizes) + ndim))
    return broadcast_in_dim(operand, sizes + tuple(shape_of(operand)), dims)


def broadcast_to_rank(x, rank):
    """Adds leading dimensions of size 1 to `x` until it has rank `rank`."""
    ndim = len(shape_of(x))
    if ndim == rank:
        return x
    return broadcast(x, (1,) * (rank - ndim))


def expand_dims(array, dimensions):
    """Inserts dimensions of size 1 at the result positions `dimensions` (negative ones count
    from the end of the result)."""
    dimensions = static_ints("expand_dims", "dimensions", dimensions)
    if not dimensions:
        return array
    shape = shape_of(array)
    ndim_out = len(shape) + len(dimensions)
    dims = []
    for d in dimensions:
        if not -ndim_out <= d < ndim_out:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim_out}")
        dims.append(d % ndim_out)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    kept = [d for d in range(ndim_out) if d not in dims]
    result_shape = [1] * ndim_out
    for d, size in zip(kept, shape, strict=True):
        result_shape[d] = size
    return broadcast_in_dim(array, tuple(result_shape), tuple(kept))


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(operand, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if list(dims) != sorted(dims):  # permute the operand's axes into the result's order
        order = sorted(range(len(dims)), key=dims.__getitem__)
        operand = operand.transpose(order)
        dims = tuple(dims[i] for i in order)
    expanded = [1] * len(shape)
    for d, size in zip(dims, operand.shape, strict=True):
        expanded[d] = size
    operand = operand.reshape(expanded)
    # Only a real broadcast needs broadcast_to (slow for small arrays); a view either way.
    return operand if operand.shape == shape else np.broadcast_to(operand, shape)


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if any(d < 0 for d in shape):
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {shape}."
        )
    if len(dims) != operand.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {dims} for operand ndim {operand.ndim}."
        )
    if any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
            f"{dims} for operand ndim {operand.ndim} and shape {shape}."
        )
    if any(size != 1 and size != shape[d] for size, d in zip(operand.shape, dims, strict=True)):
        raise TypeError(
            "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
            "corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{operand.shape}, target broadcast shape {shape}, broadcast_dimensions {dims} "
        )
    if len(set(dims)) != len(dims):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must not contain duplicates, got "
            f"broadcast_dimensions {dims}"
        )
    return ShapedArray(shape, operand.dtype, operand.weak_type)


broadcast_in_dim_p.def_weak_type_rule(weak_if_all_weak)
# As JAX prints it: no `shape` (the result's type shows it), no empty `broadcast_dimensions`.
broadcast_in_dim_p.params_to_print = lambda params: (
    {"broadcast_dimensions": params["broadcast_dimensions"]}
    if params["broadcast_dimensions"]
    else {}
)
ad.deflinear(broadcast_in_dim_p)


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions):
    in_shape = operand.aval.shape
    new_dims = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] != shape[d]]
    from tracejit._src.lax import reductions  # circle: the families import shapes (docstring)

    summed = reductions.reduce_sum(ct, tuple(sorted(new_dims + stretched)))
    return [reshape(summed, in_shape)]


transpose_rules[broadcast_in_dim_p] = _broadcast_in_dim_transpose
lowering_rules[broadcast_in_dim_p] = lambda ctx, x, *, shape, broadcast_dimensions: ctx.op(
    "stablehlo.broadcast_in_dim", [x], {"broadcast_dimensions": hlo.i64_array(broadcast_dimensions)}
)


def _broadcast_in_dim_batch(values, dims, *, shape, broadcast_dimensions):
    (operand,), (bd,) = values, dims
    operand = move_batch_dim(operand, bd, 0)
    size = shape_of(operand)[0]
    out_dims = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return broadcast_in_dim_p.bind(operand, shape=(size, *shape), broadcast_dimensions=out_dims), 0


batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch


# autodiff makes zero arrays and vmap batch axes with this primitive (and transpose, below)
structural.provide_broadcast_in_dim(broadcast_in_dim)

# --- reshape --------------------------------------------------------------------------------
reshape_p = Primitive("reshape")


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """Reshapes `operand` to `new_sizes` in row-major order, after transposing it by
    `dimensions` if given (`reshape(x, s, d)` is `reshape(transpose(x, d), s)`)."""
    check_no_sharding("reshape", out_sharding)
    new_sizes = static_ints("reshape", "new_sizes", new_sizes)
    shape = shape_of(operand)
    if dimensions is not None:
        dimensions = static_ints("reshape", "dimensions", dimensions)
        if dimensions == tuple(range(len(shape))):
            dimensions = None
    if shape and shape == new_sizes and dimensions is None and is_array(operand):
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dimensions, sharding=None)


@reshape_p.def_impl
def _reshape_impl(operand, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
        operand = operand.transpose(dimensions)
    return operand.reshape(new_sizes)


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(operand, *, new_sizes, dimensions, sharding):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    size = int(np.prod(new_sizes, dtype=np.int64))
    if size != operand.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (of total size "
            f"{size}) for shape {operand.shape} (of total size {operand.size})."
        )
    if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got dimensions "
            f"{dimensions} for shape {operand.shape}."
        )
    return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


reshape_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(reshape_p)


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    # reshape(x, s, d) is reshape(transpose(x, d), s): undo the reshape, then the transpose.
    permuted = reshape(ct, tuple(shape[d] for d in dimensions))
    return [transpose(permuted, tuple(np.argsort(dimensions).tolist()))]


transpose_rules[reshape_p] = _reshape_transpose


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:  # reshape(x, s, d) is reshape(transpose(x, d), s)
        aval = ctx.avals_in[0]
        permuted = aval.update(shape=tuple(aval.shape[d] for d in dimensions))
        x = ctx.op(
            "stablehlo.transpose",
            [x],
            {"permutation": hlo.i64_array(dimensions)},
            result_avals=[permuted],
        )
    return ctx.op("stablehlo.reshape", [x])


lowering_rules[reshape_p] = _reshape_lowering


def _reshape_batch(values, dims, *, new_sizes, dimensions, sharding):
    (operand,), (bd,) = values, dims
    operand = move_batch_dim(operand, bd, 0)
    size = shape_of(operand)[0]
    if dimensions is not None:
        dimensions = (0,) + tuple(d + 1 for d in dimensions)
    new_sizes = (size, *new_sizes)
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dimensions, sharding=None), 0


batch_rules[reshape_p] = _reshape_batch

# --- transpose ------------------------------------------------------------------------------
transpose_p = Primitive("transpose")


def transpose(operand, permutation):
    """Permutes the dimensions of `operand`: result dimension `i` is operand dimension
    `permutation[i]`."""
    permutation = static_ints("transpose", "permutation", permutation)
    if permutation == tuple(range(len(shape_of(operand)))) and is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


@transpose_p.def_impl
def _transpose_impl(operand, *, permutation):
    return operand.transpose(permutation)


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(operand, *, permutation):
    if sorted(permutation) != list(range(operand.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{permutation} for operand shape {operand.shape}."
        )
    shape = tuple(operand.shape[p] for p in permutation)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


transpose_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(transpose_p)


def _transpose_transpose(ct, operand, *, permutation):
    return [transpose(ct, tuple(np.argsort(permutation).tolist()))]


transpose_rules[transpose_p] = _transpose_transpose
lowering_rules[transpose_p] = lambda ctx, x, *, permutation: ctx.op(
    "stablehlo.transpose", [x], {"permutation": hlo.i64_array(permutation)}
)
structural.provide_transpose(transpose)


def _transpose_batch(values, dims, *, permutation):
    (operand,), (bd,) = values, dims
    # The batch dimension first in the result, the others permuted around it.
    perm = (bd,) + tuple(p + (p >= bd) for p in permutation)
    return transpose(operand, perm), 0


batch_rules[transpose_p] = _transpose_batch

# --- squeeze --------------------------------------------------------------------------------
squeeze_p = Primitive("squeeze")


def squeeze(array, dimensions):
    """Removes the dimensions listed in `dimensions` (negative ones count from the end), which
    must have size 1."""
    dimensions = static_ints("squeeze", "dimensions", dimensions)
    ndim = len(shape_of(array))
    dims = []
    for d in dimensions:
        if not -ndim <= d < ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim}")
        dims.append(d % ndim)
    dims = tuple(sorted(dims))
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {dims}")
    if not dims and is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


@squeeze_p.def_impl
def _squeeze_impl(operand, *, dimensions):
    return operand.squeeze(axis=dimensions)


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(operand, *, dimensions):
    shape = operand.shape
    if any(not 0 <= d < len(shape) for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(
            f"squeeze dimensions {dimensions} must be unique and in range for an operand of "
            f"shape {shape}"
        )
    if any(shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={shape} and dimensions={dimensions}"
        )
    result = tuple(size for i, size in enumerate(shape) if i not in dimensions)
    return ShapedArray(result, operand.dtype, operand.weak_type)


squeeze_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(squeeze_p)


def _squeeze_transpose(ct, operand, *, dimensions):
    return [expand_dims(ct, dimensions)]


transpose_rules[squeeze_p] = _squeeze_transpose
lowering_rules[squeeze_p] = lambda ctx, x, *, dimensions: ctx.op("stablehlo.reshape", [x])


def _squeeze_batch(values, dims, *, dimensions):
    (operand,), (bd,) = values, dims
    shifted = tuple(d + (d >= bd) for d in dimensions)
    out_bd = bd - sum(d < bd for d in dimensions)
    return squeeze_p.bind(operand, dimensions=shifted), out_bd


batch_rules[squeeze_p] = _squeeze_batch

# --- rev ------------------------------------------------------------------------------------
rev_p = Primitive("rev")


def rev(operand, dimensions):
    """Reverses `operand` along each of `dimensions` (non-negative)."""
    dimensions = static_ints("rev", "dimensions", dimensions)
    return rev_p.bind(operand, dimensions=dimensions)


@rev_p.def_impl
def _rev_impl(operand, *, dimensions):
    return np.flip(operand, dimensions)


@rev_p.def_abstract_eval
def _rev_abstract_eval(operand, *, dimensions):
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must have every element be nonnegative, got {dimensions}.")
    if any(d >= operand.ndim for d in dimensions):
        raise TypeError(
            f"rev dimensions must all be less than operand ndim, got dimensions {dimensions} "
            f"for operand ndim {operand.ndim}."
        )
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    return operand


rev_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(rev_p)


def _rev_transpose(ct, operand, *, dimensions):
    return [rev(ct, dimensions)]


transpose_rules[rev_p] = _rev_transpose
lowering_rules[rev_p] = lambda ctx, x, *, dimensions: ctx.op(
    "stablehlo.reverse", [x], {"dimensions": hlo.i64_array(dimensions)}
)


def _rev_batch(values, dims, *, dimensions):
    (operand,), (bd,) = values, dims
    return rev_p.bind(operand, dimensions=tuple(d + (d >= bd) for d in dimensions)), bd


batch_rules[rev_p] = _rev_batch

# --- pad ------------------------------------------------------------------------------------
pad_p = Primitive("pad")


def pad(operand, padding_value, padding_config):
    """Pads `operand` with the scalar `padding_value`: `padding_config` has a triple
    `(low, high, interior)` per dimension; `low`/`high` may be negative (they then crop) and
    `interior` elements go between each pair of neighbours."""
    try:
        config = tuple(
            (operator.index(lo), operator.index(hi), operator.index(mid))
            for lo, hi, mid in padding_config
        )
    except (TypeError, ValueError):
        raise TypeError(
            f"pad padding_config must be a sequence of (low, high, interior) integer triples, "
            f"got {padding_config!r}"
        ) from None
    return pad_p.bind(operand, padding_value, padding_config=config)


def _padded_size(size: int, low: int, high: int, interior: int) -> int:
    return low + high + size + max(size - 1, 0) * interior


@pad_p.def_impl
def _pad_impl(operand, padding_value, *, padding_config):
    out_shape, out_index, in_index = [], [], []
    for size, (low, high, interior) in zip(operand.shape, padding_config, strict=True):
        out_size = _padded_size(size, low, high, interior)
        step = interior + 1
        # Operand element k lands at result position low + k * step; keep those in range.
        first = max(0, -(low // step)) if low < 0 else 0
        last = min(size - 1, (out_size - 1 - low) // step) if out_size else -1
        out_shape.append(out_size)
        if last < first:
            out_index.append(slice(0, 0))
            in_index.append(slice(0, 0))
        else:
            out_index.append(slice(low + first * step, low + last * step + 1, step))
            in_index.append(slice(first, last + 1))
    out = np.full(out_shape, padding_value, dtype=operand.dtype)
    out[tuple(out_index)] = operand[tuple(in_index)]
    return out


@pad_p.def_abstract_eval
def _pad_abstract_eval(operand, padding_value, *, padding_config):
    if operand.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{operand.dtype.name} and {padding_value.dtype.name}."
        )
    if padding_value.shape:
        raise ValueError(
            f"padding_value must be a scalar; got np.shape(padding_value)={padding_value.shape}"
        )
    if len(padding_config) != operand.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {operand.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(
            "interior padding in padding_config must be nonnegative, got padding_config "
            f"{padding_config}"
        )
    shape = tuple(
        _padded_size(size, *triple)
        for size, triple in zip(operand.shape, padding_config, strict=True)
    )
    if any(d < 0 for d in shape):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for "
            f"padding_config {padding_config} and operand shape {operand.shape}"
        )
    return ShapedArray(shape, operand.dtype, operand.weak_type and padding_value.weak_type)


pad_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(pad_p)  # linear in the operand and the padding value jointly


def _pad_transpose(ct, operand, padding_value, *, padding_config):
    from tracejit._src.lax import binary, reductions, slicing  # circle: the families import shapes

    # Undo the low/high padding (negative ones were crops: pad the cotangent back there with
    # zeros), then take every (interior + 1)-th element: the operand's own positions.
    zero = np.zeros((), ct.dtype)
    unpadded = pad(ct, zero, tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_operand = slicing.slice(
        unpadded,
        (0,) * len(padding_config),
        unpadded.shape,
        tuple(interior + 1 for _, _, interior in padding_config),
    )
    ct_padding_value = None
    if is_undefined_primal(padding_value):  # every other element of the result is padding
        axes = tuple(range(len(padding_config)))
        ct_padding_value = binary.sub(
            reductions.reduce_sum(ct, axes), reductions.reduce_sum(ct_operand, axes)
        )
    return [ct_operand if is_undefined_primal(operand) else None, ct_padding_value]


transpose_rules[pad_p] = _pad_transpose


def _pad_lowering(ctx, x, padding_value, *, padding_config):
    low, high, interior = zip(*padding_config) if padding_config else ((), (), ())
    attributes = {
        "edge_padding_low": hlo.i64_array(low),
        "edge_padding_high": hlo.i64_array(high),
        "interior_padding": hlo.i64_array(interior),
    }
    return ctx.op("stablehlo.pad", [x, padding_value], attributes)


lowering_rules[pad_p] = _pad_lowering


def _pad_batch(values, dims, *, padding_config):
    from tracejit._src.lax import selection  # circle: the families import shapes (docstring)

    (operand, padding_value), (bd, value_bd) = values, dims
    config = ((0, 0, 0), *padding_config)
    if value_bd is None:  # one padding value for all: pad the batch dimension by nothing
        return pad_p.bind(move_batch_dim(operand, bd, 0), padding_value, padding_config=config), 0
    # A padding value per member: pad with zeros, then select each member's value wherever a
    # padding element lies (an unbatched mask, broadcast along the batch dimension).
    size = shape_of(padding_value)[0]
    zero = np.zeros((), dtypes.dtype_of(padding_value))
    if bd is None:
        padded = pad_p.bind(operand, zero, padding_config=padding_config)
        padded = batch_at_front(padded, None, size)
    else:
        padded = pad_p.bind(move_batch_dim(operand, bd, 0), zero, padding_config=config)
    shape = tuple(shape_of(padded))
    in_shape = tuple(shape_of(operand))
    if bd is not None:
        in_shape = in_shape[:bd] + in_shape[bd + 1 :]
    ones = broadcast_in_dim(np.bool_(True), in_shape, ())
    is_operand = pad_p.bind(ones, np.bool_(False), padding_config=padding_config)
    is_operand = broadcast_in_dim(is_operand, shape, tuple(range(1, len(shape))))
    fill = broadcast_in_dim(padding_value, shape, (0,))
    return selection.select_n_p.bind(is_operand, fill, padded), 0


batch_rules[pad_p] = _pad_batch

# --- concatenate ----------------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


def concatenate(operands, dimension):
    """Joins `operands` (same dtype, same shape but along `dimension`) along `dimension`."""
    operands = tuple(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    dimension = operator.index(dimension)
    if len(operands) == 1 and is_array(operands[0]):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


@concatenate_p.def_impl
def _concatenate_impl(*operands, dimension):
    return np.concatenate(operands, axis=dimension)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*operands, dimension):
    check_same_dtypes("concatenate", *operands)
    shapes = ", ".join(str(op.shape) for op in operands)
    if len({op.ndim for op in operands}) != 1:
        raise TypeError(
            f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}."
        )
    if not 0 <= dimension < operands[0].ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes {shapes}."
        )
    first = operands[0].shape
    if any(
        op.shape[:dimension] + op.shape[dimension + 1 :]
        != first[:dimension] + first[dimension + 1 :]
        for op in operands
    ):
        raise TypeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one "
            f"being concatenated: concatenating along dimension {dimension} for shapes {shapes}."
        )
    shape = list(first)
    shape[dimension] = sum(op.shape[dimension] for op in operands)
    weak = all(op.weak_type for op in operands)
    return ShapedArray(shape, operands[0].dtype, weak)


concatenate_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(concatenate_p)


def _concatenate_transpose(ct, *operands, dimension):
    from tracejit._src.lax import slicing  # circle: the families import shapes (docstring)

    cts, start = [], 0
    for operand in operands:
        size = operand.aval.shape[dimension] if is_undefined_primal(operand) else None
        if size is None:
            start += shape_of(operand)[dimension]
            cts.append(None)
            continue
        starts, limits = [0] * len(ct.shape), list(ct.shape)
        starts[dimension], limits[dimension] = start, start + size
        cts.append(slicing.slice(ct, starts, limits))
        start += size
    return cts


transpose_rules[concatenate_p] = _concatenate_transpose
lowering_rules[concatenate_p] = lambda ctx, *xs, dimension: ctx.op(
    "stablehlo.concatenate", list(xs), {"dimension": f"{dimension} : i64"}
)


def batch_size(values, dims) -> int:
    return next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)


def _concatenate_batch(values, dims, *, dimension):
    # Every operand needs the batch dimension (first): unbatched ones are broadcast to it.
    size = batch_size(values, dims)
    operands = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
    return concatenate_p.bind(*operands, dimension=dimension + 1), 0


batch_rules[concatenate_p] = _concatenate_batch

# --- iota -----------------------------------------------------------------------------------
iota_p = Primitive("iota")


def iota(dtype, size):
    """`[0, 1, ..., size - 1]` of the given dtype."""
    dtype = dtypes.check_user_dtype(dtype, "broadcasted_iota")
    return iota_p.bind(dtype=dtype, shape=(operator.index(size),), dimension=0, sharding=None)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An array of `shape` whose elements count up along `dimension`: element `idx` is
    `idx[dimension]`."""
    check_no_sharding("broadcasted_iota", out_sharding)
    dtype = dtypes.check_user_dtype(dtype, "broadcasted_iota")
    shape = static_ints("broadcasted_iota", "shape", shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=operator.index(dimension), sharding=None)


@iota_p.def_impl
def _iota_impl(*, dtype, shape, dimension, sharding):
    # Counting in int64 and converting rounds (floats) or wraps (narrow ints) as XLA does.
    values = np.arange(shape[dimension]).astype(dtype)
    if len(shape) == 1:
        return values
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(values.reshape(expanded), shape)


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
    if not (dtypes.is_int(dtype) or dtypes.is_inexact(dtype)):
        raise TypeError(
            f"iota does not accept dtype {dtype.name}. Accepted dtypes are subtypes of integer, "
            "floating, complexfloating."
        )
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise ValueError(
            "iota dimension must be between 0 and len(shape), got "
            f"dimension={dimension} for shape={shape}"
        )
    return ShapedArray(shape, dtype)


iota_p.def_weak_type_rule(never_weak)
ad.defjvp_zero(iota_p)
lowering_rules[iota_p] = lambda ctx, *, dtype, shape, dimension, sharding: ctx.op(
    "stablehlo.iota", [], {"iota_dimension": f"{dimension} : i64"}
)
no_batched_operands(iota_p)

# --- copy -----------------------------------------------------------------------------------
# No public wrapper, as in JAX: `copy_p.bind(x)` stages an explicit copy.
copy_p = Primitive("copy")
copy_p.def_impl(np.copy)
copy_p.def_abstract_eval(lambda operand: operand)
copy_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(copy_p)


def _copy_transpose(ct, operand):
    return [copy_p.bind(ct)]


transpose_rules[copy_p] = _copy_transpose
lowering_rules[copy_p] = lambda ctx, x: x
batch_rules[copy_p] = vectorized_batch_rule(copy_p)

# --- stop_gradient --------------------------------------------------------------------------
stop_gradient_p = Primitive("stop_gradient")


def stop_gradient(x):
    """`x` unchanged, but with a zero derivative: autodiff treats it as a constant. Works on
    pytrees; integer and boolean leaves are left as they are."""

    def stop(leaf):
        return stop_gradient_p.bind(leaf) if dtypes.is_inexact(dtypes.dtype_of(leaf)) else leaf

    return tree_map(stop, x)


stop_gradient_p.def_impl(lambda operand: operand)
stop_gradient_p.def_abstract_eval(lambda operand: operand)
stop_gradient_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(stop_gradient_p)
lowering_rules[stop_gradient_p] = lambda ctx, x: x
batch_rules[stop_gradient_p] = vectorized_batch_rule(stop_gradient_p)
