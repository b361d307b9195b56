"""`tracejit.scipy.signal`: direct N-dimensional convolution and correlation, `detrend`.
JAX's `fftconvolve`, `stft`, `istft`, `welch` and `csd` need `jnp.fft`: not built yet, and
absent."""

from tracejit._src.scipy.signal import (  # noqa: F401
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    detrend,
)
