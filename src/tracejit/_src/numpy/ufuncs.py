"""Elementwise `jnp` functions: arithmetic, comparisons, bitwise and logical ops, math functions,
classification, complex parts, `where`, `clip` and `isclose`.

Each promotes its operands (see `promotion.py`) and binds one lax primitive, or stages a short
composition of them where lax has none (`log2`, `trunc`, `isinf`, `sinc`...) the way JAX stages
it; the longer arithmetic compositions (`floor_divide`, `remainder`, `power`, `hypot`...) live in
`arithmetic.py`.

The functions that bind a single primitive are built by `unary_ufunc` and `binary_ufunc`, which
give them a fast path for eager calls: an Array whose dtype the function has already seen to need
no conversion goes straight to `primitive.bind`, and so does a pair of Arrays of one dtype, or an
Array and a Python scalar whose type the function has seen keep the Array's dtype (the scalar
comes from a cache of converted scalars). What a function may take the fast path for is learned
on the slow path: it promotes, binds (eager evaluation checks the operands by the primitive's
abstract evaluation), and records the case only when nothing had to be converted and the bind
succeeded. On the fast path, operands whose shapes differ in rank or do not broadcast make the
bind raise; the slow path then promotes ranks, or raises JAX's error.

These functions are also what calling the `jnp.ufunc` objects made from them runs
(`ufunc_objects.py`): they take the ufunc call's `out=` and `where=` keywords, and refuse them as
JAX does.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.array import Array
from tracejit._src.config import config
from tracejit._src.core import Tracer, never_weak, weak_if_all_weak
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.interpreters.eval import eager_context
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import bitwise as lax_bitwise
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import conversions as lax_conversions
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import standard as lax_standard
from tracejit._src.lax import trigonometric as lax_trigonometric
from tracejit._src.numpy import promotion
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import (
    PYTHON_SCALARS,
    WEAK_PYTHON_SCALARS,
    asarray_operand,
    cached_scalar,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    scalar_cache,
    to_operand,
)

_BOOL = np.dtype(bool)

# Every learned fast-path table, so that a change of x64 mode can forget them.
_fast_tables: list = []


def _forget_fast_paths(option_name: str) -> None:
    for table in _fast_tables:
        table.clear()


config.on_update(_forget_fast_paths)


def register_fast_table(table) -> None:
    """Registers a learned fast-path table, to be emptied when the x64 mode changes."""
    _fast_tables.append(table)


def _finish(fun, name: str, doc: str):
    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = doc
    fun.__module__ = "tracejit.numpy"
    return fun


def refuse_out_and_where(name: str, out, where):
    """The ufunc call's `out` and `where`, which JAX does not implement."""
    argument = "out" if out is not None else "where"
    raise NotImplementedError(f"{argument} argument of <jnp.ufunc '{name}'>")


def eager_kernel(primitive):
    """The C accelerator's kernel computing `primitive` on Arrays of one dtype in one call
    (`csrc/accel/eager.c`), where the accelerator is built and the primitive's impl is a NumPy
    ufunc (`lax.standard.eager_ufunc`); else None. A fast path calls it for the operands it
    would bind, and binds them when it answers None."""
    found = lax_standard.eager_ufunc(primitive)
    weak_rules = {weak_if_all_weak: True, never_weak: False}
    if eager_context is None or found is None or primitive.weak_type_rule not in weak_rules:
        return None
    ufunc, silent = found
    return accel.ElementwiseKernel(
        eager_context, ufunc, silent, weak_rules[primitive.weak_type_rule]
    )


def unary_ufunc(name: str, primitive, doc: str, *, inexact: bool = False):
    """A jnp function binding `primitive` on its promoted operand (integer and bool operands
    become the default float type when `inexact`)."""
    bind = primitive.bind
    kernel = eager_kernel(primitive)
    fast = set()
    _fast_tables.append(fast)

    def slow(x):
        x = to_operand(name, x)
        if inexact:
            (operand,) = promotion.promote_dtypes_inexact(x)
        else:
            operand = asarray_operand(name, x)
        out = bind(operand)
        if operand is x and type(x) is Array:
            fast.add(x._value.dtype)  # bound without conversion, and the dtype was accepted
        return out

    def fun(x, /, *, out=None, where=None):
        if out is not None or where is not None:
            refuse_out_and_where(name, out, where)
        if type(x) is Array and x._value.dtype in fast:
            if kernel is not None:
                result = kernel(x)
                if result is not None:
                    return result
            return bind(x)
        return slow(x)

    return _finish(fun, name, doc)


