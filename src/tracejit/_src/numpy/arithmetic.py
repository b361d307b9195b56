"""Elementwise arithmetic that lax has no single primitive for, staged as JAX composes it.

`floor_divide` and `remainder` follow Python's sign conventions (`-7 // 2 == -4`,
`-7 % 2 == 1`) on top of lax's truncating `div` and C-style `rem`; `power` stages
`integer_pow` for a Python int exponent, `pow` for inexact results, and repeated squaring for
integer arrays; `hypot` avoids overflow by scaling; `fmax`/`fmin` ignore NaNs.

The floating-point decompositions work on the bits: `frexp` reads the exponent field (after
scaling subnormals up by 2**nmant) and rewrites it to the bias, so the mantissa lands in
[0.5, 1); its derivative is a `custom_jvp` (d mantissa = dx * 2**-exponent), as in JAX.
`ldexp` splits its operand with `frexp` first, so that a tiny mantissa times a huge power of two
does not overflow on the way.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.array import Array
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import binary as _b
from tracejit._src.lax import bitwise as _bit
from tracejit._src.lax import comparison as _cmp
from tracejit._src.lax import conversions as lax_conversions
from tracejit._src.lax import elementwise as _e
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import promotion
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import (
    PYTHON_SCALARS,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    to_operand,
)
from tracejit._src.numpy.ufuncs import (
    absolute,
    add,
    broadcast_shapes_of,
    constant_like,
    divide,
    equal,
    full_like_scalar,
    greater,
    isinf,
    isnan,
    less,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    register_fast_table,
    signbit,
    sqrt,
    square,
    strong_scalar,
    where,
)
from tracejit._src.numpy.ufuncs import (
    one_like_scalar as _one_like_scalar,
)
from tracejit._src.numpy.ufuncs import (
    zero_like_scalar as _zero_like_scalar,
)

_BOOL = np.dtype(bool)


def _hypot_in_place(x1, x2):
    """The composite's steps below, into two arrays: in eager mode each of its 19 steps would
    fill a fresh array, and a fresh 4 MB array costs more than the pass that fills it (the
    kernel maps its pages in one by one)."""
    a, b = np.abs(x1), np.abs(x2)
    infinite = np.logical_or(a == np.inf, b == np.inf)
    big = np.maximum(a, b)
    out = np.minimum(a, b, out=a if a.shape == big.shape else None)
    zero = big == 0
    np.divide(out, big, out=out)  # NaN where big is 0 (the composite divides by 1): replaced
    np.square(out, out=out)
    np.add(out, out.dtype.type(1), out=out)
    np.sqrt(out, out=out)
    np.multiply(big, out, out=out)
    if zero.any():
        np.copyto(out, big, where=zero)
    if infinite.any():
        np.copyto(out, out.dtype.type(np.inf), where=infinite)
    return out


def _ones_like(x):
    """1 in `x`'s shape and dtype, typed as `constant_like` types constants."""
    one = constant_like(x, 1.0)
    return lax_shapes.broadcast_in_dim(one, x.shape, ()) if x.shape else one


@jnp_jit
@numpy_namesake(_hypot_in_place, FLOATS)
def hypot(x1, x2, /):
    """Elementwise `sqrt(x1**2 + x2**2)`, without overflow for large inputs."""
    a, b = promote_args_inexact("hypot", x1, x2)
    if dtypes.is_complex(a.dtype):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to real "
            "values first, such as by using abs(x)"
        )
    a, b = absolute(a), absolute(b)
    infinite = _bit.bitwise_or(equal(a, np.inf), equal(b, np.inf))
    big, small = maximum(a, b), minimum(a, b)
    # (staged in JAX's order: the outer `big == 0` first, then the guarded division)
    result = where(
        equal(big, 0),
        big,
        multiply(
            big,
            sqrt(
                add(
                    1.0,
                    square(divide(small, where(equal(big, 0), _ones_like(big), big))),
                )
            ),
        ),
    )
    return where(infinite, constant_like(a, np.inf), result)


