"""Unary elementwise primitives at XLA's conventions at the edges (signed zeros, ties, poles,
integer wrap-around), their dtype classes, weak types and errors: expected values and the jaxpr
printouts come from JAX 0.10.2. Values against NumPy/SciPy at every dtype and shape are
generated from the table in tests/op_specs/elementwise.py (tests/lax/test_op_specs.py)."""

import re
import warnings

import numpy as np
import pytest
from helpers import (
    ALL,
    assert_same,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    checked_value,
    f16,
    f32,
    i32,
    u8,
)
from op_specs.elementwise import ELEMENTWISE

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.jaxpr import check_jaxpr


@pytest.mark.parametrize(
    "spec,dtype",
    [(spec, d) for spec in ELEMENTWISE for d in ALL if d not in spec.dtypes],
    ids=str,
)
def test_rejects_dtypes_outside_its_class(spec, dtype):
    x = np.zeros((2, 3), dtype)
    with pytest.raises(TypeError, match=re.escape(dtype.name)) as info:
        make_jaxpr(spec.fun)(x)
    assert spec.primitive_name in str(info.value)


# --- edge values (expected values from JAX 0.10.2) -------------------------------------------


def test_round_breaks_ties_away_from_zero_by_default():
    x = np.float32([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.49999997, 1e30, -0.0, -0.2, np.inf])
    assert_same(
        checked_value(lax.round, x),
        [1, 2, 3, -1, -3, 0, -0.0, 1e30, -0.0, -0.0, np.inf],
    )
    assert np.isnan(checked_value(lax.round, np.float32([np.nan])))[0]
    assert_same(
        checked_value(lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN), x[:8]),
        [0, 2, 2, -0.0, -2, 0, -0.0, 1e30],
    )
    assert_same(checked_value(lax.round, np.array([0.5, 2.5, -1.5], bf16)), [1, 3, -2])


def test_rounding_method_is_an_int_enum_and_rejects_other_values():
    assert lax.RoundingMethod.AWAY_FROM_ZERO == 0 and lax.RoundingMethod.TO_NEAREST_EVEN == 1
    assert_same(checked_value(lambda v: lax.round(v, 1), np.float32([2.5])), [2.0])
    with pytest.raises(ValueError, match="2 is not a valid RoundingMethod"):
        lax.round(np.float32(1.5), 2)
    with pytest.raises(ValueError, match="'foo' is not a valid RoundingMethod"):
        lax.round(np.float32(1.5), "foo")


def test_sign_keeps_signed_zeros_and_nan_and_normalizes_complex():
    assert_same(checked_value(lax.sign, np.float32([-0.0, 0.0, -3, 2])), [-0.0, 0.0, -1, 1])
    assert np.isnan(checked_value(lax.sign, np.float32([np.nan])))[0]
    assert_same(checked_value(lax.sign, np.int8([-128, 0, 5])), [-1, 0, 1])
    assert_same(checked_value(lax.sign, np.uint8([0, 3])), [0, 1])
    np.testing.assert_allclose(
        checked_value(lax.sign, np.complex64([0, 3 + 4j, 1j])), [0, 0.6 + 0.8j, 1j], rtol=1e-6
    )


def test_integer_wrap_around():
    assert_same(checked_value(lax.abs, np.int8([-128, -3])), [-128, 3])
    assert_same(checked_value(lax.neg, np.uint8([1, 0])), [255, 0])
    assert_same(checked_value(lambda v: lax.integer_pow(v, 3), np.int8([10])), [-24])
    assert_same(checked_value(lax.bitwise_not, np.uint8([0, 5])), [255, 250])
    assert_same(checked_value(lax.bitwise_not, np.bool_([True, False])), [False, True])


def test_population_count_and_clz_see_twos_complement_bits():
    assert_same(checked_value(lax.population_count, np.int8([-1, 0, 5, -128])), [8, 0, 2, 1])
    assert_same(checked_value(lax.clz, np.int8([-1, 0, 5, 1, 127])), [0, 8, 5, 7, 1])
    assert_same(checked_value(lax.clz, np.uint32([0, 1, 2**31])), [32, 31, 0])