def binary_ufunc(
    name: str, primitive, doc: str, *, promote=promote_args, on_bool=None, on_complex=None
):
    """A jnp function binding `primitive` on its two promoted operands; `on_bool` is the
    primitive used instead for bool operands (`add` is `or` on bools), `on_complex` a function
    of the two operands used for complex ones."""
    fast_dtypes = set()  # dtypes of two same-dtype Arrays that need no conversion
    scalar_plans = {}  # (Array dtype, weak, Python scalar type) -> cache of converted scalars
    _fast_tables.extend((fast_dtypes, scalar_plans))

    def slow(x, y):
        a, b = promote(name, x, y)
        if on_complex is not None and dtypes.is_complex(a.dtype):
            return on_complex(a, b)
        target = primitive
        if on_bool is not None and a.dtype == _BOOL:
            target = on_bool
        out = target.bind(a, b)
        if target is primitive:  # bound without conversion, and the dtypes were accepted
            _learn_fast_path(fast_dtypes, scalar_plans, x, y, a, b)
        return out

    def operator_fallback(x, y):
        if type(y) in PYTHON_SCALARS or isinstance(y, _OPERAND_TYPES):
            return slow(x, y)
        return NotImplemented

    bind = primitive.bind
    kernel = eager_kernel(primitive)
    fun = _finish(_with_fast_path(name, bind, kernel, fast_dtypes, scalar_plans, slow), name, doc)
    # `x <op> y` for Arrays and tracers: the same fast path, and NotImplemented for operands jnp
    # does not take, so that Python can try the other operand's reflected method.
    fun.operator = _with_fast_path(name, bind, kernel, fast_dtypes, scalar_plans, operator_fallback)
    return fun


def _learn_fast_path(fast_dtypes: set, scalar_plans: dict, x, y, a, b) -> None:
    """Record, after `x` and `y` were promoted to `a` and `b` and bound, which operands the
    fast path may bind without promoting: two Arrays of one dtype that promotion left alone,
    or an Array with a Python scalar (converted through a cache)."""
    x_type, y_type = type(x), type(y)
    if x_type is Array and y_type is Array:
        if a is x and b is y and x._value.dtype is y._value.dtype:
            fast_dtypes.add(x._value.dtype)
    elif x_type is Array and y_type in WEAK_PYTHON_SCALARS and a is x:
        dtype = x._value.dtype
        scalar_plans[(dtype, x.weak_type, y_type)] = scalar_cache(dtype, y_type)
    elif y_type is Array and x_type in WEAK_PYTHON_SCALARS and b is y:
        dtype = y._value.dtype
        scalar_plans[(dtype, y.weak_type, x_type)] = scalar_cache(dtype, x_type)


def _with_fast_path(name: str, bind, kernel, fast_dtypes: set, scalar_plans: dict, fallback):
    """`fun(x, y)` that computes the operands `_learn_fast_path` recorded directly (by `kernel`
    where it takes them, else by `bind`), and calls `fallback(x, y)` for all others."""

    def fun(x, y, /, *, out=None, where=None):
        if out is not None or where is not None:
            refuse_out_and_where(name, out, where)
        if type(x) is Array:
            if type(y) is Array:
                dtype = x._value.dtype
                if dtype is y._value.dtype and dtype in fast_dtypes:
                    if kernel is not None:
                        result = kernel(x, y)
                        if result is not None:
                            return result
                    try:
                        return bind(x, y)
                    except (TypeError, ValueError):  # shapes that do not broadcast
                        pass  # the slow path raises JAX's error
            else:
                cache = scalar_plans.get((x._value.dtype, x.weak_type, type(y)))
                if cache is not None:
                    scalar = cache.get(y)
                    if scalar is None:
                        scalar = cached_scalar(cache, y, x._value.dtype)
                    if kernel is not None:
                        result = kernel(x, scalar)
                        if result is not None:
                            return result
                    return bind(x, scalar)
        elif type(y) is Array:
            cache = scalar_plans.get((y._value.dtype, y.weak_type, type(x)))
            if cache is not None:
                scalar = cache.get(x)
                if scalar is None:
                    scalar = cached_scalar(cache, x, y._value.dtype)
                if kernel is not None:
                    result = kernel(scalar, y)
                    if result is not None:
                        return result
                return bind(scalar, y)
        return fallback(x, y)

    return fun


