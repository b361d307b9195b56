"""`tracejit.scipy.stats.chi2`: the chi-squared distribution."""

from tracejit._src.scipy.stats.chi2 import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
