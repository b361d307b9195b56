"""Reductions over axes: reduce_sum/max/min/prod/and/or/xor and argmax/argmin.

Each removes the dimensions listed in `axes` (sorted, non-negative; the wrappers normalize
negative axes) and keeps the operand's dtype and weak type, except arg reductions, which give
`index_dtype` and are never weak.

Reductions follow XLA rather than NumPy where the two differ:

- a reduction over no elements gives the monoid's identity: 0 for sums, 1 for products, the
  lowest value (-inf, iinfo.min, False) for max, the highest for min, all ones for `and`;
  NumPy raises for the max of nothing;
- integer sums and products stay in the operand's dtype and wrap around (NumPy widens int32
  to int64); float16 and bfloat16 accumulate in float32 and round once at the end;
- max/min propagate NaN, and order -0.0 below +0.0 (`max(-0., 0.)` is `0.`);
- argmax/argmin give the index of the first NaN, if any, and otherwise of the first extremum.

Derivatives, as JAX defines them: reduce_sum is linear (its transpose broadcasts back);
reduce_max/reduce_min pass on the tangent at the extremum, averaged over the positions that tie
for it; reduce_prod's derivative by each element is the product of all the others, computed
from exclusive prefix and suffix products so that it is exact where elements are zero; the
bitwise and arg reductions have zero tangents.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import binary, comparison, conversions, shapes
from tracejit._src.lax.standard import (
    check_dtype,
    check_no_sharding,
    is_any,
    is_int_or_bool,
    is_numeric,
    never_weak,
    normalize_axes,
    quiet,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules


def _reduced_shape(name: str, aval: ShapedArray, axes) -> tuple:
    axes = normalize_axes(name, axes, aval.ndim)
    return tuple(d for i, d in enumerate(aval.shape) if i not in axes)


_axes_cache: dict = {}  # (axes, ndim) -> canonical axes, for the wrappers' hot path


def _canonical_axes(name: str, operand, axes) -> tuple:
    """The `axes` param for a wrapper's user input: ints, negative ones counted from the end,
    in range, no repeats, sorted."""
    ndim = len(shape_of(operand))
    try:
        return _axes_cache[axes, ndim]
    except (KeyError, TypeError):  # not seen yet, or unhashable (a list)
        pass
    given = tuple(operator.index(a) for a in axes)
    canonical = tuple(sorted(a + ndim if a < 0 else a for a in given))
    if canonical and not (0 <= canonical[0] and canonical[-1] < ndim):
        raise ValueError(
            f"{name}: reduction axes {given} contain out-of-bounds indices for "
            f"{get_aval(operand).str_short()}"
        )
    if len(set(canonical)) != len(canonical):
        raise ValueError(f"{name}: duplicate value in 'axes' of reduction: {given}")
    if type(axes) is tuple and len(_axes_cache) < 4096:
        _axes_cache[axes, ndim] = canonical
    return canonical


def _reduction_abstract_eval(name: str, accepts):
    def abstract_eval(operand, *, axes, out_sharding=None):  # (reduce_sum's, as JAX's)
        check_dtype(name, operand, accepts)
        return ShapedArray(_reduced_shape(name, operand, axes), operand.dtype, operand.weak_type)

    return abstract_eval


# float16 and bfloat16 sums and products accumulate in float32, as XLA's CPU and GPU backends
# do; NumPy would accumulate in the narrow type.
_NARROW_FLOATS = frozenset(np.dtype(d) for d in (dtypes.float16, dtypes.bfloat16))


def _accumulating(numpy_reduce):
    """The ufunc reduction `numpy_reduce` (`np.add.reduce`: what `np.sum` calls, without its
    wrapper) in the dtype XLA accumulates in."""

    def impl(operand, *, axes, out_sharding=None):
        dtype = operand.dtype
        if dtype in _NARROW_FLOATS:
            return numpy_reduce(operand, axis=axes, dtype=np.float32).astype(dtype)
        return numpy_reduce(operand, axis=axes, dtype=dtype)

    return impl


def _lowest(dtype: np.dtype):
    if dtype == np.bool_:
        return False
    if dtype.kind in "iu":
        return dtypes.iinfo(dtype).min
    return -np.inf


def _highest(dtype: np.dtype):
    if dtype == np.bool_:
        return True
    if dtype.kind in "iu":
        return dtypes.iinfo(dtype).max
    return np.inf


def _extremum(numpy_reduce, identity, negative_zero_wins: bool):
    """The impl of reduce_max (`negative_zero_wins=False`: +0. beats -0.) or reduce_min."""

    def impl(operand, *, axes):
        dtype = operand.dtype
        if operand.size == 0:
            shape = tuple(d for i, d in enumerate(operand.shape) if i not in axes)
            return np.full(shape, identity(dtype), dtype)
        # ml_dtypes floats (bfloat16, ...): NumPy's NaN handling is unreliable for them.
        x = operand.astype(np.float32) if dtype.kind == "V" else operand
        out = numpy_reduce(x, axis=axes)
        if x.dtype.kind == "f":
            out = order_signed_zeros(out, x, axes, negative_zero_wins)
        return out if x is operand else out.astype(dtype)

    return impl


def order_signed_zeros(out, operand, axes, negative_wins: bool):
    """NumPy returns whichever zero it met first; XLA orders -0. below +0."""
    if out.all() if out.ndim else out:  # no zeros (NaNs are truthy); a scalar tests faster
        return out
    zeros = out == 0
    signs = np.signbit(operand)
    wanted = (operand == 0) & (signs if negative_wins else ~signs)
    found = np.any(wanted, axis=axes)
    winner, loser = (-0.0, 0.0) if negative_wins else (0.0, -0.0)
    dtype = operand.dtype
    fixed = np.where(found, dtype.type(winner), dtype.type(loser))
    return np.where(zeros, fixed, out).astype(dtype, copy=False)


def unbroadcast(aval: ShapedArray, x):
    """`x`, of an elementwise result's shape, summed down to operand `aval`'s shape: the
    transpose of lax's implicit broadcasting of rank-0 and size-1 operands."""
    if type(x) is Zero:
        return Zero(aval)
    shape = shape_of(x)
    if tuple(shape) == aval.shape:
        return x
    if not aval.shape:
        return reduce_sum(x, tuple(range(len(shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, shape, strict=True)) if a != b)
    return shapes.reshape(reduce_sum(x, dims), aval.shape)


# --- lowering helpers (shared with cumulative.py and sort.py) ---------------------------------


def accumulation_dtype(dtype) -> np.dtype:
    """float32 for float16/bfloat16 (sums, products: as the NumPy impls), else `dtype`."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype in _NARROW_FLOATS else dtype


def combiner_region(block, combiner: str, dtype):
    """A region combining two scalars of `dtype` with the binary op `combiner`. For floats,
    stablehlo.maximum/minimum are replaced by comparisons that propagate NaN and order -0.
    below +0., as the impls do (XLA's CPU backend drops NaNs in a reduce by
    stablehlo.maximum)."""
    dtype = np.dtype(dtype)
    scalar = hlo.tensor_type((), dtype)
    region = block.region([scalar, scalar])
    if combiner in ("stablehlo.maximum", "stablehlo.minimum") and dtypes.is_inexact(dtype):
        region.ret(
            [_lower_float_chooser(region, *region.args, dtype, combiner == "stablehlo.maximum")]
        )
    else:
        region.ret([region.op1(combiner, region.args, scalar)])
    return region


_FLOAT_BITS = {2: np.int16, 4: np.int32, 8: np.int64}


def _lower_float_chooser(block, a, b, dtype, is_max: bool, shape=()) -> hlo.Value:
    """max(a, b) (`is_max`) or min(a, b) of floats: NaN if either is, +0. (max) or -0. (min)
    of two zeros. Complex numbers: `comparison.lower_complex_chooser`."""
    if dtypes.is_complex(dtype):
        return comparison.lower_complex_chooser(block, a, b, dtype, is_max, shape)
    value_t, bool_t = hlo.tensor_type(shape, dtype), hlo.tensor_type(shape, np.bool_)
    bits_t = hlo.tensor_type(shape, _FLOAT_BITS[np.dtype(dtype).itemsize])
    nan = block.op1(
        "stablehlo.or",
        [
            block.compare(a, a, "NE"),
            block.compare(b, b, "NE"),
        ],
        bool_t,
    )
    equal = block.compare(a, b, "EQ")
    a_wins = block.compare(a, b, "GT" if is_max else "LT")
    a_bits = block.op1("stablehlo.bitcast_convert", [a], bits_t)
    b_bits = block.op1("stablehlo.bitcast_convert", [b], bits_t)
    # Equal values have equal bits but for zeros: the sign bit of +0. (max) or -0. (min) wins.
    tie_bits = block.op1("stablehlo.and" if is_max else "stablehlo.or", [a_bits, b_bits], bits_t)
    tie = block.op1("stablehlo.bitcast_convert", [tie_bits], value_t)
    out = block.op1("stablehlo.select", [a_wins, a, b], value_t)
    out = block.op1("stablehlo.select", [equal, tie, out], value_t)
    return block.op1(
        "stablehlo.select", [nan, block.op1("stablehlo.add", [a, b], value_t), out], value_t
    )


def _orders_as_integers(combiner: str, dtype) -> bool:
    dtype = np.dtype(dtype)
    extremes = ("stablehlo.maximum", "stablehlo.minimum")
    return combiner in extremes and dtypes.is_float(dtype) and dtype.itemsize in _FLOAT_BITS


def _lower_partitioned_chooser(ctx, x, axes, combiner: str, init) -> hlo.Value:
    """reduce_max/reduce_min of floats in a program that XLA partitions over devices. A reduce
    over a split dimension becomes an all-reduce, which XLA's CPU runtime performs only by the
    plain ops, whose maximum drops NaNs and picks either zero (JAX 0.10.2's answers then vary
    with the layout). So the floats are reduced as integers ordered as the floats are, -0.
    below +0. and NaN beyond every other value, then turned back into floats."""
    aval, block = ctx.avals_in[0], ctx.block
    bits = np.dtype(_FLOAT_BITS[aval.dtype.itemsize])
    winner = np.iinfo(bits).max if combiner == "stablehlo.maximum" else np.iinfo(bits).min
    keys = _float_order_keys(
        block, block.op1("stablehlo.bitcast_convert", [x], hlo.tensor_type(aval.shape, bits))
    )
    nan = block.compare(x, x, "NE")
    keys = block.op1("stablehlo.select", [nan, block.full_like(keys, winner), keys], keys.type)
    init_bits = np.asarray(init, aval.dtype).view(bits)
    init_key = init_bits ^ ((init_bits >> (8 * bits.itemsize - 1)) & np.iinfo(bits).max)
    scalar = hlo.tensor_type((), bits)
    region = block.region([scalar, scalar])
    region.ret([region.op1(combiner, region.args, scalar)])
    out_shape = ctx.avals_out[0].shape
    reduced = block.op1(
        "stablehlo.reduce",
        [keys, block.constant(init_key, bits)],
        hlo.tensor_type(out_shape, bits),
        {"dimensions": hlo.i64_array(axes)},
        [region],
    )
    value_t = hlo.tensor_type(out_shape, aval.dtype)
    out = block.op1("stablehlo.bitcast_convert", [_float_order_keys(block, reduced)], value_t)
    nan = block.compare(out, out, "NE")  # (the min's NaN has its sign bit set: made positive)
    return block.op1("stablehlo.select", [nan, block.full_like(out, np.nan), out], value_t)


def _float_order_keys(block, bits) -> hlo.Value:
    """A float's bits (as signed integers) to integers ordered as the floats are, and back (the
    map is its own inverse): a negative float's magnitude bits are flipped."""
    _, dtype = hlo.parse_tensor_type(bits.type)
    sign = block.op1(
        "stablehlo.shift_right_arithmetic",
        [bits, block.full_like(bits, 8 * dtype.itemsize - 1)],
        bits.type,
    )
    flip = block.op1("stablehlo.and", [sign, block.full_like(bits, np.iinfo(dtype).max)], bits.type)
    return block.op1("stablehlo.xor", [bits, flip], bits.type)


