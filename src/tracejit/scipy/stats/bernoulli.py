"""`tracejit.scipy.stats.bernoulli`: the Bernoulli distribution."""

from tracejit._src.scipy.stats.bernoulli import (  # noqa: F401
    cdf,
    logpmf,
    pmf,
    ppf,
)
