"""`tracejit.scipy.stats.dirichlet`: the Dirichlet distribution."""

from tracejit._src.scipy.stats.dirichlet import (  # noqa: F401
    logpdf,
    pdf,
)
