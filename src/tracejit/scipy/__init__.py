"""`tracejit.scipy`: SciPy's API over tracejit (`import tracejit.scipy.special`)."""

from tracejit.scipy import integrate, ndimage, optimize, signal, special, stats  # noqa: F401
