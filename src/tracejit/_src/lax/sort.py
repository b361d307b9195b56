"""Sorting along one dimension: the multi-operand `sort` primitive and lax.sort/sort_key_val.

`sort` takes one or more operands of one shape and sorts them along `dimension`, ordering by
the first `num_keys` operands lexicographically (the first key primary) and permuting every
operand the same way; it returns one array per operand, each with its operand's dtype and weak
type. The order is XLA's: ascending, -0.0 and 0.0 equal, NaNs after everything else, complex
numbers by real part and then imaginary part, False before True. The implementation is always
stable (`is_stable=False` only allows an unstable sort, and equal keys are indistinguishable
unless other operands ride along).
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import bitwise, conversions, elementwise, gather, shapes, slicing
from tracejit._src.lax.standard import normalize_axes, weak_if_all_weak
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

# --- sort -----------------------------------------------------------------------------------
sort_p = Primitive("sort", multiple_results=True)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts `operand` (an array, or a sequence of arrays of one shape) along `dimension`.

    With a sequence, the first `num_keys` arrays are the keys, compared lexicographically with
    the first key primary, and the others are permuted alike; a sequence gives a tuple of
    arrays, an array gives an array. Ascending order, NaNs last, -0.0 equal to 0.0.
    """
    single = not isinstance(operand, (tuple, list))
    operands = (operand,) if single else tuple(operand)
    num_keys = operator.index(num_keys)
    if not operands:
        raise TypeError("sort requires at least one operand")
    if single and num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} must equal 1 for a single operand.")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"sort: num_keys={num_keys} must be between 1 and len(operand)={len(operands)}"
        )
    shapes = [np.shape(x) for x in operands]
    if any(shape != shapes[0] for shape in shapes):
        raise TypeError(
            f"Arguments to sort must have equal shapes, got: {' '.join(map(str, shapes))}"
        )
    ndim = len(shapes[0])
    dimension = operator.index(dimension)
    if not -ndim <= dimension < ndim:
        raise ValueError(f"sort: axis {dimension} is out of bounds for array of dimension {ndim}")
    out = sort_p.bind(
        *operands,
        dimension=dimension + ndim if dimension < 0 else dimension,
        is_stable=bool(is_stable),
        num_keys=num_keys,
    )
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts `keys` along `dimension` and permutes `values` alike: returns (keys, values)."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def _sort_key(x):
    """A NumPy array that NumPy's sorts order as XLA orders `x` (ml_dtypes floats such as
    bfloat16 would put NaNs anywhere: they are compared as float32, which holds them exactly)."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


@sort_p.def_impl
def _sort_impl(*operands, dimension, is_stable, num_keys):
    if len(operands) == 1 and operands[0].dtype.kind != "V":
        return [np.sort(operands[0], axis=dimension, kind="stable")]
    if num_keys == 1:
        perm = np.argsort(_sort_key(operands[0]), axis=dimension, kind="stable")
    else:
        keys = [_sort_key(key) for key in reversed(operands[:num_keys])]
        perm = np.lexsort(keys, axis=dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in operands]


@sort_p.def_abstract_eval
def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    if any(x.shape != operands[0].shape for x in operands):
        got = " ".join(x.str_short() for x in operands)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {got}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"sort: num_keys={num_keys} must be between 1 and the number of operands "
            f"{len(operands)}"
        )
    normalize_axes("sort", (dimension,), operands[0].ndim)
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in operands]


# The eval trace gives every output of a primitive one weak type: each output is weak when all
# operands are; the abstract evaluation above keeps each operand's own weak type.
sort_p.def_weak_type_rule(weak_if_all_weak)

# Derivatives. Sorting permutes every operand by the permutation its keys define, so with the
# keys fixed, sort is linear in the operands that ride along (those past `num_keys`): the JVP
# sorts the tangents, of the keys and of the others alike, as extra operands riding along with
# the keys (`sort[num_keys=k] keys... tangents...`), which permutes them as the primal
# operands are permuted (the implementation is deterministic: the same keys give the same
# permutation). That use of sort is linear in its riding operands, and its transpose applies the
# inverse permutation to their cotangents: sorting `iota` with the keys gives the permutation
# `perm` (`out[i] = x[perm[i]]`), and sorting the cotangents along with `perm` as the only key
# puts `ct[i]` back at position `perm[i]`. That is again a sort linear in its riding operands,
# so derivatives of any order follow.


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    params = {"dimension": dimension, "is_stable": is_stable, "num_keys": num_keys}
    outs = sort_p.bind(*primals, **params)
    tangents_out = [Zero.from_primal_value(out) for out in outs]
    moving = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    if moving:
        sorted_tangents = sort_p.bind(*primals[:num_keys], *(tangents[i] for i in moving), **params)
        for i, t in zip(moving, sorted_tangents[num_keys:], strict=True):
            tangents_out[i] = t
    return outs, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    keys = operands[:num_keys]
    if any(map(is_undefined_primal, keys)):
        raise TypeError(
            "sort is linear in the operands it permutes, not in its keys: can't transpose"
        )
    riding = [
        i
        for i in range(num_keys, len(operands))
        if is_undefined_primal(operands[i]) and type(cts[i]) is not Zero
    ]
    cts_in = [None] * len(operands)
    if riding:
        shape = shape_of(keys[0])
        perm = sort_p.bind(
            *keys,
            shapes.broadcasted_iota(np.int32, shape, dimension),
            dimension=dimension,
            is_stable=is_stable,
            num_keys=num_keys,
        )[-1]
        unsorted = sort_p.bind(
            perm, *(cts[i] for i in riding), dimension=dimension, is_stable=False, num_keys=1
        )
        for i, ct in zip(riding, unsorted[1:], strict=True):
            cts_in[i] = ct
    return cts_in


ad.jvp_rules[sort_p] = _sort_jvp
ad.mark_linear(sort_p)  # in the operands after the keys, which it permutes
transpose_rules[sort_p] = _sort_transpose


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    """stablehlo.sort with a comparator ordering the keys lexicographically as the impl does:
    floats with NaNs last and -0.0 equal to 0.0 (FLOAT comparisons, NaN handled explicitly),
    complex numbers as NumPy orders them (those with no NaN part first, by real then
    imaginary part; then those with a NaN imaginary part, a NaN real part, both). Always stable, as the impl is."""
    types = [hlo.tensor_type((), a.dtype) for a in ctx.avals_in]
    region = ctx.block.region([t for t in types for _ in range(2)])
    bool_t = hlo.tensor_type((), np.bool_)

    def logical(name, *xs):
        return region.op1(f"stablehlo.{name}", list(xs), bool_t)

    keys = []  # (a, b, dtype): the scalar pairs compared, most significant first
    for k in range(num_keys):
        a, b = region.args[2 * k], region.args[2 * k + 1]
        dtype = np.dtype(ctx.avals_in[k].dtype)
        if dtypes.is_complex(dtype):
            part = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
            part_t = hlo.tensor_type((), part)
            parts = [
                (region.op1(op, [a], part_t), region.op1(op, [b], part_t), part)
                for op in ("stablehlo.real", "stablehlo.imag")
            ]
            # NumPy's order: no NaN part, then NaN imaginary part, NaN real part, both NaN.
            for x, y, _ in parts:
                keys.append(
                    (
                        region.compare(x, x, "NE"),
                        region.compare(y, y, "NE"),
                        np.dtype(np.bool_),
                    )
                )
            keys.extend(parts)
        else:
            keys.append((a, b, dtype))
    less = None
    for a, b, dtype in reversed(keys):  # less = lt_0 or (eq_0 and (lt_1 or (eq_1 and ...)))
        lt = region.compare(a, b, "LT")
        eq = None if less is None else region.compare(a, b, "EQ")
        if dtypes.is_inexact(dtype):
            a_nan = region.compare(a, a, "NE")
            b_nan = region.compare(b, b, "NE")
            lt = logical("or", lt, logical("and", logical("not", a_nan), b_nan))
            if eq is not None:
                eq = logical("or", eq, logical("and", a_nan, b_nan))
        less = lt if less is None else logical("or", lt, logical("and", eq, less))
    region.ret([less])
    outs = ctx.op(
        "stablehlo.sort",
        list(operands),
        attributes={"dimension": f"{dimension} : i64", "is_stable": "true"},
        regions=[region],
    )
    return outs if isinstance(outs, list) else [outs]


lowering_rules[sort_p] = _sort_lowering


def _sort_batch_rule(values, dims, *, dimension, is_stable, num_keys):
    """Every operand with its batch dim first (unbatched ones broadcast: sort needs operands
    of one shape), sorted along the shifted dimension."""
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
    outs = sort_p.bind(*operands, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


batch_rules[sort_p] = _sort_batch_rule

# --- top_k ----------------------------------------------------------------------------------
top_k_p = Primitive("top_k", multiple_results=True)


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries of `operand` along `axis`, largest first, and their int32
    indices. Floats are ordered totally (NaN above inf, 0.0 above -0.0, negative NaNs last);
    equal entries come in index order."""
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {k!r}."
        ) from None
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    ndim = len(shape_of(operand))
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return tuple(top_k_p.bind(operand, k=k, axis=axis % ndim))


