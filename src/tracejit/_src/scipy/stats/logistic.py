"""The logistic distribution: CDF `expit`, quantile `logit`; the log-density as
-2 logaddexp(x/2, -x/2), which neither overflows nor cancels in the tails."""

from tracejit._src.numpy.lib_math import logaddexp
from tracejit._src.numpy.ufuncs import exp, log
from tracejit._src.scipy.special import expit, logit
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.logpdf", x, loc, scale)
    half_x = (x - loc) / scale / const(x, 2)
    return const(x, -2) * logaddexp(half_x, -half_x) - log(scale)


def pdf(x, loc=0, scale=1):
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.sf", x, loc, scale)
    return expit(-((x - loc) / scale))


def ppf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc
