"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Each keeps its operand's shape, dtype and weak type; element `i` of the result reduces the
elements `0..i` along `axis` (params `axis`, non-negative, and `reverse`: with `reverse=True`
it reduces the elements `i..n-1` instead). The wrappers accept negative axes and normalize them.

As for the reductions, integer results wrap around in the operand's dtype, float16/bfloat16
accumulate in float32 and are rounded once, NaNs propagate, and cummax/cummin order -0.0 below
+0.0 as XLA does. Complex cummax/cummin compare lexicographically (real part first).
cumlogsumexp accepts only floating-point operands.

Derivatives: cumsum is linear (its transpose is the cumsum in the other direction); the JVPs of
the others are those of a parallel prefix scan of the pairwise operation (see the derivatives
section below), as JAX defines them: exact where cumprod meets zeros, and splitting the tangent
of cummax/cummin among ties as JAX's do.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import (
    binary,
    comparison,
    conversions,
    elementwise,
    reductions,
    selection,
    shapes,
    slicing,
)
from tracejit._src.lax.standard import (
    check_dtype,
    is_float,
    is_numeric,
    normalize_axes,
    quiet,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules


def _canonical_axis(name: str, operand, axis) -> int:
    """The `axis` param from user input: an int, counted from the end when negative."""
    axis = operator.index(axis)
    shape = np.shape(operand)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of shape {shape}")
    return axis + len(shape) if axis < 0 else axis


def _cumulative_abstract_eval(name: str, accepts):
    def abstract_eval(operand: ShapedArray, *, axis, reverse):
        check_dtype(name, operand, accepts)
        normalize_axes(name, (axis,), operand.ndim)
        return operand

    return abstract_eval


# float16 and bfloat16 sums, products and logsumexps accumulate in float32, as XLA's CPU and
# GPU backends do; the other ml_dtypes floats (kind "V") are computed in float32 for every scan,
# since NumPy's ufunc loops for them are unreliable (NaNs, in particular).
_NARROW_FLOATS = frozenset(np.dtype(d) for d in (dtypes.float16, dtypes.bfloat16))


def _scan(accumulate, *, accumulates=True, negative_zero_wins=None):
    """The impl of a cumulative reduction given `accumulate(x, axis)` on NumPy values.
    `accumulates`: narrow floats are computed in float32 (max and min need not be);
    `negative_zero_wins` is True (cummin) or False (cummax) to order signed zeros as XLA does."""

    def impl(operand, *, axis, reverse):
        dtype = operand.dtype
        x = np.flip(operand, axis) if reverse else operand
        if dtype.kind == "V" or (accumulates and dtype in _NARROW_FLOATS):
            x = x.astype(np.float32)
        out = accumulate(x, axis)
        if negative_zero_wins is not None and x.dtype.kind == "f":
            out = _order_signed_zeros(out, x, axis, negative_zero_wins)
        if out.dtype != dtype:
            out = out.astype(dtype)
        return np.flip(out, axis) if reverse else out

    return impl


def _order_signed_zeros(out, x, axis, negative_wins: bool):
    """NumPy's maximum/minimum return their second operand when both are zeros; XLA orders
    -0. below +0., so a running max is +0. once a +0. has been seen (a running min: -0.)."""
    if out.all():  # no zeros (NaNs are truthy)
        return out
    zeros = out == 0
    signs = np.signbit(x)
    seen = np.logical_or.accumulate((x == 0) & (signs if negative_wins else ~signs), axis=axis)
    winner, loser = (-0.0, 0.0) if negative_wins else (0.0, -0.0)
    dtype = x.dtype
    fixed = np.where(seen, dtype.type(winner), dtype.type(loser))
    return np.where(zeros, fixed, out).astype(dtype, copy=False)


# --- derivatives: a parallel prefix scan of (value, tangent) pairs ---------------------------
# cumsum is linear. The JVPs of the other scans are those of their definition as a parallel
# prefix scan (Ladner-Fischer/Blelloch style, as JAX defines them): combine neighbouring pairs,
# scan the half-length result recursively, which gives the prefixes ending at odd positions,
# then combine those with the elements at even positions. Each `combine` gives the combined
# value and its tangent, linear in the tangents; the tangent of the result is built from
# strided slices, pads and sums, all linear. This makes the derivatives exact where a
# closed form would divide by zero (cumprod with zeros: no `out / x`), stable where one would
# overflow (cumlogsumexp), and split the tangent among ties as JAX does (cummax: the
# tangent of a pairwise max at a tie is half each operand's, compounded along the tree).


def _scan_slice(x, start: int, stop: int, axis: int, stride: int = 1):
    return slicing.slice_in_dim(x, start, stop, stride, axis)


def _interleave(even, odd, axis: int):
    """The array whose even positions along `axis` hold `even` and odd positions `odd`
    (`even` has as many elements as `odd`, or one more)."""
    n_even, n_odd = get_aval(even).shape[axis], get_aval(odd).shape[axis]
    ndim = get_aval(even).ndim
    zero = np.zeros((), get_aval(even).dtype)
    even_config, odd_config = [(0, 0, 0)] * ndim, [(0, 0, 0)] * ndim
    even_config[axis] = (0, n_odd - n_even + 1, 1)
    odd_config[axis] = (1, n_even - n_odd, 1)
    return binary.add(shapes.pad(even, zero, even_config), shapes.pad(odd, zero, odd_config))


def _prefix_scan(combine, x, t, axis: int, primal_needed: bool):
    """The inclusive prefix scan of the pairs (x, t) along `axis` with `combine(a, ta, b, tb)`:
    (scanned values, or None unless `primal_needed`; scanned tangents)."""
    n = get_aval(x).shape[axis]
    if n < 2:
        return x, t
    pairs = combine(
        _scan_slice(x, 0, n - 1, axis, 2),
        _scan_slice(t, 0, n - 1, axis, 2),
        _scan_slice(x, 1, n, axis, 2),
        _scan_slice(t, 1, n, axis, 2),
    )
    odd_x, odd_t = _prefix_scan(combine, *pairs, axis, primal_needed=True)  # ends 1, 3, ...
    first_x = _scan_slice(x, 0, 1, axis) if primal_needed else None
    first_t = _scan_slice(t, 0, 1, axis)
    m = (n - 1) // 2  # the even positions 2, 4, ...: the prefix ending just before, combined
    if m:
        if m < n // 2:
            prev_x, prev_t = _scan_slice(odd_x, 0, m, axis), _scan_slice(odd_t, 0, m, axis)
        else:
            prev_x, prev_t = odd_x, odd_t
        rest_x, rest_t = combine(
            prev_x, prev_t, _scan_slice(x, 2, n, axis, 2), _scan_slice(t, 2, n, axis, 2)
        )
        even_x = shapes.concatenate((first_x, rest_x), axis) if primal_needed else None
        even_t = shapes.concatenate((first_t, rest_t), axis)
    else:
        even_x, even_t = first_x, first_t
    out_x = _interleave(even_x, odd_x, axis) if primal_needed else None
    return out_x, _interleave(even_t, odd_t, axis)


def _scan_jvp(primitive: Primitive, combine):
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = primitive.bind(x, axis=axis, reverse=reverse)
        if reverse:
            x, t = shapes.rev(x, (axis,)), shapes.rev(t, (axis,))
        _, t_out = _prefix_scan(combine, x, t, axis, primal_needed=False)
        return out, shapes.rev(t_out, (axis,)) if reverse else t_out

    return rule


def _mul_combine(a, ta, b, tb):
    return binary.mul(a, b), ad.add_tangents(binary.mul(ta, b), binary.mul(a, tb))


def _chooser_combine(chooser):
    """max/min of a pair; at a tie each operand's tangent counts half (JAX's max/min JVP)."""

    def combine(a, ta, b, tb):
        out = chooser(a, b)
        dtype = get_aval(out).dtype
        one = np.ones((), dtype)
        a_chosen = conversions.convert_element_type(comparison.eq(a, out), dtype)
        b_chosen = conversions.convert_element_type(comparison.eq(b, out), dtype)
        a_weight = binary.div(a_chosen, binary.add(one, b_chosen))
        b_weight = binary.div(b_chosen, binary.add(one, a_chosen))
        return out, ad.add_tangents(binary.mul(ta, a_weight), binary.mul(tb, b_weight))

    return combine


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow; a + b where both are infinite alike (or NaN)."""
    diff = binary.sub(a, b)
    out = binary.add(
        binary.max(a, b), elementwise.log1p(elementwise.exp(elementwise.neg(elementwise.abs(diff))))
    )
    return selection.select_n(comparison.ne(diff, diff), out, binary.add(a, b))


def _logaddexp_combine(a, ta, b, tb):
    out = _logaddexp(a, b)
    a_weight = elementwise.exp(binary.sub(a, out))  # d out / d a, in [0, 1]
    b_weight = elementwise.exp(binary.sub(b, out))
    return out, ad.add_tangents(binary.mul(ta, a_weight), binary.mul(tb, b_weight))


# --- lowering: a stablehlo.reduce_window whose window covers the prefix ----------------------


def _lower_scan(combiner, init, accumulate: bool = False):
    """The lowering rule of a cumulative reduction: element i reduces the window of the n
    elements ending at i (starting at i when `reverse`), padded with `init(dtype)` before
    (after) the operand. `combiner`: a stablehlo op name, or a function building the region
    from the block and dtype. `accumulate`: float16/bfloat16 are computed in float32."""

    def rule(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        shape, ndim = aval.shape, aval.ndim
        dtype = reductions.accumulation_dtype(aval.dtype) if accumulate else np.dtype(aval.dtype)
        block = ctx.block
        if dtype != aval.dtype:
            x = block.convert(x, dtype)
        n = shape[axis]
        window = [1] * ndim
        window[axis] = max(n, 1)
        padding = np.zeros((ndim, 2), np.int64)
        padding[axis, 1 if reverse else 0] = max(n - 1, 0)
        if callable(combiner):
            region = combiner(block, dtype)
        else:
            region = reductions.combiner_region(block, combiner, dtype)
        init_value = init(dtype)
        if not callable(combiner):  # every window holds an element: never the init's value
            init_value = reductions.chooser_init(combiner, init_value, dtype)
        out = block.op1(
            "stablehlo.reduce_window",
            [x, ctx.constant(init_value, dtype)],
            hlo.tensor_type(shape, dtype),
            {
                "window_dimensions": hlo.i64_array(window),
                "window_strides": hlo.i64_array([1] * ndim),
                "padding": hlo.dense_attribute(padding),
            },
            [region],
        )
        if dtype != aval.dtype:
            out = block.convert(out, aval.dtype)
        return out

    return rule


def _logaddexp_region(block, dtype):
    """log(exp(a) + exp(b)) as `_logaddexp`: max(a, b) + log1p(exp(-|a - b|)), or a + b where
    a - b is NaN (both infinite alike, or a NaN)."""
    t = hlo.tensor_type((), dtype)
    region = block.region([t, t])
    a, b = region.args
    diff = region.op1("stablehlo.subtract", [a, b], t)
    term = region.op1("stablehlo.negate", [region.op1("stablehlo.abs", [diff], t)], t)
    term = region.op1("stablehlo.log_plus_one", [region.op1("stablehlo.exponential", [term], t)], t)
    larger = region.op1("stablehlo.maximum", [a, b], t)
    out = region.op1("stablehlo.add", [larger, term], t)
    # Where term is 0 (the other operand is -inf: the padding), the larger one as it is (-0.).
    zero = region.op1(
        "stablehlo.constant", [], t, {"value": hlo.dense_attribute(np.zeros((), dtype))}
    )
    out = region.op1("stablehlo.select", [region.compare(term, zero, "EQ"), larger, out], t)
    nan = region.compare(diff, diff, "NE")
    region.ret(
        [region.op1("stablehlo.select", [nan, region.op1("stablehlo.add", [a, b], t), out], t)]
    )
    return region


def _scan_batch_rule(primitive: Primitive):
    """Scan along the axis shifted past the batch dim, which stays where it is."""

    def rule(values, dims, *, axis, reverse):
        (x,), (bdim,) = values, dims
        return primitive.bind(x, axis=axis + (axis >= bdim), reverse=reverse), bdim

    return rule


# --- cumsum ---------------------------------------------------------------------------------
cumsum_p = Primitive("cumsum")


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum of `operand` along `axis` (from the end when `reverse`)."""
    return cumsum_p.bind(
        operand, axis=_canonical_axis("cumsum", operand, axis), reverse=bool(reverse)
    )


cumsum_p.def_impl(quiet(_scan(lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype))))
cumsum_p.def_abstract_eval(_cumulative_abstract_eval("cumsum", is_numeric))
cumsum_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(cumsum_p)


