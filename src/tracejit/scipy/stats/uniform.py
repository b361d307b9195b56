"""`tracejit.scipy.stats.uniform`: the uniform distribution."""

from tracejit._src.scipy.stats.uniform import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
    ppf,
)
