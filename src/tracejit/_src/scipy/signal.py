"""`tracejit.scipy.signal`: N-dimensional convolution and correlation, computed directly.

JAX lowers these to `conv_general_dilated`; tracejit builds them from a gather and a
contraction instead. The larger operand is padded for the mode, then every window the kernel
sees is gathered with a static index table per dimension (window start + kernel offset), and
the windows are contracted with the flipped kernel:

    out[o] = sum_k padded[o + k] * flip(kernel)[k]

Gradients and batching come from the gather's and the contraction's rules. The windows take
prod(out shape) * prod(kernel shape) elements: fine for the kernels signal processing uses.
`method='fft'` is `fftconvolve` (`signal_fftconvolve`).

`detrend` removes the least-squares line from each segment between breakpoints; with only two
unknowns the fit has a closed form (slope = cov(t, y) / var(t) about the segment's means),
where JAX calls `lstsq`.
"""

import itertools

import numpy as np

from tracejit._src.numpy import manipulation, padding, reductions
from tracejit._src.numpy.advanced_indexing import take
from tracejit._src.numpy.creation import arange, asarray
from tracejit._src.numpy.products import tensordot
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.numpy.ufuncs import conjugate, where
from tracejit._src.scipy.signal_fftconvolve import fftconvolve

_MODES = ("full", "same", "valid")


def _padding(mode, kernel_shape, original_shape):
    """Padding of the larger operand per dimension (JAX's), `original_shape` being in2's."""
    if mode == "valid":
        return [(0, 0)] * len(kernel_shape)
    if mode == "same":
        return [
            (s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
            for s, s_o in zip(kernel_shape, original_shape, strict=True)
        ]
    return [(s - 1, s - 1) for s in kernel_shape]


def _pad_or_crop(x, widths):
    """`x` with zeros added at each side (crop where the width is negative)."""
    x = padding.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths])
    crops = tuple(
        slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, x.shape, strict=True)
    )
    return x[crops]


def _convolve_nd(name, in1, in2, mode, precision):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = to_operands(name, (in1, in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{in1.shape} and {in2.shape}."
        )
    in1, in2 = promote_dtypes_inexact(in1, in2)
    pairs = list(zip(in1.shape, in2.shape, strict=True))
    no_swap = all(s1 >= s2 for s1, s2 in pairs)
    swap = all(s1 <= s2 for s1, s2 in pairs)
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    original_shape = in2.shape
    if swap:
        in1, in2 = in2, in1
    kernel = manipulation.flip(in2)
    padded = _pad_or_crop(in1, _padding(mode, kernel.shape, original_shape))
    windows = padded
    for d, k in enumerate(kernel.shape):
        # Dimension d becomes (out_d, k_d) at positions (2d, 2d + 1).
        out_d = padded.shape[d] - k + 1
        table = (np.arange(out_d)[:, None] + np.arange(k)[None, :]).astype(np.int32)
        windows = take(windows, table, axis=2 * d, mode="clip")
    offsets = tuple(range(1, 2 * kernel.ndim, 2))
    return tensordot(windows, kernel, (offsets, tuple(range(kernel.ndim))), precision=precision)


def _check_method(method):
    if method not in ("direct", "auto", "fft"):
        raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-dimensional convolution of `in1` and `in2` (same rank, one no smaller than the
    other in every dimension); `mode` 'full', 'same' (in1's shape) or 'valid'. `method`
    'fft' multiplies spectra (`fftconvolve`); 'auto' computes directly, as JAX does."""
    _check_method(method)
    if method == "fft":
        return fftconvolve(in1, in2, mode)
    return _convolve_nd("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-dimensional cross-correlation: `convolve` with in2 conjugated and flipped."""
    _check_method(method)
    (in2,) = to_operands("correlate", (in2,))
    flipped = manipulation.flip(conjugate(in2))
    if method == "fft":
        return fftconvolve(in1, flipped, mode)
    return _convolve_nd("correlate", in1, flipped, mode, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """`convolve` of two 2-D arrays (only zero fill at the boundary, as in JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """`correlate` of two 2-D arrays (only zero fill at the boundary, as in JAX), with SciPy's
    `correlate2d` conventions where in1 is the smaller: in1 and in2 trade places and the full
    result is conjugated; 'same' and 'valid' are computed on flipped operands."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = to_operands("correlate2d", (in1, in2))
    pairs = list(zip(in1.shape, in2.shape, strict=True))
    swap = all(s1 <= s2 for s1, s2 in pairs)
    same_shape = all(s1 == s2 for s1, s2 in pairs)
    flip = manipulation.flip
    if swap and (mode == "full" or (mode == "valid" and not same_shape)):
        result = _convolve_nd("correlate2d", flip(in2), conjugate(in1), mode, precision)
        return conjugate(result) if mode == "full" else result
    return flip(_convolve_nd("correlate2d", flip(in1), conjugate(in2), mode, precision))


def _remove_line(segment):
    """`segment` (points along axis 0) minus its least-squares line a + b t."""
    n = segment.shape[0]
    t = arange(1, n + 1, dtype=segment.dtype) / np.asarray(n, segment.dtype)
    t_centred = (t - reductions.mean(t))[:, None]
    y_centred = segment - reductions.mean(segment, axis=0, keepdims=True)
    spread = reductions.sum(t_centred * t_centred)
    covariance = reductions.sum(t_centred * y_centred, axis=0, keepdims=True)
    # One point: no slope (the constant fits it exactly).
    slope = where(spread > 0, covariance / where(spread > 0, spread, 1), 0)
    return y_centred - t_centred * slope


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """`data` minus its mean ('constant') or minus a least-squares line fitted separately
    between the breakpoints `bp` ('linear'), along `axis`."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data_arr,) = promote_dtypes_inexact(asarray(data))
    if type == "constant":
        return data_arr - reductions.mean(data_arr, axis, keepdims=True)
    n = data_arr.shape[axis]
    bp_arr = np.sort(np.unique(np.r_[0, bp, n]))
    if bp_arr[0] < 0 or bp_arr[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    moved = manipulation.moveaxis(data_arr, axis, 0)
    columns = manipulation.reshape(moved, (n, -1))
    segments = [_remove_line(columns[start:stop]) for start, stop in itertools.pairwise(bp_arr)]
    out = manipulation.reshape(manipulation.concatenate(segments, axis=0), moved.shape)
    return manipulation.moveaxis(out, 0, axis)
