"""`tracejit.scipy.stats.betabinom`: the beta-binomial distribution."""

from tracejit._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf,
    pmf,
)
