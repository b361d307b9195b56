"""The Gamma distribution with shape `a`, support x >= loc."""

import numpy as np

from tracejit._src.numpy.ufuncs import clip, exp, log, where
from tracejit._src.scipy.special import gammainc, gammaincc, gammaln, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    one = const(x, 1)
    y = where(ok, (x - loc) / scale, one)  # a safe point off the support (no NaN gradients)
    log_probs = xlogy(a - one, y) - y - (gammaln(a) + log(scale))
    return where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, clip((x - loc) / scale, const(x, 0), const(x, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    return log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return where(y < const(y, 0), 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    return log(sf(x, a, loc, scale))
