"""Unary elementwise primitives (and the special functions of one operand): NumPy/SciPy
references on float64/complex128 operands, or on the integer operands themselves."""

import numpy as np
import scipy.special
from helpers import FLOATS, INEXACT, INTS, NUMERIC, SIGNED, OpSpec, b, c64, f32, uniform

from tracejit import lax

# The first shape is the one vmap, derivatives and XLA are checked on.
SHAPES = ((2, 3), (), (7,), (0,), (2, 0, 3))

SMALL_INTS = uniform(int_range=(-40, 40))  # integer_pow's results stay in range


def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _real_of(d):
    return np.dtype(d.char.lower()) if d.kind == "c" else d


def _popcount(v):
    width = v.dtype.itemsize * 8
    u = v.astype(np.int64) % (1 << width)
    return np.array([int(e).bit_count() for e in u.ravel()]).reshape(v.shape)


def _clz(v):
    width = v.dtype.itemsize * 8
    u = v.astype(np.int64) % (1 << width)
    return np.array([width - int(e).bit_length() for e in u.ravel()]).reshape(v.shape)


def unary(name, fun, ref, dtypes, low=-3.0, high=3.0, smooth=True, **fields):
    """A row whose operand is sampled in [low, high) at each of SHAPES; `smooth` rows are
    checked against finite differences in their operand."""
    fields.setdefault("sample", uniform(low, high))
    grad_argnums = (0,) if smooth else ()
    return OpSpec(name, fun, ref, dtypes, shapes=SHAPES, grad_argnums=grad_argnums, **fields)


ELEMENTWISE = [
    unary("neg", lax.neg, np.negative, NUMERIC, linear=True),
    unary("sign", lax.sign, lambda v: np.where(v == 0, v, v / np.abs(v)), NUMERIC, smooth=False),
    unary("floor", lax.floor, np.floor, FLOATS, -5, 5, smooth=False),
    unary("ceil", lax.ceil, np.ceil, FLOATS, -5, 5, smooth=False),
    unary("round", lax.round, _round_away, FLOATS, -5, 5, smooth=False),
    unary(
        "round_even",
        lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
        np.rint,
        FLOATS,
        -5,
        5,
        smooth=False,
        primitive="round",
    ),
    unary("is_finite", lax.is_finite, np.isfinite, FLOATS, smooth=False, out=lambda d: b),
    unary("exp", lax.exp, np.exp, INEXACT),
    unary("exp2", lax.exp2, np.exp2, INEXACT),
    unary("log", lax.log, np.log, INEXACT, 0.1, 5),
    unary("log1p", lax.log1p, np.log1p, INEXACT, -0.5, 5),
    unary("expm1", lax.expm1, np.expm1, INEXACT),
    unary("tanh", lax.tanh, np.tanh, INEXACT),
    unary("logistic", lax.logistic, lambda v: 1 / (1 + np.exp(-v)), INEXACT, -5, 5),
    unary("sin", lax.sin, np.sin, INEXACT),
    unary("cos", lax.cos, np.cos, INEXACT),
    unary("tan", lax.tan, np.tan, INEXACT, -1.2, 1.2, tol=4),
    unary("asin", lax.asin, np.arcsin, INEXACT, -0.9, 0.9),
    unary("acos", lax.acos, np.arccos, INEXACT, -0.9, 0.9),
    unary("atan", lax.atan, np.arctan, INEXACT, -0.9, 0.9),
    unary("sinh", lax.sinh, np.sinh, INEXACT),
    unary("cosh", lax.cosh, np.cosh, INEXACT),
    unary("asinh", lax.asinh, np.arcsinh, INEXACT),
    unary("acosh", lax.acosh, np.arccosh, INEXACT, 1.1, 5),
    unary("atanh", lax.atanh, np.arctanh, INEXACT, -0.9, 0.9),
    unary("sqrt", lax.sqrt, np.sqrt, INEXACT, 0.1, 5),
    unary("rsqrt", lax.rsqrt, lambda v: 1 / np.sqrt(v), INEXACT, 0.1, 5),
    unary("cbrt", lax.cbrt, np.cbrt, FLOATS, -5, 5, smooth=False),  # steep at 0
    unary("abs", lax.abs, np.abs, SIGNED, out=_real_of),
    unary("not", lax.bitwise_not, np.invert, [*INTS, b], smooth=False),
    unary(
        "integer_pow_3",
        lambda x: lax.integer_pow(x, 3),
        lambda v: v**3,
        NUMERIC,
        sample=SMALL_INTS,
        tol=2,
        primitive="integer_pow",
    ),
    unary(
        "integer_pow_2",
        lambda x: lax.integer_pow(x, 2),
        lambda v: v * v,
        NUMERIC,
        sample=SMALL_INTS,
        primitive="integer_pow",
    ),
    unary(
        "integer_pow_0",
        lambda x: lax.integer_pow(x, 0),
        lambda v: v**0,
        NUMERIC,
        sample=SMALL_INTS,
        primitive="integer_pow",
    ),
    unary(
        "integer_pow_-2",
        lambda x: lax.integer_pow(x, -2),
        lambda v: v**-2.0,
        INEXACT,
        0.5,
        3,
        primitive="integer_pow",
    ),
    unary("square", lax.square, np.square, NUMERIC),
    unary("erf", lax.erf, scipy.special.erf, FLOATS),
    unary("erfc", lax.erfc, scipy.special.erfc, FLOATS, -1.5, 3),
    unary("erf_inv", lax.erf_inv, scipy.special.erfinv, FLOATS, -0.9, 0.9),
    unary("lgamma", lax.lgamma, scipy.special.gammaln, FLOATS, 0.1, 6, tol=2),
    unary("digamma", lax.digamma, scipy.special.digamma, FLOATS, 0.1, 6, tol=2),
    unary("real", lax.real, np.real, [c64], out=_real_of, linear=True),
    unary("imag", lax.imag, np.imag, [c64], out=_real_of, linear=True),
    unary(
        "conj",
        lax.conj,
        lambda v: np.conj(v.astype(np.complex128)),
        [f32, c64],
        out=lambda d: c64,
        linear=True,
    ),
    unary("population_count", lax.population_count, _popcount, INTS, smooth=False),
    unary("clz", lax.clz, _clz, INTS, smooth=False),
    # float16's format: rounds float32 to nearest even (no subnormals among these operands);
    # float16 and bfloat16 operands in [-3, 3] are unchanged. Its derivative rounds the tangent
    # (not the derivative of a step function): tests/lax/test_reduce_precision.py.
    OpSpec(
        "reduce_precision",
        lambda x: lax.reduce_precision(x, 5, 10),
        lambda x: x.astype(np.float16).astype(x.dtype),
        FLOATS,
        shapes=SHAPES,
        exact=True,
    ),
]
