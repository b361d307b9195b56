"""`jnp.fft`: NumPy's discrete Fourier transforms over the one `fft` primitive.

Each transform is the primitive over the axes it names, with three steps around it, as JAX
takes them: the input is cropped or zero-padded to the lengths `n`/`s` asked for (a `slice`,
a `pad`), the transformed axes are moved last in the order given (a `transpose`, none when
they already are), and the result is scaled for `norm` ("backward": the inverse transforms
divide by N; "ortho": both by sqrt(N); "forward": the forward ones by N). The primitive takes
1 to 3 axes; more are transformed three at a time, the real transform of `rfftn` first and
that of `irfftn` last (the others are complex, their order is free):

    >>> make_jaxpr(lambda x: jnp.fft.rfft(x, n=6))(jnp.ones(8))
    { lambda ; a:f32[8]. let
        b:f32[6] = slice[limit_indices=(6,) start_indices=(0,) strides=None] a
        c:c64[4] = fft[fft_lengths=(6,) fft_type=2] b
      in (c,) }

`hfft`/`ihfft` are `irfft`/`rfft` of the conjugate spectrum with the norm's direction swapped;
`fftfreq`, `rfftfreq`, `fftshift` and `ifftshift` are small array programs (`iota`, `roll`).
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import conversions as lax_conversions
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.lax.fft import FftType
from tracejit._src.lax.fft import fft as lax_fft
from tracejit._src.numpy import creation, lib
from tracejit._src.numpy.manipulation import normalize_axis
from tracejit._src.numpy.promotion import asarray_operand, check_placement

_FORWARD = (FftType.FFT, FftType.RFFT)
_NORMS = (None, "backward", "ortho", "forward")


def _check_norm(norm) -> None:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _axes_and_lengths(name: str, x, s, axes) -> tuple:
    """The transformed axes (non-negative, in the order given) and their lengths `s`,
    defaulting as NumPy does: all axes, or the last len(s); the lengths of the input."""
    if s is not None:
        s = tuple(operator.index(n) for n in s)
    if axes is None:
        if s is not None and len(s) > x.ndim:
            raise ValueError(
                f"FFT input shape {x.shape} must have at least as many input dimensions as "
                f"fft_lengths {s}."
            )
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = tuple(axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes {axes}.")
    normalized = tuple(normalize_axis(axis, x.ndim) for axis in axes)
    if len(set(normalized)) != len(normalized):  # (JAX's error: its transpose refuses them)
        raise TypeError(f"jax.numpy.fft.{name}: the axes {axes} name an axis twice")
    if s is None:
        return normalized, None
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if any(n < 1 for n in s):
        raise ValueError("Shape should be positive.")
    return normalized, s


def fit_to_lengths(x, axes, lengths):
    """`x` cropped or zero-padded at the end of each of `axes` to `lengths`."""
    limits = list(x.shape)
    for axis, n in zip(axes, lengths, strict=True):
        limits[axis] = min(n, x.shape[axis])
    if tuple(limits) != x.shape:
        x = lax_slicing.slice(x, (0,) * x.ndim, limits)
    config = [(0, 0, 0)] * x.ndim
    for axis, n in zip(axes, lengths, strict=True):
        config[axis] = (0, n - x.shape[axis], 0)
    if any(high for _, high, _ in config):
        x = lax_shapes.pad(x, np.zeros((), x.dtype), config)
    return x


def _fft_trailing(x, fft_type: FftType, lengths: tuple):
    """The primitive over the last len(`lengths`) axes, three at a time (two when a rest of
    one would remain): the last group first, then the others moved behind it."""
    k = len(lengths)
    if k <= 3:
        return lax_fft(x, fft_type, lengths)
    group = min(3, k - 2)
    complex_type = FftType.FFT if fft_type in _FORWARD else FftType.IFFT
    if fft_type != FftType.IRFFT:
        x = lax_fft(x, fft_type, lengths[-group:])
    lead, split, rank = x.ndim - k, x.ndim - group, x.ndim
    swap = (*range(lead), *range(split, rank), *range(lead, split))
    x = lax_shapes.transpose(x, swap)
    x = _fft_trailing(x, complex_type, lengths[:-group])
    x = lax_shapes.transpose(x, tuple(np.argsort(swap)))
    if fft_type == FftType.IRFFT:
        x = lax_fft(x, fft_type, lengths[-group:])
    return x


def _scale(x, fft_type: FftType, norm, size: int):
    forward = fft_type in _FORWARD
    if norm == "ortho":
        factor = 1 / np.sqrt(size) if forward else np.sqrt(size)
    elif norm == "forward":
        factor = 1 / size if forward else size
    else:
        return x
    return lax_binary.mul(x, np.array(factor, x.dtype))


def _fft_core(name: str, fft_type: FftType, a, s, axes, norm):
    _check_norm(norm)
    x = asarray_operand(f"jax.numpy.fft.{name}", a)
    axes, s = _axes_and_lengths(name, x, s, axes)
    if not axes:
        return lax_fft(x, fft_type, ())
    if s is None:
        s = tuple(x.shape[axis] for axis in axes)
        if fft_type == FftType.IRFFT:
            s = (*s[:-1], 2 * (s[-1] - 1))
    stored = s if fft_type != FftType.IRFFT else (*s[:-1], s[-1] // 2 + 1)
    x = fit_to_lengths(x, axes, stored)
    order = (*(d for d in range(x.ndim) if d not in axes), *axes)
    x = _fft_trailing(lax_shapes.transpose(x, order), fft_type, s)
    x = lax_shapes.transpose(x, tuple(np.argsort(order)))
    return _scale(x, fft_type, norm, int(np.prod(s)))


def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional discrete Fourier transform along `axis`, of length `n`."""
    return _fft_core("fft", FftType.FFT, a, _one(n), (axis,), norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse of `fft`."""
    return _fft_core("ifft", FftType.IFFT, a, _one(n), (axis,), norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The `fft` of real input: its n // 2 + 1 non-negative frequencies."""
    return _fft_core("rfft", FftType.RFFT, a, _one(n), (axis,), norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of `rfft`: the real signal of length `n` (default 2 (m - 1) for m
    frequencies) whose Hermitian-symmetric spectrum `a` holds the non-negative half of."""
    return _fft_core("irfft", FftType.IRFFT, a, _one(n), (axis,), norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core("fft2", FftType.FFT, a, s, _two("fft2", axes), norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core("ifft2", FftType.IFFT, a, s, _two("ifft2", axes), norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core("rfft2", FftType.RFFT, a, s, _two("rfft2", axes), norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core("irfft2", FftType.IRFFT, a, s, _two("irfft2", axes), norm)


def fftn(a, s=None, axes=None, norm=None):
    """The N-dimensional transform over `axes` (default: all, or the last len(`s`))."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """`fftn` of real input, the last axis keeping its n // 2 + 1 non-negative frequencies."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of `rfftn` (the last axis of length 2 (m - 1) unless `s` says)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _two(name: str, axes) -> tuple:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes}.")
    return axes


def _one(n):
    return None if n is None else (n,)


_SWAPPED_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a signal with Hermitian symmetry (its non-negative half `a` given):
    real, of length `n` (default 2 (m - 1))."""
    _check_norm(norm)
    x = asarray_operand("jax.numpy.fft.hfft", a)
    if dtypes.is_complex(x.dtype):
        x = lax_elementwise.conj(x)
    return _fft_core("hfft", FftType.IRFFT, x, _one(n), (axis,), _SWAPPED_NORM[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of `hfft`: the non-negative half of a real signal's inverse transform."""
    _check_norm(norm)
    x = asarray_operand("jax.numpy.fft.ihfft", a)
    spectrum = lax_elementwise.conj(_fft_core("ihfft", FftType.RFFT, x, _one(n), (axis,), None))
    size = n if n is not None else x.shape[normalize_axis(axis, x.ndim)]
    return _scale(spectrum, FftType.RFFT, _SWAPPED_NORM[norm], size)


# --- frequencies and shifts -----------------------------------------------------------------


def _frequency_dtype(dtype):
    """(the dtype asked for, the floating-point dtype it is computed in)."""
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(dtype)
    if dtypes.is_float(dtype):
        return dtype, dtype
    if dtypes.is_complex(dtype):
        return dtype, np.dtype(np.float64 if dtype.itemsize == 16 else np.float32)
    return dtype, np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _spacing(n, d, compute):
    """d · n as a scalar (or array, when d is one) of the `compute` dtype."""
    d = lax_conversions.convert_element_type(asarray_operand("fftfreq", d), compute)
    return lax_binary.mul(d, np.array(n, compute))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of an `fft` of length `n` with sample spacing `d`: 0, 1, ..., then the
    negative ones, over d · n."""
    check_placement("fft.fftfreq", device=device)
    dtype, compute = _frequency_dtype(dtype)
    k = creation.arange(n, dtype=compute)
    half = np.array(np.asarray(n) // 2, compute)
    shifted = lax_binary.rem(lax_binary.add(k, half), np.array(n, compute))
    freqs = _divide(lax_binary.sub(shifted, half), _spacing(n, d, compute))
    return lax_conversions.convert_element_type(freqs, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The non-negative frequencies of an `rfft` of length `n`: 0, ..., n // 2, over d · n
    (as in JAX, d · n is first rounded to an integer `dtype`, and the result is floating)."""
    check_placement("fft.rfftfreq", device=device)
    dtype, compute = _frequency_dtype(dtype)
    result = dtype if dtypes.is_inexact(dtype) else compute
    k = creation.arange(np.asarray(n) // 2 + 1, dtype=result)
    spacing = lax_conversions.convert_element_type(_spacing(n, d, compute), dtype)
    return _divide(k, lax_conversions.convert_element_type(spacing, result))


def _divide(numerator, denominator):
    """numerator / denominator, broadcasting an array `d` against the frequencies."""
    try:
        shape = np.broadcast_shapes(numerator.shape, denominator.shape)
    except ValueError:
        raise TypeError(
            f"fftfreq: d of shape {denominator.shape} does not broadcast against the "
            f"{numerator.shape[0]} frequencies"
        ) from None
    numerator = lax_shapes.broadcast_in_dim(
        numerator, shape, (len(shape) - 1,) if numerator.ndim else ()
    )
    denominator = lax_shapes.broadcast_in_dim(
        denominator, shape, tuple(range(len(shape) - denominator.ndim, len(shape)))
    )
    return lax_binary.div(numerator, denominator)


def _shift(name: str, x, axes, sign: int):
    x = asarray_operand(name, x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(normalize_axis(axis, x.ndim) for axis in axes)
    if not axes:
        return x
    shifts = tuple(sign * (x.shape[axis] // 2) for axis in axes)
    return lib.roll(x, shifts, axes)


def fftshift(x, axes=None):
    """`x` rolled by half its length along `axes` (default: all), the zero frequency moved to
    the centre."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of `fftshift`."""
    return _shift("ifftshift", x, axes, -1)
