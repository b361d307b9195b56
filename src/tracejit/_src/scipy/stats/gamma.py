"""The Gamma distribution with shape `a`, support x >= loc."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, log, where
from tracejit._src.scipy.special import gammaln, xlogy
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
