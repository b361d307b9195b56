"""Unary elementwise primitives (math functions), one block per primitive.

Each takes one operand of the dtype class it accepts (floating, floating or complex, integer,
...; see `standard`) and gives a result of the same shape, of the operand's dtype except where
a block says otherwise (`is_finite` gives bool; `abs`, `real` and `imag` of complex give the
real dtype; `conj` of a real gives complex). NumPy or SciPy implements each in eager mode, in
the operand's dtype (`keep_dtype` casts back where SciPy computes wider).

Like XLA, the implementations are silent about floating-point exceptions: `log(0.)` is `-inf`
and `sqrt(-1.)` is `nan` without a NumPy RuntimeWarning. Impls that can raise one on finite
input are wrapped in `quiet`, which switches NumPy's error handling off for the call (a
context-variable set and reset: about 0.2us per call); those that only warn on inf/nan input
are not.

Derivatives: each block registers its JVP rule, built from the wrappers here and in `binary`
and `shapes` (so rules differentiate again), with JAX's formulas; rules whose derivative reads
the primitive's own result (exp, sqrt, ...) compute it once (`standard.jvp_using_result`).
Piecewise-constant and integer-valued primitives have zero tangents; the linear ones (neg,
real, imag, conj) have transposes. The trigonometric and hyperbolic functions are in
`trigonometric`, the special functions (erf, lgamma, ...) in `special`, bitwise not and the bit
counts in `bitwise`.
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import binary, broadcasting, comparison, conversions, selection
from tracejit._src.lax.standard import (
    check_default_accuracy,
    check_dtype,
    constant_like,
    elementwise_abstract_eval,
    is_complex,
    is_float,
    is_float_or_complex,
    is_int,
    is_numeric,
    is_signed,
    jvp_using_result,
    keep_dtype,
    lower_unary,
    quiet,
    scipy_special,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules


def _is_integral(x) -> bool:
    """Whether a canonical NumPy value holds integers or bools (cheaper than issubdtype)."""
    return x.dtype.kind in "iub"


# --- neg ------------------------------------------------------------------------------------
neg_p = Primitive("neg")


def neg(x):
    r"""Elementwise negation: :math:`-x` (wraps around for unsigned integers)."""
    return neg_p.bind(x)


neg_p.def_impl(np.negative)
neg_p.def_abstract_eval(elementwise_abstract_eval("neg", is_numeric))
neg_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(neg_p)


def _neg_transpose(ct, x):
    return [neg(ct)]


transpose_rules[neg_p] = _neg_transpose
lowering_rules[neg_p] = lower_unary("stablehlo.negate")
batch_rules[neg_p] = vectorized_batch_rule(neg_p)

# --- sign -----------------------------------------------------------------------------------
sign_p = Primitive("sign")


def sign(x):
    r"""Elementwise sign: -1, 0 or 1 for reals (signed zeros and nan kept); :math:`x/|x|` for
    complex (0 for 0)."""
    return sign_p.bind(x)


@quiet
def _complex_sign(x):
    magnitude = np.abs(x)
    return np.where(magnitude == 0, x, x / magnitude)


@sign_p.def_impl
def _sign_impl(x):
    kind = x.dtype.kind
    if kind in "iu":
        return np.sign(x)
    if kind == "c":
        return _complex_sign(x)
    if kind == "f" and x.size >= _FEW:
        out = None if accel is None else accel.float_sign(x)  # (its C twin: float32/64)
        return _float_sign(x) if out is None else out
    return np.copysign(np.sign(x), x)  # NumPy's sign(-0.) is +0.


# Below this many elements one NumPy call per element-by-element function costs less than the
# vectorized passes that replace it (which also need an array, where NumPy returns scalars).
_FEW = 1024


def _float_sign(x):
    """±1 for nonzero `x`, `x` itself for ±0 and NaN: 1 or 0 with `x`'s sign bit, in passes
    that NumPy vectorizes (np.sign and np.copysign are element by element, 2.5x slower)."""
    out = np.not_equal(x, 0).astype(x.dtype)
    _with_sign_of(out, x)
    nan = np.isnan(x)
    if nan.any():
        out[nan] = x[nan]
    return out


def _with_sign_of(out, x):
    """Sets the sign bit of each element of the array `out` (nonnegative, or NaN) where `x`'s
    is set: np.copysign in place, in two vectorized passes."""
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    sign_bit = unsigned.type(1 << (8 * x.dtype.itemsize - 1))
    bits = out.view(unsigned)
    bits |= x.view(unsigned) & sign_bit


sign_p.def_abstract_eval(elementwise_abstract_eval("sign", is_numeric))
sign_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(sign_p)


def _sign_lowering(ctx, x):
    if ctx.avals_in[0].dtype.kind == "u":  # stablehlo.sign takes signed types: min(x, 1)
        return ctx.op("stablehlo.minimum", [x, ctx.block.full_like(x, 1)])
    return ctx.op("stablehlo.sign", [x])


lowering_rules[sign_p] = _sign_lowering
batch_rules[sign_p] = vectorized_batch_rule(sign_p)

# --- floor ----------------------------------------------------------------------------------
floor_p = Primitive("floor")


def floor(x):
    r"""Elementwise floor: :math:`\lfloor x \rfloor`."""
    return floor_p.bind(x)


floor_p.def_impl(np.floor)
floor_p.def_abstract_eval(elementwise_abstract_eval("floor", is_float))
floor_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(floor_p)
lowering_rules[floor_p] = lower_unary("stablehlo.floor")
batch_rules[floor_p] = vectorized_batch_rule(floor_p)

# --- ceil -----------------------------------------------------------------------------------
ceil_p = Primitive("ceil")


def ceil(x):
    r"""Elementwise ceiling: :math:`\lceil x \rceil`."""
    return ceil_p.bind(x)


ceil_p.def_impl(np.ceil)
ceil_p.def_abstract_eval(elementwise_abstract_eval("ceil", is_float))
ceil_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(ceil_p)
lowering_rules[ceil_p] = lower_unary("stablehlo.ceil")
batch_rules[ceil_p] = vectorized_batch_rule(ceil_p)

# --- round ----------------------------------------------------------------------------------
round_p = Primitive("round")


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties: away from zero (C's `round`) or to the nearest even integer."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __str__(self):  # jaxprs print `rounding_method=0`, on every Python version
        return str(self.value)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    r"""Elementwise rounding to the nearest integer; `rounding_method` breaks ties (halves
    round away from zero by default, as C's `round` does)."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


@round_p.def_impl
@quiet  # inf - inf below
def _round_impl(x, *, rounding_method):
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.rint(x)
    if x.dtype.kind != "f" or x.size < _FEW:  # bfloat16, or few elements
        fraction, whole = np.modf(x)  # exact, and silent for inf and nan
        return np.copysign(np.abs(whole) + (np.abs(fraction) >= 0.5), x)
    return round_half_away_in_place(x.copy(), np.empty_like(x))


def round_half_away_in_place(x, scratch):
    """Rounds the float array `x` in place, halves away from zero, overwriting `scratch` (an
    array of its shape and dtype): np.modf and np.copysign would take 5x the time."""
    negative = np.signbit(x)
    magnitude = np.abs(x, out=scratch)
    np.trunc(magnitude, out=x)
    np.subtract(magnitude, x, out=magnitude)  # the fraction, exactly; NaN for inf
    x += magnitude >= 0.5
    np.negative(x, out=x, where=negative)  # x >= 0 or NaN here: the sign of the input
    return x


round_p.def_abstract_eval(elementwise_abstract_eval("round", is_float))
round_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(round_p)


def _round_lowering(ctx, x, *, rounding_method):
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return ctx.op("stablehlo.round_nearest_even", [x])
    return ctx.op("stablehlo.round_nearest_afz", [x])


lowering_rules[round_p] = _round_lowering
batch_rules[round_p] = vectorized_batch_rule(round_p)

# --- is_finite ------------------------------------------------------------------------------
is_finite_p = Primitive("is_finite")


def is_finite(x):
    r"""Elementwise test for finiteness (neither infinite nor nan); gives bool."""
    return is_finite_p.bind(x)


is_finite_p.def_impl(np.isfinite)
is_finite_p.def_abstract_eval(elementwise_abstract_eval("is_finite", is_float, np.dtype(bool)))
is_finite_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(is_finite_p)
lowering_rules[is_finite_p] = lower_unary("stablehlo.is_finite")
batch_rules[is_finite_p] = vectorized_batch_rule(is_finite_p)

# --- exp ------------------------------------------------------------------------------------
exp_p = Primitive("exp")


def exp(x, *, accuracy=None):
    r"""Elementwise exponential: :math:`e^x`."""
    check_default_accuracy("exp", accuracy)
    return exp_p.bind(x)


exp_p.def_impl(quiet(np.exp))
exp_p.def_abstract_eval(elementwise_abstract_eval("exp", is_float_or_complex))
exp_p.def_weak_type_rule(weak_if_all_weak)


def _exp_jvp(t, ans, x):
    return binary.mul(t, ans)


ad.jvp_rules[exp_p] = jvp_using_result(exp_p, _exp_jvp)
lowering_rules[exp_p] = lower_unary("stablehlo.exponential")
batch_rules[exp_p] = vectorized_batch_rule(exp_p)

# --- exp2 -----------------------------------------------------------------------------------
exp2_p = Primitive("exp2")


def exp2(x, *, accuracy=None):
    r"""Elementwise base-2 exponential: :math:`2^x`."""
    check_default_accuracy("exp2", accuracy)
    return exp2_p.bind(x)


exp2_p.def_impl(quiet(np.exp2))
exp2_p.def_abstract_eval(elementwise_abstract_eval("exp2", is_float_or_complex))
exp2_p.def_weak_type_rule(weak_if_all_weak)


def _exp2_jvp(t, ans, x):
    return binary.mul(log(constant_like(x, 2)), binary.mul(t, ans))


ad.jvp_rules[exp2_p] = jvp_using_result(exp2_p, _exp2_jvp)


def _exp2_lowering(ctx, x):
    """e^(log(2) x), as JAX lowers it (so 2^-20 is 9.5367426e-07 in float32, not exactly
    2^-20: the eager NumPy path is exact there)."""
    return ctx.op(
        "stablehlo.exponential",
        [ctx.op("stablehlo.multiply", [ctx.block.full_like(x, np.log(2)), x])],
    )


lowering_rules[exp2_p] = _exp2_lowering
batch_rules[exp2_p] = vectorized_batch_rule(exp2_p)

# --- log ------------------------------------------------------------------------------------
log_p = Primitive("log")


def log(x, *, accuracy=None):
    r"""Elementwise natural logarithm: :math:`\log(x)`."""
    check_default_accuracy("log", accuracy)
    return log_p.bind(x)


log_p.def_impl(quiet(np.log))
log_p.def_abstract_eval(elementwise_abstract_eval("log", is_float_or_complex))
log_p.def_weak_type_rule(weak_if_all_weak)


def _log_jvp(t, x):
    return binary.div(t, x)


ad.defjvp(log_p, _log_jvp)
lowering_rules[log_p] = lower_unary("stablehlo.log")
batch_rules[log_p] = vectorized_batch_rule(log_p)

# --- log1p ----------------------------------------------------------------------------------
log1p_p = Primitive("log1p")


def log1p(x, *, accuracy=None):
    r"""Elementwise :math:`\log(1 + x)`, accurate for small x."""
    check_default_accuracy("log1p", accuracy)
    return log1p_p.bind(x)


log1p_p.def_impl(quiet(np.log1p))
log1p_p.def_abstract_eval(elementwise_abstract_eval("log1p", is_float_or_complex))
log1p_p.def_weak_type_rule(weak_if_all_weak)


def _log1p_jvp(t, x):
    return binary.div(t, binary.add(x, constant_like(x, 1)))


ad.defjvp(log1p_p, _log1p_jvp)
lowering_rules[log1p_p] = lower_unary("stablehlo.log_plus_one")
batch_rules[log1p_p] = vectorized_batch_rule(log1p_p)

# --- expm1 ----------------------------------------------------------------------------------
expm1_p = Primitive("expm1")


def expm1(x, *, accuracy=None):
    r"""Elementwise :math:`e^x - 1`, accurate for small x."""
    check_default_accuracy("expm1", accuracy)
    return expm1_p.bind(x)


expm1_p.def_impl(quiet(np.expm1))
expm1_p.def_abstract_eval(elementwise_abstract_eval("expm1", is_float_or_complex))
expm1_p.def_weak_type_rule(weak_if_all_weak)


def _expm1_jvp(t, ans, x):
    return binary.mul(t, binary.add(ans, constant_like(ans, 1)))


ad.jvp_rules[expm1_p] = jvp_using_result(expm1_p, _expm1_jvp)
lowering_rules[expm1_p] = lower_unary("stablehlo.exponential_minus_one")
batch_rules[expm1_p] = vectorized_batch_rule(expm1_p)

# --- logistic -------------------------------------------------------------------------------
logistic_p = Primitive("logistic")


def logistic(x, *, accuracy=None):
    r"""Elementwise logistic (sigmoid) function: :math:`\frac{1}{1 + e^{-x}}`."""
    check_default_accuracy("logistic", accuracy)
    return logistic_p.bind(x)


_expit = keep_dtype(lambda x: scipy_special().expit(x))


@logistic_p.def_impl
@quiet
def _logistic_impl(x):
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    return _expit(x)


logistic_p.def_abstract_eval(elementwise_abstract_eval("logistic", is_float_or_complex))
logistic_p.def_weak_type_rule(weak_if_all_weak)


def _logistic_jvp(t, ans, x):
    return binary.mul(t, binary.mul(ans, binary.sub(constant_like(ans, 1), ans)))


ad.jvp_rules[logistic_p] = jvp_using_result(logistic_p, _logistic_jvp)
lowering_rules[logistic_p] = lower_unary("stablehlo.logistic")
batch_rules[logistic_p] = vectorized_batch_rule(logistic_p)

# --- sqrt -----------------------------------------------------------------------------------
sqrt_p = Primitive("sqrt")


def sqrt(x, *, accuracy=None):
    r"""Elementwise square root: :math:`\sqrt{x}` (nan for negative reals)."""
    check_default_accuracy("sqrt", accuracy)
    return sqrt_p.bind(x)


sqrt_p.def_impl(quiet(np.sqrt))
sqrt_p.def_abstract_eval(elementwise_abstract_eval("sqrt", is_float_or_complex))
sqrt_p.def_weak_type_rule(weak_if_all_weak)


def _sqrt_jvp(t, ans, x):
    return binary.mul(t, binary.div(constant_like(x, 0.5), ans))


ad.jvp_rules[sqrt_p] = jvp_using_result(sqrt_p, _sqrt_jvp)
lowering_rules[sqrt_p] = lower_unary("stablehlo.sqrt")
batch_rules[sqrt_p] = vectorized_batch_rule(sqrt_p)

# --- rsqrt ----------------------------------------------------------------------------------
rsqrt_p = Primitive("rsqrt")


def rsqrt(x, *, accuracy=None):
    r"""Elementwise reciprocal square root: :math:`\frac{1}{\sqrt{x}}`."""
    check_default_accuracy("rsqrt", accuracy)
    return rsqrt_p.bind(x)


@rsqrt_p.def_impl
@quiet
def _rsqrt_impl(x):
    return np.reciprocal(np.sqrt(x))


rsqrt_p.def_abstract_eval(elementwise_abstract_eval("rsqrt", is_float_or_complex))
rsqrt_p.def_weak_type_rule(weak_if_all_weak)


def _rsqrt_jvp(t, ans, x):
    return binary.mul(t, binary.mul(constant_like(x, -0.5), binary.div(ans, x)))


ad.jvp_rules[rsqrt_p] = jvp_using_result(rsqrt_p, _rsqrt_jvp)
lowering_rules[rsqrt_p] = lower_unary("stablehlo.rsqrt")
batch_rules[rsqrt_p] = vectorized_batch_rule(rsqrt_p)

# --- cbrt -----------------------------------------------------------------------------------
cbrt_p = Primitive("cbrt")


def cbrt(x, *, accuracy=None):
    r"""Elementwise real cube root: :math:`\sqrt[3]{x}`."""
    check_default_accuracy("cbrt", accuracy)
    return cbrt_p.bind(x)


cbrt_p.def_impl(np.cbrt)
cbrt_p.def_abstract_eval(elementwise_abstract_eval("cbrt", is_float))
cbrt_p.def_weak_type_rule(weak_if_all_weak)


def _cbrt_jvp(t, ans, x):
    return binary.mul(t, binary.mul(constant_like(x, 1 / 3), integer_pow(ans, -2)))


ad.jvp_rules[cbrt_p] = jvp_using_result(cbrt_p, _cbrt_jvp)
lowering_rules[cbrt_p] = lower_unary("stablehlo.cbrt")
batch_rules[cbrt_p] = vectorized_batch_rule(cbrt_p)

# --- abs ------------------------------------------------------------------------------------
abs_p = Primitive("abs")


def abs(x):
    r"""Elementwise absolute value :math:`|x|`; the modulus, of the real dtype, for complex x.
    Signed integers wrap around (`abs` of the most negative value is itself)."""
    return abs_p.bind(x)


@abs_p.def_abstract_eval
def _abs_abstract_eval(x):
    check_dtype("abs", x, is_signed)
    dtype = np.dtype(x.dtype.char.lower()) if x.dtype.kind == "c" else x.dtype
    return ShapedArray(x.shape, dtype, x.weak_type)


@abs_p.def_impl
def _abs_impl(x):
    if x.dtype.kind != "c":
        return np.abs(x)
    # XLA's modulus is NaN if either part is, even beside an infinity (C's hypot: inf)
    with np.errstate(all="ignore"):
        modulus = np.abs(x)
    return np.where(np.isnan(x.real) | np.isnan(x.imag), np.nan, modulus).astype(modulus.dtype)


abs_p.def_weak_type_rule(weak_if_all_weak)


def _abs_jvp(t, ans, x):
    aval = get_aval(x)
    if aval.dtype.kind != "c":  # the slope at 0 is 1
        return selection.select_n(comparison.ge(x, constant_like(x, 0)), neg(t), t)
    # Re(t conj(x) / |x|), with |x| replaced by 1 where it is 0 (the slope at 0 is 0)
    x_conj = conj(x)
    modulus = conversions.convert_element_type(ans, aval.dtype)
    is_zero = comparison.eq(modulus, constant_like(x, 0))
    safe = selection.select_n(
        is_zero, modulus, broadcasting.broadcast_to_shape(constant_like(x, 1), aval.shape)
    )
    return real(binary.mul(t, binary.div(x_conj, safe)))


ad.jvp_rules[abs_p] = jvp_using_result(abs_p, _abs_jvp)
lowering_rules[abs_p] = lower_unary("stablehlo.abs")
batch_rules[abs_p] = vectorized_batch_rule(abs_p)

# --- integer_pow ----------------------------------------------------------------------------
integer_pow_p = Primitive("integer_pow")


def integer_pow(x, y):
    r"""Elementwise power :math:`x^y` with a fixed Python integer exponent `y`."""
    if isinstance(y, float) and y.is_integer():
        y = int(y)
    try:
        y = operator.index(y)
    except TypeError:
        raise TypeError(
            f"integer_pow needs an integer exponent y, got {y!r} of type {type(y).__name__}"
        ) from None
    return integer_pow_p.bind(x, y=y)


def reciprocal(x):
    r"""Elementwise :math:`1/x`: `integer_pow(x, -1)`, as JAX stages it (integers raise)."""
    return integer_pow_p.bind(x, y=-1)


@integer_pow_p.def_impl
@quiet
def _integer_pow_impl(x, *, y):
    if y == 2:
        return np.square(x)
    if y < 0 and _is_integral(x):
        raise TypeError(_negative_integer_power_message(x, y))
    if x.dtype.kind == "c":  # XLA's complex products differ from NumPy's in the last bits
        if y == 0:
            return np.ones_like(x)
        power = power_by_squaring(x, y, binary.xla_complex_multiply)
        return binary.xla_complex_divide(np.ones_like(x), power) if y < 0 else power
    if y == -1:  # np.power with a float exponent takes 4x the time of a division
        return np.reciprocal(x)
    out = np.power(x, y)
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def power_by_squaring(x, y: int, multiply):
    """x ** |y| (y nonzero) by JAX's sequence of products, which sets the last bits of a
    complex power (XLA's complex products round differently in each order): (x * x) * x for
    y = 3, else squaring from the lowest bit, each power joining as `result * x ** 2**k`."""
    if y == 3:
        return multiply(multiply(x, x), x)
    result, n = None, abs(y)
    while n:
        if n & 1:
            result = x if result is None else multiply(result, x)
        n >>= 1
        if n:
            x = multiply(x, x)
    return result


def _negative_integer_power_message(x, y) -> str:
    shape = ",".join(map(str, x.shape))
    got = f"integer_pow({x.dtype.name}[{shape}], {y})"
    return f"Integers cannot be raised to negative powers, got {got}"


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y):
    check_dtype("integer_pow", x, is_numeric)
    if y < 0 and is_int(x.dtype):
        raise TypeError(_negative_integer_power_message(x, y))
    return ShapedArray(x.shape, x.dtype, x.weak_type)


