"""The Bernoulli distribution on {0, 1}; `cdf` and `ppf` give NaN for p outside [0, 1]."""

import numpy as np

from tracejit._src.numpy.lib_math import select
from tracejit._src.numpy.ufuncs import exp, isnan, where
from tracejit._src.scipy.special import xlog1py, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, p, loc=0):
    k, p, loc = inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(const(k, 1) - x, -p)
    return where((x < const(k, 0)) | (x > const(k, 1)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = inexact("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    invalid = isnan(k) | isnan(p) | (p < zero) | (p > one)
    conds = [invalid, k < zero, (k >= zero) & (k < one), k >= one]
    return select(conds, [np.nan, zero, one - p, one])


def ppf(q, p):
    q, p = inexact("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    invalid = isnan(q) | isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return where(invalid, np.nan, where(q <= one - p, zero, one))
