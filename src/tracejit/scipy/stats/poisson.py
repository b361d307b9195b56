"""`tracejit.scipy.stats.poisson`: the Poisson distribution."""

from tracejit._src.scipy.stats.poisson import (  # noqa: F401
    cdf,
    entropy,
    logpmf,
    pmf,
)
