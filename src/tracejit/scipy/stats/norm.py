"""`tracejit.scipy.stats.norm`: the normal distribution."""

from tracejit._src.scipy.stats.norm import (  # noqa: F401
    cdf,
    isf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
