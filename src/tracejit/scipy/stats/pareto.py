"""`tracejit.scipy.stats.pareto`: the Pareto distribution."""

from tracejit._src.scipy.stats.pareto import (  # noqa: F401
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)
