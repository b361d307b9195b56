"""`tracejit.scipy.stats.beta`: the Beta distribution."""

from tracejit._src.scipy.stats.beta import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
