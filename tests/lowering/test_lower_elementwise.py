"""Lowering of the unary elementwise primitives (lax/elementwise.py): each jitted through XLA
equals its eager (NumPy) result, on several shapes and dtypes, edge values included.

Several primitives share one jitted function per dtype and shape, to keep the number of
compiled programs small. Warnings are errors, so a silent fallback to NumPy (dispatch warns
when a primitive has no lowering rule) fails the test."""

import numpy as np
import pytest
from helpers import assert_close

import tracejit
from tracejit import lax
from tracejit._src import dispatch, dtypes


@pytest.fixture(autouse=True)
def x64():
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield
    tracejit.config.update("jax_enable_x64", previous)


SHAPES = [(), (5,), (2, 3)]

# name -> (function, input domain: "any", "unit" (-1..1), "pos" (> 0), "ge1" (>= 1))
FLOAT_OPS = {
    "neg": (lax.neg, "any"),
    "sign": (lax.sign, "any"),
    "floor": (lax.floor, "any"),
    "ceil": (lax.ceil, "any"),
    "round_afz": (lax.round, "any"),
    "round_even": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), "any"),
    "is_finite": (lax.is_finite, "any"),
    "exp": (lax.exp, "any"),
    "exp2": (lax.exp2, "any"),
    "log": (lax.log, "pos"),
    "log1p": (lax.log1p, "pos"),
    "expm1": (lax.expm1, "any"),
    "tanh": (lax.tanh, "any"),
    "logistic": (lax.logistic, "any"),
    "sin": (lax.sin, "any"),
    "cos": (lax.cos, "any"),
    "tan": (lax.tan, "any"),
    "asin": (lax.asin, "unit"),
    "acos": (lax.acos, "unit"),
    "atan": (lax.atan, "any"),
    "sinh": (lax.sinh, "any"),
    "cosh": (lax.cosh, "any"),
    "asinh": (lax.asinh, "any"),
    "acosh": (lax.acosh, "ge1"),
    "atanh": (lax.atanh, "unit"),
    "sqrt": (lax.sqrt, "pos"),
    "rsqrt": (lax.rsqrt, "pos"),
    "cbrt": (lax.cbrt, "any"),
    "abs": (lax.abs, "any"),
    "square": (lax.square, "any"),
    "pow0": (lambda x: lax.integer_pow(x, 0), "any"),
    "pow1": (lambda x: lax.integer_pow(x, 1), "any"),
    "pow3": (lambda x: lax.integer_pow(x, 3), "any"),
    "pow7": (lambda x: lax.integer_pow(x, 7), "any"),
    "pow_neg2": (lambda x: lax.integer_pow(x, -2), "pos"),
    "pow_neg5": (lambda x: lax.integer_pow(x, -5), "pos"),
    "erf": (lax.erf, "any"),
    "erfc": (lax.erfc, "any"),
    "erf_inv": (lax.erf_inv, "unit"),
    "lgamma": (lax.lgamma, "pos"),
    "digamma": (lax.digamma, "pos"),
    "polygamma1": (lambda x: lax.polygamma(np.array(1, x.dtype), x), "pos"),
    "polygamma2": (lambda x: lax.polygamma(np.full(x.shape, 2, x.dtype), x), "pos"),
    "conj": (lax.conj, "any"),
}
FLOAT_ONLY = {
    "floor", "ceil", "round_afz", "round_even", "is_finite", "cbrt", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "polygamma1", "polygamma2",
}  # fmt: skip
COMPLEX_OPS = {
    name: fun
    for name, (fun, _) in FLOAT_OPS.items()
    if name not in FLOAT_ONLY and name not in {"conj"}
}
COMPLEX_OPS.update(
    real=lax.real,
    imag=lax.imag,
    conj=lax.conj,
    abs=lax.abs,
)

TOLERANCE = {
    np.dtype(np.float64): 1e-12,
    np.dtype(np.float32): 2e-5,
    np.dtype(np.float16): 2e-3,
    np.dtype(dtypes.bfloat16): 2e-2,
    np.dtype(np.complex128): 1e-12,
    np.dtype(np.complex64): 2e-5,
}


def _values(shape, domain, dtype, seed):
    rng = np.random.default_rng(seed)
    low, high = {"any": (-3, 3), "unit": (-0.95, 0.95), "pos": (0.1, 4), "ge1": (1, 4)}[domain]
    x = rng.uniform(low, high, size=shape)
    if shape and domain == "any":  # halves, to check the rounding ties
        x.flat[0] = 2.5
        x.flat[-1] = -0.5
    return np.asarray(x, dtype)