@jnp_jit
@numpy_namesake(np.copysign, FLOATS)
def copysign(x1, x2, /):
    """`x1` with the sign of `x2` (the sign bit, so -0.0 counts as negative)."""
    a, b = promote_args_inexact("copysign", x1, x2)
    if dtypes.is_complex(a.dtype):
        raise TypeError("jnp.copysign does not support complex-valued inputs")
    negative_sign = signbit(b)
    return where(negative_sign, negative(absolute(a)), absolute(a))


@jnp_jit
@numpy_namesake(np.heaviside, FLOATS)
def heaviside(x1, x2, /):
    """0 where `x1 < 0`, `x2` where `x1 == 0`, 1 where `x1 > 0`."""
    x, h0 = promote_args_inexact("heaviside", x1, x2)
    if dtypes.is_complex(x.dtype):
        raise TypeError("jnp.heaviside does not support complex-valued inputs")
    zero, one = constant_like(x, 0.0), constant_like(x, 1.0)
    return where(less(x, zero), zero, where(greater(x, zero), one, where(isnan(x), x, h0)))


def _ignoring_nans_ties_to_second(numpy_fn):
    """np.fmax or np.fmin as the composite below computes them: each gives the operand that is
    not NaN, but where -0. and +0. tie NumPy's vectorized loop gives either, the composite
    `x2`, which is also right wherever the result is zero and `x2` is. The C accelerator has
    the composite as one pass (`accel.fmax`, `accel.fmin`), for two float32/float64 arrays of
    one shape; this is its Python twin."""
    one_pass = None if accel is None else getattr(accel, numpy_fn.__name__)

    def fun(x1, x2):
        if one_pass is not None:
            out = one_pass(x1, x2)
            if out is not None:
                return out
        out = numpy_fn(x1, x2)
        zero = out == 0
        if zero.any():
            zero &= x2 == 0
            np.copyto(out, x2, where=zero)
        return out

    return fun


@jnp_jit
@numpy_namesake(_ignoring_nans_ties_to_second(np.fmax), FLOATS)
def fmax(x1, x2):
    """Elementwise maximum, ignoring NaNs (NaN only where both are)."""
    a, b = promote_args("fmax", x1, x2)
    return where(logical_or(greater(a, b), not_equal(b, b)), a, b)


@jnp_jit
@numpy_namesake(_ignoring_nans_ties_to_second(np.fmin), FLOATS)
def fmin(x1, x2):
    """Elementwise minimum, ignoring NaNs (NaN only where both are)."""
    a, b = promote_args("fmin", x1, x2)
    return where(logical_or(less(a, b), not_equal(b, b)), a, b)


def _check_no_complex(name: str, *operands):
    for x in operands:
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not support complex-valued inputs.")


def _float_floor_divide_in_place(a, b):
    """`_float_divmod`'s quotient, its steps into two arrays (see `_hypot_in_place`). Its
    `sign(b) != sign(mod)` where `mod != 0` compares sign bits: `mod` is then NaN (and so is
    the comparison) or finite and nonzero, and `b` nonzero (fmod by zero is NaN)."""
    mod = np.fmod(a, b)
    div = np.subtract(a, mod)
    by_zero = b == 0
    if by_zero.any():
        np.copyto(div, a, where=by_zero)
    if b.shape == div.shape:
        np.divide(div, b, out=div)
    else:  # as `div` computes a quotient by a broadcast divisor (XLA's rewrite)
        np.multiply(div, _b.broadcast_divisor_reciprocal(b), out=div)
    adjust = np.signbit(b) != np.signbit(mod)
    adjust |= np.isnan(mod)
    adjust &= mod != 0
    np.subtract(div, div.dtype.type(1), out=div, where=adjust)
    return _e.round_half_away_in_place(div, scratch=mod)


