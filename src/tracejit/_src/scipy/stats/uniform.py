"""The uniform distribution on [loc, loc + scale]."""

import numpy as np

from tracejit._src.numpy.creation import array
from tracejit._src.numpy.lib_math import select
from tracejit._src.numpy.ufuncs import exp, isnan, log, where
from tracejit._src.scipy.stats.common import inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.logpdf", x, loc, scale)
    return where((x > loc + scale) | (x < loc), -np.inf, -log(scale))


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.cdf", x, loc, scale)
    high = loc + scale
    conds = [x < loc, x > high, (x >= loc) & (x <= high)]
    # JAX's 0 and 1 here are strongly typed: the CDF of Python scalars is not weak.
    zero, one = array(0, x.dtype), array(1, x.dtype)
    return select(conds, [zero, one, (x - loc) / scale])


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("uniform.ppf", q, loc, scale)
    return where(isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
