"""`tracejit.scipy.signal`: direct N-dimensional convolution and correlation. JAX's
`fftconvolve`, `stft`, `istft`, `welch`, `csd` and `detrend` are not built yet, and absent."""

from tracejit._src.scipy.signal import (  # noqa: F401
    convolve,
    convolve2d,
    correlate,
    correlate2d,
)
