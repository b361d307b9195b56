"""The Beta distribution on [loc, loc + scale]; NaN for non-positive a, b or scale."""

import numpy as np

from tracejit._src.numpy.ufuncs import clip, exp, log, where
from tracejit._src.scipy.special import betainc, betaln, xlog1py, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("beta.logpdf", x, a, b, loc, scale)
    one, zero = const(x, 1), const(a, 0)
    y = (x - loc) / scale
    log_linear_term = xlogy(a - one, y) + xlog1py(b - one, -y)
    log_probs = -betaln(a, b) + log_linear_term - log(scale)
    result = where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return where((a <= zero) | (b <= zero) | (scale <= zero), np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    return exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, clip((x - loc) / scale, const(x, 0), const(x, 1)))


def logcdf(x, a, b, loc=0, scale=1):
    return log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """By the symmetry I_x(a, b) = 1 - I_{1-x}(b, a), without 1 - cdf's cancellation."""
    x, a, b, loc, scale = inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, const(x, 1) - clip((x - loc) / scale, const(x, 0), const(x, 1)))


def logsf(x, a, b, loc=0, scale=1):
    return log(sf(x, a, b, loc, scale))
