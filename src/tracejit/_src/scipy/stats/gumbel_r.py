"""The right-skewed Gumbel distribution (of maxima); NaN for a non-positive scale."""

import numpy as np

from tracejit._src.nn.functions import log1mexp
from tracejit._src.numpy.ufuncs import exp, log, where
from tracejit._src.scipy.special import xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    log_pdf = xlogy(const(scale, -1), scale) - (z + exp(-z))
    return where(scale > const(scale, 0), log_pdf, np.nan)


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return where(scale > const(scale, 0), -exp(-z), np.nan)


def cdf(x, loc=0, scale=1):
    return exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.sf", x, loc, scale)
    neg_z = (loc - x) / scale
    return where(scale > const(scale, 0), const(x, 1) - exp(-exp(neg_z)), np.nan)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logsf", x, loc, scale)
    neg_z = (loc - x) / scale
    return where(scale > const(scale, 0), log1mexp(exp(neg_z)), np.nan)


def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact("gumbel_r.ppf", p, loc, scale)
    quantile = loc - scale * log(xlogy(const(p, -1), p))
    return where((p > const(p, 0)) & (p < const(p, 1)), quantile, np.nan)
