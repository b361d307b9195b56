"""`tracejit.scipy.stats.nbinom`: the negative binomial distribution."""

from tracejit._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf,
    pmf,
)
