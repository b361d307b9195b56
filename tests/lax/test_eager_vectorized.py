"""Eager implementations that take vectorized NumPy passes on large operands (`select_n` on the
bits, float `sign` and `round` half away from zero, `integer_pow(x, -1)`, `pow`'s look at zero
and -inf bases): on edge values repeated past the size where they switch, each gives what
`jit` gives and what it gives on a few elements, bit for bit (any NaN for a NaN).

XLA on CPU flushes subnormal numbers to zero, so subnormals are left out.
"""

import ml_dtypes
import numpy as np
import pytest

import tracejit
from tracejit import lax

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
MANY = 3000  # elements: past the sizes where the implementations switch


@pytest.fixture(params=FLOATS, ids=lambda d: np.dtype(d).name)
def dtype(request):
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield np.dtype(request.param)
    tracejit.config.update("jax_enable_x64", previous)


def edge_values(dtype) -> np.ndarray:
    info = ml_dtypes.finfo(dtype)
    values = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 0.49999997, -0.49999997]
    values += [7.5, -7.5, 1e-3, 123.456, -123.456, 8388609.0, float(info.tiny)]
    values += [float(info.max), -float(info.max), np.inf, -np.inf, np.nan, -np.nan]
    with np.errstate(over="ignore"):
        return np.array(values, np.float64).astype(dtype)


def many(values: np.ndarray) -> np.ndarray:
    return np.resize(values, MANY)


def bits_equal(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype == np.bool_:
        return bool(np.array_equal(got, want))
    nan = np.isnan(got.astype(np.float64))
    if not (nan == np.isnan(want.astype(np.float64))).all():
        return False
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    return bool((got.view(unsigned) == want.view(unsigned))[~nan].all())


def check(fun, *args, against_jit=True):
    """`fun` eagerly on many elements, against jit and against the first few alone."""
    got = np.asarray(fun(*args))
    if against_jit:
        assert bits_equal(got, np.asarray(tracejit.jit(fun)(*args)))
    few = [a[:20] if np.ndim(a) else a for a in args]
    assert bits_equal(got[:20], np.asarray(fun(*few)))


def test_round_half_away_from_zero(dtype):
    check(lax.round, many(edge_values(dtype)))


def test_round_to_nearest_even(dtype):
    check(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), many(edge_values(dtype)))


def test_sign(dtype):
    check(lax.sign, many(edge_values(dtype)))


def test_reciprocal(dtype):
    values = edge_values(dtype)
    normal = values[np.abs(values.astype(np.float64)) != float(ml_dtypes.finfo(dtype).max)]
    check(lambda x: lax.integer_pow(x, -1), many(normal))  # (1 / max is subnormal)


def test_select_n(dtype):
    x = many(edge_values(dtype))
    y = x[::-1].copy()
    which = np.random.default_rng(0).random(MANY) < 0.5
    check(lax.select_n, which, x, y)
    check(
        lax.select_n,
        which,
        x.view(np.dtype(f"i{x.dtype.itemsize}")),
        y.view(f"i{x.dtype.itemsize}"),
    )
    check(lax.select_n, which, which, ~which)


def test_pow_of_signed_zeros_and_infinities(dtype):
    bases = np.array([0.0, -0.0, np.inf, -np.inf, 2.0, -2.0, 0.5, np.nan], dtype)
    exponents = np.array([0.5, 2.0, 3.0, -0.5, -2.0, -3.0, 0.0, 2.5, np.inf, -np.inf], dtype)
    x, y = np.meshgrid(bases, exponents)
    check(lax.pow, many(x.ravel()), many(y.ravel()))
    # no zero or negative base (libm's and XLA's powers may differ in the last place)
    check(lax.pow, many(np.abs(x.ravel()) + 1), many(y.ravel()), against_jit=False)
