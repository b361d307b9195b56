"""`tracejit.scipy.stats.t`: the Student's t distribution."""

from tracejit._src.scipy.stats.t import (  # noqa: F401
    logpdf,
    pdf,
)
