"""The left-skewed Gumbel distribution (of minima); NaN for a non-positive scale."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, expm1, log, where
from tracejit._src.scipy.special import xlog1py, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    log_pdf = xlogy(const(scale, -1), scale) + (z - exp(z))
    return where(scale > const(scale, 0), log_pdf, np.nan)


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return where(scale > const(scale, 0), log(-expm1(-exp(z))), np.nan)


def cdf(x, loc=0, scale=1):
    return exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logsf", x, loc, scale)
    z = (x - loc) / scale
    return where(scale > const(scale, 0), -exp(z), np.nan)


def sf(x, loc=0, scale=1):
    return exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact("gumbel_l.ppf", p, loc, scale)
    quantile = loc + scale * log(xlog1py(const(p, -1), -p))
    return where((p > const(p, 0)) & (p < const(p, 1)), quantile, np.nan)
