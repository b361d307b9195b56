"""Binary elementwise primitives: arithmetic (add ... pow, max, min) and nextafter; the bitwise
ones are in `bitwise`, comparisons in `comparison`, atan2 in `trigonometric`.

Both operands have one dtype (lax does not promote; `jnp` does before it calls lax) and
broadcast only as lax allows (see `standard.broadcast_shapes`); `pow` alone also takes an
integer exponent with an inexact base. Results have the operands' dtype, weak when both operands
are.

The eager implementations follow XLA where it differs from NumPy: integer `div` rounds toward
zero and `rem` takes the sign of the dividend (C semantics; `x / 0` is -1, all bits set, and
`x % 0` is x, with no error or warning); `max`/`min` propagate nan; floating-point exceptions
are silent (see `standard.quiet`).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, add_tangents, transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import (
    broadcasting,
    comparison,
    conversions,
    elementwise,
    reductions,
    selection,
    shapes,
)
from tracejit._src.lax.standard import (
    broadcast_shapes,
    check_dtype,
    check_same_dtypes,
    elementwise_abstract_eval,
    is_any,
    is_float,
    is_float_or_complex,
    is_int,
    is_int_or_float,
    is_numeric,
    lower_binary,
    quiet,
    real_ufuncs,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules

_BOOL = np.dtype(bool)
_COMPLEX_NAN = np.complex64(complex("nan+nanj"))  # (before `complex` below shadows the builtin)


def _full(value, dtype, shape: tuple):
    """A constant of `dtype` filling `shape` (for derivative rules): a literal when rank 0."""
    constant = np.dtype(dtype).type(value)
    return shapes.broadcast_in_dim(constant, shape, ()) if shape else constant


def _full_like(x, value):
    aval = get_aval(x)
    return _full(value, aval.dtype, aval.shape)


# --- add ------------------------------------------------------------------------------------
add_p = Primitive("add")


def add(x, y):
    r"""Elementwise addition: :math:`x + y`."""
    return add_p.bind(x, y)


add_p.def_impl(quiet(np.add))  # inf + -inf is nan, silently, as in XLA
add_p.def_abstract_eval(elementwise_abstract_eval("add", is_numeric))
add_p.def_weak_type_rule(weak_if_all_weak)


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    if type(tx) is Zero:
        return out, broadcasting.broadcast_to_shape(ty, out.shape)
    if type(ty) is Zero:
        return out, broadcasting.broadcast_to_shape(tx, out.shape)
    return out, add(tx, ty)


def _add_transpose(ct, x, y):
    return [
        reductions.unbroadcast(x.aval, ct) if is_undefined_primal(x) else None,
        reductions.unbroadcast(y.aval, ct) if is_undefined_primal(y) else None,
    ]


ad.jvp_rules[add_p] = _add_jvp
ad.mark_linear(add_p, 0, 1)
transpose_rules[add_p] = _add_transpose
lowering_rules[add_p] = lambda ctx, x, y: ctx.op("stablehlo.add", ctx.broadcast_operands(x, y))
batch_rules[add_p] = broadcasting.broadcasting_batch_rule(add_p)

# --- sub ------------------------------------------------------------------------------------
sub_p = Primitive("sub")


def sub(x, y):
    r"""Elementwise subtraction: :math:`x - y`."""
    return sub_p.bind(x, y)


sub_p.def_impl(quiet(np.subtract))
sub_p.def_abstract_eval(elementwise_abstract_eval("sub", is_numeric))
sub_p.def_weak_type_rule(weak_if_all_weak)


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = sub(x, y)
    if type(tx) is Zero:
        return out, broadcasting.broadcast_to_shape(elementwise.neg(ty), out.shape)
    if type(ty) is Zero:
        return out, broadcasting.broadcast_to_shape(tx, out.shape)
    return out, sub(tx, ty)


def _sub_transpose(ct, x, y):
    return [
        reductions.unbroadcast(x.aval, ct) if is_undefined_primal(x) else None,
        reductions.unbroadcast(y.aval, elementwise.neg(ct)) if is_undefined_primal(y) else None,
    ]


ad.jvp_rules[sub_p] = _sub_jvp
ad.mark_linear(sub_p, 0, 1)
transpose_rules[sub_p] = _sub_transpose
lowering_rules[sub_p] = lower_binary("stablehlo.subtract")
batch_rules[sub_p] = broadcasting.broadcasting_batch_rule(sub_p)

# --- mul ------------------------------------------------------------------------------------
mul_p = Primitive("mul")


def mul(x, y, *, out_dtype=None):
    r"""Elementwise multiplication: :math:`x \times y`; with `out_dtype`, the product of the
    operands converted to that wider dtype (exact there, e.g. int8 products in int32)."""
    if out_dtype is not None:
        x, y = _widened_operands("mul", out_dtype, x, y)
    return mul_p.bind(x, y)


def _widened_operands(name: str, out_dtype, *operands) -> tuple:
    """Operands converted to `out_dtype`, which must hold every value of theirs: products in it
    are then exact up to its rounding, as XLA's with an output type computes them. Narrowing
    would round twice, differently from XLA: not supported."""
    out_dtype = dtypes.check_user_dtype(out_dtype, name)
    for operand in operands:
        dtype = dtypes.dtype_of(operand)
        if dtypes.promote_types(dtype, out_dtype) != out_dtype:
            raise NotImplementedError(
                f"lax.{name}: out_dtype={out_dtype.name} narrower than the operand dtype "
                f"{dtype.name} is not supported"
            )
    return tuple(conversions.convert_element_type(x, out_dtype) for x in operands)


@mul_p.def_impl
@quiet  # 0 * inf is nan, silently
def _mul_impl(x, y):
    if x.dtype.kind == "c":
        return xla_complex_multiply(x, y)
    return np.multiply(x, y)


real_ufuncs[mul_p] = (np.multiply, True)
mul_p.def_abstract_eval(elementwise_abstract_eval("mul", is_numeric))
mul_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
ad.mark_linear(mul_p, 0, 1)  # in each operand, the other held fixed


def _mul_transpose(ct, x, y):
    if is_undefined_primal(x) == is_undefined_primal(y):
        raise TypeError("mul is linear in one operand only: transposing it in both")
    if is_undefined_primal(x):
        return [reductions.unbroadcast(x.aval, mul(ct, y)), None]
    return [None, reductions.unbroadcast(y.aval, mul(x, ct))]


transpose_rules[mul_p] = _mul_transpose
lowering_rules[mul_p] = lower_binary("stablehlo.multiply")
batch_rules[mul_p] = broadcasting.broadcasting_batch_rule(mul_p)


def lower_division(op_name: str, at_zero):
    """The lowering of an integer division or remainder with its divisor guarded: XLA folds a
    division by a constant zero on the host, and the host's division traps (SIGFPE: the
    process dies). Where the divisor is 0 it divides by 1 instead and gives `at_zero(block,
    x)`, what XLA's kernels give there (so that jit agrees with eager for any divisor).
    Floating-point division needs no guard."""
    plain = lower_binary(op_name)

    def rule(ctx, x, y):
        dtype = ctx.avals_out[0].dtype
        if not dtypes.is_int(dtype):
            return plain(ctx, x, y)
        x, y = ctx.broadcast_operands(x, y)
        block = ctx.block
        by_zero = block.compare(y, block.full_like(y, 0), "EQ")
        safe = ctx.op("stablehlo.select", [by_zero, block.full_like(y, 1), y])
        result = ctx.op(op_name, [x, safe])
        return ctx.op("stablehlo.select", [by_zero, at_zero(block, x, dtype), result])

    return rule


def _all_bits_set(block, x, dtype):  # -1, or the largest unsigned integer
    return block.full_like(x, np.iinfo(dtype).max if dtype.kind == "u" else -1)


# --- div ------------------------------------------------------------------------------------
div_p = Primitive("div")


def div(x, y):
    r"""Elementwise division :math:`x / y`. Integer division rounds toward zero (as C does,
    unlike Python's `//`); an integer divided by 0 gives -1 (all bits set)."""
    return div_p.bind(x, y)


@div_p.def_impl
@quiet
def _div_impl(x, y):
    kind = x.dtype.kind
    if kind == "u":
        by_zero = y == 0
        quotient = np.floor_divide(x, np.where(by_zero, 1, y))
        return np.where(by_zero, np.invert(x.dtype.type(0)), quotient)
    if kind == "i":
        by_zero, by_minus_one = y == 0, y == -1
        safe = np.where(by_zero | by_minus_one, 1, y)
        exact = x - np.fmod(x, safe)  # x rounded toward zero to a multiple of y: no overflow
        quotient = np.floor_divide(exact, safe)
        quotient = np.where(by_minus_one, np.negative(x), quotient)  # -INT_MIN wraps to INT_MIN
        return np.where(by_zero, -1, quotient)
    if kind == "c":
        return xla_complex_divide(x, y)
    if kind == "f" and y.shape != x.shape:  # what XLA makes of a divisor it broadcasts
        if not y.ndim:
            return np.multiply(x, _scalar_reciprocal(y))
        if y.shape != np.broadcast_shapes(x.shape, y.shape):
            return np.multiply(x, broadcast_divisor_reciprocal(y))
    return np.divide(x, y)


_SMALLEST_NORMAL = {np.dtype(t): np.finfo(t).tiny for t in (np.float16, np.float32, np.float64)}


def broadcast_divisor_reciprocal(y):
    """What XLA multiplies by where it divides by a broadcast divisor: 1 / y, a subnormal
    reciprocal flushed to zero (XLA's CPU code runs with subnormals off), so that 3e38 / 3e38
    is 3e38 * 0 = 0 there (and here), not 1."""
    reciprocal = np.reciprocal(y)
    subnormal = np.abs(reciprocal) < _SMALLEST_NORMAL[reciprocal.dtype]
    if subnormal.any():
        reciprocal = np.where(subnormal, np.copysign(0, reciprocal), reciprocal)
    return reciprocal


def _scalar_reciprocal(y):
    """`broadcast_divisor_reciprocal` of a 0-d divisor, in Python floats (the common case,
    x / 2.0, without NumPy's per-call costs): a float16/32 quotient computed in float64 and
    rounded once is the correctly rounded one."""
    divisor = float(y)
    reciprocal = 1.0 / divisor if divisor else math.copysign(math.inf, divisor)
    if abs(reciprocal) < _SMALLEST_NORMAL[y.dtype]:
        reciprocal = math.copysign(0.0, reciprocal)
    return y.dtype.type(reciprocal)


# XLA computes complex products and quotients with fused multiply-adds, so their last bits
# differ from NumPy's; these reproduce XLA's, computing each fused step exactly in a wider
# type and rounding once (float64 for complex64's parts; for complex128's, the x87 extended
# type, whose double rounding is off in the last bit about once in a thousand).
_WIDER = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.float64): np.dtype(np.longdouble)}


