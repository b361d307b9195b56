"""The geometric distribution on {1, 2, ...}: the trial of the first success."""

import numpy as np

from tracejit._src.numpy.ufuncs import exp, log, where
from tracejit._src.scipy.special import xlog1py
from tracejit._src.scipy.stats.common import const, inexact


def logpmf(k, p, loc=0):
    k, p, loc = inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - const(k, 1), -p) + log(p)
    return where(x <= const(k, 0), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return exp(logpmf(k, p, loc))
