"""Binary elementwise primitives where XLA's conventions differ from NumPy's (truncating integer
division, C remainders, division by zero, out-of-range shifts, nan-propagating max/min), their
dtype classes, weak types and errors: expected values and the jaxpr printouts come from JAX
0.10.2. Values against NumPy at every dtype and pair of shapes are generated from the table in
tests/op_specs/binary.py (tests/lax/test_op_specs.py)."""

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
)
from op_specs.binary import BINARY

import tracejit
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.jaxpr import check_jaxpr


@pytest.mark.parametrize(
    "spec,dtype",
    [(spec, d) for spec in BINARY for d in ALL if d not in spec.dtypes],
    ids=str,
)
def test_rejects_dtypes_outside_its_class(spec, dtype):
    x = np.zeros((2, 3), dtype)
    with pytest.raises(TypeError, match=re.escape(dtype.name)) as info:
        make_jaxpr(spec.fun)(x, x)
    assert spec.primitive_name in str(info.value)


# --- edge values (expected values from JAX 0.10.2) -------------------------------------------


def test_integer_division_truncates_and_divides_by_zero_like_xla():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.int32([7, -7, 7, -7, 5, -5, 0, -(2**31), -(2**31)])
        y = np.int32([2, 2, -2, -2, 0, 0, 0, -1, 1])
        assert_same(checked_value(lax.div, x, y), [3, -3, -3, 3, -1, -1, -1, -(2**31), -(2**31)])
        out = checked_value(lax.div, np.uint32([7, 5, 0]), np.uint32([2, 0, 0]))
        assert_same(out, [3, 2**32 - 1, 2**32 - 1])
        assert_same(checked_value(lax.div, np.int8([-128, 100]), np.int8([-1, 0])), [-128, -1])
        assert_same(checked_value(lax.div, np.int32(-7), np.int32(2)), -3)
        assert_same(checked_value(lax.div, np.int32([9, -9]), np.int32(0)), [-1, -1])


def test_integer_remainder_takes_the_dividends_sign_like_xla():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.int32([7, -7, 7, -7, 5, -5, 0, -(2**31)])
        y = np.int32([2, 2, -2, -2, 0, 0, 0, -1])
        assert_same(checked_value(lax.rem, x, y), [1, -1, 1, -1, 5, -5, 0, 0])
        assert_same(checked_value(lax.rem, np.uint32([7, 5]), np.uint32([2, 0])), [1, 5])


def test_float_division_and_remainder_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(
            checked_value(lax.div, np.float32([1, -1]), np.float32([0, 0])), [np.inf, -np.inf]
        )
        assert np.isnan(checked_value(lax.div, np.float32([0]), np.float32([0])))[0]
        out = checked_value(
            lax.rem, np.float32([7.5, -7.5, 7.5, 1.0, np.inf]), np.float32([2, 2, -2, 0, 2])
        )
        assert_same(out[:3], [1.5, -1.5, 1.5])
        assert np.isnan(out[3:]).all()
        assert_same(checked_value(lax.div, np.complex64([1 + 1j]), np.complex64([1j])), [1 - 1j])


def test_pow_special_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = checked_value(lax.pow, np.float32([-2, 0, 2, 0]), np.float32([0.5, -1, 0.5, 0]))
        assert np.isnan(out[0])
        assert_same(out[1:], [np.inf, np.sqrt(np.float32(2)), 1])


