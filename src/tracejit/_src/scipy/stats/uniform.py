"""The uniform distribution on [loc, loc + scale]."""

import numpy as np

from tracejit._src.numpy.lib_math import select
from tracejit._src.numpy.ufuncs import exp, isnan, log, where
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.logpdf", x, loc, scale)
    return where((x > loc + scale) | (x < loc), -np.inf, -log(scale))


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.cdf", x, loc, scale)
    high = loc + scale
    conds = [x < loc, x > high, (x >= loc) & (x <= high)]
    return select(conds, [const(x, 0), const(x, 1), (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("uniform.ppf", q, loc, scale)
    return where(isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
