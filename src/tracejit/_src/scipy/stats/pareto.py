"""The Pareto distribution, support x >= loc + scale."""

import numpy as np

from tracejit._src.numpy.arithmetic import power
from tracejit._src.numpy.ufuncs import exp, isnan, log, log1p, where
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logpdf", x, b, loc, scale)
    scaled_x = (x - loc) / scale
    log_probs = -(log(scale / b) + (b + const(x, 1)) * log(scaled_x))
    return where(x < loc + scale, -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    return exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.cdf", x, b, loc, scale)
    scaled_x = (x - loc) / scale
    return where(x < loc + scale, const(x, 0), const(x, 1) - power(scaled_x, -b))


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logcdf", x, b, loc, scale)
    scaled_x = (x - loc) / scale
    return where(x < loc + scale, -np.inf, log1p(-power(scaled_x, -b)))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logsf", x, b, loc, scale)
    scaled_x = (x - loc) / scale
    return where(x < loc + scale, const(x, 0), -(b * log(scaled_x)))


def sf(x, b, loc=0, scale=1):
    return exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = inexact("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    quantile = loc + scale * power(one - q, -(one / b))
    return where(isnan(q) | (q < 0) | (q > 1), np.nan, quantile)
