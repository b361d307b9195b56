"""`tracejit.scipy.stats.vonmises`: the von Mises distribution."""

from tracejit._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf,
    pdf,
)
