"""The negative binomial distribution: failures before the n-th success."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, where
from tracejit._src.scipy.special import gammaln, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = k - loc
    comb_term = gammaln(y + n) - gammaln(n) - gammaln(y + one)
    log_linear_term = xlogy(n, p) + xlogy(y, one - p)
    return where(k < loc, -np.inf, comb_term + log_linear_term)


def pmf(k, n, p, loc=0):
    return exp(logpmf(k, n, p, loc))
