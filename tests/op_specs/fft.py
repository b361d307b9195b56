"""The Fourier transform primitive `fft`, one row per transform type, over the last two axes
(the last one for IFFT): NumPy's pocketfft on complex128/float64 copies as the reference."""

import numpy as np
from helpers import OpSpec, c64, f32

from tracejit import lax

_AXES = (-2, -1)

FFT = [
    OpSpec(
        "fft",
        lambda x: lax.fft(x, lax.FftType.FFT, (2, 3)),
        lambda x: np.fft.fftn(x, axes=_AXES),
        [c64],
        tol=4.0,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "fft-ifft",
        lambda x: lax.fft(x, lax.FftType.IFFT, (3,)),
        lambda x: np.fft.ifft(x, axis=-1),
        [c64],
        primitive="fft",
        tol=4.0,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "fft-rfft",
        lambda x: lax.fft(x, lax.FftType.RFFT, (2, 3)),
        lambda x: np.fft.rfftn(x, axes=_AXES),
        [f32],
        primitive="fft",
        out=lambda dtype: c64,
        tol=4.0,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "fft-irfft",
        lambda x: lax.fft(x, lax.FftType.IRFFT, (2, 4)),
        lambda x: np.fft.irfftn(x, s=(2, 4), axes=_AXES),
        [c64],
        primitive="fft",
        out=lambda dtype: f32,
        tol=4.0,
        grad_argnums=(0,),
        linear=True,
    ),
]
