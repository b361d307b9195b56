"""`tracejit.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution."""

from tracejit._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf,
    pdf,
)