def test_population_count_and_clz_64_bit(enable_x64):
    x = np.int64([-1, 0, 1, 2**53 + 1, 2**62, -(2**63), 2**60 - 1])
    assert_same(checked_value(lax.population_count, x), [64, 0, 1, 2, 1, 1, 60])
    assert_same(checked_value(lax.clz, x), [0, 64, 63, 10, 1, 0, 4])
    assert_same(checked_value(lax.clz, np.uint64([2**64 - 1, 2**32, 2**32 - 1])), [0, 31, 32])


def test_special_values_are_silent_like_xla():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(checked_value(lax.log, np.float32([0, 1])), [-np.inf, 0])
        assert np.isnan(checked_value(lax.log, np.float32([-1])))[0]
        assert_same(checked_value(lax.log1p, np.float32([-1])), [-np.inf])
        assert np.isnan(checked_value(lax.sqrt, np.float32([-1])))[0]
        assert_same(
            checked_value(lax.rsqrt, np.float32([0, -0.0, 4, np.inf])), [np.inf, -np.inf, 0.5, 0]
        )
        assert_same(checked_value(lax.exp, np.float32([100, -np.inf])), [np.inf, 0])
        assert_same(checked_value(lax.exp2, np.float16([1, 20])), [2, np.inf])
        assert_same(checked_value(lax.expm1, np.float32([100])), [np.inf])
        assert_same(checked_value(lax.cosh, np.float32([100])), [np.inf])
        assert_same(checked_value(lax.sinh, np.float32([-100])), [-np.inf])
        assert_same(checked_value(lax.atanh, np.float32([1, -1])), [np.inf, -np.inf])
        assert np.isnan(checked_value(lax.atanh, np.float32([2])))[0]
        assert np.isnan(checked_value(lax.asin, np.float32([2])))[0]
        assert np.isnan(checked_value(lax.acos, np.float32([-2])))[0]
        assert np.isnan(checked_value(lax.acosh, np.float32([0.5])))[0]
        assert_same(
            checked_value(lambda v: lax.integer_pow(v, -2), np.float32([0, 3]))[:1], [np.inf]
        )
        assert_same(checked_value(lambda v: lax.integer_pow(v, 3), np.float16([1000])), [np.inf])
        assert_same(checked_value(lax.logistic, np.float32([-100, 0, 100])), [0, 0.5, 1])
        assert_same(checked_value(lax.erf_inv, np.float32([-1, 1])), [-np.inf, np.inf])
        assert_same(checked_value(lax.cbrt, np.float32([-0.0, np.inf, -8])), [-0.0, np.inf, -2])
        assert_same(
            checked_value(lax.is_finite, np.float32([np.inf, np.nan, 1])), [False, False, True]
        )
        checked_value(lax.log, np.complex64([0]))
        checked_value(lax.rsqrt, np.complex64([0]))


def test_lgamma_and_digamma_at_poles_follow_xla():
    x = np.float32([0, -0.0, -1, -2.5, np.inf, -np.inf])
    lg = checked_value(lax.lgamma, x)
    np.testing.assert_allclose(lg, [np.inf, np.inf, np.inf, -0.0562439, np.inf, np.inf], 1e-5)
    dg = checked_value(lax.digamma, x[:5])
    np.testing.assert_allclose(dg, [np.nan, np.nan, np.nan, 1.1031562, np.inf], 1e-6)


def test_complex_values_against_jax():
    z = np.complex64([1 + 1j])
    np.testing.assert_allclose(checked_value(lax.logistic, z), [0.78204155 + 0.20194823j], 1e-6)
    np.testing.assert_allclose(checked_value(lax.exp2, z), [1.5384778 + 1.2779225j], 1e-6)
    np.testing.assert_allclose(checked_value(lax.tan, z), [0.27175257 + 1.0839233j], 1e-6)
    np.testing.assert_allclose(
        checked_value(lax.rsqrt, np.complex64([4j])), [0.35355338 - 0.35355338j], 1e-6
    )
    np.testing.assert_allclose(
        checked_value(lax.acosh, np.complex64([0.5 + 0.1j])), [0.11496533 + 1.050988j], 1e-6
    )
    np.testing.assert_allclose(
        checked_value(lambda v: lax.integer_pow(v, -2), np.complex64([1 + 1j])), [-0.5j]
    )


def test_abs_real_imag_conj_of_complex():
    z = np.complex64([3 + 4j, -1 - 2j])
    assert_same(checked_value(lax.abs, z), np.float32([5, np.sqrt(5)]))
    assert_same(checked_value(lax.real, z), np.float32([3, -1]))
    assert_same(checked_value(lax.imag, z), np.float32([4, -2]))
    assert_same(checked_value(lax.conj, z), np.complex64([3 - 4j, -1 + 2j]))
    out = checked_value(lax.conj, np.float32([1.5, -2]))
    assert out.dtype == c64
    assert_same(out, np.complex64([1.5, -2]))


