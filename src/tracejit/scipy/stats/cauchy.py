"""`tracejit.scipy.stats.cauchy`: the Cauchy distribution."""

from tracejit._src.scipy.stats.cauchy import (  # noqa: F401
    cdf,
    isf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
