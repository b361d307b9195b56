"""`tracejit.scipy.stats.truncnorm`: the truncated normal distribution."""

from tracejit._src.scipy.stats.truncnorm import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)