def total_order_key(x):
    """NumPy integers that order as XLA's total order orders `x`'s values (floats by their
    sign-magnitude bits made two's complement: -NaN < -inf < ... < -0.0 < 0.0 < ... < NaN)."""
    if x.dtype == np.bool_:
        return x.astype(np.int8)
    if x.dtype.kind in "iu":
        return x
    signed = np.asarray(x).view(np.dtype(f"i{x.dtype.itemsize}"))
    magnitude = np.iinfo(signed.dtype).max
    return np.where(signed < 0, signed ^ signed.dtype.type(magnitude), signed)


@top_k_p.def_impl
def _top_k_impl(operand, *, k, axis):
    order = np.argsort(~total_order_key(operand), axis=axis, kind="stable")  # ~ reverses
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(operand, indices, axis=axis), indices.astype(np.int32)]


@top_k_p.def_abstract_eval
def _top_k_abstract_eval(operand, *, k, axis):
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k > operand.shape[axis]:
        raise ValueError(
            f"k argument to top_k must be no larger than size along axis; got k={k} with "
            f"shape={list(operand.shape)} and axis={axis}"
        )
    shape = operand.shape[:axis] + (k,) + operand.shape[axis + 1 :]
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, np.int32)]


top_k_p.def_weak_type_rule(weak_if_all_weak)