def test_real_and_imag_do_not_alias_their_operand():
    z = np.complex64([1 + 2j, 3 + 4j])
    re_part, im_part = lax.real(z), lax.imag(z)
    z[:] = 0
    assert_same(np.asarray(re_part), np.float32([1, 3]))
    assert_same(np.asarray(im_part), np.float32([2, 4]))


def test_64_bit_types(enable_x64):
    out = checked_value(lax.conj, np.float64([1.5]))
    assert out.dtype == np.complex128
    assert checked_value(lax.abs, np.complex128([3 + 4j])).dtype == np.float64
    assert checked_value(lax.real, np.complex128([3 + 4j])).dtype == np.float64
    assert checked_value(lax.exp, np.float64([1.0])).dtype == np.float64
    assert_same(checked_value(lax.neg, np.int64([-(2**63)])), [-(2**63)])


# --- weak types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,arg,dtype,weak",
    [
        (lax.exp, 1.0, f32, True),
        (lax.neg, 3, i32, True),
        (lax.is_finite, 1.0, b, True),
        (lax.abs, 1j, f32, True),
        (lax.real, 1j, f32, True),
        (lax.conj, 1.0, c64, True),
        (lax.conj, 1j, c64, True),
        (lax.population_count, 3, i32, True),
        (lax.clz, 3, i32, True),
        (lax.bitwise_not, 3, i32, True),
        (lax.bitwise_not, True, b, False),
        (lambda v: lax.integer_pow(v, 2), 3.0, f32, True),
        (lax.round, 2.5, f32, True),
        (lax.exp, np.float32(1.0), f32, False),
    ],
)
def test_weak_types_follow_the_operand(fn, arg, dtype, weak):
    out = check_traced_matches_eager(fn, arg)
    assert out.dtype == dtype and out.weak_type is weak


# --- jaxpr printouts (from JAX 0.10.2) ------------------------------------------------------


def test_jaxpr_of_params_and_dtype_changes():
    def f(x):
        return (
            lax.round(x),
            lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
            lax.is_finite(x),
            lax.integer_pow(x, -2),
            lax.conj(x),
        )

    closed = make_jaxpr(f)(np.zeros((2, 3), np.float32))
    check_jaxpr(closed.jaxpr)
    assert str(closed) == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = round[rounding_method=0] a\n"
        "    c:f32[2,3] = round[rounding_method=1] a\n"
        "    d:bool[2,3] = is_finite a\n"
        "    e:f32[2,3] = integer_pow[y=-2] a\n"
        "    f:c64[2,3] = conj[input_dtype=float32] a\n"
        "  in (b, c, d, e, f) }"
    )


def test_jaxpr_of_complex_parts():
    def f(z):
        return lax.abs(z), lax.real(z), lax.imag(z), lax.conj(z), lax.sign(z)

    assert str(make_jaxpr(f)(np.zeros((4,), np.complex64))) == (
        "{ lambda ; a:c64[4]. let\n"
        "    b:f32[4] = abs a\n"
        "    c:f32[4] = real a\n"
        "    d:f32[4] = imag a\n"
        "    e:c64[4] = conj[input_dtype=complex64] a\n"
        "    f:c64[4] = sign a\n"
        "  in (b, c, d, e, f) }"
    )


def test_jaxpr_of_integer_ops():
    def f(i):
        return (
            lax.bitwise_not(i),
            lax.population_count(i),
            lax.clz(i),
            lax.neg(i),
            lax.integer_pow(i, 3),
        )

    assert str(make_jaxpr(f)(np.zeros((3,), np.int8))) == (
        "{ lambda ; a:i8[3]. let\n"
        "    b:i8[3] = not a\n"
        "    c:i8[3] = population_count a\n"
        "    d:i8[3] = clz a\n"
        "    e:i8[3] = neg a\n"
        "    f:i8[3] = integer_pow[y=3] a\n"
        "  in (b, c, d, e, f) }"
    )


