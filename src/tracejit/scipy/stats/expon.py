"""`tracejit.scipy.stats.expon`: the exponential distribution."""

from tracejit._src.scipy.stats.expon import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
