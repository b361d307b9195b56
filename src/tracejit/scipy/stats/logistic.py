"""`tracejit.scipy.stats.logistic`: the logistic distribution."""

from tracejit._src.scipy.stats.logistic import (  # noqa: F401
    cdf,
    isf,
    logpdf,
    pdf,
    ppf,
    sf,
)