def _fused_multiply_add(a, b, c):
    """a * b + c rounded once."""
    wide = _WIDER[a.dtype]
    return (a.astype(wide) * b.astype(wide) + c).astype(a.dtype)


def _complex(real, imag, dtype):
    out = np.empty(np.shape(real), dtype)
    out.real, out.imag = real, imag
    return out


def xla_complex_multiply(x, y):
    """(a + bi)(c + di) as XLA computes it: real part fma(a, c, -bd), imaginary fma(b, c, ad)."""
    x, y = np.broadcast_arrays(x, y)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    dtype = np.result_type(x, y)
    return _complex(_fused_multiply_add(a, c, -(b * d)), _fused_multiply_add(b, c, a * d), dtype)


def xla_complex_divide(x, y):
    """x / y as XLA computes it: Smith's algorithm (scaling by the divisor's smaller part over
    its larger) with fused multiply-adds, and C99's Annex G where that gives NaN + NaN j:
    (0.5+0.5j) / (-0+0j) is -inf-inf j (NumPy: inf+inf j)."""
    x, y = np.broadcast_arrays(x, y)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    fma = _fused_multiply_add
    real_larger = np.abs(d) <= np.abs(c)
    ratio = np.where(real_larger, d / c, c / d)
    # real part larger: (a + b r) / (c + d r) and (b - a r) / (c + d r), r = d / c;
    # else: (a r + b) / (c r + d) and (b r - a) / (c r + d), r = c / d
    denominator = np.where(real_larger, fma(d, ratio, c), fma(c, ratio, d))
    real = np.where(real_larger, fma(b, ratio, a), fma(a, ratio, b)) / denominator
    imag = np.where(real_larger, fma(-a, ratio, b), fma(b, ratio, -a)) / denominator
    lost = np.isnan(real) & np.isnan(imag)
    if lost.any():  # C99's Annex G recovers infinities and zeros the formulas lose to NaN
        real, imag = _recover_infinite_quotients(lost, a, b, c, d, real, imag)
    return _complex(real, imag, np.result_type(x, y))