_OPERAND_TYPES = (Array, Tracer, np.ndarray, np.generic)

_e = lax_elementwise
_b = lax_binary
_bit = lax_bitwise
_cmp = lax_comparison
_trig = lax_trigonometric

# --------------------------------------------------------------------------------------------
# Arithmetic

add = binary_ufunc(
    "add",
    _b.add_p,
    "Elementwise `x + y` with NumPy-style promotion and broadcasting (logical or for bools).",
    on_bool=_bit.or_p,
)
subtract = binary_ufunc("subtract", _b.sub_p, "Elementwise `x - y`.")
multiply = binary_ufunc(
    "multiply", _b.mul_p, "Elementwise `x * y` (logical and for bools).", on_bool=_bit.and_p
)
true_divide = binary_ufunc(
    "true_divide",
    _b.div_p,
    "Elementwise `x / y`; integers are divided as floats.",
    promote=promote_args_inexact,
)
divide = true_divide
maximum = binary_ufunc("maximum", _b.max_p, "Elementwise maximum; NaN if either is NaN.")
minimum = binary_ufunc("minimum", _b.min_p, "Elementwise minimum; NaN if either is NaN.")
arctan2 = binary_ufunc(
    "arctan2",
    _trig.atan2_p,
    "Elementwise arc tangent of `x1 / x2`, in the quadrant of (x2, x1).",
    promote=promote_args_inexact,
)
atan2 = arctan2

negative = unary_ufunc("negative", _e.neg_p, "Elementwise `-x`.")
sign = unary_ufunc("sign", _e.sign_p, "Elementwise sign: -1, 0 or 1 (x / |x| for complex).")
sqrt = unary_ufunc("sqrt", _e.sqrt_p, "Elementwise square root.", inexact=True)
cbrt = unary_ufunc("cbrt", _e.cbrt_p, "Elementwise cube root.", inexact=True)
exp = unary_ufunc("exp", _e.exp_p, "Elementwise exponential.", inexact=True)
exp2 = unary_ufunc("exp2", _e.exp2_p, "Elementwise `2 ** x`.", inexact=True)
expm1 = unary_ufunc("expm1", _e.expm1_p, "Elementwise `exp(x) - 1`, accurate near 0.", inexact=True)
log = unary_ufunc("log", _e.log_p, "Elementwise natural logarithm.", inexact=True)
log1p = unary_ufunc("log1p", _e.log1p_p, "Elementwise `log(1 + x)`, accurate near 0.", inexact=True)
sin = unary_ufunc("sin", _trig.sin_p, "Elementwise sine.", inexact=True)
cos = unary_ufunc("cos", _trig.cos_p, "Elementwise cosine.", inexact=True)
tan = unary_ufunc("tan", _trig.tan_p, "Elementwise tangent.", inexact=True)
arcsin = unary_ufunc("arcsin", _trig.asin_p, "Elementwise inverse sine.", inexact=True)
arccos = unary_ufunc("arccos", _trig.acos_p, "Elementwise inverse cosine.", inexact=True)
arctan = unary_ufunc("arctan", _trig.atan_p, "Elementwise inverse tangent.", inexact=True)
sinh = unary_ufunc("sinh", _trig.sinh_p, "Elementwise hyperbolic sine.", inexact=True)
cosh = unary_ufunc("cosh", _trig.cosh_p, "Elementwise hyperbolic cosine.", inexact=True)
tanh = unary_ufunc("tanh", _trig.tanh_p, "Elementwise hyperbolic tangent.", inexact=True)
arcsinh = unary_ufunc(
    "arcsinh", _trig.asinh_p, "Elementwise inverse hyperbolic sine.", inexact=True
)
arccosh = unary_ufunc(
    "arccosh", _trig.acosh_p, "Elementwise inverse hyperbolic cosine.", inexact=True
)
arctanh = unary_ufunc(
    "arctanh", _trig.atanh_p, "Elementwise inverse hyperbolic tangent.", inexact=True
)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def positive(x, /):
    """Elementwise `+x`: `x` itself."""
    return asarray_operand("positive", x)