def _cumsum_transpose(ct, operand, *, axis, reverse):
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


transpose_rules[cumsum_p] = _cumsum_transpose
lowering_rules[cumsum_p] = _lower_scan(
    "stablehlo.add", reductions.additive_identity, accumulate=True
)
batch_rules[cumsum_p] = _scan_batch_rule(cumsum_p)

# --- cumprod --------------------------------------------------------------------------------
cumprod_p = Primitive("cumprod")


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product of `operand` along `axis` (from the end when `reverse`)."""
    return cumprod_p.bind(
        operand, axis=_canonical_axis("cumprod", operand, axis), reverse=bool(reverse)
    )


cumprod_p.def_impl(quiet(_scan(lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype))))
cumprod_p.def_abstract_eval(_cumulative_abstract_eval("cumprod", is_numeric))
cumprod_p.def_weak_type_rule(weak_if_all_weak)
_cumprod_jvp = _scan_jvp(cumprod_p, _mul_combine)
ad.jvp_rules[cumprod_p] = _cumprod_jvp
lowering_rules[cumprod_p] = _lower_scan("stablehlo.multiply", lambda d: 1, accumulate=True)
batch_rules[cumprod_p] = _scan_batch_rule(cumprod_p)

# --- cummax ---------------------------------------------------------------------------------
cummax_p = Primitive("cummax")


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum of `operand` along `axis` (from the end when `reverse`)."""
    return cummax_p.bind(
        operand, axis=_canonical_axis("cummax", operand, axis), reverse=bool(reverse)
    )