def take_along(x, indices, axis: int):
    """`np.take_along_axis(x, indices, axis)` as a gather (indices in bounds, of x's rank):
    every other dimension is a batching dimension."""
    shape = shape_of(indices)
    others = tuple(d for d in range(len(shape)) if d != axis)
    dnums = gather.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    return gather.gather(x, shapes.reshape(indices, (*shape, 1)), dnums, (1,) * len(shape))


def _top_k_jvp(primals, tangents, *, k, axis):
    (operand,), (t,) = primals, tangents
    values, indices = top_k_p.bind(operand, k=k, axis=axis)
    if type(t) is Zero:
        return [values, indices], [Zero.from_primal_value(values), Zero.from_primal_value(indices)]
    return [values, indices], [take_along(t, indices, axis), Zero.from_primal_value(indices)]


ad.jvp_rules[top_k_p] = _top_k_jvp


@functools.lru_cache(maxsize=64)
def _staged_top_k(aval: ShapedArray, k: int, axis: int):
    """A stable descending sort by the total-order key carrying the values and their indices
    along, then the first k: what the eager implementation computes."""

    def top_k_of(x):
        key = x
        if dtypes.is_float(aval.dtype):
            signed = conversions.bitcast_convert_type(x, np.dtype(f"i{aval.dtype.itemsize}"))
            flip = bitwise.shift_right_logical(
                bitwise.shift_right_arithmetic(
                    signed, np.array(8 * aval.dtype.itemsize - 1, signed.dtype)
                ),
                np.array(1, signed.dtype),
            )
            key = bitwise.xor(signed, flip)
        elif aval.dtype == np.bool_:
            key = conversions.convert_element_type(x, np.int8)
        order = shapes.broadcasted_iota(np.int32, aval.shape, axis)
        _, values, indices = sort_p.bind(
            bitwise.not_(key), x, order, dimension=axis, is_stable=True, num_keys=1
        )
        limits = aval.shape[:axis] + (k,) + aval.shape[axis + 1 :]
        return [slicing.slice(out, (0,) * aval.ndim, limits) for out in (values, indices)]

    return trace_to_jaxpr(top_k_of, [aval], DebugInfo(top_k, "top_k"))


def _top_k_lowering(ctx, operand, *, k, axis):
    closed = _staged_top_k(ctx.avals_in[0].strip_weak_type(), k, axis)
    return ctx.lower_sub_jaxpr(ctx.block, closed, [operand])


def _top_k_batch(values, dims, *, k, axis):
    (operand,), (bd,) = values, dims
    outs = top_k_p.bind(operand, k=k, axis=axis + (bd <= axis))
    return outs, [bd, bd]


lowering_rules[top_k_p] = _top_k_lowering
batch_rules[top_k_p] = _top_k_batch

# --- approx_top_k ---------------------------------------------------------------------------
approx_top_k_p = Primitive("approx_top_k", multiple_results=True)


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
):
    """The `k` largest values of a float `operand` along `reduction_dimension` and their
    int32 indices, largest first. On CPU XLA computes them exactly (a sort): so does this,
    whatever `recall_target`. Equal values come in index order; NaNs come last."""
    return _approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        True,
        reduction_input_size_override,
        aggregate_to_topk,
    )


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
):
    """The `k` smallest values of a float `operand` along `reduction_dimension` and their
    int32 indices, smallest first; exact, as `approx_max_k` is."""
    return _approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        False,
        reduction_input_size_override,
        aggregate_to_topk,
    )


