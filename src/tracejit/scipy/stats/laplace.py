"""`tracejit.scipy.stats.laplace`: the Laplace distribution."""

from tracejit._src.scipy.stats.laplace import (  # noqa: F401
    cdf,
    logpdf,
    pdf,
)
