"""`tracejit.scipy.stats.multivariate_normal`: the multivariate normal distribution."""

from tracejit._src.scipy.stats.multivariate_normal import logpdf, pdf  # noqa: F401
