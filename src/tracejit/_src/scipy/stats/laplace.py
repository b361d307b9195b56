"""The Laplace (double exponential) distribution."""

from tracejit._src.numpy.ufuncs import abs, exp, log, where
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("laplace.logpdf", x, loc, scale)
    return -(abs(x - loc) / scale + log(const(x, 2) * scale))


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("laplace.cdf", x, loc, scale)
    half, one = const(x, 0.5), const(x, 1)
    diff = (x - loc) / scale
    return where(diff <= const(x, 0), half * exp(diff), one - half * exp(-diff))
