"""`tracejit.scipy.stats.gennorm`: the generalized normal distribution."""

from tracejit._src.scipy.stats.gennorm import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
)