cummax_p.def_impl(_scan(np.maximum.accumulate, accumulates=False, negative_zero_wins=False))
cummax_p.def_abstract_eval(_cumulative_abstract_eval("cummax", is_numeric))
cummax_p.def_weak_type_rule(weak_if_all_weak)
_cummax_jvp = _scan_jvp(cummax_p, _chooser_combine(binary.max))
ad.jvp_rules[cummax_p] = _cummax_jvp
lowering_rules[cummax_p] = _lower_scan("stablehlo.maximum", reductions._lowest)
batch_rules[cummax_p] = _scan_batch_rule(cummax_p)

# --- cummin ---------------------------------------------------------------------------------
cummin_p = Primitive("cummin")


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum of `operand` along `axis` (from the end when `reverse`)."""
    return cummin_p.bind(
        operand, axis=_canonical_axis("cummin", operand, axis), reverse=bool(reverse)
    )


cummin_p.def_impl(_scan(np.minimum.accumulate, accumulates=False, negative_zero_wins=True))
cummin_p.def_abstract_eval(_cumulative_abstract_eval("cummin", is_numeric))
cummin_p.def_weak_type_rule(weak_if_all_weak)
_cummin_jvp = _scan_jvp(cummin_p, _chooser_combine(binary.min))
ad.jvp_rules[cummin_p] = _cummin_jvp
lowering_rules[cummin_p] = _lower_scan("stablehlo.minimum", reductions._highest)
batch_rules[cummin_p] = _scan_batch_rule(cummin_p)

# --- cumlogsumexp ---------------------------------------------------------------------------
cumlogsumexp_p = Primitive("cumlogsumexp")


def cumlogsumexp(operand, axis=0, reverse=False):
    r"""Cumulative :math:`\log \sum \exp` of `operand` along `axis` (from the end when
    `reverse`), computed without overflow."""
    return cumlogsumexp_p.bind(
        operand, axis=_canonical_axis("cumlogsumexp", operand, axis), reverse=bool(reverse)
    )


def _logaddexp_accumulate(x, axis):
    with np.errstate(invalid="ignore"):  # NumPy warns for inf - inf inside logaddexp(inf, inf)
        return np.logaddexp.accumulate(x, axis)


cumlogsumexp_p.def_impl(_scan(_logaddexp_accumulate))
cumlogsumexp_p.def_abstract_eval(_cumulative_abstract_eval("cumlogsumexp", is_float))
cumlogsumexp_p.def_weak_type_rule(weak_if_all_weak)
_cumlogsumexp_jvp = _scan_jvp(cumlogsumexp_p, _logaddexp_combine)
ad.jvp_rules[cumlogsumexp_p] = _cumlogsumexp_jvp
lowering_rules[cumlogsumexp_p] = _lower_scan(_logaddexp_region, reductions._lowest, accumulate=True)
batch_rules[cumlogsumexp_p] = _scan_batch_rule(cumlogsumexp_p)