def _recover_infinite_quotients(lost, a, b, c, d, real, imag):
    """Where Smith's formulas gave NaN + NaN j: by zero, each part of the numerator times
    copysign(inf, c); an infinite numerator (a part infinite, the other even NaN) over a finite
    denominator is infinite, a finite one over an infinite denominator is zero, the signs those
    of the parts' product (infinite parts counting as 1, finite ones as 0)."""
    one_if_inf = lambda v: np.copysign(np.isinf(v).astype(v.dtype), v)
    numerator_infinite = np.isinf(a) | np.isinf(b)
    denominator_infinite = np.isinf(c) | np.isinf(d)
    finite = lambda u, v: np.isfinite(u) & np.isfinite(v)
    by_zero = lost & (c == 0) & (d == 0)
    infinite = lost & ~by_zero & numerator_infinite & finite(c, d)
    zero = lost & ~by_zero & denominator_infinite & finite(a, b)
    inf = np.copysign(np.inf, c).astype(a.dtype)
    real, imag = np.where(by_zero, inf * a, real), np.where(by_zero, inf * b, imag)
    a1, b1 = one_if_inf(a), one_if_inf(b)
    real = np.where(infinite, np.inf * (a1 * c + b1 * d), real)
    imag = np.where(infinite, np.inf * (b1 * c - a1 * d), imag)
    c1, d1 = one_if_inf(c), one_if_inf(d)
    real = np.where(zero, 0.0 * (a * c1 + b * d1), real)
    imag = np.where(zero, 0.0 * (b * c1 - a * d1), imag)
    return real.astype(a.dtype), imag.astype(a.dtype)


