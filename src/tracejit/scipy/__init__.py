"""`tracejit.scipy`: SciPy's API over tracejit (`import tracejit.scipy.special`)."""

from tracejit.scipy import fft, integrate, linalg, ndimage, optimize, signal, special, stats  # noqa: F401