def _approx_top_k(operand, k, dimension, recall_target, is_max_k, size_override, aggregate):
    return tuple(
        approx_top_k_p.bind(
            operand,
            k=operator.index(k),
            reduction_dimension=operator.index(dimension),
            recall_target=float(recall_target),
            is_max_k=bool(is_max_k),
            reduction_input_size_override=operator.index(size_override),
            aggregate_to_topk=bool(aggregate),
        )
    )


def _approx_top_k_size(operand: ShapedArray, k, reduction_dimension, aggregate_to_topk) -> int:
    """The result's size along the reduction dimension: k, or, unaggregated, XLA's reduced size
    (the whole dimension as long as it fits one TPU tile; past that, XLA's size formula is not
    reproduced)."""
    if aggregate_to_topk:
        return k
    size = operand.shape[reduction_dimension]
    tile = 1024 if operand.ndim == 1 else 128
    if size > tile:
        raise NotImplementedError(
            f"approx_top_k with aggregate_to_topk=False on a reduction dimension larger than "
            f"{tile} (got {size}): XLA's reduced output size is not reproduced"
        )
    return size


@approx_top_k_p.def_abstract_eval
def _approx_top_k_abstract_eval(operand, *, k, reduction_dimension, aggregate_to_topk, **_):
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    dim = normalize_axes("approx_top_k", (reduction_dimension % operand.ndim,), operand.ndim)[0]
    if operand.shape[dim] < k:
        raise ValueError(
            f"k must be smaller than the size of reduction_dim {operand.shape[dim]}, got {k}"
        )
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    size = _approx_top_k_size(operand, k, dim, aggregate_to_topk)
    shape = operand.shape[:dim] + (size,) + operand.shape[dim + 1 :]
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, np.int32)]


@approx_top_k_p.def_impl
def _approx_top_k_impl(operand, *, k, reduction_dimension, is_max_k, aggregate_to_topk, **_):
    axis = reduction_dimension % operand.ndim
    size = _approx_top_k_size(ShapedArray(operand.shape, operand.dtype), k, axis, aggregate_to_topk)
    key = _sort_key(operand)
    order = np.argsort(-key if is_max_k else key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(size), axis=axis)
    return [np.take_along_axis(operand, indices, axis=axis), indices.astype(np.int32)]


approx_top_k_p.def_weak_type_rule(weak_if_all_weak)


def _approx_top_k_jvp(primals, tangents, *, reduction_dimension, **params):
    (operand,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(
        operand, reduction_dimension=reduction_dimension, **params
    )
    zeros = Zero.from_primal_value(indices)
    if type(t) is Zero:
        return [values, indices], [Zero.from_primal_value(values), zeros]
    axis = reduction_dimension % len(shape_of(operand))
    return [values, indices], [take_along(t, indices, axis), zeros]


ad.jvp_rules[approx_top_k_p] = _approx_top_k_jvp


@functools.lru_cache(maxsize=64)
def _staged_approx_top_k(aval: ShapedArray, size: int, axis: int, is_max_k: bool):
    """The eager computation: a stable ascending sort of `-x` (or `x`) carrying x and the
    indices, NaNs last and -0.0 equal to 0.0 as sort orders them, then the first `size`."""

    def approx_top_k_of(x):
        key = elementwise.neg(x) if is_max_k else x
        order = shapes.broadcasted_iota(np.int32, aval.shape, axis)
        _, values, indices = sort_p.bind(key, x, order, dimension=axis, is_stable=True, num_keys=1)
        limits = aval.shape[:axis] + (size,) + aval.shape[axis + 1 :]
        return [slicing.slice(out, (0,) * aval.ndim, limits) for out in (values, indices)]

    return trace_to_jaxpr(approx_top_k_of, [aval], DebugInfo(approx_max_k, "approx_top_k"))


def _approx_top_k_lowering(ctx, operand, *, reduction_dimension, is_max_k, **_):
    aval = ctx.avals_in[0].strip_weak_type()
    axis = reduction_dimension % aval.ndim
    size = ctx.avals_out[0].shape[axis]
    closed = _staged_approx_top_k(aval, size, axis, is_max_k)
    return ctx.lower_sub_jaxpr(ctx.block, closed, [operand])


def _approx_top_k_batch(values, dims, *, reduction_dimension, **params):
    (operand,), (bd,) = values, dims
    axis = reduction_dimension % (len(shape_of(operand)) - 1)
    outs = approx_top_k_p.bind(operand, reduction_dimension=axis + (bd <= axis), **params)
    return outs, [bd, bd]


lowering_rules[approx_top_k_p] = _approx_top_k_lowering
batch_rules[approx_top_k_p] = _approx_top_k_batch
