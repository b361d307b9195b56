"""Binary elementwise primitives against NumPy references, eager and staged, with XLA's
conventions where they differ from NumPy's (truncating integer division, C remainders, division
by zero, out-of-range shifts, nan-propagating max/min): expected values there and the jaxpr
printouts come from JAX 0.10.2."""

import re
import warnings
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
from tracejit._src.api import make_jaxpr
from tracejit._src.jaxpr import check_jaxpr
from tracejit._src.lax import binary as lax
from tracejit._src.lax import bitwise, comparison, trigonometric

b = np.dtype(np.bool_)
i8, i32, u8, u32 = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.uint32))
f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
bf16 = np.dtype(ml_dtypes.bfloat16)
c64 = np.dtype(np.complex64)

FLOATS = [f32, f16, bf16]
INEXACT = [f32, f16, bf16, c64]
INTS = [i32, i8, u8, u32]
NUMERIC = [f32, f16, bf16, i32, i8, u8, u32, c64]
REAL = [f32, f16, bf16, i32, i8, u8, u32, b]
ALL = REAL + [c64]

# Shapes of (x, y): equal shapes, rank-0 operands broadcasting, size-1 dimensions, size 0.
SHAPES = [
    ((), ()),
    ((7,), (7,)),
    ((2, 3), (2, 3)),
    ((2, 3), ()),
    ((), (2, 3)),
    ((2, 3), (1, 3)),
    ((0, 3), (0, 3)),
    ((0,), ()),
]

# Relative and absolute tolerance of a result against a float64/complex128 reference.
TOL = {f32: 3e-6, f16: 2e-3, bf16: 1.6e-2, c64: 1e-5}


@dataclass(frozen=True)
class Op:
    name: str
    fn: object  # the lax wrapper
    ref: object  # NumPy on float64/complex128 (inexact) or on the operands themselves (integer)
    dtypes: list
    x_range: tuple = (-3.0, 3.0)  # sampling ranges of real operands (and of complex parts)
    y_range: tuple = (-3.0, 3.0)
    y_away_from_zero: bool = False  # sample |y| >= 0.5 (integers: nonzero, |x| small)
    out: object = None  # result dtype; default: the operands'
    shift: bool = False  # y is a shift amount in [0, bit width)

    def __str__(self):
        return self.name


def _truncating_div(x, y):
    if x.dtype.kind in "iu":
        return np.trunc(x.astype(np.float64) / y.astype(np.float64)).astype(x.dtype)
    return x / y


def _fmod(x, y):
    return np.fmod(x, y)


def _complex_atan2(x, y):
    return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))


def _atan2(x, y):
    return _complex_atan2(x, y) if x.dtype.kind == "c" else np.arctan2(x, y)


def _logical_right_shift(x, y):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.right_shift(x.view(unsigned), y.astype(unsigned)).view(x.dtype)


def _arithmetic_right_shift(x, y):
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return np.right_shift(x.view(signed), y.astype(signed)).view(x.dtype)


def _nextafter(x, y):
    return np.nextafter(x, y)


OPS = [
    Op("add", lax.add, np.add, NUMERIC),
    Op("sub", lax.sub, np.subtract, NUMERIC),
    Op("mul", lax.mul, np.multiply, NUMERIC),
    Op("div", lax.div, _truncating_div, NUMERIC, y_away_from_zero=True),
    Op("rem", lax.rem, _fmod, REAL[:-1], y_away_from_zero=True),
    Op("pow", lax.pow, np.power, INEXACT, (0.2, 3.0), (-2.0, 2.0)),
    Op("max", lax.max, np.maximum, ALL),
    Op("min", lax.min, np.minimum, ALL),
    Op("atan2", trigonometric.atan2, _atan2, INEXACT, y_away_from_zero=True),
    Op("and", bitwise.bitwise_and, np.bitwise_and, INTS + [b]),
    Op("or", bitwise.bitwise_or, np.bitwise_or, INTS + [b]),
    Op("xor", bitwise.bitwise_xor, np.bitwise_xor, INTS + [b]),
    Op("shift_left", bitwise.shift_left, np.left_shift, INTS, shift=True),
    Op("shift_right_logical", bitwise.shift_right_logical, _logical_right_shift, INTS, shift=True),
    Op(
        "shift_right_arithmetic",
        bitwise.shift_right_arithmetic,
        _arithmetic_right_shift,
        INTS,
        shift=True,
    ),
    Op("eq", comparison.eq, np.equal, ALL, out=b),
    Op("ne", comparison.ne, np.not_equal, ALL, out=b),
    Op("lt", comparison.lt, np.less, REAL, out=b),
    Op("le", comparison.le, np.less_equal, REAL, out=b),
    Op("gt", comparison.gt, np.greater, REAL, out=b),
    Op("ge", comparison.ge, np.greater_equal, REAL, out=b),
    Op("nextafter", lax.nextafter, _nextafter, FLOATS),
]