integer_pow_p.def_weak_type_rule(weak_if_all_weak)


def _integer_pow_jvp(t, x, *, y):
    if y == 0:  # constant 1 (0^0 included)
        return Zero.from_primal_value(x)
    if y == 1:
        return t
    return binary.mul(t, binary.mul(constant_like(x, y), x if y == 2 else integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


def _integer_pow_lowering(ctx, x, *, y):
    """The products of `power_by_squaring`; the reciprocal of x^-y for negative y (1 for 0)."""
    one = ctx.block.full_like(x, 1)
    if y == 0:
        return one
    multiply = lambda a, b: ctx.op("stablehlo.multiply", [a, b])
    power = power_by_squaring(x, y, multiply)
    return ctx.op("stablehlo.divide", [one, power]) if y < 0 else power


lowering_rules[integer_pow_p] = _integer_pow_lowering
batch_rules[integer_pow_p] = vectorized_batch_rule(integer_pow_p)

# --- square ---------------------------------------------------------------------------------
square_p = Primitive("square")


def square(x):
    r"""Elementwise square: :math:`x^2`."""
    return square_p.bind(x)


square_p.def_impl(quiet(np.square))
square_p.def_abstract_eval(elementwise_abstract_eval("square", is_numeric))
square_p.def_weak_type_rule(weak_if_all_weak)


def _square_jvp(t, x):
    return binary.mul(t, binary.mul(constant_like(x, 2), x))


ad.defjvp(square_p, _square_jvp)
lowering_rules[square_p] = lambda ctx, x: ctx.op("stablehlo.multiply", [x, x])
batch_rules[square_p] = vectorized_batch_rule(square_p)

# --- real -----------------------------------------------------------------------------------
real_p = Primitive("real")


def real(x):
    r"""Elementwise real part of a complex number, of the real dtype: :math:`\mathrm{Re}(x)`."""
    return real_p.bind(x)


@real_p.def_impl
def _real_impl(x):
    return x.real.copy()  # not a view: the input may be the caller's writable array


@real_p.def_abstract_eval
def _real_abstract_eval(x):
    check_dtype("real", x, is_complex)
    return ShapedArray(x.shape, np.dtype(x.dtype.char.lower()), x.weak_type)


real_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(real_p)


def _real_transpose(ct, x):  # Re(ct + 0j)
    return [conversions.convert_element_type(ct, x.aval.dtype)]


transpose_rules[real_p] = _real_transpose
lowering_rules[real_p] = lower_unary("stablehlo.real")
batch_rules[real_p] = vectorized_batch_rule(real_p)

# --- imag -----------------------------------------------------------------------------------
imag_p = Primitive("imag")


def imag(x):
    r"""Elementwise imaginary part of a complex number, of the real dtype:
    :math:`\mathrm{Im}(x)`."""
    return imag_p.bind(x)


@imag_p.def_impl
def _imag_impl(x):
    return x.imag.copy()


@imag_p.def_abstract_eval
def _imag_abstract_eval(x):
    check_dtype("imag", x, is_complex)
    return ShapedArray(x.shape, np.dtype(x.dtype.char.lower()), x.weak_type)


imag_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(imag_p)


def _imag_transpose(ct, x):  # -1j * ct, as JAX transposes it
    dtype = x.aval.dtype
    return [binary.mul(conversions.convert_element_type(neg(ct), dtype), np.array(1j, dtype))]


transpose_rules[imag_p] = _imag_transpose
lowering_rules[imag_p] = lower_unary("stablehlo.imag")
batch_rules[imag_p] = vectorized_batch_rule(imag_p)

# --- conj -----------------------------------------------------------------------------------
conj_p = Primitive("conj")
_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}


def conj(x):
    r"""Elementwise complex conjugate :math:`\overline{x}`; a float32/float64 operand gives its
    complex counterpart (complex64/complex128). The param `input_dtype` records the operand's
    dtype."""
    return conj_p.bind(x, input_dtype=dtypes.dtype_of(x))


@conj_p.def_impl
def _conj_impl(x, *, input_dtype):
    if x.dtype.kind == "c":
        return np.conj(x)
    return x.astype(_COMPLEX_OF[x.dtype])


@conj_p.def_abstract_eval
def _conj_abstract_eval(x, *, input_dtype):
    if x.dtype.kind != "c" and x.dtype not in _COMPLEX_OF:
        raise TypeError(
            f"conj does not accept dtype {x.dtype.name} for its operand; it needs a float32, "
            "float64 or complex dtype"
        )
    return ShapedArray(x.shape, _COMPLEX_OF.get(x.dtype, x.dtype), x.weak_type)


conj_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(conj_p)


def _conj_transpose(ct, x, *, input_dtype):
    return [conj(ct) if dtypes.is_complex(input_dtype) else real(ct)]


transpose_rules[conj_p] = _conj_transpose


def _conj_lowering(ctx, x, *, input_dtype):
    aval = ctx.avals_in[0]
    if aval.dtype.kind != "c":  # x + 0j
        zero = ctx.constant(np.zeros(aval.shape), aval.dtype)
        return ctx.op("stablehlo.complex", [x, zero])
    part = [ShapedArray(aval.shape, np.dtype(aval.dtype.char.lower()))]
    re = ctx.op("stablehlo.real", [x], result_avals=part)
    im = ctx.op("stablehlo.imag", [x], result_avals=part)
    return ctx.op("stablehlo.complex", [re, ctx.op("stablehlo.negate", [im], result_avals=part)])


lowering_rules[conj_p] = _conj_lowering
batch_rules[conj_p] = vectorized_batch_rule(conj_p)