@jnp_jit
@numpy_namesake(_float_floor_divide_in_place, FLOATS)
def floor_divide(x1, x2, /):
    """Elementwise `x1 // x2`: the floor of the quotient, as Python's `//`."""
    a, b = promote_args_numeric("floor_divide", x1, x2)
    dtype = a.dtype
    _check_no_complex("floor_divide", a)
    if dtypes.is_unsigned(dtype):
        return _b.div_p.bind(a, b)
    if dtypes.is_int(dtype):
        quotient = _b.div_p.bind(a, b)
        select = _bit.and_(
            _cmp.ne(_e.sign(a), _e.sign(b)), _cmp.ne(_b.rem(a, b), _zero_like_scalar(a))
        )
        return where(select, _b.sub(quotient, _one_like_scalar(a)), quotient)
    return _float_divmod(a, b)[0]


def _float_divmod(a, b):
    """(floor(a / b), a mod b) for floats, as Python computes them."""
    zero = promotion.weak_scalar(0.0, a.dtype)
    mod = _b.rem_p.bind(a, b)
    div = _b.div(where(_cmp.eq(b, zero), a, _b.sub(a, mod)), b)
    adjust = _bit.and_(_cmp.ne(mod, zero), _cmp.ne(_e.sign(b), _e.sign(mod)))
    mod = _select(adjust, _b.add(mod, b), mod)
    div = _select(adjust, _b.sub(div, promotion.weak_scalar(1.0, a.dtype)), div)
    return _e.round(div, _e.RoundingMethod.AWAY_FROM_ZERO), mod


def _select(pred, on_true, on_false):
    """lax.select on operands already of one shape and dtype."""
    return lax_selection.select_n(pred, on_false, on_true)


@jnp_jit
def remainder(x1, x2, /):
    """Elementwise `x1 % x2` with the sign of the divisor, as Python's `%`."""
    a, b = promote_args_numeric("remainder", x1, x2)
    _check_no_complex("remainder", a)
    zero = _zero_like_scalar(a)
    if dtypes.is_int(a.dtype):
        b = where(_cmp.eq(b, zero), full_like_scalar(b, 1), b)
    mod = _b.rem_p.bind(a, b)
    nonzero = _cmp.ne(mod, zero)
    adjust = _bit.and_(_cmp.ne(_cmp.lt(mod, zero), _cmp.lt(b, zero)), nonzero)
    return _select(adjust, _b.add(mod, b), mod)


mod = remainder


@jnp_jit
def fmod(x1, x2, /):
    """Elementwise remainder with the sign of the dividend (C's fmod); an integer remainder
    by 0 is 0, as JAX and NumPy give it (lax.rem gives the dividend)."""
    a, b = promote_args_numeric("fmod", x1, x2)
    _check_no_complex("fmod", a)
    if dtypes.is_int(b.dtype):
        b = where(_cmp.eq(b, _zero_like_scalar(b)), _one_like_scalar(b), b)
    return _b.rem_p.bind(a, b)


@jnp_jit
def divmod(x1, x2, /):
    """`(floor_divide(x1, x2), remainder(x1, x2))`."""
    a, b = promote_args_numeric("divmod", x1, x2)
    if dtypes.is_inexact(a.dtype):
        _check_no_complex("divmod", a)
        return _float_divmod(a, b)
    return floor_divide(a, b), remainder(a, b)


_integer_pow_p = _e.integer_pow_p
_INEXACT_FAST = set()
register_fast_table(_INEXACT_FAST)


def power(x1, x2, /):
    """Elementwise `x1 ** x2`. A Python int exponent stages `integer_pow`; integer arrays are
    raised by repeated squaring."""
    if type(x2) is int:
        if type(x1) is Array and x1._value.dtype in _INEXACT_FAST:
            return _integer_pow_p.bind(x1, y=x2)
        (x,) = promotion.promote_dtypes_numeric(to_operand("power", x1))
        out = _e.integer_pow(x, x2)
        if x is x1 and type(x) is Array and dtypes.is_inexact(x.dtype):
            _INEXACT_FAST.add(x.dtype)
        return out
    ops = promotion.to_operands("power", (x1, x2))
    dtype, weak = promotion.result_dtype(*ops)
    if dtype == _BOOL:
        dtype = np.dtype(np.int32)
    if dtypes.is_inexact(dtype):
        base = promotion.convert_element_type(ops[0], dtype, weak)
        exponent = ops[1]
        promoted = promotion.convert_element_type(exponent, dtype, weak)
        if type(exponent) in PYTHON_SCALARS or not dtypes.is_int(exponent.dtype):
            exponent = promoted  # (an integer one stays integer: JAX stages the unread promotion)
        base, exponent = promotion.promote_shapes("power", base, exponent)
        return _b.pow_p.bind(base, exponent)
    base, exponent = promotion.promote_shapes(
        "power", *[promotion.convert_element_type(x, dtype, weak) for x in ops]
    )
    return _integer_power(base, exponent)