def sample_pair(op: Op, x_shape, y_shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == b:
        return rng.random(x_shape) < 0.5, rng.random(y_shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if op.shift:
            x = rng.integers(info.min, info.max, x_shape, endpoint=True)
            y = rng.integers(0, info.bits, y_shape)
        elif op.y_away_from_zero:
            x = rng.integers(max(info.min, -100), min(info.max, 100), x_shape, endpoint=True)
            y = rng.integers(1, 20, y_shape) * (1 if dtype.kind == "u" else rng.choice([-1, 1]))
        else:
            x = rng.integers(info.min, info.max, x_shape, endpoint=True)
            y = rng.integers(info.min, info.max, y_shape, endpoint=True)
        x, y = x.astype(dtype), np.asarray(y).astype(dtype)
    else:
        x = rng.uniform(*op.x_range, x_shape)
        y = rng.uniform(*op.y_range, y_shape)
        if op.y_away_from_zero:
            y = np.where(np.abs(y) < 0.5, np.copysign(0.5, y) + y, y)
        if dtype.kind == "c":
            x = x + 0.5j * rng.uniform(*op.x_range, x_shape)
            y = y + 0.5j * rng.uniform(*op.y_range, y_shape)
        x, y = x.astype(dtype), np.asarray(y).astype(dtype)
    if op.out == b and x.shape == y.shape:  # make some operands equal
        y = np.where(rng.random(y.shape) < 0.3, x, y)
    return x, y


def reference(op: Op, x, y):
    if x.dtype.kind in "iub" or op.name == "nextafter":
        with np.errstate(over="ignore"):
            return op.ref(x, y)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    return op.ref(x.astype(wide), y.astype(wide))


CASES = [(op, dtype) for op in OPS for dtype in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{op}-{dtype.name}" for op, dtype in CASES])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matches_reference_eager_and_staged(op, dtype, shapes):
    x, y = sample_pair(op, *shapes, dtype)
    tol = TOL.get(dtype, 0)  # NumPy's scalar and array loops may differ in the last place
    out = check_traced_matches_eager(op.fn, x, y, rtol=tol, atol=tol)
    expected_dtype = op.out or dtype
    assert out.dtype == expected_dtype and not out.weak_type
    assert out.shape == np.broadcast_shapes(x.shape, y.shape)
    expected = reference(op, x, y)
    if expected_dtype.kind in "iub" or op.name == "nextafter":
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected).astype(expected_dtype))
    else:
        wide = np.complex128 if dtype.kind == "c" else np.float64
        got = np.asarray(out).astype(wide)
        np.testing.assert_allclose(got, expected, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize(
    "op,dtype",
    [(op, d) for op in OPS for d in ALL if d not in op.dtypes],
    ids=lambda v: str(v) if isinstance(v, Op) else v.name,
)
def test_rejects_dtypes_outside_its_class(op, dtype):
    x = np.zeros((2, 3), dtype)
    with pytest.raises(TypeError, match=re.escape(dtype.name)) as info:
        make_jaxpr(op.fn)(x, x)
    assert op.name in str(info.value)


# --- edge values (expected values from JAX 0.10.2) -------------------------------------------


def run(fn, *args):
    tol = TOL.get(np.result_type(*args), 0)
    return np.asarray(check_traced_matches_eager(fn, *args, rtol=tol, atol=tol))


def assert_same(got, expected):
    """Equal values, nans in the same places and zeros with the same signs."""
    expected = np.asarray(expected, dtype=got.dtype)
    np.testing.assert_array_equal(got, expected)
    if got.dtype.kind == "c":
        got, expected = np.stack([got.real, got.imag]), np.stack([expected.real, expected.imag])
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


def test_integer_division_truncates_and_divides_by_zero_like_xla():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.int32([7, -7, 7, -7, 5, -5, 0, -(2**31), -(2**31)])
        y = np.int32([2, 2, -2, -2, 0, 0, 0, -1, 1])
        assert_same(run(lax.div, x, y), [3, -3, -3, 3, -1, -1, -1, -(2**31), -(2**31)])
        out = run(lax.div, np.uint32([7, 5, 0]), np.uint32([2, 0, 0]))
        assert_same(out, [3, 2**32 - 1, 2**32 - 1])
        assert_same(run(lax.div, np.int8([-128, 100]), np.int8([-1, 0])), [-128, -1])
        assert_same(run(lax.div, np.int32(-7), np.int32(2)), -3)
        assert_same(run(lax.div, np.int32([9, -9]), np.int32(0)), [-1, -1])


def test_integer_remainder_takes_the_dividends_sign_like_xla():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.int32([7, -7, 7, -7, 5, -5, 0, -(2**31)])
        y = np.int32([2, 2, -2, -2, 0, 0, 0, -1])
        assert_same(run(lax.rem, x, y), [1, -1, 1, -1, 5, -5, 0, 0])
        assert_same(run(lax.rem, np.uint32([7, 5]), np.uint32([2, 0])), [1, 5])


def test_float_division_and_remainder_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(run(lax.div, np.float32([1, -1]), np.float32([0, 0])), [np.inf, -np.inf])
        assert np.isnan(run(lax.div, np.float32([0]), np.float32([0])))[0]
        out = run(lax.rem, np.float32([7.5, -7.5, 7.5, 1.0, np.inf]), np.float32([2, 2, -2, 0, 2]))
        assert_same(out[:3], [1.5, -1.5, 1.5])
        assert np.isnan(out[3:]).all()
        assert_same(run(lax.div, np.complex64([1 + 1j]), np.complex64([1j])), [1 - 1j])


def test_pow_special_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = run(lax.pow, np.float32([-2, 0, 2, 0]), np.float32([0.5, -1, 0.5, 0]))
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
        assert_same(run(lax.pow, x.astype(dtype), np.uint8([3, 2, 3, 0])), [8, 0, -8, 1])
    out = run(lax.pow, np.complex64([1 + 1j]), np.int32([3]))
    np.testing.assert_allclose(out, [-2 + 2j], rtol=1e-6)
    assert out.dtype == c64


def test_max_and_min_propagate_nan():
    x = np.float32([np.nan, 1, 2])
    y = np.float32([1, np.nan, 3])
    assert np.isnan(run(lax.max, x, y)[:2]).all() and run(lax.max, x, y)[2] == 3
    assert np.isnan(run(lax.min, x, y)[:2]).all() and run(lax.min, x, y)[2] == 2
    assert_same(run(lax.max, np.bool_([True, False]), np.bool_([False, False])), [True, False])


def test_complex_max_and_min_compare_lexicographically():
    x = np.complex64([1 + 5j, 2 + 1j, 1 + 1j])
    y = np.complex64([2 + 0j, 1 + 9j, 1 + 2j])
    assert_same(run(lax.max, x, y), [2 + 0j, 2 + 1j, 1 + 2j])
    assert_same(run(lax.min, x, y), [1 + 5j, 1 + 9j, 1 + 1j])


def test_atan2_values():
    out = run(trigonometric.atan2, np.float32([1, -1, 0]), np.float32([0.5, -1, -0.0]))
    np.testing.assert_allclose(out, [1.1071488, -2.3561945, 3.1415927], rtol=1e-6)
    out = run(
        trigonometric.atan2, np.complex64([1 + 1j, 2 - 1j]), np.complex64([0.5 + 2j, -1 + 0.3j])
    )
    np.testing.assert_allclose(out, [0.5739712 - 0.26149225j, 2.0039473 + 0.06606308j], rtol=1e-5)


def test_shifts_out_of_range_follow_xla():
    x = np.int32([1, -8, -8, -8, -8, 5, 2**30])
    s = np.int32([31, 1, 32, 40, -1, 0, 3])
    assert_same(run(bitwise.shift_left, x, s), [-(2**31), -16, 0, 0, 0, 5, 0])
    assert_same(run(bitwise.shift_right_logical, x, s), [0, 2147483644, 0, 0, 0, 5, 134217728])
    assert_same(run(bitwise.shift_right_arithmetic, x, s), [0, -4, -1, -1, -1, 5, 134217728])
    x = np.uint8([1, 200, 200, 200, 200])
    s = np.uint8([7, 1, 8, 9, 255])
    assert_same(run(bitwise.shift_left, x, s), [128, 144, 0, 0, 0])
    assert_same(run(bitwise.shift_right_logical, x, s), [0, 100, 0, 0, 0])
    assert_same(run(bitwise.shift_right_arithmetic, x, s), [0, 228, 255, 255, 255])
    assert_same(run(bitwise.shift_left, np.int8([1, 1, 1]), np.int8([7, 8, -1])), [-128, 0, 0])


def test_shifts_64_bit(enable_x64):
    x = np.int64([1, -8, -8])
    s = np.int64([63, 64, -1])
    assert_same(run(bitwise.shift_left, x, s), [-(2**63), 0, 0])
    assert_same(run(bitwise.shift_right_logical, x, s), [0, 0, 0])
    assert_same(run(bitwise.shift_right_arithmetic, x, s), [0, -1, -1])
    assert_same(run(lax.div, np.int64([-(2**63), 7]), np.int64([-1, 0])), [-(2**63), -1])


def test_bool_logic():
    x = np.bool_([True, True, False, False])
    y = np.bool_([True, False, True, False])
    assert_same(run(bitwise.bitwise_and, x, y), [True, False, False, False])
    assert_same(run(bitwise.bitwise_or, x, y), [True, True, True, False])
    assert_same(run(bitwise.bitwise_xor, x, y), [False, True, True, False])
    assert (
        bitwise.and_ is bitwise.bitwise_and
        and bitwise.or_ is bitwise.bitwise_or
        and bitwise.xor is bitwise.bitwise_xor
    )


def test_nextafter_values():
    out = run(lax.nextafter, np.float32([0, 1]), np.float32([1, 0]))
    assert_same(out, [1.4012985e-45, 0.99999994])
    assert np.isnan(run(lax.nextafter, np.float32([np.nan]), np.float32([1])))[0]
    out = run(lax.nextafter, np.array([1, 0], ml_dtypes.bfloat16), np.array([2, -1], bf16))
    assert_same(out, np.array([1.0078125, -9.18355e-41], bf16))


# --- weak types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,args,dtype,weak",
    [
        (lax.add, (1.0, 2.0), f32, True),
        (lax.sub, (np.float32(1), 2.0), f32, False),
        (comparison.lt, (1.0, 2.0), b, True),
        (comparison.eq, (1, 2), b, True),
        (comparison.eq, (np.int32(1), 2), b, False),
        (bitwise.shift_left, (1, 3), i32, True),
        (lax.pow, (2.0, 3), f32, True),
        (lax.pow, (2.0, np.int32(3)), f32, False),
        (bitwise.bitwise_and, (True, False), b, False),
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
            bitwise.bitwise_and(x, y),
            bitwise.bitwise_or(x, y),
            bitwise.bitwise_xor(x, y),
            bitwise.shift_left(x, y),
            bitwise.shift_right_logical(x, y),
            bitwise.shift_right_arithmetic(x, y),
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
            comparison.eq(x, y),
            comparison.ne(x, y),
            comparison.lt(x, y),
            comparison.le(x, y),
            comparison.gt(x, y),
            comparison.ge(x, y),
            trigonometric.atan2(x, y),
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
    closed = make_jaxpr(lambda x: comparison.lt(x, 2.0))(1.0)
    assert str(closed) == "{ lambda ; a:f32[]. let b:bool[] = lt a 2.0:f32[] in (b,) }"


# --- errors ---------------------------------------------------------------------------------


def test_mixed_dtypes_are_rejected():
    for fn, name in [
        (lax.add, "add"),
        (comparison.eq, "eq"),
        (bitwise.bitwise_and, "and"),
        (comparison.lt, "lt"),
    ]:
        with pytest.raises(TypeError, match=f"lax.{name} requires arguments to have the same"):
            make_jaxpr(fn)(np.zeros(2, np.int32), np.zeros(2, np.int8))
    with pytest.raises(TypeError, match="float32, float16"):
        make_jaxpr(lax.sub)(np.zeros(2, np.float32), np.zeros(2, np.float16))


def test_incompatible_shapes_are_rejected():
    with pytest.raises(TypeError, match=r"div.*\(2,\), \(3,\)"):
        make_jaxpr(lax.div)(np.zeros(2, np.float32), np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"lt.*\(2, 3\), \(3,\)"):
        make_jaxpr(comparison.lt)(np.zeros((2, 3), np.float32), np.zeros(3, np.float32))


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
