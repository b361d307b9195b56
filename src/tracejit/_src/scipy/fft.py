"""`tracejit.scipy.fft`: the discrete cosine transform (type 2) and its inverse, over `jnp.fft`.

As in JAX, only DCT-II is built (`type` other than 2 raises NotImplementedError), with
`norm` None/"backward" or "ortho". Each is one FFT of length N (Makhoul's reordering): the
even-indexed samples followed by the odd-indexed ones reversed, v, give

    y[k] = 2 Re(exp(-iπk / 2N) · FFT(v)[k])

and the inverse undoes it: the spectrum is rebuilt from y[k] and y[N - k] (v is real, so its
FFT is Hermitian), an inverse FFT gives v, and the samples are put back in order. Complex
input is transformed in its real and imaginary parts, as SciPy does. The N-dimensional forms
transform one axis after another.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import fft as jnp_fft
from tracejit._src.numpy import manipulation, ufuncs
from tracejit._src.numpy.creation import zeros_like
from tracejit._src.numpy.promotion import asarray_operand, promote_dtypes_inexact

_NORMS = (None, "backward", "ortho")


def _check(name: str, type, norm) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm not in _NORMS:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _ortho_scale(n: int, dtype):
    """DCT-II's orthonormal scaling of each frequency: 1/sqrt(4N) for k = 0, 1/sqrt(2N)."""
    scale = np.full(n, 1 / np.sqrt(2 * n))
    scale[0] = 1 / np.sqrt(4 * n)
    return scale.astype(dtype)


def _twiddle(n: int, sign: float, dtype):
    return np.exp(sign * 1j * np.pi * np.arange(n) / (2 * n)).astype(dtype)


def _dct_last(x, norm):
    """DCT-II of real `x` along its last axis."""
    n = x.shape[-1]
    v = manipulation.concatenate([x[..., ::2], manipulation.flip(x[..., 1::2], -1)], axis=-1)
    spectrum = jnp_fft.fft(v)
    y = 2 * ufuncs.real(spectrum * _twiddle(n, -1.0, spectrum.dtype))
    return y * _ortho_scale(n, y.dtype) if norm == "ortho" else y


def _idct_last(y, norm):
    """The inverse of `_dct_last` along the last axis of real `y`."""
    n = y.shape[-1]
    if norm == "ortho":
        y = y / _ortho_scale(n, y.dtype)
    mirrored = manipulation.concatenate(
        [zeros_like(y[..., :1]), manipulation.flip(y[..., 1:], -1)], axis=-1
    )
    complex_dtype = jnp_fft.fft(y[..., :1]).dtype
    spectrum = (y - 1j * mirrored).astype(complex_dtype) * _twiddle(n, 1.0, complex_dtype) / 2
    v = ufuncs.real(jnp_fft.ifft(spectrum))
    half = (n + 1) // 2
    evens, odds = v[..., :half], manipulation.flip(v[..., half:], -1)
    if n % 2:
        odds = manipulation.concatenate([odds, zeros_like(v[..., :1])], axis=-1)
    interleaved = manipulation.stack([evens, odds], axis=-1)
    return manipulation.reshape(interleaved, (*y.shape[:-1], 2 * half))[..., :n]


def _along(transform, x, n, axis, norm):
    """`transform` of `x` along `axis`, after cropping or zero-padding it to `n`; complex
    `x` in its real and imaginary parts."""
    axis = manipulation.normalize_axis(axis, x.ndim)
    if n is not None:
        n = operator.index(n)
        if n < 1:
            raise ValueError(f"invalid number of data points ({n}) specified")
        x = jnp_fft.fit_to_lengths(x, (axis,), (n,))
    x = manipulation.moveaxis(x, axis, -1)
    if dtypes.is_complex(x.dtype):
        result = transform(ufuncs.real(x), norm) + 1j * transform(ufuncs.imag(x), norm)
    else:
        result = transform(x, norm)
    return manipulation.moveaxis(result, -1, axis)


def _operand(name: str, x):
    (x,) = promote_dtypes_inexact(asarray_operand(name, x))
    return x


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform (type 2) of `x` along `axis`, cropped or zero-padded to
    `n`; `norm` "ortho" makes it orthonormal."""
    _check("dct", type, norm)
    return _along(_dct_last, _operand("dct", x), n, axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of `dct` (a scaled DCT-III)."""
    _check("idct", type, norm)
    return _along(_idct_last, _operand("idct", x), n, axis, norm)


def _along_axes(name, transform, x, s, axes, norm):
    x = _operand(name, x)
    if axes is None:
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = tuple(axes)
    if s is None:
        s = (None,) * len(axes)
    elif len(s) != len(axes):
        raise ValueError(f"jax.scipy.fft.{name}: s {tuple(s)} and axes {axes} differ in length")
    for n, axis in zip(s, axes, strict=True):
        x = _along(transform, x, n, axis, norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """`dct` along each of `axes` (default: all, or the last len(`s`)) in turn."""
    _check("dctn", type, norm)
    return _along_axes("dctn", _dct_last, x, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of `dctn`."""
    _check("idctn", type, norm)
    return _along_axes("idctn", _idct_last, x, s, axes, norm)
