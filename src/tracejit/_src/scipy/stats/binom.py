"""The binomial distribution; log-probabilities by lgamma, exactly 0 where all the mass is."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, where
from tracejit._src.scipy.special import gammaln, xlog1py, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    zero, one = const(y, 0), const(y, 1)
    comb_term = gammaln(n + one) - (gammaln(y + one) + gammaln(n - y + one))
    log_linear_term = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb_term + log_linear_term
    certain = ((y == zero) & (n == zero)) | (log_linear_term == zero)
    log_probs = where(certain, 0.0, log_probs)
    return where((k >= loc) & (k < loc + n + one), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    return exp(logpmf(k, n, p, loc))
