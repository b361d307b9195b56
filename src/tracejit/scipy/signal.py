"""`tracejit.scipy.signal`: N-dimensional convolution and correlation (direct, or by FFT),
`detrend`, and the Fourier-based `fftconvolve`, `stft`, `istft`, `welch` and `csd`."""

from tracejit._src.scipy.signal import (  # noqa: F401
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    detrend,
)
from tracejit._src.scipy.signal_fftconvolve import fftconvolve  # noqa: F401
from tracejit._src.scipy.signal_spectral import (  # noqa: F401
    csd,
    istft,
    stft,
    welch,
)