def chooser_init(combiner: str, value, dtype, reduces_elements: bool = True):
    """The init of a max/min reduction's lowering. For complex numbers the impls' identity
    (-inf+0j for max) is not the lexicographic extreme: an element (-inf-1j) would lose to
    it. Where elements are reduced the init is (-inf-infj) (max) or (inf+infj) (min), which
    no element beats; only an empty reduction returns the impl's identity."""
    extremes = ("stablehlo.maximum", "stablehlo.minimum")
    if combiner in extremes and dtypes.is_complex(dtype) and reduces_elements:
        return complex(value.real, value.real)
    return value


def _lower_reduction(combiner: str, init, accumulate: bool = False):
    """The lowering rule of a reduction by the binary op `combiner` from `init(dtype)`;
    `accumulate`: float16/bfloat16 are reduced in float32 and rounded once."""

    def rule(ctx, x, *, axes, out_sharding=None):
        aval, out_aval = ctx.avals_in[0], ctx.avals_out[0]
        if ctx.module.num_partitions > 1 and _orders_as_integers(combiner, aval.dtype):
            return _lower_partitioned_chooser(ctx, x, axes, combiner, init(aval.dtype))
        dtype = accumulation_dtype(aval.dtype) if accumulate else aval.dtype
        block = ctx.block
        if dtype != aval.dtype:
            x = block.convert(x, dtype)
        region = combiner_region(block, combiner, dtype)
        reduces_elements = math.prod(aval.shape[a] for a in axes) > 0
        init_value = chooser_init(combiner, init(dtype), dtype, reduces_elements)
        out = block.op1(
            "stablehlo.reduce",
            [x, ctx.constant(init_value, dtype)],
            hlo.tensor_type(out_aval.shape, dtype),
            {"dimensions": hlo.i64_array(axes)},
            [region],
        )
        if dtype != aval.dtype:
            out = block.convert(out, aval.dtype)
        return out

    return rule


