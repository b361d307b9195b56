"""The normal distribution truncated to [a, b] (in units of scale about loc).

Everything is a difference of log normal masses, `log(ndtr(b) - ndtr(a))`, computed on the
tail that keeps it accurate: for an interval in the upper tail, the mirrored lower-tail one;
for an interval straddling 0, `log1p(-ndtr(a) - ndtr(-b))`.
"""

import numpy as np

from tracejit._src.nn.functions import logsumexp
from tracejit._src.numpy import manipulation
from tracejit._src.numpy.creation import ones_like
from tracejit._src.numpy.lib_math import select
from tracejit._src.numpy.ufuncs import exp, log1p, where
from tracejit._src.scipy.special import log_ndtr, ndtr
from tracejit._src.scipy.stats import norm
from tracejit._src.scipy.stats.common import inexact


def _log_diff(x, y):
    """log(exp(x) - exp(y)) for x >= y."""
    return logsumexp(
        manipulation.stack([x, y]), b=manipulation.stack([ones_like(x), -ones_like(y)]), axis=0
    )


def _log_gauss_mass(a, b):
    """log of the standard normal mass of [a, b]."""
    a, b = manipulation.broadcast_arrays(a, b)
    case_left, case_right = b <= 0, a > 0
    case_central = ~(case_left | case_right)
    a_tail = where(case_right, -b, a)
    b_tail = where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = log1p(-ndtr(a) - ndtr(-b))
    return where(case_central, mass_central, mass_tail)


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    x_scaled = (x - loc) / scale
    val = where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    return where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    return exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """Near 1 (log above -0.1), log1p of minus the survival function keeps the accuracy."""
    x, a, b, loc, scale = inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = manipulation.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    lgm_ab = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - lgm_ab
    log_sf = _log_gauss_mass(x, b) - lgm_ab
    log_cdf = select(
        [x >= b, x <= a, log_cdf > -0.1, x > a],
        [0, -np.inf, log1p(-exp(log_sf)), log_cdf],
    )
    return where(a >= b, np.nan, log_cdf)


def cdf(x, a, b, loc=0, scale=1):
    return exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    return exp(logsf(x, a, b, loc, scale))
