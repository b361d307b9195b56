"""The wrapped Cauchy distribution on [0, 2 pi], shape 0 < c < 1 (NaN otherwise)."""

import numpy as np

from tracejit._src.numpy.ufuncs import cos, exp, log, where
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, c):
    x, c = inexact("wrapcauchy.logpdf", x, c)
    one = const(c, 1)
    log_probs = (
        log(one - c * c) - const(x, np.log(2 * np.pi)) - log(one + c * c - const(c, 2) * c * cos(x))
    )
    in_support = (x >= const(x, 0)) & (x <= const(x, 2 * np.pi))
    valid = (c > const(c, 0)) & (c < one)
    return where(valid, where(in_support, log_probs, -np.inf), np.nan)


def pdf(x, c):
    return exp(logpdf(x, c))
