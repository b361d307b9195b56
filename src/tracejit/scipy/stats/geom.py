"""`tracejit.scipy.stats.geom`: the geometric distribution."""

from tracejit._src.scipy.stats.geom import (  # noqa: F401
    logpmf,
    pmf,
)
