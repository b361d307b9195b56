"""`tracejit.scipy.stats.gumbel_l`: the left-skewed Gumbel distribution."""

from tracejit._src.scipy.stats.gumbel_l import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