def _square_slow(x):
    (x,) = promotion.promote_dtypes_numeric(to_operand("square", x))
    return _e.square_p.bind(x)


_square_bind = _e.square_p.bind
_SQUARE_FAST = frozenset(
    np.dtype(d)
    for d in (
        np.float16,
        np.float32,
        np.float64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.complex64,
        np.complex128,
        dtypes.bfloat16,
    )
)


def square(x, /):
    """Elementwise `x * x` (bools count as integers)."""
    if type(x) is Array and x._value.dtype in _SQUARE_FAST:
        return _square_bind(x)
    return _square_slow(x)


def absolute(x, /):
    """Elementwise absolute value; complex numbers give their (real) modulus."""
    x = asarray_operand("absolute", x)
    if x.dtype == _BOOL or dtypes.is_unsigned(x.dtype):
        return x
    return _e.abs_p.bind(x)


abs = absolute


def reciprocal(x, /):
    """Elementwise `1 / x`, computed in floating point."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("reciprocal", x))
    return _e.integer_pow(x, -1)


def floor(x, /):
    """Elementwise floor; integers are returned unchanged."""
    x = asarray_operand("floor", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return _e.floor_p.bind(x)


def ceil(x, /):
    """Elementwise ceiling; integers are returned unchanged."""
    x = asarray_operand("ceil", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return _e.ceil_p.bind(x)


@jnp_jit
@numpy_namesake(np.trunc, FLOATS)
def trunc(x):
    """Elementwise rounding toward zero; integers are returned unchanged."""
    x = asarray_operand("trunc", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    return where(less(x, 0), ceil(x), floor(x))


def _complex_from_parts(re, im, dtype):
    """`re + im * 1j` as `dtype` (there is no lax `complex` primitive yet)."""
    re = promotion.convert_element_type(re, dtype, False)
    im = promotion.convert_element_type(im, dtype, False)
    return _b.add(re, _b.mul(im, strong_scalar(1j, dtype)))


def _round_inexact(x, method):
    if dtypes.is_complex(x.dtype):
        return _complex_from_parts(
            _e.round(_e.real(x), method), _e.round(_e.imag(x), method), x.dtype
        )
    return _e.round(x, method)


@jnp_jit(static_argnames=("decimals", "out"))
def round(a, decimals=0, out=None):
    """Rounds to `decimals` decimals, halves to even (NumPy's rule)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = asarray_operand("round", a)
    decimals = int(decimals)
    if x.dtype == _BOOL:
        raise ValueError(f"data type {np.bool_} not inexact")
    if not dtypes.is_inexact(x.dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    method = _e.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return _round_inexact(x, method)
    factor = promotion.weak_scalar(10.0**decimals, x.dtype)
    return divide(_round_inexact(multiply(x, factor), method), factor)


@jnp_jit(static_argnames=("decimals", "out"))
def around(a, decimals=0, out=None):
    """`round` (JAX stages it as a jit of its own around `round`'s)."""
    return round(a, decimals, out)


@jnp_jit
def rint(x, /):
    """Rounds to the nearest integer value (halves to even), in floating point."""
    x = asarray_operand("rint", x)
    if not dtypes.is_inexact(x.dtype):
        return promotion.convert_element_type(x, dtypes.default_float_dtype(), False)
    return _round_inexact(x, _e.RoundingMethod.TO_NEAREST_EVEN)


def _complex_log_in_base(x, base: float):
    """log(x) / ln(base) for complex `x`, its parts divided separately: a complex division by
    ln(base) + 0j would turn log(0) = -inf + 0j into -inf + nan j."""
    ln = log(x)
    ln_base = strong_scalar(float(np.log(base)), _e.real(ln).dtype)
    return _complex_from_parts(_b.div(_e.real(ln), ln_base), _b.div(_e.imag(ln), ln_base), x.dtype)


def log2(x, /):
    """Elementwise base-2 logarithm."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("log2", x))
    if dtypes.is_complex(x.dtype):
        return _complex_log_in_base(x, 2.0)
    return _b.div(log(x), log(strong_scalar(2.0, x.dtype)))


def log10(x, /):
    """Elementwise base-10 logarithm."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("log10", x))
    if dtypes.is_complex(x.dtype):
        return _complex_log_in_base(x, 10.0)
    return _b.mul(log(x), strong_scalar(float(np.log10(np.e)), x.dtype))


def deg2rad(x, /):
    """Converts degrees to radians."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("deg2rad", x))
    return _b.mul(x, promotion.weak_scalar(float(np.pi / 180), x.dtype))


def rad2deg(x, /):
    """Converts radians to degrees."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("rad2deg", x))
    return _b.mul(x, promotion.weak_scalar(float(180 / np.pi), x.dtype))


radians, degrees = deg2rad, rad2deg


@jnp_jit
def sinc(x, /):
    """The normalized sinc function `sin(pi x) / (pi x)`, 1 at 0, where its derivatives of
    every order are those of its Maclaurin series (`_sinc_maclaurin`)."""
    (x,) = promotion.promote_dtypes_inexact(to_operand("sinc", x))
    is_zero = equal(x, 0)
    pi_x = multiply(promotion.weak_scalar(float(np.pi), x.dtype), x)
    safe = where(is_zero, constant_like(x, 1.0), pi_x)
    return where(is_zero, _sinc_maclaurin(0, pi_x), divide(sin(safe), safe))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k, x):
    """The k-th derivative of `sin(x) / x` at 0, shaped as `x` (and computed from it, so that
    its own derivative, the next one, flows through `x`)."""
    if k % 2:
        return multiply(x, 0.0)
    return add(multiply(x, 0.0), (-1.0) ** (k // 2) / (k + 1))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), multiply(_sinc_maclaurin(k + 1, x), t)


def constant_like(x, value):
    """The scalar `value` in `x`'s dtype, to meet `x` in an operation: weakly typed only where
    `x` is a weak scalar. Several of JAX's composite functions (the logical ones, `heaviside`,
    `hypot`, `gcd`, `lcm`, `sinc`) make their constants so, and what they compute from a
    weak array comes out strong; `zero_like_scalar` is the always-weak constant of others
    (`floor_divide`, `mod`, ...)."""
    return promotion.convert_element_type(value, x.dtype, x.weak_type and not x.ndim)


def zero_like_scalar(x):
    """A weak scalar 0 of `x`'s dtype (False for bools)."""
    return promotion.weak_scalar(0, x.dtype) if x.dtype != _BOOL else False


def one_like_scalar(x):
    """A weak scalar 1 of `x`'s dtype (True for bools)."""
    return promotion.weak_scalar(1, x.dtype) if x.dtype != _BOOL else True


def strong_scalar(value, dtype):
    """A strongly typed scalar constant (JAX's `_constant_like`)."""
    return promotion.convert_element_type(value, dtype, False)


def full_like_scalar(x, value):
    """An array of `x`'s shape and dtype filled with the Python scalar `value`."""
    scalar = promotion.convert_element_type(value, x.dtype, x.weak_type)
    if not x.shape:
        return scalar
    return lax_shapes.broadcast_in_dim(scalar, x.shape, ())


@jnp_jit
@numpy_namesake(np.signbit, FLOATS)
def signbit(x, /):
    """True where the sign bit is set (negative numbers, -0.0, -nan)."""
    x = asarray_operand("signbit", x)
    dtype = x.dtype
    if dtype == _BOOL:
        return _full_bool(x, False)
    if dtypes.is_int(dtype):
        return less(x, strong_scalar(0, dtype))
    if dtypes.is_complex(dtype):
        raise ValueError("jnp.signbit is not defined for complex-valued inputs.")
    int_dtype = np.dtype({2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize])
    as_int = lax_conversions.bitcast_convert_type(x, int_dtype)
    sign = _bit.shift_right_arithmetic(as_int, strong_scalar(dtype.itemsize * 8 - 1, int_dtype))
    return promotion.convert_element_type(sign, _BOOL, False)


# --------------------------------------------------------------------------------------------
# Comparisons

equal = binary_ufunc("equal", _cmp.eq_p, "Elementwise `x1 == x2`.")
not_equal = binary_ufunc("not_equal", _cmp.ne_p, "Elementwise `x1 != x2`.")


def _complex_order(primitive):
    """Orders complex numbers lexicographically (real part first), as NumPy does."""

    def compare(a, b):
        re_a, re_b = _e.real(a), _e.real(b)
        tie = _cmp.eq(re_a, re_b)
        by_imag = primitive.bind(_e.imag(a), _e.imag(b))
        by_real = primitive.bind(_e.real(a), _e.real(b))
        return lax_selection.select_n(tie, by_real, by_imag)

    return compare


less = binary_ufunc(
    "less", _cmp.lt_p, "Elementwise `x1 < x2`.", on_complex=_complex_order(_cmp.lt_p)
)
less_equal = binary_ufunc(
    "less_equal", _cmp.le_p, "Elementwise `x1 <= x2`.", on_complex=_complex_order(_cmp.le_p)
)
greater = binary_ufunc(
    "greater", _cmp.gt_p, "Elementwise `x1 > x2`.", on_complex=_complex_order(_cmp.gt_p)
)
greater_equal = binary_ufunc(
    "greater_equal", _cmp.ge_p, "Elementwise `x1 >= x2`.", on_complex=_complex_order(_cmp.ge_p)
)

# --------------------------------------------------------------------------------------------
# Bitwise and logical operations

bitwise_and = binary_ufunc(
    "bitwise_and", _bit.and_p, "Elementwise bitwise and (logical for bools)."
)
bitwise_or = binary_ufunc("bitwise_or", _bit.or_p, "Elementwise bitwise or (logical for bools).")
bitwise_xor = binary_ufunc(
    "bitwise_xor", _bit.xor_p, "Elementwise bitwise xor (logical for bools)."
)
bitwise_not = unary_ufunc("bitwise_not", _bit.not_p, "Elementwise bitwise not (logical for bools).")
invert = bitwise_not
bitwise_invert = bitwise_not


def left_shift(x1, x2, /):
    """Elementwise `x1 << x2`."""
    a, b = promote_args_numeric("left_shift", x1, x2)
    return _bit.shift_left_p.bind(a, b)


def right_shift(x1, x2, /):
    """Elementwise `x1 >> x2`: arithmetic for signed integers, logical for unsigned ones."""
    a, b = promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned(a.dtype):
        return _bit.shift_right_logical_p.bind(a, b)
    return _bit.shift_right_arithmetic_p.bind(a, b)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def _to_bool(x):
    """`x != 0`, for the logical functions (weak only for a weak scalar: `constant_like`)."""
    if x.dtype == _BOOL:
        return x
    return _cmp.ne(x, constant_like(x, 0))


def _logical(name: str, primitive):
    def fun(x1, x2, /):
        a, b = promote_args(name, x1, x2)
        return primitive.bind(_to_bool(a), _to_bool(b))

    return _finish(fun, name, f"Elementwise logical {name.split('_')[1]}: nonzero values are true.")


logical_and = _logical("logical_and", _bit.and_p)
logical_or = _logical("logical_or", _bit.or_p)
logical_xor = _logical("logical_xor", _bit.xor_p)


def logical_not(x, /):
    """Elementwise logical not: true where `x` is zero."""
    return _bit.not_p.bind(_to_bool(asarray_operand("logical_not", x)))


# --------------------------------------------------------------------------------------------
# Floating-point classification


def isfinite(x, /):
    """True where `x` is neither infinite nor NaN (always true for integers and bools)."""
    x = asarray_operand("isfinite", x)
    if dtypes.is_float(x.dtype):
        return _e.is_finite_p.bind(x)
    if dtypes.is_complex(x.dtype):
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    return _full_bool(x, True)


def _full_bool(x, value: bool):
    if not x.shape:
        return promotion.convert_element_type(value, _BOOL)
    return lax_shapes.broadcast_in_dim(value, x.shape, ())


@numpy_namesake(np.isnan, FLOATS)  # (one operand read, where `x != x` reads two)
def isnan(x, /):
    """True where `x` is NaN."""
    x = asarray_operand("isnan", x)
    return not_equal(x, x)


@jnp_jit
@numpy_namesake(np.isinf, FLOATS)
def isinf(x, /):
    """True where `x` is infinite."""
    x = asarray_operand("isinf", x)
    if dtypes.is_float(x.dtype):
        return _cmp.eq(absolute(x), strong_scalar(np.inf, x.dtype))
    if dtypes.is_complex(x.dtype):
        re, im = real(x), imag(x)
        return logical_or(isinf(re), isinf(im))
    return _full_bool(x, False)


def _check_no_out(out) -> None:
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")


def isposinf(x, /, out=None):
    _check_no_out(out)
    x = asarray_operand("isposinf", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if not dtypes.is_float(x.dtype):
        return _full_bool(x, False)
    return _cmp.eq(x, strong_scalar(np.inf, x.dtype))


def isneginf(x, /, out=None):
    _check_no_out(out)
    x = asarray_operand("isneginf", x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if not dtypes.is_float(x.dtype):
        return _full_bool(x, False)
    return _cmp.eq(x, strong_scalar(-np.inf, x.dtype))


# --------------------------------------------------------------------------------------------
# Complex parts


def real(val, /):
    """The real part (the value itself for real dtypes)."""
    x = asarray_operand("real", val)
    if dtypes.is_complex(x.dtype):
        return _e.real(x)
    return x


def imag(val, /):
    """The imaginary part (zeros for real dtypes)."""
    x = asarray_operand("imag", val)
    if dtypes.is_complex(x.dtype):
        return _e.imag(x)
    return full_like_scalar(x, 0)


def conjugate(x, /):
    """The complex conjugate (the value itself for real dtypes)."""
    x = asarray_operand("conjugate", x)
    if dtypes.is_complex(x.dtype):
        return _e.conj(x)
    return x


conj = conjugate

# --------------------------------------------------------------------------------------------
# Selection


def where(condition, x, y, /):
    """`x` where `condition` is true, else `y`, broadcast together (the three-argument form;
    `jnp.where` itself is `sorting.where`, which also takes the one-argument form). Staged as
    JAX stages it: a jit named `_where`."""
    return _where(condition, x, y)


@jnp_jit
def _where(condition, x, y):
    cond = asarray_operand("where", condition, 0)
    x, y = promotion.promote_dtypes(
        promotion.to_operand("where", x, 1), promotion.to_operand("where", y, 2)
    )
    if cond.dtype != _BOOL:
        cond = _cmp.ne(cond, zero_like_scalar(cond))
    shape = broadcast_shapes_of(cond, x, y)
    if cond.shape:  # a scalar condition stays one: select_n takes it as it is
        cond = _broadcast_to(cond, shape)
    x, y = _broadcast_to(x, shape), _broadcast_to(y, shape)
    return lax_selection.select_n_p.bind(cond, y, x)


def broadcast_shapes_of(*operands) -> tuple:
    return promotion.broadcast_shapes(*[np.shape(x) for x in operands])


def _broadcast_to(x, shape: tuple):
    if x.shape == shape:
        return x
    return lax_shapes.broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))


@jnp_jit
def clip(arr=None, /, min=None, max=None):
    """`arr` limited to [min, max]; either bound may be None."""
    if arr is None:
        raise ValueError("clip requires an array argument")
    x = asarray_operand("clip", arr)
    if any(np.iscomplexobj(v) for v in (x, min, max) if v is not None):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. "
            "Complex values have no ordering and cannot be clipped. Please convert to a real "
            "value or array by taking the real or imaginary components via "
            "jax.numpy.real/imag respectively."
        )
    if min is not None:
        x = maximum(min, x)
    if max is not None:
        x = minimum(max, x)
    return x


# --------------------------------------------------------------------------------------------
# Closeness


@jnp_jit(static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where `|a - b| <= atol + rtol * |b|` (and where both are NaN, with equal_nan)."""
    a, b = promote_args("isclose", a, b)
    if not dtypes.is_inexact(a.dtype):  # compared as floats, as JAX does (not exactly)
        a, b = promotion.promote_dtypes_inexact(a, b)
    dtype = a.dtype
    if dtypes.is_complex(dtype):
        tol_dtype = np.dtype(dtypes.finfo(dtype).dtype)
    else:
        tol_dtype = dtype
    rtol = promotion.convert_element_type(rtol, tol_dtype, False)
    atol = promotion.convert_element_type(atol, tol_dtype, False)
    both_nan = logical_and(isnan(a), isnan(b))
    finite = isfinite(b)
    # (lax's ops: the strong tolerances meet `a` and `b` of one dtype, weak or not, unconverted)
    within = _cmp.le(absolute(subtract(a, b)), _b.add(atol, _b.mul(rtol, absolute(b))))
    out = logical_or(equal(a, b), logical_and(finite, within))
    if equal_nan:
        out = logical_or(out, both_nan)
    return out