def test_pow_takes_an_integer_exponent():
    x = np.float32([2, 0, -2, 0])
    n = np.int32([-2, -1, 3, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = check_traced_matches_eager(lax.pow, x, n)
    assert out.dtype == f32
    assert_same(np.asarray(out), [0.25, np.inf, -8, 1])
    for dtype in (f16, bf16):
        assert_same(checked_value(lax.pow, x.astype(dtype), np.uint8([3, 2, 3, 0])), [8, 0, -8, 1])
    out = checked_value(lax.pow, np.complex64([1 + 1j]), np.int32([3]))
    np.testing.assert_allclose(out, [-2 + 2j], rtol=1e-6)
    assert out.dtype == c64


def test_max_and_min_propagate_nan():
    x = np.float32([np.nan, 1, 2])
    y = np.float32([1, np.nan, 3])
    assert np.isnan(checked_value(lax.max, x, y)[:2]).all() and checked_value(lax.max, x, y)[2] == 3
    assert np.isnan(checked_value(lax.min, x, y)[:2]).all() and checked_value(lax.min, x, y)[2] == 2
    assert_same(
        checked_value(lax.max, np.bool_([True, False]), np.bool_([False, False])), [True, False]
    )


def test_complex_max_and_min_compare_lexicographically():
    x = np.complex64([1 + 5j, 2 + 1j, 1 + 1j])
    y = np.complex64([2 + 0j, 1 + 9j, 1 + 2j])
    assert_same(checked_value(lax.max, x, y), [2 + 0j, 2 + 1j, 1 + 2j])
    assert_same(checked_value(lax.min, x, y), [1 + 5j, 1 + 9j, 1 + 1j])


def test_atan2_values():
    out = checked_value(lax.atan2, np.float32([1, -1, 0]), np.float32([0.5, -1, -0.0]))
    np.testing.assert_allclose(out, [1.1071488, -2.3561945, 3.1415927], rtol=1e-6)
    out = checked_value(
        lax.atan2, np.complex64([1 + 1j, 2 - 1j]), np.complex64([0.5 + 2j, -1 + 0.3j])
    )
    np.testing.assert_allclose(out, [0.5739712 - 0.26149225j, 2.0039473 + 0.06606308j], rtol=1e-5)


def test_shifts_out_of_range_follow_xla():
    x = np.int32([1, -8, -8, -8, -8, 5, 2**30])
    s = np.int32([31, 1, 32, 40, -1, 0, 3])
    assert_same(checked_value(lax.shift_left, x, s), [-(2**31), -16, 0, 0, 0, 5, 0])
    assert_same(
        checked_value(lax.shift_right_logical, x, s), [0, 2147483644, 0, 0, 0, 5, 134217728]
    )
    assert_same(checked_value(lax.shift_right_arithmetic, x, s), [0, -4, -1, -1, -1, 5, 134217728])
    x = np.uint8([1, 200, 200, 200, 200])
    s = np.uint8([7, 1, 8, 9, 255])
    assert_same(checked_value(lax.shift_left, x, s), [128, 144, 0, 0, 0])
    assert_same(checked_value(lax.shift_right_logical, x, s), [0, 100, 0, 0, 0])
    assert_same(checked_value(lax.shift_right_arithmetic, x, s), [0, 228, 255, 255, 255])
    assert_same(
        checked_value(lax.shift_left, np.int8([1, 1, 1]), np.int8([7, 8, -1])), [-128, 0, 0]
    )


def test_shifts_64_bit(enable_x64):
    x = np.int64([1, -8, -8])
    s = np.int64([63, 64, -1])
    assert_same(checked_value(lax.shift_left, x, s), [-(2**63), 0, 0])
    assert_same(checked_value(lax.shift_right_logical, x, s), [0, 0, 0])
    assert_same(checked_value(lax.shift_right_arithmetic, x, s), [0, -1, -1])
    assert_same(checked_value(lax.div, np.int64([-(2**63), 7]), np.int64([-1, 0])), [-(2**63), -1])


def test_bool_logic():
    x = np.bool_([True, True, False, False])
    y = np.bool_([True, False, True, False])
    assert_same(checked_value(lax.bitwise_and, x, y), [True, False, False, False])
    assert_same(checked_value(lax.bitwise_or, x, y), [True, True, True, False])
    assert_same(checked_value(lax.bitwise_xor, x, y), [False, True, True, False])
    assert lax.and_ is lax.bitwise_and and lax.or_ is lax.bitwise_or and lax.xor is lax.bitwise_xor


def test_nextafter_values():
    out = checked_value(lax.nextafter, np.float32([0, 1]), np.float32([1, 0]))
    assert_same(out, [1.4012985e-45, 0.99999994])
    assert np.isnan(checked_value(lax.nextafter, np.float32([np.nan]), np.float32([1])))[0]
    out = checked_value(lax.nextafter, np.array([1, 0], bf16), np.array([2, -1], bf16))
    assert_same(out, np.array([1.0078125, -9.18355e-41], bf16))


# --- weak types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,args,dtype,weak",
    [
        (lax.add, (1.0, 2.0), f32, True),
        (lax.sub, (np.float32(1), 2.0), f32, False),
        (lax.lt, (1.0, 2.0), b, True),
        (lax.eq, (1, 2), b, True),
        (lax.eq, (np.int32(1), 2), b, False),
        (lax.shift_left, (1, 3), i32, True),
        (lax.pow, (2.0, 3), f32, True),
        (lax.pow, (2.0, np.int32(3)), f32, False),
        (lax.bitwise_and, (True, False), b, False),
        (lax.div, (7, 2), i32, True),
    ],
)
def test_weak_types(fn, args, dtype, weak):
    out = check_traced_matches_eager(fn, *args)
    assert out.dtype == dtype and out.weak_type is weak


# --- jaxpr printouts (from JAX 0.10.2) ------------------------------------------------------


def test_jaxpr_of_integer_ops():
    def f(x, y):
        return (
            lax.sub(x, y),
            lax.div(x, y),
            lax.rem(x, y),
            lax.max(x, y),
            lax.min(x, y),
            lax.bitwise_and(x, y),
            lax.bitwise_or(x, y),
            lax.bitwise_xor(x, y),
            lax.shift_left(x, y),
            lax.shift_right_logical(x, y),
            lax.shift_right_arithmetic(x, y),
        )

    closed = make_jaxpr(f)(np.zeros((2,), np.int32), np.zeros((2,), np.int32))
    check_jaxpr(closed.jaxpr)
    assert str(closed) == (
        "{ lambda ; a:i32[2] b:i32[2]. let\n"
        "    c:i32[2] = sub a b\n"
        "    d:i32[2] = div a b\n"
        "    e:i32[2] = rem a b\n"
        "    f:i32[2] = max a b\n"
        "    g:i32[2] = min a b\n"
        "    h:i32[2] = and a b\n"
        "    i:i32[2] = or a b\n"
        "    j:i32[2] = xor a b\n"
        "    k:i32[2] = shift_left a b\n"
        "    l:i32[2] = shift_right_logical a b\n"
        "    m:i32[2] = shift_right_arithmetic a b\n"
        "  in (c, d, e, f, g, h, i, j, k, l, m) }"
    )


def test_jaxpr_of_comparisons_and_float_ops():
    def f(x, y):
        return (
            lax.eq(x, y),
            lax.ne(x, y),
            lax.lt(x, y),
            lax.le(x, y),
            lax.gt(x, y),
            lax.ge(x, y),
            lax.atan2(x, y),
            lax.nextafter(x, y),
            lax.pow(x, y),
        )

    assert str(make_jaxpr(f)(np.zeros((2,), np.float32), np.zeros((2,), np.float32))) == (
        "{ lambda ; a:f32[2] b:f32[2]. let\n"
        "    c:bool[2] = eq a b\n"
        "    d:bool[2] = ne a b\n"
        "    e:bool[2] = lt a b\n"
        "    f:bool[2] = le a b\n"
        "    g:bool[2] = gt a b\n"
        "    h:bool[2] = ge a b\n"
        "    i:f32[2] = atan2 a b\n"
        "    j:f32[2] = nextafter a b\n"
        "    k:f32[2] = pow a b\n"
        "  in (c, d, e, f, g, h, i, j, k) }"
    )


def test_jaxpr_of_mixed_pow_and_literals():
    closed = make_jaxpr(lax.pow)(np.zeros((2,), np.float32), np.zeros((2,), np.int32))
    assert str(closed) == "{ lambda ; a:f32[2] b:i32[2]. let c:f32[2] = pow a b in (c,) }"
    closed = make_jaxpr(lambda x: lax.pow(x, 2))(np.float32(1))
    assert str(closed) == "{ lambda ; a:f32[]. let b:f32[] = pow a 2:i32[] in (b,) }"
    closed = make_jaxpr(lambda x: lax.lt(x, 2.0))(1.0)
    assert str(closed) == "{ lambda ; a:f32[]. let b:bool[] = lt a 2.0:f32[] in (b,) }"


# --- errors ---------------------------------------------------------------------------------


def test_mixed_dtypes_are_rejected():
    for fn, name in [
        (lax.add, "add"),
        (lax.eq, "eq"),
        (lax.bitwise_and, "and"),
        (lax.lt, "lt"),
    ]:
        with pytest.raises(TypeError, match=f"lax.{name} requires arguments to have the same"):
            make_jaxpr(fn)(np.zeros(2, np.int32), np.zeros(2, np.int8))
    with pytest.raises(TypeError, match="float32, float16"):
        make_jaxpr(lax.sub)(np.zeros(2, np.float32), np.zeros(2, np.float16))


def test_incompatible_shapes_are_rejected():
    with pytest.raises(TypeError, match=r"div.*\(2,\), \(3,\)"):
        make_jaxpr(lax.div)(np.zeros(2, np.float32), np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"lt.*\(2, 3\), \(3,\)"):
        make_jaxpr(lax.lt)(np.zeros((2, 3), np.float32), np.zeros(3, np.float32))


def test_pow_dtype_errors():
    message = (
        "the first argument to pow must have an inexact dtype (float or complex), and the "
        "second argument must have an inexact or integer dtype, and two inexact dtypes must "
        "match, but got float32 and float16 respectively."
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        make_jaxpr(lax.pow)(np.zeros(2, np.float32), np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="pow.*int32"):
        make_jaxpr(lax.pow)(np.zeros(2, np.int32), np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="pow.*bool"):
        make_jaxpr(lax.pow)(np.zeros(2, np.float32), np.zeros(2, np.bool_))
    with pytest.raises(TypeError, match="pow.*incompatible shapes"):
        make_jaxpr(lax.pow)(np.zeros(2, np.float32), np.zeros(3, np.int32))


def test_pow_of_a_negative_infinite_or_zero_base_is_c_pow_eagerly_as_under_jit():
    # NumPy's power gives NaN for (-inf)**0.5 and -0 for (-0)**0.5; XLA (and JAX) follow C.
    x = np.array([-np.inf, -np.inf, -0.0, -0.0, -np.inf, -np.inf, -0.0, 2.0, -np.inf, -0.0])
    y = np.array([0.5, -0.5, 0.5, 2.0, 3.0, -3.0, 3.0, 0.5, 0.0, 0.0])
    want = np.array([np.inf, 0, 0, 0, -np.inf, -0.0, -0.0, np.sqrt(2), 1, 1], np.float32)
    x, y = x.astype(np.float32), y.astype(np.float32)
    for got in (lax.pow(x, y), tracejit.jit(lax.pow)(x, y)):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert float(tracejit.numpy.array(-np.inf) ** 0.5) == np.inf


def test_complex_pow_of_a_zero_base_is_xlas_eagerly_as_under_jit():
    # Found by tests/fuzz: NumPy gives 0 for 0j ** (0.5+0.5j); XLA (and JAX) give NaN whenever
    # the exponent is off the real axis.
    y = np.array([0, 1, 0.5, -1, 0.5 + 0.5j, -0.5 + 0.5j, 1j, 3], np.complex64)
    nan = complex("nan+nanj")
    want = np.array([1, 0, 0, nan, nan, nan, nan, 0], np.complex64)
    x = np.zeros_like(y)
    for got in (lax.pow(x, y), tracejit.jit(lax.pow)(x, y)):
        np.testing.assert_array_equal(got, want)


def test_complex_division_by_zero_is_xlas_eagerly_as_under_jit():
    # Found by tests/fuzz: XLA (and JAX) multiply each part by copysign(inf, real(y)), so the
    # sign of a zero divisor counts; NumPy's gave inf+inf j for (0.5+0.5j) / (-0+0j).
    c = complex
    x = np.array([c(1, 0), c(0, 1), c(1, 1), c(-1, 2), c(0.5, 0.5), c(0, 0), c(1, 1)], np.complex64)
    y = np.array([c(0, 0), c(-0.0, 0), c(-0.0, 0), c(0, -0.0), c(-0.0, -0.0), c(0, 0), c(2, 0)])
    y = y.astype(np.complex64)
    inf, nan = np.inf, np.nan
    want = [c(inf, nan), c(nan, -inf), c(-inf, -inf), c(-inf, inf), c(-inf, -inf), c(nan, nan)]
    want = np.array([*want, c(0.5, 0.5)], np.complex64)
    for got in (lax.div(x, y), tracejit.jit(lax.div)(x, y)):
        np.testing.assert_array_equal(np.asarray(got), want)
