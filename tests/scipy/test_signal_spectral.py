"""`tracejit.scipy.signal`'s Fourier-based functions against SciPy in float64/complex128:
`fftconvolve` (every mode, axes, complex, swapped operands) and `convolve`/`correlate` by FFT;
`stft`, `istft`, `welch` and `csd` over windows, overlaps, FFT lengths, detrending, scaling,
averaging, boundaries and axes; JAX's whole-signal segment when `nperseg` is not given; JAX's
dtypes in single precision, jit, vmap, derivatives and errors."""

import warnings

import numpy as np
import pytest
import scipy.signal
from helpers import assert_close, check_vmap

import tracejit as jax
import tracejit.scipy.signal as jsp_signal
from tracejit.test_util import check_grads

RNG = np.random.default_rng(3)
A = RNG.normal(size=(7, 9))
B = RNG.normal(size=(3, 4))
SIGNAL = RNG.normal(size=(2, 300))
OTHER = RNG.normal(size=(2, 300))


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (SciPy's warnings on short signals)
        yield


def _assert_all_close(got, want, tol=1e-10):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, tol, atol=tol * max(1.0, np.abs(w).max(initial=0)), dtype=w.dtype)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_fftconvolve_matches_scipy(mode, swap, complex_):
    a, b = (B, A) if swap else (A, B)
    if complex_:
        a = a + 1j * a[::-1]
    want = scipy.signal.fftconvolve(a, b, mode)
    assert_close(jsp_signal.fftconvolve(a, b, mode), want, 1e-12, atol=1e-12, dtype=want.dtype)


def test_fftconvolve_along_axes_maps_the_others():
    b = RNG.normal(size=(7, 4))
    for mode in ("full", "same", "valid"):
        want = scipy.signal.fftconvolve(A, b, mode, axes=1)
        assert_close(jsp_signal.fftconvolve(A, b, mode, axes=[1]), want, 1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_by_fft(mode):
    for name in ("convolve", "correlate"):
        want = getattr(scipy.signal, name)(A, B, mode, method="fft")
        got = getattr(jsp_signal, name)(A, B, mode, method="fft")
        assert_close(got, want, 1e-12, atol=1e-12)


def test_fftconvolve_single_precision_jit_vmap_and_derivatives():
    a, b = A.astype(np.float32), B.astype(np.float32)
    with jax.enable_x64(False):
        out = jsp_signal.fftconvolve(a, b, "same")
        assert_close(out, scipy.signal.fftconvolve(A, B, "same"), 1e-5, dtype=np.float32)
        assert_close(jsp_signal.fftconvolve(np.arange(5), np.arange(3)), np.convolve(
            np.arange(5), np.arange(3)), 1e-5, dtype=np.float32)  # fmt: skip
    fun = lambda u, v: jsp_signal.fftconvolve(u, v, "valid")
    assert_close(jax.jit(fun)(A, B), fun(A, B), 1e-12)
    check_vmap(fun, [np.stack([A, A[::-1]]), B], (0, None), tol=1e-12)
    check_grads(fun, (A, B), order=2)


SEGMENTS = [
    {"nperseg": 64},
    {"nperseg": 64, "noverlap": 16},
    {"nperseg": 64, "nfft": 100},
    {"nperseg": 65},
    {"nperseg": 50, "window": "hamming"},
    {"nperseg": 50, "window": ("tukey", 0.3)},
    {"nperseg": 40, "window": np.hanning(40)},
    {"nperseg": 64, "return_onesided": False},
    {"nperseg": 64, "fs": 10.0},
    {"nperseg": 500},
]


@pytest.mark.parametrize("kwargs", SEGMENTS, ids=str)
def test_stft_matches_scipy(kwargs):
    _assert_all_close(jsp_signal.stft(SIGNAL, **kwargs), scipy.signal.stft(SIGNAL, **kwargs))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"boundary": None},
        {"padded": False},
        {"boundary": "even"},
        {"boundary": "odd"},
        {"boundary": "constant", "padded": False},
        {"detrend": "linear"},
        {"axis": 0},
    ],
    ids=str,
)
def test_stft_options_match_scipy(kwargs):
    x = SIGNAL.T if kwargs.get("axis") == 0 else SIGNAL
    want = scipy.signal.stft(x, nperseg=64, **kwargs)
    _assert_all_close(jsp_signal.stft(x, nperseg=64, **kwargs), want)


@pytest.mark.parametrize("kwargs", SEGMENTS, ids=str)
@pytest.mark.parametrize(
    "extra",
    [{}, {"detrend": "linear"}, {"detrend": False}, {"scaling": "spectrum"}, {"average": "median"}],
    ids=str,
)
def test_welch_and_csd_match_scipy(kwargs, extra):
    options = {**kwargs, **extra}
    _assert_all_close(jsp_signal.welch(SIGNAL, **options), scipy.signal.welch(SIGNAL, **options))
    want = scipy.signal.csd(SIGNAL, OTHER, **options)
    _assert_all_close(jsp_signal.csd(SIGNAL, OTHER, **options), want)


def test_csd_of_complex_broadcast_and_unequal_signals():
    z = SIGNAL + 1j * OTHER
    options = {"nperseg": 64}
    _assert_all_close(jsp_signal.csd(z, OTHER, **options), scipy.signal.csd(z, OTHER, **options))
    _assert_all_close(jsp_signal.welch(z, **options), scipy.signal.welch(z, **options))
    for other in (OTHER[:, :200], OTHER[:1]):
        want = scipy.signal.csd(SIGNAL, other, **options)
        _assert_all_close(jsp_signal.csd(SIGNAL, other, **options), want)
    _assert_all_close(
        jsp_signal.csd(SIGNAL, None, **options), scipy.signal.welch(SIGNAL, **options)
    )
    x = SIGNAL.T
    want = scipy.signal.csd(x, OTHER.T, axis=0, **options)
    _assert_all_close(jsp_signal.csd(x, OTHER.T, axis=0, **options), want)


