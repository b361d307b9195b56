"""`tracejit.scipy.stats.gumbel_r`: the right-skewed Gumbel distribution."""

from tracejit._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
