"""The Beta distribution on [loc, loc + scale]; NaN for non-positive a, b or scale."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, log, where
from tracejit._src.scipy.special import betaln, xlog1py, xlogy
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