def _integer_power(base, exponent):
    """`base ** exponent` for integer arrays, by squaring (one step per bit of a shift count)."""
    shape = broadcast_shapes_of(base, exponent)
    dtype = base.dtype
    zero, one = strong_scalar(0, dtype), strong_scalar(1, dtype)
    base_is_zero = _bit.and_(_cmp.eq(base, zero), _cmp.ne(exponent, zero))
    acc = where(base_is_zero, zero, one)
    if acc.shape != shape:
        acc = lax_shapes.broadcast_in_dim(
            acc, shape, tuple(range(len(shape) - acc.ndim, len(shape)))
        )
    steps = int(np.log2(dtype.itemsize * 8)) + 1
    for step in range(steps):
        acc = where(_bit.and_(exponent, one), _b.mul(acc, base), acc)
        if step + 1 < steps:
            base = _b.mul(base, base)
            exponent = _bit.shift_right_logical(exponent, one)
    return acc


def float_power(x1, x2, /):
    """`x1 ** x2` computed in floating point."""
    a, b = promote_args_inexact("float_power", x1, x2)
    return _b.pow_p.bind(a, b)


def pow(x1, x2, /):
    """`power` under the array API's name."""
    return power(x1, x2)


# --------------------------------------------------------------------------------------------
# Floating-point parts


