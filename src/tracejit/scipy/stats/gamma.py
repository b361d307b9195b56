"""`tracejit.scipy.stats.gamma`: the Gamma distribution."""

from tracejit._src.scipy.stats.gamma import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