def _compare(outs, expected, names, dtype):
    tol = TOLERANCE.get(np.dtype(dtype), 0)
    for name, out, want in zip(names, outs, expected, strict=True):
        want = np.asarray(want)
        signs = want.dtype.kind == "f"
        assert_close(out, want, tol, dtype=want.dtype, signed_zeros=signs, err_msg=name)


def _check(funs, args, dtype):
    names = list(funs)

    def f(*xs):
        return [funs[name](x) for name, x in zip(names, xs, strict=True)]

    expected = f(*args)
    jitted = tracejit.jit(f)
    _compare(jitted(*args), expected, names, dtype)
    (entry,) = jitted._cache.values()
    assert isinstance(entry.program, dispatch.CompiledProgram)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_ops(shape, dtype):
    args = [_values(shape, domain, dtype, i) for i, (_, domain) in enumerate(FLOAT_OPS.values())]
    _check({name: fun for name, (fun, _) in FLOAT_OPS.items()}, args, dtype)


LOW_PRECISION_OPS = [
    "neg", "sign", "floor", "ceil", "round_afz", "round_even", "is_finite", "exp", "log",
    "log1p", "expm1", "tanh", "sin", "cos", "sqrt", "rsqrt", "abs", "square", "pow3",
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, dtypes.bfloat16])
def test_low_precision_float_ops(dtype):
    ops = {name: FLOAT_OPS[name][0] for name in LOW_PRECISION_OPS}
    args = [_values((2, 3), FLOAT_OPS[name][1], dtype, i) for i, name in enumerate(ops)]
    _check(ops, args, dtype)


@pytest.mark.parametrize("shape", [(), (2, 3)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops(shape, dtype):
    rng = np.random.default_rng(0)
    args = [
        np.asarray(rng.uniform(-1.5, 1.5, shape) + 1j * rng.uniform(-1.5, 1.5, shape), dtype)
        for _ in COMPLEX_OPS
    ]
    _check(COMPLEX_OPS, args, dtype)


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, -3.0, 1e-30]
SPECIAL_OPS = [
    "neg", "sign", "floor", "ceil", "round_afz", "round_even", "is_finite", "exp", "exp2",
    "log", "log1p", "expm1", "tanh", "logistic", "atan", "sqrt", "rsqrt", "cbrt", "abs",
    "square", "pow3", "pow_neg2", "erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma1",
    "polygamma2",
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_special_values(dtype):
    x = np.array(SPECIAL, dtype)
    ops = {name: FLOAT_OPS[name][0] for name in SPECIAL_OPS}
    _check(ops, [x] * len(ops), dtype)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_ops(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, 7, 100, info.max, info.min, info.max - 1, 5], dtype)
    if info.min < 0:
        x[3:5] = [-3, -7]
    ops = {
        "neg": lax.neg,
        "sign": lax.sign,
        "not": lax.bitwise_not,
        "square": lax.square,
        "pow0": lambda x: lax.integer_pow(x, 0),
        "pow5": lambda x: lax.integer_pow(x, 5),
        "pow12": lambda x: lax.integer_pow(x, 12),
        "population_count": lax.population_count,
        "clz": lax.clz,
    }
    if info.min < 0:
        ops["abs"] = lax.abs
    _check(ops, [x.reshape(2, 5)] * len(ops), dtype)


def test_bool_not():
    x = np.array([[True, False, True]])
    _check({"not": lax.bitwise_not}, [x], np.bool_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_polygamma_orders_and_poles(dtype):
    m = np.array([0, 1, 2, 3, 0.5, -1, np.nan, np.inf, 4, 1], dtype)
    x = np.array([0.5, -2.5, 3.0, 0.0, 1.0, 1.0, 1.0, 1.0, -1.0, np.inf], dtype)
    expected = [lax.polygamma(m, x), lax.polygamma(m[:1], x)]
    outs = tracejit.jit(lambda m, x: [lax.polygamma(m, x), lax.polygamma(m[:1], x)])(m, x)
    _compare(outs, expected, ["polygamma", "polygamma_broadcast"], dtype)


def test_complex_special_values():
    z = np.array([0, 1 + 1j, -0.0 - 0j, np.nan, 3e200j, -4.0, 2j], np.complex128)
    ops = {"sign": lax.sign, "abs": lax.abs, "sqrt": lax.sqrt, "log": lax.log, "conj": lax.conj}
    _check(ops, [z] * len(ops), np.complex128)
