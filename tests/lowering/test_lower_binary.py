"""StableHLO lowering of the binary primitives: jit (compiled by XLA) equals eager, edge cases
included (integer division by 0 and INT_MIN / -1, shifts out of range, nan in max/min, signed
zeros and subnormals in nextafter). One jitted function per dtype and operand shape applies
every primitive defined for the dtype, to keep the number of compiled programs small."""

import itertools

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_close

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax


@pytest.fixture(autouse=True)
def x64(enable_x64):
    yield


COMPARISONS = {"eq": lax.eq, "ne": lax.ne, "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge}
ARITHMETIC = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem}
MAX_MIN = {"max": lax.max, "min": lax.min}
BITWISE = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor}
SHIFTS = {
    "shift_left": lax.shift_left,
    "shift_right_logical": lax.shift_right_logical,
    "shift_right_arithmetic": lax.shift_right_arithmetic,
}
APPROXIMATE = {"pow", "pow_int", "atan2"}  # transcendental: XLA's and NumPy's differ in ulps

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
COMPLEX_DTYPES = [np.complex64, np.complex128]


def _apply_all(ops):
    """A function of (x, y) returning {name: op(x, y)}."""

    def fn(x, y):
        return {name: op(x, y) for name, op in ops.items()}

    return fn


def _check(fn, *args, rtol=None, approximate=APPROXIMATE):
    """`jit(fn)(*args)` equals `fn(*args)` entry by entry: same dtypes and shapes, equal values
    (nan where nan), approximately for the transcendental entries."""
    expected = fn(*args)
    actual = jax.jit(fn)(*args)
    assert actual.keys() == expected.keys()
    for name in expected:
        want = np.asarray(expected[name])
        tol = rtol if name in approximate else 0
        assert_close(actual[name], want, tol, atol=0, dtype=want.dtype, err_msg=name)


def _shapes(*operands):
    """The operand tuples each dtype is tested with: equal shapes (2, 6); the last operand of
    rank 0, then the first (lax broadcasts those implicitly); size-1 dimensions; all rank 0."""
    first, *rest = operands
    last = operands[-1]
    return [
        operands,
        (*operands[:-1], last[0, 0]),
        (first[0, 0], *rest),
        (first[:, :1], *rest),
        tuple(a[0, 0] for a in operands),
    ]


# --- integers ---------------------------------------------------------------------------------


def _int_operands(dtype):
    info = np.iinfo(dtype)
    signed = info.min < 0
    x = [info.min, info.max, 7, -7 if signed else 9, 0, 5, info.min, 3, 100, info.max, 1, 2]
    y = [-1 if signed else 1, 0, 2, 3, 0, -2 if signed else 200, 0, 1, -7 if signed else 7]
    y += [info.max, info.min, 5]
    return np.array(x, dtype).reshape(2, 6), np.array(y, dtype).reshape(2, 6)


