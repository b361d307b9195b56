"""`tracejit.scipy.stats.multinomial`: the multinomial distribution."""

from tracejit._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf,
    pmf,
)