def fabs(x, /):
    """Elementwise absolute value in floating point (integers become floats; complex raises)."""
    x = promotion.asarray_operand("fabs", x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    (x,) = promotion.promote_dtypes_inexact(x)
    return _e.abs(x)


def nextafter(x, y, /):
    """The next representable floating-point value after `x` in the direction of `y`."""
    return _b.nextafter(*promote_args_inexact("nextafter", x, y))


def _spacing_away_from_zero(x):
    """The composite below for float32 and float64: the next value away from zero is the one
    whose bits are one more (a NaN for an infinity, which makes the difference NaN either
    way), in one pass where `nextafter` takes ten."""
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    out = (x.view(unsigned) + 1).view(x.dtype)
    out -= x
    zero = out == 0
    if zero.any():
        tiny = x.dtype.type(dtypes.finfo(x.dtype).smallest_subnormal)
        out[zero] = np.copysign(tiny, x[zero])
    return out


@numpy_namesake(_spacing_away_from_zero, (np.float32, np.float64))
def spacing(x, /):
    """The distance from `x` to the next representable value away from zero (toward +inf for
    float16, as NumPy's float16 loop does); the smallest subnormal, signed, where that
    distance rounds to zero."""
    (x,) = promote_args_inexact("spacing", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    if x.dtype == np.float16:
        return _b.sub(_b.nextafter(x, _strong_full(x, np.inf)), x)
    result = _b.sub(_b.nextafter(x, copysign(strong_scalar(np.inf, x.dtype), x)), x)
    rounds_to_zero = _cmp.eq(result, _zero_like_scalar(result))
    tiny = copysign(strong_scalar(float(dtypes.finfo(x.dtype).smallest_subnormal), x.dtype), x)
    return where(rounds_to_zero, tiny, result)


def _strong_full(x, value):
    """A strongly typed array of `x`'s shape and dtype filled with `value` (JAX's
    `_lax_const` broadcast: it makes the results of `spacing` strong)."""
    scalar = strong_scalar(value, x.dtype)
    return lax_shapes.broadcast_in_dim(scalar, x.shape, ()) if x.shape else scalar


_INT_OF_WIDTH = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}


def _normalized_bits(x):
    """(the bits of `x` as an integer, an exponent correction): subnormals are first scaled by
    2**nmant into the normal range, which the correction undoes."""
    info = dtypes.finfo(x.dtype)
    int_dtype = _INT_OF_WIDTH[info.bits]
    subnormal = _cmp.lt(_e.abs(x), strong_scalar(float(info.tiny), x.dtype))
    scaled = where(subnormal, _b.mul(x, strong_scalar(float(1 << info.nmant), x.dtype)), x)
    correction = where(
        subnormal, strong_scalar(-info.nmant, int_dtype), strong_scalar(0, int_dtype)
    )
    return lax_conversions.bitcast_convert_type(scaled, int_dtype), correction


@custom_jvp
def _frexp(x):
    info = dtypes.finfo(x.dtype)
    bits, exponent = _normalized_bits(x)
    int_dtype = bits.dtype
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    field = _bit.and_(
        _bit.shift_right_arithmetic(bits, strong_scalar(info.nmant, int_dtype)),
        strong_scalar(mask, int_dtype),
    )
    unbiased = _b.add(_b.sub(field, strong_scalar(bias, int_dtype)), strong_scalar(1, int_dtype))
    exponent = _b.add(exponent, unbiased)
    bits = _bit.and_(bits, strong_scalar(~(mask << info.nmant), int_dtype))
    bits = _bit.or_(bits, strong_scalar((bias - 1) << info.nmant, int_dtype))
    mantissa = lax_conversions.bitcast_convert_type(bits, x.dtype)
    special = logical_or(logical_or(isinf(x), isnan(x)), equal(x, 0))
    exponent = where(special, _strong_full(exponent, 0), exponent)
    exponent = promotion.convert_element_type(exponent, np.dtype(np.int32), False)
    return where(special, x, mantissa), exponent


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    mantissa, exponent = _frexp(x)
    scale = _e.exp2(negative(promotion.convert_element_type(exponent, t.dtype, False)))
    return (mantissa, exponent), (_b.mul(t, scale), np.zeros(exponent.shape, dtypes.float0))


def frexp(x, /):
    """(mantissa, exponent) with `x == mantissa * 2**exponent`, |mantissa| in [0.5, 1) (0, inf
    and NaN come back as they are, with exponent 0); the exponent is int32."""
    (x,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("frexp", x))
    if dtypes.is_complex(x.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


def ldexp(x1, x2, /):
    """`x1 * 2**x2` for an integer `x2`, without intermediate overflow."""
    x1 = promotion.asarray_operand("ldexp", x1)
    x2 = promotion.asarray_operand("ldexp", x2, 1)
    if dtypes.is_complex(x1.dtype) or dtypes.is_inexact(x2.dtype):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = promotion.convert_element_type(x2, x1.dtype, x2.weak_type)
    mantissa, exponent = frexp(x1)
    exponent = promotion.convert_element_type(
        add(promotion.convert_element_type(exponent, x2.dtype, False), x2), x1.dtype, False
    )
    # The exponent may overflow by one and the result still be finite.
    positive = greater(exponent, 0)
    mantissa = where(positive, multiply(mantissa, 2), mantissa)
    exponent = where(positive, _b.sub(exponent, _one_like_scalar(exponent)), exponent)
    out = multiply(mantissa, power(2, promotion.convert_element_type(exponent, mantissa.dtype)))
    return where(logical_or(isinf(x1), equal(x1, 0)), x1, out)


@jnp_jit(static_argnames=("out",))
def modf(x, /, out=None):
    """(fractional part, integral part), both with the sign of `x`."""
    (x,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("modf", x))
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = where(_cmp.ge(x, _zero_like_scalar(x)), _e.floor(x), _e.ceil(x))
    return _b.sub(x, whole), whole


def bitwise_count(x, /):
    """The number of one bits in `|x|`, as uint8 (NumPy's convention)."""
    (x,) = promotion.promote_args_numeric("bitwise_count", x)
    return promotion.convert_element_type(_bit.population_count(absolute(x)), np.dtype(np.uint8))