div_p.def_abstract_eval(elementwise_abstract_eval("div", is_numeric))
div_p.def_weak_type_rule(weak_if_all_weak)


def _div_jvp_rhs(t, x, y):
    return mul(mul(elementwise.neg(t), x), elementwise.integer_pow(y, -2))  # -x / y**2


ad.defjvp(div_p, lambda t, x, y: div(t, y), _div_jvp_rhs)
ad.mark_linear(div_p, 0)  # in the numerator


def _div_transpose(ct, x, y):
    if is_undefined_primal(y):
        raise TypeError("div is linear in its numerator only: transposing it in the denominator")
    return [reductions.unbroadcast(x.aval, div(ct, y)), None]


transpose_rules[div_p] = _div_transpose
_lower_div_exactly = lower_division("stablehlo.divide", _all_bits_set)  # C semantics


def _div_lowering(ctx, x, y):
    """A floating-point divisor that is broadcast becomes a product with its reciprocal, as
    JAX's XLA rewrites it (and this plugin's XLA only for constants): x / s and a mean are then
    JAX's to the last bit, under `jit` as eagerly."""
    y_aval, out_aval = ctx.avals_in[1], ctx.avals_out[0]
    if out_aval.dtype.kind != "f" or y_aval.shape == out_aval.shape:
        return _lower_div_exactly(ctx, x, y)
    reciprocal = ctx.op("stablehlo.divide", [ctx.block.full_like(y, 1), y], result_avals=[y_aval])
    return ctx.op("stablehlo.multiply", ctx.broadcast_operands(x, reciprocal))


lowering_rules[div_p] = _div_lowering
batch_rules[div_p] = broadcasting.broadcasting_batch_rule(div_p)

# --- rem ------------------------------------------------------------------------------------
rem_p = Primitive("rem")


