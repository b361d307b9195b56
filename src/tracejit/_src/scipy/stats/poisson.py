"""The Poisson distribution; `entropy` sums -p log p over the support for mu < 100 and uses
the asymptotic series above."""

import numpy as np

from tracejit._src.numpy import manipulation, reductions
from tracejit._src.numpy.creation import arange
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.numpy.ufuncs import ceil, exp, floor, log, not_equal, round, sqrt, where
from tracejit._src.scipy.special import entr, gammaincc, gammaln, xlogy
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, mu, loc=0):
    k, mu, loc = inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + const(x, 1)) - mu
    return where((x < const(k, 0)) | not_equal(round(k), k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return exp(logpmf(k, mu, loc))


def _entropy_by_sum(mu, terms, upper_bound):
    """-sum p log p over k < min(terms, upper_bound(mu)), for each mu (a 1-D array)."""
    k = manipulation.reshape(arange(terms, dtype=mu.dtype), (terms, 1))
    probs = pmf(k, mu, 0)
    probs = where(k < ceil(upper_bound)[None, :], probs, 0.0)
    return reductions.sum(entr(probs), axis=0)


def entropy(mu, loc=0):
    """The entropy of Poisson(mu), broadcast against `loc` (which does not change it)."""
    mu, loc = promote_dtypes_inexact(*to_operands("poisson.entropy", (mu, loc)))
    shape = manipulation.broadcast_shapes(mu.shape, loc.shape)
    flat = manipulation.ravel(mu)
    small = _entropy_by_sum(flat, 35, flat + 20)
    medium = _entropy_by_sum(flat, 250, flat + 10 * sqrt(flat) + 20)
    large = 0.5 * log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    out = where(flat < 10, small, where(flat < 100, medium, large))
    out = where(flat == 0, const(flat, 0), out)
    return manipulation.broadcast_to(manipulation.reshape(out, mu.shape), shape)


def cdf(k, mu, loc=0):
    k, mu, loc = inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    return where(x < const(k, 0), const(k, 0), gammaincc(floor(const(x, 1) + x), mu))
