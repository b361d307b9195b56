"""`tracejit.scipy.stats.binom`: the binomial distribution."""

from tracejit._src.scipy.stats.binom import (  # noqa: F401
    logpmf,
    pmf,
)