def rem(x, y):
    r"""Elementwise remainder of :math:`x / y` rounded toward zero, with the sign of the
    dividend (C's `fmod`, unlike Python's `%`); an integer remainder by 0 is x."""
    return rem_p.bind(x, y)


@rem_p.def_impl
@quiet
def _rem_impl(x, y):
    if x.dtype.kind in "iu":
        by_zero = y == 0
        return np.where(by_zero, x, np.fmod(x, np.where(by_zero, 1, y)))
    return np.fmod(x, y)


rem_p.def_abstract_eval(elementwise_abstract_eval("rem", is_int_or_float))
rem_p.def_weak_type_rule(weak_if_all_weak)


def _rem_jvp_lhs(t, x, y):
    return broadcasting.broadcast_to_shape(t, broadcast_shapes("rem", get_aval(x), get_aval(y)))


def _rem_jvp_rhs(t, x, y):
    # rem(x, y) = x - y * trunc(x / y), so d/dy = -trunc(x / y) (trunc as sign * floor(abs))
    neg_t = elementwise.neg(t)
    return mul(
        neg_t, mul(elementwise.sign(div(x, y)), elementwise.floor(elementwise.abs(div(x, y))))
    )


ad.defjvp(rem_p, _rem_jvp_lhs, _rem_jvp_rhs)
lowering_rules[rem_p] = lower_division("stablehlo.remainder", lambda block, x, dtype: x)
batch_rules[rem_p] = broadcasting.broadcasting_batch_rule(rem_p)

# --- pow ------------------------------------------------------------------------------------
pow_p = Primitive("pow")


def pow(x, y):
    r"""Elementwise power :math:`x^y` of a floating or complex base `x`; the exponent `y` has
    the dtype of `x` or is an integer array."""
    return pow_p.bind(x, y)


@pow_p.def_impl
@quiet
def _pow_impl(x, y):
    if y.dtype != x.dtype:  # an integer exponent
        y = y.astype(x.dtype)
    fused = None if accel is None else accel.power_scanning_bases(np.power, x, y)
    if fused is not None:  # (the C twin of np.power and _as_c_pow's look at the bases)
        out, base_at_most_zero = fused
        return _as_c_pow_at_zero_bases(x, y, out) if base_at_most_zero else out
    out = np.power(x, y)
    if x.dtype.kind == "f":
        out = _as_c_pow(x, y, out)
    elif x.dtype.kind == "c":
        # XLA's complex pow is exp(y * log(x)): a zero base and an exponent off the real axis
        # give NaN (log(0) = -inf times a complex number), where NumPy gives 0.
        out = np.where((x == 0) & (y.imag != 0), _COMPLEX_NAN, out)
        out = out.astype(x.dtype)
    return out


def _as_c_pow(x, y, out):
    """NumPy's power where it differs from C's pow, which XLA follows: a negative infinite or
    zero base raised to a power that is not an odd integer gives an unsigned result (+inf for
    (-inf)**0.5, where NumPy gives NaN; +0 for (-0)**0.5). Only such bases are looked at: a
    float np.mod over every exponent takes 12x the time of the power."""
    if x.size == 0 or not np.fmin.reduce(x, axis=None) <= 0:
        return out  # no zero or negative base (NaNs aside)
    return _as_c_pow_at_zero_bases(x, y, out)


def _as_c_pow_at_zero_bases(x, y, out):
    """`_as_c_pow` where some base may be zero or negative."""
    x, y = np.broadcast_arrays(x, y)
    at = (x == -np.inf) | ((x == 0) & np.signbit(x))
    if not at.any():
        return out
    x, y = x[at], y[at]
    fix = np.where(x == -np.inf, y != 0, y > 0) & (np.mod(y, 2) != 1) & ~np.isnan(y)
    c_pow = np.where((x == -np.inf) & (y > 0), np.inf, 0.0)  # +inf, or +0
    out = np.array(out)
    out[at] = np.where(fix, c_pow, out[at])
    return out


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
    check_dtype("pow", x, is_float_or_complex, "first operand (the base)")
    if not (is_int(y.dtype) or y.dtype == x.dtype):
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and the "
            "second argument must have an inexact or integer dtype, and two inexact dtypes must "
            f"match, but got {x.dtype.name} and {y.dtype.name} respectively."
        )
    shape = broadcast_shapes("pow", x, y)
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


