"""Cumulative reductions: cumsum, cumprod, cummax, cummin, cumlogsumexp against NumPy
references, eager and staged, forward and reversed (special values from JAX 0.10.2)."""

import re

import numpy as np
import pytest
from helpers import (
    FLOATS,
    NUMERIC,
    assert_close,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    eager,
    f16,
    f32,
    i32,
    staged,
    u8,
)

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.array import make_array

# (shape, axis): rank 1 to 3, negative axes, size-0 dimensions.
CASES = [
    ((5,), 0),
    ((3, 4), 1),
    ((3, 4), 0),
    ((3, 4), -1),
    ((2, 3, 4), 1),
    ((0, 3), 0),
    ((3, 0), 1),
]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -3
        return rng.integers(low, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def wide(dtype):
    return {"c": np.complex128, "i": np.int64, "u": np.int64}.get(dtype.kind, np.float64)


def ref_cumsum(x, axis):
    return np.cumsum(x.astype(wide(x.dtype)), axis=axis)


def ref_cumprod(x, axis):
    return np.cumprod(x.astype(wide(x.dtype)), axis=axis)


def ref_cummax(x, axis):
    return np.maximum.accumulate(x.astype(wide(x.dtype)), axis=axis)


def ref_cummin(x, axis):
    return np.minimum.accumulate(x.astype(wide(x.dtype)), axis=axis)


def ref_cumlogsumexp(x, axis):
    return np.logaddexp.accumulate(x.astype(np.float64), axis=axis)


SCANS = [
    (lax.cumsum, ref_cumsum, NUMERIC),
    (lax.cumprod, ref_cumprod, NUMERIC),
    (lax.cummax, ref_cummax, NUMERIC),
    (lax.cummin, ref_cummin, NUMERIC),
    (lax.cumlogsumexp, ref_cumlogsumexp, FLOATS),
]

TOLERANCE = {f16: 4e-3, bf16: 2e-2, f32: 1e-5, c64: 1e-5}


def ids(value):
    return getattr(value, "__name__", str(value))


@pytest.mark.parametrize(
    "op, ref, dtype", [(op, ref, d) for op, ref, ds in SCANS for d in ds], ids=ids
)
@pytest.mark.parametrize("shape, axis", CASES, ids=str)
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_scan_matches_numpy(op, ref, dtype, shape, axis, reverse):
    x = sample(shape, dtype)
    out = check_traced_matches_eager(lambda x: op(x, axis, reverse), x)
    assert out.dtype == dtype and out.shape == shape and not out.weak_type
    if reverse:
        expected = np.flip(ref(np.flip(x, axis), axis), axis)
    else:
        expected = ref(x, axis)
    assert_close(out, expected, TOLERANCE.get(dtype, 0), dtype=dtype)


@pytest.mark.parametrize("op", [op for op, _, _ in SCANS], ids=ids)
def test_scans_keep_the_operand_weak_type(op):
    out = check_traced_matches_eager(lambda x: op(x), make_array(np.arange(3, dtype=f32), True))
    assert out.weak_type and out.dtype == f32


def test_defaults_are_axis_0_forward():
    x = np.arange(6, dtype=f32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(lax.cumsum(x)), [[0, 1, 2], [3, 5, 7]])


# --- special values, from JAX ---------------------------------------------------------------


def test_nan_and_infinities():
    nan, inf = np.nan, np.inf
    x = np.array([1, nan, 3, -inf, 2], f32)
    for op in (lax.cummax, lax.cummin, lax.cumlogsumexp, lax.cumsum):
        np.testing.assert_array_equal(np.asarray(op(x)), [1, nan, nan, nan, nan])
    y = np.array([-inf, -inf, 0, inf, 1], f32)
    np.testing.assert_array_equal(np.asarray(lax.cumlogsumexp(y)), [-inf, -inf, 0, inf, inf])
    big = np.array([100.0, 100, 1000], f32)
    np.testing.assert_allclose(np.asarray(lax.cumlogsumexp(big)), [100, 100.693146, 1000])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cummax_cummin_order_signed_zeros_like_xla(dtype):
    # JAX: cummax([0., -0.]) = [0., 0.], cummin([-0., 0.]) = [-0., -0.], and reversed alike.
    signs = [  # (0. == -0.: not dict keys)
        ((0.0, -0.0), ([False, False], [False, True], [False, True], [True, True])),
        ((-0.0, 0.0), ([True, False], [True, True], [False, False], [True, False])),
    ]
    for values, expected in signs:
        x = np.array(values, dtype)
        outs = (
            lax.cummax(x),
            lax.cummin(x),
            lax.cummax(x, reverse=True),
            lax.cummin(x, reverse=True),
        )
        for out, want in zip(outs, expected, strict=True):
            np.testing.assert_array_equal(np.signbit(np.asarray(out, f32)), want)


def test_complex_cummax_cummin_are_lexicographic():
    c = np.array([1 + 2j, 1 + 3j, 2 - 5j, 0 + 9j], c64)
    np.testing.assert_array_equal(np.asarray(lax.cummax(c)), [1 + 2j, 1 + 3j, 2 - 5j, 2 - 5j])
    np.testing.assert_array_equal(np.asarray(lax.cummin(c)), [1 + 2j, 1 + 2j, 1 + 2j, 0 + 9j])


def test_integer_scans_wrap_in_the_operand_dtype():
    out = lax.cumsum(np.array([2**31 - 1, 1], i32))
    assert out.dtype == i32
    np.testing.assert_array_equal(np.asarray(out), [2**31 - 1, -(2**31)])
    np.testing.assert_array_equal(np.asarray(lax.cumprod(np.array([200, 2], u8))), [200, 144])


def test_narrow_floats_accumulate_in_float32():
    out = lax.cumsum(np.ones(4096, f16))
    assert out.dtype == f16 and float(np.asarray(out)[-1]) == 4096.0
    out = lax.cumlogsumexp(np.array([1, 2, 3], bf16))
    np.testing.assert_array_equal(np.asarray(out, f32), [1, 2.3125, 3.40625])  # JAX's values


# --- printing -------------------------------------------------------------------------------


def test_jaxpr_printouts_match_jax():
    x = np.ones((3, 4), f32)
    assert str(make_jaxpr(lambda x: lax.cumsum(x, 1))(x)) == (
        "{ lambda ; a:f32[3,4]. let b:f32[3,4] = cumsum[axis=1 reverse=False] a in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.cumprod(x, 0, reverse=True))(x)) == (
        "{ lambda ; a:f32[3,4]. let b:f32[3,4] = cumprod[axis=0 reverse=True] a in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.cumlogsumexp(x))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] = cumlogsumexp[axis=0 reverse=False] a\n"
        "  in (b,) }"
    )
    closed = make_jaxpr(lambda x: lax.cummax(x, -1))(x)
    assert closed.eqns[0].params == {"axis": 1, "reverse": False}


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
@pytest.mark.parametrize("op", [op for op, _, _ in SCANS], ids=ids)
def test_bad_axis_raises_value_error(run, op):
    name = op.__name__
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: axis 2 is out of bounds for array of shape (3, 2)")
    ):
        run(lambda x: op(x, 2), np.ones((3, 2), f32))
    with pytest.raises(ValueError, match=re.escape(f"{name}: axis -3 is out of bounds")):
        run(lambda x: op(x, -3), np.ones((3, 2), f32))
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: axis 0 is out of bounds for array of shape ()")
    ):
        run(lambda x: op(x, 0), np.float32(1))


def test_bad_dtypes_raise_type_error_when_staged():
    cases = [(op, np.ones(3, b), "bool") for op, _, _ in SCANS]
    cases += [
        (lax.cumlogsumexp, np.ones(3, i32), "int32"),
        (lax.cumlogsumexp, np.ones(3, c64), "complex64"),
    ]
    for op, x, dtype_name in cases:
        with pytest.raises(TypeError, match=f"{op.__name__} does not accept dtype {dtype_name}"):
            staged(lambda x: op(x), x)  # noqa: B023 (called at once)