def additive_identity(dtype: np.dtype):
    """-0.0 for inexact dtypes (`-0. + x` is `x` for every x, -0. included), else 0: the
    padding of cumsum, whose impl (np.cumsum) starts from the first element. (np.sum starts
    from +0., so reduce_sum's init is 0: the sum of -0.s is +0.)"""
    if dtypes.is_complex(dtype):
        return complex(-0.0, -0.0)
    return -0.0 if dtypes.is_inexact(dtype) else 0


def _all_ones(dtype: np.dtype):
    if dtype == np.bool_:
        return True
    return dtypes.iinfo(dtype).max if dtypes.is_unsigned(dtype) else -1


def _shift_axes(axes, bdim: int) -> tuple:
    """`axes` of an unbatched operand, as axes of the operand with a batch dim at `bdim`."""
    return tuple(a + (a >= bdim) for a in axes)


def _reduction_batch_rule(primitive: Primitive):
    """Reduce over the shifted axes; the batch dim lands after the kept axes before it."""

    def rule(values, dims, **params):
        (x,), (bdim,) = values, dims
        axes = _shift_axes(params.pop("axes"), bdim)
        out_dim = bdim - sum(a < bdim for a in axes)
        return primitive.bind(x, axes=axes, **params), out_dim

    return rule


