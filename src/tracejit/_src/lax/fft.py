"""The discrete Fourier transform primitive `fft` (`lax.fft`), over the last 1-3 axes.

One primitive, four transforms (`FftType`): FFT and IFFT (complex to complex, IFFT scaled by
1/N), RFFT (real to complex, keeping the n//2 + 1 non-negative frequencies of the last axis)
and IRFFT (its inverse, complex to real: the last axis of n//2 + 1 frequencies stands for the
whole Hermitian-symmetric spectrum). `fft_lengths` are the transformed lengths, those of the
real side for RFFT and IRFFT:

    { lambda ; a:f32[8]. let b:c64[5] = fft[fft_lengths=(8,) fft_type=2] a in (b,) }

Eagerly it is NumPy's pocketfft (which keeps single precision: complex64 stays complex64),
compiled `stablehlo.fft` (DUCC in XLA's CPU runtime). Every transform is linear, so its JVP is
itself. FFT and IFFT are their own transposes (the DFT matrix is symmetric); RFFT and IRFFT
are only real-linear, and their transposes are each other's transform with the Hermitian
weights w (1 for the frequencies 0 and n/2 that appear once in the full spectrum, 2 for the
others that stand for a pair), with N the product of `fft_lengths`:

    RFFTᵀ(c) = N · IRFFT(conj(c) / w)        IRFFTᵀ(c) = (w / N) · conj(RFFT(c))
"""

from __future__ import annotations

import enum

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.lax import binary, conversions, elementwise
from tracejit._src.lax.standard import static_ints
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules


class FftType(enum.IntEnum):
    """The four transforms of `lax.fft` (printed in jaxprs by their values, as in JAX)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{fft_type}'") from None
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _is_double(dtype: np.dtype) -> bool:
    """Whether JAX transforms values of `dtype` in double precision: float64, complex128 and
    the 64-bit integers; every other real type goes to float32/complex64."""
    return dtype == _C128 or (not dtypes.is_complex(dtype) and dtype.itemsize == 8)


def _input_dtype(fft_type: FftType, dtype: np.dtype) -> np.dtype:
    """The dtype `lax.fft` converts its operand to: complex for FFT, IFFT and IRFFT; real for
    RFFT, where only integers and bools are converted (float16 is refused, as in JAX)."""
    if fft_type == FftType.RFFT:
        return dtype if dtypes.is_inexact(dtype) else (_F64 if _is_double(dtype) else _F32)
    if dtypes.is_complex(dtype):
        return dtype
    return _C128 if _is_double(dtype) else _C64


# --- fft ------------------------------------------------------------------------------------
fft_p = Primitive("fft")


def fft(x, fft_type, fft_lengths):
    """The `fft_type` transform of `x` over its last len(`fft_lengths`) axes (1 to 3), of the
    real-side lengths `fft_lengths`; a real operand of FFT, IFFT or IRFFT is made complex and
    integers are made floating point first. No lengths: `x` itself, converted."""
    fft_type = _fft_type(fft_type)
    if isinstance(fft_lengths, (int, np.integer)):
        raise TypeError(f"fft: fft_lengths must be a sequence of integers, got {fft_lengths!r}")
    fft_lengths = static_ints("fft", "fft_lengths", fft_lengths)
    if fft_type == FftType.RFFT and dtypes.is_complex(dtypes.dtype_of(x)):
        raise ValueError("only real valued inputs supported for rfft")
    dtype = _input_dtype(fft_type, dtypes.dtype_of(x))
    x = conversions.convert_element_type(x, dtype)
    if not fft_lengths:
        return x
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)


def _numpy_fft(x, fft_type, fft_lengths):
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        return np.fft.fftn(x, axes=axes)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_lengths, axes=axes)


@fft_p.def_impl
def _fft_impl(x, *, fft_type, fft_lengths):
    out = _fft_abstract_eval(get_aval(x), fft_type=fft_type, fft_lengths=fft_lengths)
    if x.size == 0 or 0 in out.shape:  # (pocketfft refuses zero lengths; the result is empty)
        return np.zeros(out.shape, out.dtype)
    return np.asarray(_numpy_fft(x, fft_type, fft_lengths), out.dtype)


def _transformed_shape(fft_type, fft_lengths) -> tuple:
    """The operand's last axes as `fft_type` needs them for `fft_lengths`."""
    if fft_type == FftType.IRFFT:
        return (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
    return tuple(fft_lengths)


@fft_p.def_abstract_eval
def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        if x.dtype not in (_F32, _F64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
    elif x.dtype not in (_C64, _C128):
        raise ValueError(f"{fft_type.name} input must be complex64 or complex128, got {x.dtype}")
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"FFT: fft_lengths must have 1 to 3 entries, got {fft_lengths}")
    if k > len(x.shape):
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as "
            f"fft_lengths {fft_lengths}."
        )
    if x.shape[-k:] != _transformed_shape(fft_type, fft_lengths):
        what = "compatible with" if fft_type == FftType.IRFFT else "equal to"
        raise ValueError(
            f"FFT input shape {x.shape} minor dimensions must be {what} fft_lengths "
            f"{fft_lengths}"
            + (" (the last one n // 2 + 1 for a length n)" if fft_type == FftType.IRFFT else "")
        )
    if fft_type == FftType.RFFT and fft_lengths[-1] == 0:
        raise ValueError(f"RFFT of length 0 has no frequencies, got fft_lengths {fft_lengths}")
    if fft_type == FftType.RFFT:
        shape = (*x.shape[:-1], fft_lengths[-1] // 2 + 1)
        return ShapedArray(shape, _C128 if x.dtype == _F64 else _C64)
    if fft_type == FftType.IRFFT:
        shape = (*x.shape[:-1], fft_lengths[-1])
        return ShapedArray(shape, _F64 if x.dtype == _C128 else _F32)
    return ShapedArray(x.shape, x.dtype)


def _hermitian_weights(shape, n: int, dtype) -> np.ndarray:
    """A constant of `shape` (last axis n // 2 + 1 frequencies of a length-n transform): how
    many frequencies of the full spectrum each stands for, 1 or 2."""
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return np.broadcast_to(weights.astype(dtype), shape)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    size = float(np.prod(fft_lengths))
    if fft_type == FftType.RFFT:  # N · IRFFT(conj(c) / w)
        aval = get_aval(ct)
        weights = _hermitian_weights(aval.shape, fft_lengths[-1], aval.dtype)
        halved = binary.div(elementwise.conj(ct), weights)
        real = fft_p.bind(halved, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
        return [binary.mul(real, np.array(size, get_aval(real).dtype))]
    if fft_type == FftType.IRFFT:  # (w / N) · conj(RFFT(c))
        spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        aval = get_aval(spectrum)
        scale = _hermitian_weights(aval.shape, fft_lengths[-1], aval.dtype) / size
        return [binary.mul(elementwise.conj(spectrum), scale)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


ad.deflinear(fft_p)
transpose_rules[fft_p] = _fft_transpose
batch_rules[fft_p] = lambda values, dims, **params: (
    fft_p.bind(batch_at_front(values[0], dims[0], 0), **params),
    0,
)
lowering_rules[fft_p] = lambda ctx, x, *, fft_type, fft_lengths: ctx.op(
    "stablehlo.fft",
    [x],
    {
        "fft_type": f"#stablehlo<fft_type {fft_type.name}>",
        "fft_length": hlo.i64_array(fft_lengths),
    },
)
