"""`tracejit.scipy`: SciPy's API over tracejit (`import tracejit.scipy.special`)."""

from tracejit.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)
