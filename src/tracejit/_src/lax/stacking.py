"""Primitives that cut an array into pieces along an axis (split, unstack), join pieces along a
new axis (stack) or repeat an array (tile). JAX 0.10.2 has each as a primitive, so their
jaxprs are one equation:

    lax.split(x, (1, 2), axis=1)    b:f32[2,1] c:f32[2,2] = split[axis=1 sizes=(1, 2)] a
    lax.stack([x, y])               c:f32[2,2,3] = stack[axis=0] a b

All are linear, and pair up in their transposes: split's is concatenate, stack's is unstack
and unstack's is stack; tile's sums the repetitions. Results keep the operands' weak type
(weak when all are). StableHLO has none of them: they lower to slices, reshapes, broadcasts
and concatenations.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, instantiate_zeros, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, move_batch_dim
from tracejit._src.lax import reductions, shapes
from tracejit._src.lax.standard import check_same_dtypes, static_ints, weak_if_all_weak
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import aval_type, lowering_rules


def _axis(axis, ndim: int) -> int:
    """`axis` made non-negative, with NumPy's error when out of bounds."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _zeros_to_instantiate(cts, avals):
    return [
        instantiate_zeros(Zero(aval)) if type(ct) is Zero else ct
        for ct, aval in zip(cts, avals, strict=True)
    ]


def _slice_lowering(ctx, x, starts, limits):
    return ctx.block.op1(
        "stablehlo.slice",
        [x],
        hlo.tensor_type(
            [b - a for a, b in zip(starts, limits, strict=True)], ctx.avals_in[0].dtype
        ),
        {
            "start_indices": hlo.i64_array(starts),
            "limit_indices": hlo.i64_array(limits),
            "strides": hlo.i64_array((1,) * len(starts)),
        },
    )


# --- split ----------------------------------------------------------------------------------
split_p = Primitive("split", multiple_results=True)


def split(operand, sizes, axis=0):
    """`operand` cut along `axis` into consecutive pieces of the given `sizes` (which must sum
    to the axis's size)."""
    sizes = static_ints("split", "sizes", sizes)
    return tuple(split_p.bind(operand, sizes=sizes, axis=_axis(axis, len(shape_of(operand)))))


@split_p.def_impl
def _split_impl(operand, *, sizes, axis):
    return np.split(operand, np.cumsum(sizes[:-1]), axis=axis)


@split_p.def_abstract_eval
def _split_abstract_eval(operand, *, sizes, axis):
    if any(size < 0 for size in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if operand.ndim and sum(sizes) != operand.shape[axis]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand shape "
            f"{list(operand.shape)}"
        )
    shape = operand.shape
    return [
        ShapedArray(shape[:axis] + (size,) + shape[axis + 1 :], operand.dtype, operand.weak_type)
        for size in sizes
    ]


split_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(split_p)


def _split_transpose(cts, operand, *, sizes, axis):
    avals = _split_abstract_eval(operand.aval, sizes=sizes, axis=axis)
    return [shapes.concatenate(_zeros_to_instantiate(cts, avals), axis)]


def _split_lowering(ctx, x, *, sizes, axis):
    shape, outs, start = ctx.avals_in[0].shape, [], 0
    for size in sizes:
        starts = [start if d == axis else 0 for d in range(len(shape))]
        limits = [start + size if d == axis else n for d, n in enumerate(shape)]
        outs.append(_slice_lowering(ctx, x, starts, limits))
        start += size
    return outs


def _split_batch(values, dims, *, sizes, axis):
    (operand,), (bd,) = values, dims
    outs = split_p.bind(operand, sizes=sizes, axis=axis + (bd <= axis))
    return outs, [bd] * len(outs)


transpose_rules[split_p] = _split_transpose
lowering_rules[split_p] = _split_lowering
batch_rules[split_p] = _split_batch

# --- stack ----------------------------------------------------------------------------------
stack_p = Primitive("stack")


def stack(operands, axis=0):
    """The `operands` (one shape, one dtype) stacked along a new `axis` of the result."""
    operands = tuple(operands)
    if not operands:
        raise ValueError("lax.stack requires at least one operand")
    return stack_p.bind(*operands, axis=_axis(axis, len(shape_of(operands[0])) + 1))


@stack_p.def_impl
def _stack_impl(*operands, axis):
    return np.stack(operands, axis=axis)


@stack_p.def_abstract_eval
def _stack_abstract_eval(*operands, axis):
    check_same_dtypes("stack", *operands)
    shapes_ = ", ".join(str(op.shape) for op in operands)
    if len({op.ndim for op in operands}) != 1:
        raise ValueError(
            f"Cannot stack arrays with different numbers of dimensions: got {shapes_}."
        )
    if len({op.shape for op in operands}) != 1:
        raise ValueError(f"All input arrays must have the same shape. Got {shapes_}.")
    shape = operands[0].shape
    weak = all(op.weak_type for op in operands)
    return ShapedArray(shape[:axis] + (len(operands),) + shape[axis:], operands[0].dtype, weak)


stack_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(stack_p)


