"""`tracejit.scipy.fft` (`jax.scipy.fft`): the discrete cosine transform, type 2."""

from tracejit._src.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
