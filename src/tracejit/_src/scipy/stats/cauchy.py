"""The Cauchy distribution: CDF through arctan, quantiles through tan."""

import numpy as np

from tracejit._src.numpy.ufuncs import arctan, exp, log, log1p, tan
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.logpdf", x, loc, scale)
    scaled_x = (x - loc) / scale
    return -(log(const(x, np.pi) * scale) + log1p(scaled_x * scaled_x))


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.cdf", x, loc, scale)
    return const(x, 0.5) + const(x, 1 / np.pi) * arctan((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    return log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("cauchy.ppf", q, loc, scale)
    return tan(const(q, np.pi) * q - const(q, np.pi / 2)) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = inexact("cauchy.isf", q, loc, scale)
    return tan(const(q, np.pi / 2) - const(q, np.pi) * q) * scale + loc
