"""`tracejit.scipy`: SciPy's API over tracejit (`import tracejit.scipy.special`)."""

from tracejit.scipy import special, stats  # noqa: F401