def _shift_amounts(dtype):
    bits = np.iinfo(dtype).bits
    signed = np.iinfo(dtype).min < 0
    amounts = [0, 1, bits - 1, bits, bits + 1, -1 if signed else np.iinfo(dtype).max]
    amounts += [3, 2 * bits, -bits if signed else bits + 3, 5, bits // 2, 1]
    return np.array(amounts, dtype).reshape(2, 6)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_ops(dtype):
    x, y = _int_operands(dtype)
    fn = _apply_all({**ARITHMETIC, **MAX_MIN, **BITWISE, **COMPARISONS})
    for a, b in _shapes(x, y):
        _check(fn, a, b)
    shifts = _apply_all(SHIFTS)
    for a, b in _shapes(x, _shift_amounts(dtype))[:3]:
        _check(shifts, a, b)


def test_bool_ops():
    x = np.array([[True, False, True, False], [True, True, False, False]])
    y = np.array([[True, True, False, False], [False, True, False, True]])
    fn = _apply_all({**MAX_MIN, **BITWISE, **COMPARISONS})
    for a, b in _shapes(x, y):
        _check(fn, a, b)


# --- floating point ---------------------------------------------------------------------------

_RTOL = {
    np.dtype(np.float16): 2e-3,
    np.dtype(ml_dtypes.bfloat16): 2e-2,
    np.dtype(np.float32): 2e-6,
    np.dtype(np.float64): 1e-13,
    np.dtype(np.complex64): 2e-6,
    np.dtype(np.complex128): 1e-13,
}


def _float_operands(dtype):
    nan, inf = np.nan, np.inf
    x = [nan, 1.0, -0.0, 0.0, inf, -2.5, 3.0, 1e-3, -inf, 2.0, 0.5, -7.25]
    y = [1.0, nan, 0.0, -0.0, 2.0, 1.5, -3.0, inf, -inf, 0.0, -0.75, 2.0]
    return np.array(x, dtype).reshape(2, 6), np.array(y, dtype).reshape(2, 6)


def _float_extra(x, y, x_abs, n):
    return {
        "pow": lax.pow(x_abs, y),
        "pow_int": lax.pow(x, n),
        "atan2": lax.atan2(x, y),
        "nextafter": lax.nextafter(x, y),
    }


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_float_ops(dtype):
    x, y = _float_operands(dtype)
    for a, b in _shapes(x, y):
        _check(_apply_all({**ARITHMETIC, **MAX_MIN, **COMPARISONS}), a, b)
    n = np.array([0, 1, 2, 3, -1, -2, 5, 3, 2, -3, 4, -1], np.int32).reshape(2, 6)
    for operands in _shapes(x, y, np.abs(x), n):
        _check(_float_extra, *operands, rtol=_RTOL[np.dtype(dtype)])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_nextafter_is_bit_exact(dtype):
    finfo = ml_dtypes.finfo(dtype)
    sub, tiny, big = finfo.smallest_subnormal, finfo.tiny, finfo.max
    x = [0.0, -0.0, sub, -sub, tiny, 1.0, big, -big, 0.0, -0.0, sub, 1.0, -1.0, np.nan, 2.0, 2.0]
    y = [1.0, -1.0, 0.0, 1.0, 0.0, 2.0, np.inf, -np.inf, -0.0, 0.0, sub, -1.0, -2.0, 1.0, np.nan]
    y += [np.inf]
    x, y = np.array(x, dtype), np.array(y, dtype)
    want, got = lax.nextafter(x, y), jax.jit(lax.nextafter)(x, y)
    want, got = np.asarray(want), np.asarray(got)
    uint = np.dtype(f"u{np.dtype(dtype).itemsize}")
    is_nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), is_nan)
    np.testing.assert_array_equal(got[~is_nan].view(uint), want[~is_nan].view(uint))


# --- complex ----------------------------------------------------------------------------------


def _complex_operands(dtype):
    nan = np.nan
    x = [1 + 2j, 0j, -1 - 1j, 3 + 0j, 1j, 2 - 1j, complex(nan, 0), 1 + 1j, complex(0, nan)]
    x += [2 + 3j, 2 + 3j, 1j]
    y = [2 - 1j, 1 + 0j, 0.5 + 0j, 3 + 0j, -1j, 0.25j, 1 + 0j, complex(nan, 1), 2j, 2 + 4j]
    y += [2 + 2j, complex(-0.0, -1)]
    return np.array(x, dtype).reshape(2, 6), np.array(y, dtype).reshape(2, 6)


def _complex_extra(x, y, n):
    return {"pow": lax.pow(x, y), "pow_int": lax.pow(x, n), "atan2": lax.atan2(x, y)}


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_complex_ops(dtype):
    x, y = _complex_operands(dtype)
    ops = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div}
    fn = _apply_all({**ops, **MAX_MIN, "eq": lax.eq, "ne": lax.ne})
    rtol = _RTOL[np.dtype(dtype)]
    for a, b in _shapes(x, y)[:3]:  # XLA divides complex numbers by another formula
        _check(fn, a, b, rtol=rtol, approximate={"div"})
    finite = np.isfinite(x) & np.isfinite(y)  # the transcendental ones on finite operands
    x, y = np.where(finite, x, 1).astype(dtype), np.where(finite, y, 1).astype(dtype)
    n = np.array([0, 1, 2, 3, -1, -2, 5, 3, 2, -3, 4, -1], np.int32).reshape(2, 6)
    for operands in _shapes(x, y, n)[:3]:
        _check(_complex_extra, *operands, rtol=rtol)


# --- an end-to-end program --------------------------------------------------------------------


def _predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def _loss(params, batch):
    inputs, targets = batch
    preds = _predict(params, inputs)
    return jnp.sum((preds - targets) ** 2)


def test_mlp_loss_jit_equals_eager():
    rng = np.random.default_rng(0)
    sizes = [3, 8, 8, 2]
    params = [
        (
            jnp.asarray(rng.normal(size=(m, n)).astype(np.float32)),
            jnp.asarray(rng.normal(size=n).astype(np.float32)),
        )
        for m, n in itertools.pairwise(sizes)
    ]
    batch = (
        jnp.asarray(rng.normal(size=(5, 3)).astype(np.float32)),
        jnp.asarray(rng.normal(size=(5, 2)).astype(np.float32)),
    )
    want = _loss(params, batch)
    got = jax.jit(_loss)(params, batch)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    assert np.asarray(got).dtype == np.asarray(want).dtype