pow_p.def_weak_type_rule(weak_if_all_weak)


def _pow_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = pow(x, y)
    tangent_out = Zero.from_primal_value(out)
    if type(tx) is not Zero:  # d/dx = y * x**(y - 1)
        if is_int(get_aval(y).dtype):
            # an integer exponent 0 gives 0, even at x = 0 (x**0 is 1 everywhere)
            y_float = conversions.convert_element_type(y, get_aval(x).dtype)
            y_float = broadcasting.broadcast_to_shape(y_float, out.shape)
            is_zero = comparison.eq(y_float, _full(0, get_aval(y_float).dtype, ()))
            one = _full_like(y_float, 1)
            jac = mul(selection.select_n(is_zero, y_float, one), pow(x, sub(y_float, one)))
            jac = selection.select_n(is_zero, jac, _full_like(y_float, 0))
        else:
            jac = mul(y, pow(x, sub(y, _full_like(y, 1))))
        tangent_out = add_tangents(tangent_out, mul(tx, jac))
    if type(ty) is not Zero and not is_int(get_aval(y).dtype):  # integer exponents: no tangent
        # d/dy = log(x) * x**y, with log(x) taken as 0 at x = 0
        x_aval = get_aval(x)
        is_zero = comparison.eq(x, _full(0, x_aval.dtype, ()))
        safe_x = selection.select_n(is_zero, x, _full(1, x_aval.dtype, x_aval.shape))
        jac = mul(elementwise.log(safe_x), out)
        tangent_out = add_tangents(tangent_out, mul(ty, jac))
    return out, tangent_out


ad.jvp_rules[pow_p] = _pow_jvp


def _pow_lowering(ctx, x, y):
    x, y = ctx.broadcast_operands(x, y)
    # an integer exponent is converted to the base's dtype, as our impl does
    y = ctx.block.convert(y, ctx.avals_in[0].dtype)
    return ctx.op("stablehlo.power", [x, y])


lowering_rules[pow_p] = _pow_lowering
batch_rules[pow_p] = broadcasting.broadcasting_batch_rule(pow_p)

# --- max ------------------------------------------------------------------------------------
max_p = Primitive("max")


def max(x, y):
    r"""Elementwise maximum :math:`\max(x, y)`; nan if either is nan (complex numbers compare
    lexicographically)."""
    return max_p.bind(x, y)


max_p.def_impl(quiet(np.maximum))  # bfloat16 nan warns otherwise
max_p.def_abstract_eval(elementwise_abstract_eval("max", is_any))
max_p.def_weak_type_rule(weak_if_all_weak)


def _balanced_eq(x, out, y):
    """d out / d x of max/min: 1 where `x` alone is the result, 1/2 where `y` is too (a tie
    splits the derivative evenly), 0 elsewhere (nan results included)."""
    aval = get_aval(out)
    is_x = comparison.eq(x, out)
    one, zero = _full(1, aval.dtype, aval.shape), _full(0, aval.dtype, aval.shape)
    picked = selection.select_n(is_x, zero, one)
    is_y = comparison.eq(y, out)
    two, one = _full(2, aval.dtype, aval.shape), _full(1, aval.dtype, aval.shape)
    shared = selection.select_n(is_y, one, two)
    return div(picked, shared)