@pytest.mark.parametrize("length", [100, 256, 300])
def test_welch_without_nperseg_takes_the_whole_signal_as_jax(length):
    x = SIGNAL[:, :length]
    want = scipy.signal.welch(x, nperseg=length)
    _assert_all_close(jsp_signal.welch(x), want)
    _assert_all_close(jsp_signal.csd(x, x[::-1]), scipy.signal.csd(x, x[::-1], nperseg=length))


def test_welch_warns_of_a_signal_shorter_than_256():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jsp_signal.welch(SIGNAL[:, :100])
    assert any("nperseg = 100" in str(w.message) for w in caught)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nperseg": 64},
        {"nperseg": 64, "noverlap": 48},
        {"nperseg": 64, "window": "hamming"},
        {"nperseg": 64, "nfft": 80},
        {"nperseg": 65},
    ],
    ids=str,
)
def test_istft_matches_scipy_and_inverts_stft(kwargs):
    _, _, spectrum = scipy.signal.stft(SIGNAL, **kwargs)
    got = jsp_signal.istft(spectrum, **kwargs)
    _assert_all_close(got, scipy.signal.istft(spectrum, **kwargs))
    assert_close(got[1][:, :300], SIGNAL, 1e-10, atol=1e-10)


def test_istft_of_two_sided_spectra_other_axes_and_no_boundary():
    z = SIGNAL + 1j * OTHER
    _, _, spectrum = scipy.signal.stft(z, nperseg=64, return_onesided=False)
    options = {"nperseg": 64, "input_onesided": False}
    _assert_all_close(
        jsp_signal.istft(spectrum, **options), scipy.signal.istft(spectrum, **options)
    )
    _, _, spectrum = scipy.signal.stft(SIGNAL, nperseg=64, boundary=None)
    want = scipy.signal.istft(spectrum, nperseg=64, boundary=None)
    _assert_all_close(jsp_signal.istft(spectrum, nperseg=64, boundary=None), want, 1e-8)
    moved = np.moveaxis(scipy.signal.stft(SIGNAL, nperseg=64)[2], 0, -1)  # (freq, time, batch)
    options = {"nperseg": 64, "time_axis": 1, "freq_axis": 0}
    _assert_all_close(jsp_signal.istft(moved, **options), scipy.signal.istft(moved, **options))


def test_single_precision_dtypes_jit_vmap_and_derivatives():
    x = SIGNAL.astype(np.float32)
    with jax.enable_x64(False):
        freqs, times, spectrum = jsp_signal.stft(x, nperseg=64)
        assert (freqs.dtype, times.dtype, spectrum.dtype) == (np.float32, np.float32, np.complex64)
        times, back = jsp_signal.istft(spectrum, nperseg=64)
        assert (times.dtype, back.dtype) == (np.float32, np.float32)
        assert jsp_signal.welch(x, nperseg=64)[1].dtype == np.float32
        assert jsp_signal.welch(np.arange(100), nperseg=16)[1].dtype == np.float32
    welch = lambda v: jsp_signal.welch(v, nperseg=32, average="median")[1]
    assert_close(jax.jit(welch)(SIGNAL), welch(SIGNAL), 1e-12)
    check_vmap(welch, [SIGNAL], (0,), tol=1e-12)
    check_grads(lambda v: jsp_signal.welch(v, nperseg=32)[1], (SIGNAL[:, :100],), order=2)
    check_grads(lambda v: jsp_signal.stft(v, nperseg=32)[2], (SIGNAL[:, :100],), order=1)
    spectrum = np.asarray(jsp_signal.stft(SIGNAL[:, :100], nperseg=32)[2])
    check_grads(lambda s: jsp_signal.istft(s, nperseg=32)[1], (spectrum,), order=1)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: jsp_signal.fftconvolve(A, B, "bad"), "mode must be one of"),
        (lambda: jsp_signal.fftconvolve(A, B[0]), "same dimensionality"),
        (lambda: jsp_signal.fftconvolve(A, B, axes=1), "mapped axes must have same shape"),
        (lambda: jsp_signal.fftconvolve(np.ones((5, 2)), np.ones((2, 5)), "valid"), "at least"),
        (lambda: jsp_signal.stft(SIGNAL, nperseg=64, noverlap=64), "noverlap must be less"),
        (lambda: jsp_signal.stft(SIGNAL, nperseg=64, nfft=32), "nfft must be greater"),
        (lambda: jsp_signal.stft(SIGNAL, boundary="bad"), "Unknown boundary option 'bad'"),
        (lambda: jsp_signal.stft(SIGNAL, detrend=True), "Unsupported detrend type: True"),
        (lambda: jsp_signal.stft(SIGNAL, nperseg=0), "nperseg must be a positive integer"),
        (lambda: jsp_signal.stft(SIGNAL, nperseg=64, window=np.ones(10)), "different from"),
        (lambda: jsp_signal.welch(SIGNAL, scaling="bad"), "Unknown scaling: bad"),
        (lambda: jsp_signal.welch(SIGNAL, average="bad"), 'must be "median" or "mean"'),
        (lambda: jsp_signal.welch(SIGNAL, detrend="bad"), "Trend type must be"),
        (lambda: jsp_signal.istft(np.ones((33, 5)), nperseg=64, nfft=32), "FFT length"),
        (lambda: jsp_signal.istft(np.ones((33, 5)), time_axis=0, freq_axis=0), "differing"),
        (lambda: jsp_signal.istft(np.ones(5)), "at least 2d"),
    ],
)
def test_bad_input_raises_jax_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
