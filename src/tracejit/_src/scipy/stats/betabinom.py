"""The beta-binomial distribution: binomial with a Beta(a, b) success probability."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, floor, log1p, where
from tracejit._src.scipy.special import betaln
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = inexact("betabinom.logpmf", k, n, a, b, loc)
    y = floor(k) - loc
    zero, one = const(y, 0), const(y, 1)
    combiln = -(log1p(n) + betaln(n - y + one, y + one))
    beta_lns = betaln(y + a, n - y + b) - betaln(a, b)
    log_probs = where((y == zero) & (n == zero), 0.0, combiln + beta_lns)
    outside = (y < -loc) | (y > n) | (y + a <= zero)
    log_probs = where(outside, -np.inf, log_probs)
    return where((n < zero) | (a <= zero) | (b <= zero), np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
    return exp(logpmf(k, n, a, b, loc))
