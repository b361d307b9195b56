"""The exponential distribution; `sf` is exp(logsf) and `logcdf` log1p(-sf), each accurate
where the other cancels."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, expm1, isnan, log, log1p, where, zero_like_scalar
from tracejit._src.scipy.stats.common import inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + log(scale))
    return where(x < loc, -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.cdf", x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return where(x < loc, zero_like_scalar(neg_scaled_x), -expm1(neg_scaled_x))


def logcdf(x, loc=0, scale=1):
    return log1p(-sf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.sf", x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return where(x < loc, zero_like_scalar(neg_scaled_x), neg_scaled_x)


def sf(x, loc=0, scale=1):
    return exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("expon.ppf", q, loc, scale)
    return where(isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * log1p(-q))
