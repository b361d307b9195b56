"""The generalized normal distribution with shape `beta` (2: normal, 1: Laplace)."""

from tracejit._src.lax.control_flow.incomplete import igamma
from tracejit._src.lax.special import lgamma
from tracejit._src.numpy.arithmetic import power
from tracejit._src.numpy.ufuncs import abs, exp, log, sign
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, beta):
    x, beta = inexact("gennorm.logpdf", x, beta)
    return log(const(x, 0.5) * beta) - lgamma(const(x, 1) / beta) - power(abs(x), beta)


def pdf(x, beta):
    return exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = inexact("gennorm.cdf", x, beta)
    mass = igamma(const(x, 1) / beta, power(abs(x), beta))
    return const(x, 0.5) * (const(x, 1) + sign(x) * mass)