def _max_min_jvp(fun, primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = fun(x, y)
    tangent_out = Zero.from_primal_value(out)
    if type(tx) is not Zero:
        tangent_out = add_tangents(tangent_out, mul(tx, _balanced_eq(x, out, y)))
    if type(ty) is not Zero:
        tangent_out = add_tangents(tangent_out, mul(ty, _balanced_eq(y, out, x)))
    return out, tangent_out


def _max_jvp(primals, tangents):
    return _max_min_jvp(max, primals, tangents)


ad.jvp_rules[max_p] = _max_jvp


def _max_min_lowering(op_name: str):
    def rule(ctx, x, y):
        x, y = ctx.broadcast_operands(x, y)
        dtype, shape = ctx.avals_in[0].dtype, ctx.avals_out[0].shape
        if dtypes.is_complex(dtype):
            return _complex_max_min(ctx, x, y, op_name == "stablehlo.maximum", dtype, shape)
        # (NaNs propagate: programs are compiled without XLA's fast min/max, `DEBUG_OPTIONS`)
        return ctx.op(op_name, [x, y])

    return rule


def _complex_max_min(ctx, x, y, is_max: bool, dtype, shape):
    """Lexicographic max/min of complex numbers, nan first, as NumPy's (XLA's CPU maximum and
    minimum tell -0 from 0 in the real part)."""
    part_dtype = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    part = ShapedArray(shape, part_dtype)
    bools = ShapedArray(shape, _BOOL)
    xr, xi = (ctx.op(f"stablehlo.{p}", [x], result_avals=[part]) for p in ("real", "imag"))
    yr, yi = (ctx.op(f"stablehlo.{p}", [y], result_avals=[part]) for p in ("real", "imag"))
    cmp = ctx.block.compare

    def either(a, b):
        return ctx.op("stablehlo.or", [a, b], result_avals=[bools])

    if is_max:  # y wins where x < y
        xr, xi, yr, yi = yr, yi, xr, xi
    tie = cmp(yr, xr, "EQ")
    y_wins = either(
        cmp(yr, xr, "LT"), ctx.op("stablehlo.and", [tie, cmp(yi, xi, "LT")], result_avals=[bools])
    )
    out = ctx.op("stablehlo.select", [y_wins, y, x])
    if is_max:
        xr, xi, yr, yi = yr, yi, xr, xi
    y_nan = either(cmp(yr, yr, "NE"), cmp(yi, yi, "NE"))
    out = ctx.op("stablehlo.select", [y_nan, y, out])
    x_nan = either(cmp(xr, xr, "NE"), cmp(xi, xi, "NE"))
    return ctx.op("stablehlo.select", [x_nan, x, out])


lowering_rules[max_p] = _max_min_lowering("stablehlo.maximum")
batch_rules[max_p] = broadcasting.broadcasting_batch_rule(max_p)

# --- min ------------------------------------------------------------------------------------
min_p = Primitive("min")


def min(x, y):
    r"""Elementwise minimum :math:`\min(x, y)`; nan if either is nan (complex numbers compare
    lexicographically)."""
    return min_p.bind(x, y)


min_p.def_impl(quiet(np.minimum))
min_p.def_abstract_eval(elementwise_abstract_eval("min", is_any))
min_p.def_weak_type_rule(weak_if_all_weak)


def _min_jvp(primals, tangents):
    return _max_min_jvp(min, primals, tangents)


ad.jvp_rules[min_p] = _min_jvp
lowering_rules[min_p] = _max_min_lowering("stablehlo.minimum")
batch_rules[min_p] = broadcasting.broadcasting_batch_rule(min_p)

# --- nextafter ------------------------------------------------------------------------------
nextafter_p = Primitive("nextafter")


def nextafter(x1, x2):
    r"""Elementwise next representable value after `x1` in the direction of `x2`."""
    return nextafter_p.bind(x1, x2)


nextafter_p.def_impl(quiet(np.nextafter))  # overflow to inf is silent
nextafter_p.def_abstract_eval(elementwise_abstract_eval("nextafter", is_float))
nextafter_p.def_weak_type_rule(weak_if_all_weak)

ad.not_differentiable(
    nextafter_p,
    "JAX defines none either: the step to the next float is piecewise constant, but the result "
    "follows x, so a zero tangent would be wrong",
)


def _nextafter_lowering(ctx, x, y):
    # StableHLO has no nextafter (chlo's is not available): step the bit pattern, which is
    # sign-magnitude, by one; all tests are on the integer bits, so subnormals are exact.
    x, y = ctx.broadcast_operands(x, y)
    aval = ctx.avals_out[0]
    shape, dtype = aval.shape, aval.dtype
    int_dtype = np.dtype(f"i{dtype.itemsize}")
    ints, bools = ShapedArray(shape, int_dtype), ShapedArray(shape, _BOOL)

    def op(name, *operands, result=ints):
        return ctx.op(name, list(operands), result_avals=[result])

    def full(value, dtype=int_dtype):
        return ctx.broadcast(ctx.constant(value, dtype), ShapedArray((), dtype), shape)

    cmp = ctx.block.compare

    def select(pred, on_true, on_false, result=ints):
        return op("stablehlo.select", pred, on_true, on_false, result=result)

    x_bits, y_bits = op("stablehlo.bitcast_convert", x), op("stablehlo.bitcast_convert", y)
    magnitude = full(np.iinfo(int_dtype).max)
    x_mag, y_mag = op("stablehlo.and", x_bits, magnitude), op("stablehlo.and", y_bits, magnitude)
    zero = full(0)
    x_neg, y_neg = cmp(x_bits, zero, "LT"), cmp(y_bits, zero, "LT")
    x_zero, y_zero = cmp(x_mag, zero, "EQ"), cmp(y_mag, zero, "EQ")
    both_zero = op("stablehlo.and", x_zero, y_zero, result=bools)
    same = op("stablehlo.or", cmp(x_bits, y_bits, "EQ"), both_zero, result=bools)
    away = op("stablehlo.and", cmp(x_neg, y_neg, "EQ"), cmp(y_mag, x_mag, "GT"), result=bools)
    one = full(1)
    stepped = select(away, op("stablehlo.add", x_bits, one), op("stablehlo.subtract", x_bits, one))
    sign = full(np.iinfo(int_dtype).min)
    smallest = op("stablehlo.or", op("stablehlo.and", y_bits, sign), one)  # toward y from 0
    bits = select(x_zero, smallest, stepped)
    # C's nextafter gives y where x == y (0 toward -0 gives -0); NumPy's float16 one gives x
    bits = select(same, x_bits if dtype == np.float16 else y_bits, bits)
    out = ctx.op("stablehlo.bitcast_convert", [bits])
    nan = op(
        "stablehlo.or",
        ctx.block.compare(x, x, "NE"),
        ctx.block.compare(y, y, "NE"),
        result=bools,
    )
    return select(nan, ctx.op("stablehlo.add", [x, y]), out, result=aval)


lowering_rules[nextafter_p] = _nextafter_lowering
batch_rules[nextafter_p] = broadcasting.broadcasting_batch_rule(nextafter_p)

# --- complex --------------------------------------------------------------------------------
complex_p = Primitive("complex")
_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}


