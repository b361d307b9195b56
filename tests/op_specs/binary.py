"""Binary elementwise primitives: NumPy references with XLA's conventions where they differ
from NumPy's (truncating integer division, C remainders, out-of-range shifts)."""

import numpy as np
import scipy.special
from helpers import ALL, FLOATS, INEXACT, INTS, NUMERIC, REAL, OpSpec, b, c64, f32, shaped

from tracejit import lax
from tracejit._src.core import primitives

# Shapes of (x, y): size-1 dimensions, equal shapes, rank-0 operands broadcasting, size 0. The
# first pair is the one vmap, derivatives and XLA are checked on.
SHAPES = (
    ((2, 3), (1, 3)),
    ((), ()),
    ((7,), (7,)),
    ((2, 3), (2, 3)),
    ((2, 3), ()),
    ((), (2, 3)),
    ((0, 3), (0, 3)),
    ((0,), ()),
)


def pair(x_range=(-3.0, 3.0), y_range=(-3.0, 3.0), y_away_from_zero=False, shift=False):
    """A sampler of (x, y) at a pair of SHAPES. `y_away_from_zero`: |y| >= 0.5 (integers:
    nonzero, |x| small); `shift`: y is a shift amount in [0, bit width)."""

    def sample(rng, shapes, dtype):
        x_shape, y_shape = shapes
        if dtype == b:
            return rng.random(x_shape) < 0.5, rng.random(y_shape) < 0.5
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if shift:
                x = rng.integers(info.min, info.max, x_shape, endpoint=True)
                y = rng.integers(0, info.bits, y_shape)
            elif y_away_from_zero:
                x = rng.integers(max(info.min, -100), min(info.max, 100), x_shape, endpoint=True)
                sign = 1 if dtype.kind == "u" else rng.choice([-1, 1])
                y = rng.integers(1, 20, y_shape) * sign
            else:
                x = rng.integers(info.min, info.max, x_shape, endpoint=True)
                y = rng.integers(info.min, info.max, y_shape, endpoint=True)
            return x.astype(dtype), np.asarray(y).astype(dtype)
        x = rng.uniform(*x_range, x_shape)
        y = rng.uniform(*y_range, y_shape)
        if y_away_from_zero:
            y = np.where(np.abs(y) < 0.5, np.copysign(0.5, y) + y, y)
        if dtype.kind == "c":
            x = x + 0.5j * rng.uniform(*x_range, x_shape)
            y = y + 0.5j * rng.uniform(*y_range, y_shape)
        return x.astype(dtype), np.asarray(y).astype(dtype)

    return sample


def _sometimes_equal(sample):
    """Comparisons see some equal operands."""

    def sample_with_ties(rng, shapes, dtype):
        x, y = sample(rng, shapes, dtype)
        if x.shape == y.shape:
            y = np.where(rng.random(y.shape) < 0.3, x, y)
        return x, y

    return sample_with_ties


def _polygamma_operands(rng, shapes, dtype):
    """Orders m in {0, 1, 2} (floats, as lax takes them), x in [0.5, 3)."""
    m_shape, x_shape = shapes
    m = rng.integers(0, 3, m_shape).astype(dtype)
    return m, rng.uniform(0.5, 3.0, x_shape).astype(dtype)


def _truncating_div(x, y):
    if x.dtype.kind in "iu":
        return np.trunc(x.astype(np.float64) / y.astype(np.float64)).astype(x.dtype)
    return x / y


def _atan2(x, y):
    if x.dtype.kind == "c":
        return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
    return np.arctan2(x, y)


def _logical_right_shift(x, y):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.right_shift(x.view(unsigned), y.astype(unsigned)).view(x.dtype)


def _arithmetic_right_shift(x, y):
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return np.right_shift(x.view(signed), y.astype(signed)).view(x.dtype)


def _mulhi(x, y):
    """The high half of the exact (Python integer) product."""
    bits = 8 * x.dtype.itemsize
    return np.asarray((x.astype(object) * y.astype(object)) >> bits).astype(x.dtype)


def binary(name, fun, ref, dtypes, sample=None, grad_argnums=(), **fields):
    return OpSpec(
        name,
        fun,
        ref,
        dtypes,
        sample or pair(),
        SHAPES,
        grad_argnums=grad_argnums,
        **fields,
    )


def comparison(name, fun, ref, dtypes):
    return binary(name, fun, ref, dtypes, _sometimes_equal(pair()), out=lambda d: b)


AWAY = pair(y_away_from_zero=True)
SHIFT = pair(shift=True)

BINARY = [
    binary("add", lax.add, np.add, NUMERIC, grad_argnums=(0, 1), linear=True),
    binary("sub", lax.sub, np.subtract, NUMERIC, grad_argnums=(0, 1), linear=True),
    binary("mul", lax.mul, np.multiply, NUMERIC, grad_argnums=(0, 1)),
    binary("div", lax.div, _truncating_div, NUMERIC, AWAY, grad_argnums=(0, 1)),
    binary("rem", lax.rem, np.fmod, REAL[:-1], AWAY, grad_argnums=(0,)),
    binary("pow", lax.pow, np.power, INEXACT, pair((0.2, 3.0), (-2.0, 2.0)), grad_argnums=(0, 1)),
    binary("max", lax.max, np.maximum, ALL, grad_argnums=(0, 1)),
    binary("min", lax.min, np.minimum, ALL, grad_argnums=(0, 1)),
    binary("atan2", lax.atan2, _atan2, INEXACT, AWAY, grad_argnums=(0, 1)),
    binary("and", lax.bitwise_and, np.bitwise_and, [*INTS, b]),
    binary("or", lax.bitwise_or, np.bitwise_or, [*INTS, b]),
    binary("xor", lax.bitwise_xor, np.bitwise_xor, [*INTS, b]),
    binary("shift_left", lax.shift_left, np.left_shift, INTS, SHIFT),
    binary("shift_right_logical", lax.shift_right_logical, _logical_right_shift, INTS, SHIFT),
    binary(
        "shift_right_arithmetic", lax.shift_right_arithmetic, _arithmetic_right_shift, INTS, SHIFT
    ),
    comparison("eq", lax.eq, np.equal, ALL),
    comparison("ne", lax.ne, np.not_equal, ALL),
    comparison("lt", lax.lt, np.less, REAL),
    comparison("le", lax.le, np.less_equal, REAL),
    comparison("gt", lax.gt, np.greater, REAL),
    comparison("ge", lax.ge, np.greater_equal, REAL),
    binary("nextafter", lax.nextafter, np.nextafter, FLOATS, exact=True),
    binary(
        "polygamma",
        lax.polygamma,
        scipy.special.polygamma,
        FLOATS,
        _polygamma_operands,
        grad_argnums=(1,),
        tol=4,
    ),
    # The sum of cotangents that AD emits; no public wrapper.
    OpSpec(
        "add_any",
        primitives["add_any"].bind,
        np.add,
        ALL,
        shaped(),
        (((2, 3), (2, 3)),),  # no broadcasting
        grad_argnums=(0, 1),
        linear=True,
    ),
    binary(
        "complex",
        lax.complex,
        lambda x, y: x + 1j * y,
        [f32],
        out=lambda d: c64,
        grad_argnums=(0, 1),
        linear=True,
    ),
    binary("mulhi", lax.mulhi, _mulhi, INTS, exact=True),
]
