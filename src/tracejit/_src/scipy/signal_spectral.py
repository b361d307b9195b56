"""`tracejit.scipy.signal`'s spectral estimators: `stft`, `istft`, `welch` and `csd`, over
`jnp.fft`, with SciPy's conventions (which JAX follows).

The spectral estimators cut the signal (its last axis, once `axis` is moved there) into
segments of `nperseg` samples every `nperseg - noverlap`, taken with one gather by a static
index table; each segment is detrended, multiplied by the window (SciPy's `get_window`, a
constant) and transformed (`rfft` for real input, else `fft`, of length `nfft`). `stft`
returns the scaled transforms; `csd` averages conj(X)·Y over the segments (mean, or the
median divided by its bias), doubling the one-sided spectrum's inner frequencies, and
`welch` is `csd` of x with itself. `istft` inverts `stft` by overlap-add: each segment's
inverse transform, windowed, is added into place (a `scatter-add`) and the sum divided by
the summed squared windows. As in JAX, `welch` and `csd` without `nperseg` take the whole
signal as one segment.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import fft as jnp_fft
from tracejit._src.numpy import manipulation, padding, reductions, statistics, ufuncs
from tracejit._src.numpy.advanced_indexing import take
from tracejit._src.numpy.creation import asarray, zeros
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.scipy.signal import detrend as detrend_along

_BOUNDARIES = ["even", "odd", "constant", "zeros", None]


# --- segments, windows, detrending ----------------------------------------------------------


def _window(window, nperseg, input_length: int, dtype):
    """(the window as a constant of `dtype`, nperseg): a named window (SciPy's periodic
    `get_window`) of `nperseg` samples (default 256, at most the input's length), or the
    array given, whose length `nperseg` must match."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = 256
        if nperseg > input_length:
            warnings.warn(
                f"nperseg={nperseg} is greater than {input_length=}, using nperseg={input_length}",
                stacklevel=4,
            )
            nperseg = input_length
        import scipy.signal

        return scipy.signal.get_window(window, nperseg).astype(dtype), nperseg
    win = np.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.shape[0]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win.astype(dtype), win.shape[0]


def _extend(x, n: int, boundary):
    """`x` extended by `n` samples at both ends of its last axis: zeros, its mirror image
    ('even'), its point reflection ('odd') or its end values repeated ('constant')."""
    if boundary == "zeros":
        return padding.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    first, last = x[..., :1], x[..., -1:]
    head, tail = x[..., n:0:-1], x[..., -2 : -(n + 2) : -1]
    if boundary == "odd":
        head, tail = 2 * first - head, 2 * last - tail
    elif boundary == "constant":
        head = manipulation.broadcast_to(first, (*x.shape[:-1], n))
        tail = manipulation.broadcast_to(last, (*x.shape[:-1], n))
    return manipulation.concatenate([head, x, tail], axis=-1)


def _segments(x, nperseg: int, nstep: int):
    """The segments of x's last axis, (..., segment, sample), by one gather."""
    count = (x.shape[-1] - nperseg) // nstep + 1
    table = np.arange(count)[:, None] * nstep + np.arange(nperseg)[None, :]
    return take(x, table, axis=-1)


def _detrend_function(detrend):
    if detrend is False or detrend is None:
        return lambda segments: segments
    if callable(detrend):
        return detrend
    if isinstance(detrend, str):
        return lambda segments: detrend_along(segments, axis=-1, type=detrend)
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _positive(name: str, value) -> int:
    value = operator.index(value)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer")
    return value


def _overlap_and_length(nperseg: int, noverlap, nfft) -> tuple:
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    if nfft is None:
        return noverlap, nperseg
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    return noverlap, operator.index(nfft)


# --- the spectral helper --------------------------------------------------------------------


def _aligned(x, y, axis):
    """x and y with `axis` last, their other axes broadcast together, the shorter one
    zero-padded to the longer along it."""
    x, y = manipulation.moveaxis(x, axis, -1), manipulation.moveaxis(y, axis, -1)
    outer = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    n = max(x.shape[-1], y.shape[-1])
    x = manipulation.broadcast_to(x, (*outer, x.shape[-1]))
    y = manipulation.broadcast_to(y, (*outer, y.shape[-1]))
    return jnp_fft.fit_to_lengths(x, (x.ndim - 1,), (n,)), jnp_fft.fit_to_lengths(
        y, (y.ndim - 1,), (n,)
    )


def _transforms(x, win, nperseg, noverlap, nfft, detrend, onesided):
    """Each segment's detrended, windowed transform: (..., segment, frequency)."""
    segments = _detrend_function(detrend)(_segments(x, nperseg, nperseg - noverlap))
    windowed = segments * win
    return jnp_fft.rfft(windowed, nfft) if onesided else jnp_fft.fft(windowed, nfft)


def _scale_and_frequencies(win, fs, scaling, mode, nfft: int, onesided: bool) -> tuple:
    """The scale of the transforms (of their products for 'psd': a density, or a power
    spectrum) and the frequencies, of the window's dtype."""
    if scaling == "density":
        scale = 1.0 / (fs * float(np.sum(win.astype(np.float64) ** 2)))
    else:
        scale = 1.0 / float(np.sum(win.astype(np.float64))) ** 2
    if mode == "stft":
        scale = scale**0.5
    frequencies = jnp_fft.rfftfreq if onesided else jnp_fft.fftfreq
    return scale, frequencies(nfft, 1 / fs, dtype=win.dtype)


def _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling, axis, mode, boundary=None, padded=False):  # fmt: skip
    """(frequencies, segment times, result with the frequencies at `axis` and the segments
    last): the scaled transforms (`mode` 'stft') or their cross spectra ('psd')."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {_BOUNDARIES}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"Unknown scaling: {scaling}")
    same = y is None
    x, y = (x, x) if same else (x, y)
    x, y = promote_dtypes_inexact(x, y)
    axis = manipulation.normalize_axis(axis, x.ndim)
    x, y = (manipulation.moveaxis(x, axis, -1),) * 2 if same else _aligned(x, y, axis)
    real = np.dtype(dtypes.finfo(x.dtype).dtype)
    if x.size == 0 or y.size == 0:
        return (zeros(x.shape, real),) * 3
    if nperseg is not None:
        nperseg = _positive("nperseg", nperseg)
    win, nperseg = _window(window, nperseg, x.shape[-1], real)
    noverlap, nfft = _overlap_and_length(nperseg, noverlap, nfft)
    nstep = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        y = x if same else _extend(y, nperseg // 2, boundary)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = jnp_fft.fit_to_lengths(x, (x.ndim - 1,), (x.shape[-1] + extra,))
        y = x if same else jnp_fft.fit_to_lengths(y, (y.ndim - 1,), (y.shape[-1] + extra,))
    onesided = return_onesided and not dtypes.is_complex(x.dtype)  # (x, y promoted alike)
    scale, freqs = _scale_and_frequencies(win, fs, scaling, mode, nfft, onesided)
    result = _transforms(x, win, nperseg, noverlap, nfft, detrend, onesided)
    if mode == "psd":
        y_result = result if same else _transforms(y, win, nperseg, noverlap, nfft, detrend,
                                                   onesided)  # fmt: skip
        result = ufuncs.conjugate(result) * y_result
    result = result * scale
    if onesided and mode == "psd":  # each inner frequency stands for itself and its mirror
        doubled = np.full(result.shape[-1], 2.0, real)
        doubled[0] = doubled[-1 if nfft % 2 == 0 else 0] = 1.0
        result = result * doubled
    starts = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep).astype(real)
    time = asarray(starts) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    if same and mode != "stft":
        result = ufuncs.real(result)
    result = manipulation.moveaxis(result, -1, axis)
    return freqs, time, result


# --- the estimators -------------------------------------------------------------------------


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):  # fmt: skip
    """The short-time Fourier transform of `x` along `axis`: (frequencies, segment times,
    transforms with the frequencies at `axis` and the segments last)."""
    (x,) = to_operands("stft", (x,))
    return _spectral_helper(
        x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum",
        axis, "stft", boundary, padded,
    )  # fmt: skip


def _median_bias(n: int) -> float:
    """The expected median of n exponential variables over their mean (SciPy's correction)."""
    even = 2 * np.arange(1.0, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (even + 1) - 1.0 / even)


def _average(spectra, average: str):
    """`spectra` averaged over its last axis (the segments)."""
    if spectra.shape[-1] == 1:
        return spectra[..., 0]
    if average == "mean":
        return reductions.mean(spectra, axis=-1)
    bias = _median_bias(spectra.shape[-1])
    if dtypes.is_complex(spectra.dtype):
        real = statistics.median(ufuncs.real(spectra), axis=-1)
        median = real + 1j * statistics.median(ufuncs.imag(spectra), axis=-1)
    else:
        median = statistics.median(spectra, axis=-1)
    return median / bias


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):  # fmt: skip
    """The cross power spectral density of `x` and `y` (None: `x` itself) by Welch's method:
    (frequencies, the segments' cross spectra averaged)."""
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    operands = to_operands("csd", (x,) if y is None else (x, y))
    x, y = operands[0], (None if y is None else operands[1])
    if nperseg is None and isinstance(window, (str, tuple)):
        nperseg = max(np.shape(x)[axis], 0 if y is None else np.shape(y)[axis])
        if nperseg < 256:
            warnings.warn(
                f"nperseg=256 is greater than signal length max(len(x), len(y)) = {nperseg}, "
                f"using nperseg = {nperseg}",
                stacklevel=2,
            )
    freqs, _, spectra = _spectral_helper(
        x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        "psd",
    )  # fmt: skip
    if spectra.ndim >= 2 and spectra.size > 0:
        spectra = _average(spectra, average)
    return freqs, spectra


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):  # fmt: skip
    """The power spectral density of `x` by Welch's method: (frequencies, the segments'
    periodograms averaged)."""
    freqs, spectra = csd(
        x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        average,
    )  # fmt: skip
    return freqs, ufuncs.real(spectra)