def complex(x, y):
    r"""Elementwise complex number :math:`x + i y` from real parts `x` and imaginary parts `y`
    (float32 or float64)."""
    return complex_p.bind(x, y)


@complex_p.def_impl
def _complex_impl(x, y):
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y  # x + 1j * y would turn (inf, 0) into (inf, nan)
    return out


@complex_p.def_abstract_eval
def _complex_abstract_eval(x, y):
    for position, aval in enumerate((x, y)):
        if aval.dtype not in _COMPLEX_OF:
            raise TypeError(
                f"complex does not accept dtype {aval.dtype.name} at position {position}. "
                f"Accepted dtypes at position {position} are subtypes of float32, float64."
            )
    check_same_dtypes("complex", x, y)
    shape = broadcast_shapes("complex", x, y)
    return ShapedArray(shape, _COMPLEX_OF[x.dtype], x.weak_type and y.weak_type)


complex_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(complex_p)


def _complex_transpose(ct, x, y):
    """The real part of the cotangent to x and minus its imaginary part to y (JAX's
    convention: cotangents of complex values are conjugated)."""
    return [
        reductions.unbroadcast(x.aval, elementwise.real(ct)) if is_undefined_primal(x) else None,
        reductions.unbroadcast(y.aval, elementwise.imag(elementwise.neg(ct)))
        if is_undefined_primal(y)
        else None,
    ]


transpose_rules[complex_p] = _complex_transpose
lowering_rules[complex_p] = lower_binary("stablehlo.complex")
batch_rules[complex_p] = broadcasting.broadcasting_batch_rule(complex_p)