# --- reduce_sum -----------------------------------------------------------------------------
reduce_sum_p = Primitive("reduce_sum")


def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum of `operand` over `axes`."""
    check_no_sharding("reduce_sum", out_sharding)
    axes = _canonical_axes("reduce_sum", operand, axes)
    return reduce_sum_p.bind(operand, axes=axes, out_sharding=None)


reduce_sum_p.def_impl(quiet(_accumulating(np.add.reduce)))
reduce_sum_p.def_abstract_eval(_reduction_abstract_eval("reduce_sum", is_numeric))
reduce_sum_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(reduce_sum_p)


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
    shape = operand.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [shapes.broadcast_in_dim(ct, shape, kept)]


transpose_rules[reduce_sum_p] = _reduce_sum_transpose
lowering_rules[reduce_sum_p] = _lower_reduction("stablehlo.add", lambda d: 0, accumulate=True)
batch_rules[reduce_sum_p] = _reduction_batch_rule(reduce_sum_p)

# --- reduce_max -----------------------------------------------------------------------------
reduce_max_p = Primitive("reduce_max")


def reduce_max(operand, axes):
    """Maximum of `operand` over `axes`: NaN if any element is NaN, the lowest value of the
    dtype (-inf, iinfo.min, False) over no elements. Complex numbers compare
    lexicographically."""
    return reduce_max_p.bind(operand, axes=_canonical_axes("reduce_max", operand, axes))


reduce_max_p.def_impl(_extremum(np.maximum.reduce, _lowest, negative_zero_wins=False))
reduce_max_p.def_abstract_eval(_reduction_abstract_eval("reduce_max", is_any))
reduce_max_p.def_weak_type_rule(weak_if_all_weak)


def _reduce_chooser_jvp(chooser_p: Primitive):
    """The JVP of reduce_max/reduce_min: the tangent at the chosen value, averaged over the
    positions that tie for it (as JAX: `grad(max)([1., 3., 3.])` is `[0., .5, .5]`)."""

    def rule(primals, tangents, *, axes):
        (operand,), (t,) = primals, tangents
        out = chooser_p.bind(operand, axes=axes)
        aval = get_aval(operand)
        kept_shape = tuple(1 if i in axes else d for i, d in enumerate(aval.shape))
        chosen = comparison.eq(operand, shapes.reshape(out, kept_shape))  # size-1 dims broadcast
        mask = conversions.convert_element_type(chosen, aval.dtype)
        counts = reduce_sum(mask, axes)
        return out, binary.div(reduce_sum(binary.mul(t, mask), axes), counts)

    return rule


_reduce_max_jvp = _reduce_chooser_jvp(reduce_max_p)
ad.jvp_rules[reduce_max_p] = _reduce_max_jvp
lowering_rules[reduce_max_p] = _lower_reduction("stablehlo.maximum", _lowest)
batch_rules[reduce_max_p] = _reduction_batch_rule(reduce_max_p)

# --- reduce_min -----------------------------------------------------------------------------
reduce_min_p = Primitive("reduce_min")


def reduce_min(operand, axes):
    """Minimum of `operand` over `axes`: NaN if any element is NaN, the highest value of the
    dtype (inf, iinfo.max, True) over no elements. Complex numbers compare
    lexicographically."""
    return reduce_min_p.bind(operand, axes=_canonical_axes("reduce_min", operand, axes))


reduce_min_p.def_impl(_extremum(np.minimum.reduce, _highest, negative_zero_wins=True))
reduce_min_p.def_abstract_eval(_reduction_abstract_eval("reduce_min", is_any))
reduce_min_p.def_weak_type_rule(weak_if_all_weak)
_reduce_min_jvp = _reduce_chooser_jvp(reduce_min_p)
ad.jvp_rules[reduce_min_p] = _reduce_min_jvp
lowering_rules[reduce_min_p] = _lower_reduction("stablehlo.minimum", _highest)
batch_rules[reduce_min_p] = _reduction_batch_rule(reduce_min_p)

# --- reduce_prod ----------------------------------------------------------------------------
reduce_prod_p = Primitive("reduce_prod")


def reduce_prod(operand, axes):
    """Product of `operand` over `axes` (integers wrap around on overflow)."""
    return reduce_prod_p.bind(operand, axes=_canonical_axes("reduce_prod", operand, axes))


reduce_prod_p.def_impl(quiet(_accumulating(np.multiply.reduce)))
reduce_prod_p.def_abstract_eval(_reduction_abstract_eval("reduce_prod", is_numeric))
reduce_prod_p.def_weak_type_rule(weak_if_all_weak)


def _reduce_prod_jvp(primals, tangents, *, axes):
    (operand,), (t,) = primals, tangents
    out = reduce_prod_p.bind(operand, axes=axes)
    if not axes:
        return out, t
    return out, reduce_sum(binary.mul(t, _product_of_others(operand, axes)), axes)


def _product_of_others(x, axes: tuple):
    """Element i: the product over `axes` of all the elements but x[i] itself (the derivative
    of the product by x[i]), as the product of an exclusive prefix and an exclusive suffix
    product, so that it is exact where x has zeros (no division by x)."""
    # circle: cumulative builds its lowering rules on this module's helpers while it is being
    # defined, so it comes after this module; reduce_prod's derivative reaches it when it runs.
    from tracejit._src.lax import cumulative

    aval = get_aval(x)
    shape, ndim = aval.shape, aval.ndim
    if len(axes) == 1:
        (axis,), flat = axes, x
    else:  # the reduced axes, moved last and flattened into one
        kept = tuple(i for i in range(ndim) if i not in axes)
        flat_shape = tuple(shape[i] for i in kept) + (math.prod(shape[i] for i in axes),)
        axis, flat = len(kept), shapes.reshape(x, flat_shape, kept + axes)
    one = np.dtype(aval.dtype).type(1)
    no_padding = [(0, 0, 0)] * get_aval(flat).ndim
    shift_right, shift_left = list(no_padding), list(no_padding)
    shift_right[axis], shift_left[axis] = (1, -1, 0), (-1, 1, 0)
    before = cumulative.cumprod(shapes.pad(flat, one, shift_right), axis)
    after = cumulative.cumprod(shapes.pad(flat, one, shift_left), axis, reverse=True)
    others = binary.mul(before, after)
    if len(axes) == 1:
        return others
    permutation = kept + axes
    permuted = shapes.reshape(others, tuple(shape[i] for i in permutation))
    return shapes.transpose(permuted, tuple(np.argsort(permutation).tolist()))


ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
lowering_rules[reduce_prod_p] = _lower_reduction("stablehlo.multiply", lambda d: 1, accumulate=True)
batch_rules[reduce_prod_p] = _reduction_batch_rule(reduce_prod_p)

# --- reduce_and -----------------------------------------------------------------------------
reduce_and_p = Primitive("reduce_and")


def reduce_and(operand, axes):
    """Logical (bool) or bitwise (integers) AND of `operand` over `axes`."""
    return reduce_and_p.bind(operand, axes=_canonical_axes("reduce_and", operand, axes))


@reduce_and_p.def_impl
def _reduce_and_impl(operand, *, axes):
    if operand.dtype == np.bool_:
        return np.logical_and.reduce(operand, axis=axes)  # (np.all, without its wrapper)
    return np.bitwise_and.reduce(operand, axis=axes)


reduce_and_p.def_abstract_eval(_reduction_abstract_eval("reduce_and", is_int_or_bool))
reduce_and_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(reduce_and_p)
lowering_rules[reduce_and_p] = _lower_reduction("stablehlo.and", _all_ones)
batch_rules[reduce_and_p] = _reduction_batch_rule(reduce_and_p)

# --- reduce_or ------------------------------------------------------------------------------
reduce_or_p = Primitive("reduce_or")


def reduce_or(operand, axes):
    """Logical (bool) or bitwise (integers) OR of `operand` over `axes`."""
    return reduce_or_p.bind(operand, axes=_canonical_axes("reduce_or", operand, axes))


@reduce_or_p.def_impl
def _reduce_or_impl(operand, *, axes):
    if operand.dtype == np.bool_:
        return np.logical_or.reduce(operand, axis=axes)  # (np.any, without its wrapper)
    return np.bitwise_or.reduce(operand, axis=axes)


reduce_or_p.def_abstract_eval(_reduction_abstract_eval("reduce_or", is_int_or_bool))
reduce_or_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(reduce_or_p)
lowering_rules[reduce_or_p] = _lower_reduction("stablehlo.or", lambda d: 0)
batch_rules[reduce_or_p] = _reduction_batch_rule(reduce_or_p)

# --- reduce_xor -----------------------------------------------------------------------------
reduce_xor_p = Primitive("reduce_xor")


def reduce_xor(operand, axes):
    """Logical (bool) or bitwise (integers) XOR of `operand` over `axes`."""
    return reduce_xor_p.bind(operand, axes=_canonical_axes("reduce_xor", operand, axes))


@reduce_xor_p.def_impl
def _reduce_xor_impl(operand, *, axes):
    return np.bitwise_xor.reduce(operand, axis=axes)


reduce_xor_p.def_abstract_eval(_reduction_abstract_eval("reduce_xor", is_int_or_bool))
reduce_xor_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(reduce_xor_p)
lowering_rules[reduce_xor_p] = _lower_reduction("stablehlo.xor", lambda d: 0)
batch_rules[reduce_xor_p] = _reduction_batch_rule(reduce_xor_p)


# --- argmax / argmin helpers ----------------------------------------------------------------


def _arg_params(name: str, operand, axis, index_dtype) -> dict:
    shape = shape_of(operand)
    ndim = len(shape)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: Invalid axis {axis} for operand shape {shape}")
    axis = axis + ndim if axis < 0 else axis
    if shape[axis] == 0:
        raise ValueError(
            f"{name}: argmin and argmax require non-empty reduced dimension. "
            f"operand.shape={shape} axis={axis}"
        )
    index_dtype = dtypes.check_user_dtype(index_dtype, name)
    if index_dtype is None or not dtypes.is_int(index_dtype):
        raise TypeError(f"{name}: index_dtype must be an integer type, but got {index_dtype}")
    return {"axes": (axis,), "index_dtype": index_dtype}


def _arg_abstract_eval(name: str):
    def abstract_eval(operand, *, axes, index_dtype):
        if dtypes.is_complex(operand.dtype):
            raise TypeError(
                f"{name} does not accept dtype {operand.dtype.name} for its operand; it needs a "
                "real (integer, floating-point or boolean) dtype"
            )
        if not dtypes.is_int(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer type, but got {index_dtype}")
        shape = _reduced_shape(name, operand, axes)
        if len(axes) != 1 or operand.shape[axes[0]] == 0:
            raise ValueError(
                f"{name}: argmin and argmax require one non-empty reduced dimension. "
                f"operand {operand.str_short()}, axes={axes}"
            )
        return ShapedArray(shape, index_dtype)

    return abstract_eval


def _arg_impl(numpy_arg):
    def impl(operand, *, axes, index_dtype):
        if operand.dtype.kind == "V":  # ml_dtypes floats: NumPy's NaN handling is unreliable
            operand = operand.astype(np.float32)
        return numpy_arg(operand, axis=axes[0]).astype(index_dtype, copy=False)

    return impl


def _lower_arg(direction: str, init):
    """argmax (`direction` GT) or argmin (LT): a variadic stablehlo.reduce of (values, indices)
    whose combiner keeps the pair with the greater (lesser) value, NaN beating any number, and
    the lower index between equal values or two NaNs (commutative and associative, as reduce
    needs; the init pair, the lowest (highest) value at the largest index, never wins)."""

    def rule(ctx, x, *, axes, index_dtype):
        aval, out_aval = ctx.avals_in[0], ctx.avals_out[0]
        dtype, index_dtype = np.dtype(aval.dtype), np.dtype(index_dtype)
        block = ctx.block
        indices = block.op1(
            "stablehlo.iota",
            [],
            hlo.tensor_type(aval.shape, index_dtype),
            {"iota_dimension": f"{axes[0]} : i64"},
        )
        value_t, index_t = hlo.tensor_type((), dtype), hlo.tensor_type((), index_dtype)
        region = block.region([value_t, index_t, value_t, index_t])
        a, i, b, j = region.args
        bool_t = hlo.tensor_type((), np.bool_)

        def logical(name, *operands):
            return region.op1(f"stablehlo.{name}", list(operands), bool_t)

        wins = region.compare(a, b, direction)
        ties = region.compare(a, b, "EQ")
        if dtypes.is_inexact(dtype):
            a_nan = region.compare(a, a, "NE")
            b_nan = region.compare(b, b, "NE")
            wins = logical("or", wins, logical("and", a_nan, logical("not", b_nan)))
            ties = logical("or", ties, logical("and", a_nan, b_nan))
        first = region.compare(i, j, "LT")
        pick_a = logical("or", wins, logical("and", ties, first))
        region.ret(
            [
                region.op1("stablehlo.select", [pick_a, a, b], value_t),
                region.op1("stablehlo.select", [pick_a, i, j], index_t),
            ]
        )
        _, out = block.op(
            "stablehlo.reduce",
            [
                x,
                indices,
                ctx.constant(init(dtype), dtype),
                ctx.constant(dtypes.iinfo(index_dtype).max, index_dtype),
            ],
            [hlo.tensor_type(out_aval.shape, dtype), hlo.tensor_type(out_aval.shape, index_dtype)],
            {"dimensions": hlo.i64_array(axes)},
            [region],
        )
        return out

    return rule


# --- argmax ---------------------------------------------------------------------------------
argmax_p = Primitive("argmax")


def argmax(operand, axis, index_dtype):
    """Index of the maximum of `operand` along `axis`, as `index_dtype`: the first NaN if there
    is one, else the first occurrence of the maximum."""
    return argmax_p.bind(operand, **_arg_params("argmax", operand, axis, index_dtype))


argmax_p.def_impl(_arg_impl(np.argmax))
argmax_p.def_abstract_eval(_arg_abstract_eval("argmax"))
argmax_p.def_weak_type_rule(never_weak)
ad.defjvp_zero(argmax_p)
lowering_rules[argmax_p] = _lower_arg("GT", _lowest)
batch_rules[argmax_p] = _reduction_batch_rule(argmax_p)

# --- argmin ---------------------------------------------------------------------------------
argmin_p = Primitive("argmin")


def argmin(operand, axis, index_dtype):
    """Index of the minimum of `operand` along `axis`, as `index_dtype`: the first NaN if there
    is one, else the first occurrence of the minimum."""
    return argmin_p.bind(operand, **_arg_params("argmin", operand, axis, index_dtype))


argmin_p.def_impl(_arg_impl(np.argmin))
argmin_p.def_abstract_eval(_arg_abstract_eval("argmin"))
argmin_p.def_weak_type_rule(never_weak)
ad.defjvp_zero(argmin_p)
lowering_rules[argmin_p] = _lower_arg("LT", _highest)
batch_rules[argmin_p] = _reduction_batch_rule(argmin_p)