def _stack_transpose(ct, *operands, axis):
    if type(ct) is Zero:
        return [Zero(op.aval) for op in operands]
    return list(unstack_p.bind(ct, axis=axis))


def _stack_lowering(ctx, *xs, axis):
    out = ctx.avals_out[0]
    piece = ShapedArray(out.shape[:axis] + (1,) + out.shape[axis + 1 :], out.dtype)
    pieces = [ctx.block.op1("stablehlo.reshape", [x], aval_type(piece)) for x in xs]
    return ctx.op("stablehlo.concatenate", pieces, {"dimension": f"{axis} : i64"})


def _stack_batch(values, dims, *, axis):
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
    return stack_p.bind(*operands, axis=axis + 1), 0


transpose_rules[stack_p] = _stack_transpose
lowering_rules[stack_p] = _stack_lowering
batch_rules[stack_p] = _stack_batch

# --- unstack --------------------------------------------------------------------------------
unstack_p = Primitive("unstack", multiple_results=True)


def unstack(x, axis=0):
    """The slices of `x` along `axis`, that axis removed: a tuple of `x.shape[axis]` arrays."""
    return tuple(unstack_p.bind(x, axis=_axis(axis, len(shape_of(x)))))


@unstack_p.def_impl
def _unstack_impl(x, *, axis):
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


@unstack_p.def_abstract_eval
def _unstack_abstract_eval(x, *, axis):
    piece = ShapedArray(x.shape[:axis] + x.shape[axis + 1 :], x.dtype, x.weak_type)
    return [piece] * x.shape[axis]


unstack_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(unstack_p)


def _unstack_transpose(cts, x, *, axis):
    pieces = _unstack_abstract_eval(x.aval, axis=axis)
    if not pieces:
        return [instantiate_zeros(Zero(x.aval))]
    return [stack_p.bind(*_zeros_to_instantiate(cts, pieces), axis=axis)]


def _unstack_lowering(ctx, x, *, axis):
    shape, outs = ctx.avals_in[0].shape, []
    for i in range(shape[axis]):
        starts = [i if d == axis else 0 for d in range(len(shape))]
        limits = [i + 1 if d == axis else n for d, n in enumerate(shape)]
        piece = _slice_lowering(ctx, x, starts, limits)
        outs.append(ctx.block.op1("stablehlo.reshape", [piece], aval_type(ctx.avals_out[i])))
    return outs


def _unstack_batch(values, dims, *, axis):
    (x,), (bd,) = values, dims
    axis_in = axis + (bd <= axis)
    outs = unstack_p.bind(x, axis=axis_in)
    return outs, [bd - (axis_in < bd)] * len(outs)


transpose_rules[unstack_p] = _unstack_transpose
lowering_rules[unstack_p] = _unstack_lowering
batch_rules[unstack_p] = _unstack_batch

# --- tile -----------------------------------------------------------------------------------
tile_p = Primitive("tile")


def tile(operand, reps):
    """`operand` repeated `reps[d]` times along each dimension d (one rep per dimension)."""
    reps = static_ints("tile", "reps", reps)
    ndim = len(shape_of(operand))
    if len(reps) != ndim:
        raise TypeError(
            "reps length must be equal to the ndim of x, got "
            f"len(reps)={len(reps)} and x.ndim={ndim}."
        )
    return tile_p.bind(operand, reps=reps)


@tile_p.def_impl
def _tile_impl(operand, *, reps):
    return np.tile(operand, reps) if reps else operand


@tile_p.def_abstract_eval
def _tile_abstract_eval(operand, *, reps):
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be nonnegative, got {reps}")
    shape = tuple(n * r for n, r in zip(operand.shape, reps, strict=True))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


tile_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(tile_p)


def _interleaved(shape, reps) -> tuple:
    """(r0, n0, r1, n1, ...): the tiled result viewed with each repetition axis before its
    dimension."""
    return tuple(size for pair in zip(reps, shape, strict=True) for size in pair)


def _tile_transpose(ct, operand, *, reps):
    shape = operand.aval.shape
    summed = shapes.reshape(ct, _interleaved(shape, reps))
    return [reductions.reduce_sum(summed, tuple(range(0, 2 * len(shape), 2)))]


def _tile_lowering(ctx, x, *, reps):
    aval = ctx.avals_in[0]
    wide = ShapedArray(_interleaved(aval.shape, reps), aval.dtype)
    repeated = ctx.block.op1(
        "stablehlo.broadcast_in_dim",
        [x],
        aval_type(wide),
        {"broadcast_dimensions": hlo.i64_array(range(1, 2 * aval.ndim, 2))},
    )
    return ctx.op("stablehlo.reshape", [repeated])


def _tile_batch(values, dims, *, reps):
    (operand,), (bd,) = values, dims
    return tile_p.bind(move_batch_dim(operand, bd, 0), reps=(1, *reps)), 0


transpose_rules[tile_p] = _tile_transpose
lowering_rules[tile_p] = _tile_lowering
batch_rules[tile_p] = _tile_batch