def test_jaxpr_of_math_functions():
    def f(x):
        return lax.exp2(x), lax.logistic(x), lax.erf_inv(x), lax.lgamma(x), lax.rsqrt(x)

    assert str(make_jaxpr(f)(np.float32(1))) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = exp2 a\n"
        "    c:f32[] = logistic a\n"
        "    d:f32[] = erf_inv a\n"
        "    e:f32[] = lgamma a\n"
        "    f:f32[] = rsqrt a\n"
        "  in (b, c, d, e, f) }"
    )


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,dtype,name",
    [
        (lax.exp, i32, "exp"),
        (lax.floor, c64, "floor"),
        (lax.is_finite, c64, "is_finite"),
        (lax.abs, u8, "abs"),
        (lax.real, f32, "real"),
        (lax.conj, f16, "conj"),
        (lax.conj, bf16, "conj"),
        (lax.conj, i32, "conj"),
        (lax.bitwise_not, f32, "not"),
        (lax.neg, b, "neg"),
        (lax.cbrt, c64, "cbrt"),
        (lax.clz, b, "clz"),
        (lambda v: lax.integer_pow(v, 2), b, "integer_pow"),
    ],
)
def test_dtype_errors_name_the_op_and_dtype(fn, dtype, name):
    with pytest.raises(TypeError) as info:
        make_jaxpr(fn)(np.zeros((2,), dtype))
    message = str(info.value)
    assert name in message and dtype.name in message, message


def test_integer_pow_rejects_negative_exponents_of_integers():
    message = "Integers cannot be raised to negative powers, got integer_pow(int32[4], -1)"
    with pytest.raises(TypeError, match=re.escape(message)):
        make_jaxpr(lambda v: lax.integer_pow(v, -1))(np.zeros(4, np.int32))
    with pytest.raises(TypeError, match=re.escape(message)):
        lax.integer_pow(np.zeros(4, np.int32), -1)


def test_integer_pow_exponent_must_be_an_integer():
    assert "integer_pow[y=2]" in str(make_jaxpr(lambda v: lax.integer_pow(v, 2.0))(1.0))
    assert "integer_pow[y=2]" in str(make_jaxpr(lambda v: lax.integer_pow(v, np.int32(2)))(1.0))
    with pytest.raises(TypeError, match="integer_pow"):
        lax.integer_pow(np.float32(3), 2.5)


def test_complex_asinh_ignores_the_sign_of_a_zero_part_eagerly_as_under_jit():
    # Found by tests/fuzz: NumPy's asinh(-0-3j) is -1.76-1.57j, XLA's (and JAX's) 1.76-1.57j.
    x = np.array([-0.0 - 3j, -0.0 + 3j, -0.0 - 0.5j, -2 - 0j], np.complex64)
    want = np.array([1.7627472 - 1.5707964j, 1.7627472 + 1.5707964j, 0 - 0.5235988j, -1.4436355])
    for got in (lax.asinh(x), tracejit.jit(lax.asinh)(x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        np.testing.assert_array_equal(np.signbit(np.asarray(got).real), np.signbit(want.real))


def test_complex_integer_pow_of_zero_to_a_negative_power_is_xlas_eagerly_as_under_jit():
    # Found by tests/fuzz: XLA computes x**-n as 1 / x**n with its rule for division by zero
    # (each part times copysign(inf, real)); NumPy's reciprocal of 0j gave nan+nan j.
    x = np.array([0j, complex(-0.0, 0), 1 + 1j], np.complex64)
    want = np.array([complex(np.inf, np.nan), complex(-np.inf, np.nan), 0.5 - 0.5j])
    for got in (lax.integer_pow(x, -1), tracejit.jit(lambda v: lax.integer_pow(v, -1))(x)):
        np.testing.assert_array_equal(np.asarray(got), want.astype(np.complex64))


@pytest.mark.parametrize(
    "fun",
    [jnp.sin, jnp.cos, jnp.tan, jnp.square, jnp.sum, jnp.mean, jnp.var, jnp.cumsum, jnp.prod,
     jnp.cumprod, lambda x: x @ x],
    ids=["sin", "cos", "tan", "square", "sum", "mean", "var", "cumsum", "prod", "cumprod",
         "matmul"],
)  # fmt: skip
def test_eager_results_at_infinities_raise_no_numpy_warnings(fun):
    """XLA gives NaN and inf silently; so does eager mode (NumPy would warn)."""
    x = jnp.array([np.inf, -np.inf, np.nan, -1.0, 0.0, 1e30, -1e30])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fun(x)
