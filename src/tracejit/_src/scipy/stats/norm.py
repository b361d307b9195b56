"""The normal distribution; its CDFs and quantiles are `ndtr`, `log_ndtr` and `ndtri`, which
keep relative accuracy in both tails (so `sf` and `logsf` reflect x instead of taking 1 - cdf)."""

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy.promotion import convert_element_type
from tracejit._src.numpy.ufuncs import exp, log, square
from tracejit._src.scipy import special
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = square(scale)
    log_normalizer = log(const(x, 2 * np.pi) * scale_sqrd)
    quadratic = square(x - loc) / scale_sqrd
    return (log_normalizer + quadratic) / const(x, -2)


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile; as in JAX, the result is strongly typed in the default float dtype."""
    return convert_element_type(special.ndtri(q) * scale + loc, dtypes.default_float_dtype())


def isf(q, loc=0, scale=1):
    (q,) = inexact("norm.isf", q)
    return ppf(const(q, 1) - q, loc, scale)
