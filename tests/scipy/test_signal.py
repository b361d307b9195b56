"""scipy.signal's direct convolutions (every mode, 1-D to 3-D, either operand the larger,
complex operands) and detrend against SciPy, under jit and vmap, their gradients, and JAX's
errors."""

import numpy as np
import pytest
import scipy.signal as ss
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy import signal
from tracejit.test_util import check_grads

SHAPES = [((9,), (4,)), ((4,), (9,)), ((5,), (5,)), ((6, 7), (3, 2)), ((3, 2), (6, 7)),
          ((4, 5, 3), (2, 3, 2))]  # fmt: skip
MODES = ["full", "same", "valid"]


def _operands(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    out = [rng.normal(size=s) for s in shapes]
    if np.dtype(dtype).kind == "c":
        out = [x + 1j * rng.normal(size=x.shape) for x in out]
    return [x.astype(dtype) for x in out]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_against_scipy(name, mode, shapes):
    a, b = _operands(shapes, np.complex64)
    got = getattr(signal, name)(a, b, mode)
    assert got.dtype == np.complex64
    assert_close(got, getattr(ss, name)(a.astype(complex), b.astype(complex), mode), 2e-5)
    direct = getattr(signal, name)(a.real, b.real, mode, method="direct")
    assert_close(direct, getattr(ss, name)(a.real, b.real, mode), 2e-5, dtype=np.float32)


@pytest.mark.parametrize("shapes", [s for s in SHAPES if len(s[0]) == 2] + [((4, 4), (4, 4))])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_against_scipy(name, mode, shapes):
    a, b = _operands(shapes, np.complex64, seed=1)
    want = getattr(ss, name)(a.astype(complex), b.astype(complex), mode)
    assert_close(getattr(signal, name)(a, b, mode), want, 2e-5)


def test_jit_vmap_and_grads():
    a, b = _operands(((3, 8), (3,)), np.float32, seed=2)
    assert_close(tracejit.jit(signal.convolve)(a[0], b), signal.convolve(a[0], b), 1e-6)
    check_vmap(lambda x, k: signal.correlate(x, k, "same"), (a, b), (0, None), tol=1e-5)
    check_vmap(signal.convolve2d, _operands(((2, 4, 5), (2, 2, 3)), np.float32), (0, 0), tol=1e-5)
    x, k = _operands(((6, 5), (2, 3)), np.float64, seed=3)
    check_grads(lambda x, k: signal.correlate2d(x, k, "same"), (x, k), order=2)


@pytest.mark.parametrize(
    "options", [{}, {"type": "constant"}, {"bp": [5, 12]}, {"axis": 0}, {"axis": 0, "bp": [1, 3]}]
)
def test_detrend_against_scipy(options, enable_x64):
    x = np.random.default_rng(4).normal(size=(4, 20)).cumsum(axis=1)
    assert_close(signal.detrend(x, **options), ss.detrend(x, **options), 1e-10, atol=1e-12)


def test_detrend_jit_vmap_grads():
    x = np.random.default_rng(5).normal(size=(3, 10)).astype(np.float32)
    assert_close(tracejit.jit(signal.detrend)(x), signal.detrend(x), 1e-6)
    check_vmap(lambda row: signal.detrend(row, bp=[4]), (x,), (0,), tol=1e-5, atol=1e-6)
    check_grads(lambda x: signal.detrend(x, bp=[3]), (x.astype(np.float64),), order=2)


def test_bad_arguments_raise_jax_errors():
    x = np.ones(3)
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(x, x, mode="bad")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        signal.correlate(x, x, method="bad")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(x, np.ones((2, 2)))
    with pytest.raises(ValueError, match="zero-size arrays"):
        signal.convolve(x, np.ones(0))
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        signal.convolve(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        signal.convolve2d(x, x)
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        signal.correlate2d(np.ones((2, 2)), np.ones((2, 2)), fillvalue=1)
    with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        signal.detrend(x, bp=[5])
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        signal.detrend(x, overwrite_data=True)