def _istft_lengths(shape, freq_axis, time_axis, nperseg, noverlap, nfft, onesided) -> tuple:
    """(nperseg, noverlap, nfft) for `istft`, defaulting from the number of frequencies."""
    default = 2 * (shape[freq_axis] - 1) if onesided else shape[freq_axis]
    nperseg = default if nperseg is None else _positive("nperseg", nperseg)
    if nfft is None:
        nfft = nperseg if onesided and nperseg == default + 1 else default
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return nperseg, noverlap, operator.index(nfft)


def _istft_window(window, nperseg: int, dtype):
    if isinstance(window, (str, tuple)):
        import scipy.signal

        return scipy.signal.get_window(window, nperseg).astype(dtype)
    win = np.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win.astype(dtype)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):  # fmt: skip
    """The inverse of `stft` by overlap-add: (sample times, signal along `time_axis`)."""
    (Zxx,) = to_operands("istft", (Zxx,))
    (Zxx,) = promote_dtypes_inexact(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = manipulation.normalize_axis(freq_axis, Zxx.ndim)
    time_axis = manipulation.normalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    segments = Zxx.shape[time_axis]
    nperseg, noverlap, nfft = _istft_lengths(
        Zxx.shape, freq_axis, time_axis, nperseg, noverlap, nfft, input_onesided
    )
    nstep = nperseg - noverlap
    outer = [d for d in range(Zxx.ndim) if d not in (freq_axis, time_axis)]
    Zxx = manipulation.transpose(Zxx, (*outer, time_axis, freq_axis))
    inverse = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    pieces = inverse(Zxx, nfft, axis=-1)[..., :nperseg]  # (..., segment, sample)
    win = _istft_window(window, nperseg, np.dtype(dtypes.finfo(pieces.dtype).dtype))
    pieces = pieces * (win.sum() * win)
    length = nperseg + (segments - 1) * nstep
    table = np.arange(segments)[:, None] * nstep + np.arange(nperseg)[None, :]
    x = zeros((*pieces.shape[:-2], length), pieces.dtype).at[..., table].add(pieces)
    norm = np.zeros(length)
    np.add.at(norm, table, np.broadcast_to(win.astype(np.float64) ** 2, table.shape))
    if boundary:
        x, norm = x[..., nperseg // 2 : -(nperseg // 2)], norm[nperseg // 2 : -(nperseg // 2)]
    if np.sum(norm > 1e-10) != len(norm):
        warnings.warn("NOLA condition failed, STFT may not be invertible.", stacklevel=2)
    x = x / np.where(norm > 1e-10, norm, 1.0).astype(win.dtype)
    if x.ndim > 1 and time_axis != len(outer) + 1:
        x = manipulation.moveaxis(x, -1, time_axis - (freq_axis < time_axis))
    time = asarray(np.arange(x.shape[0]).astype(win.dtype)) / fs
    return time, x
