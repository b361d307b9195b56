"""The chi-squared distribution with `df` degrees of freedom: Gamma(df / 2, scale 2)."""

import numpy as np

from tracejit._src.lax.special import lgamma
from tracejit._src.numpy.ufuncs import clip, exp, log, where
from tracejit._src.scipy.special import gammainc, gammaincc
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = (x - loc) / scale
    df_on_two = df / two
    kernel = (df_on_two - one) * log(y) - y / two
    nrml_cnst = -(lgamma(df_on_two) + const(x, np.log(2)) * df / two)
    return where(x < loc, -np.inf, nrml_cnst - log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    return exp(logpdf(x, df, loc, scale))


def _half_scaled(x, loc, scale):
    """(x - loc) / (2 scale), clipped to the support."""
    return clip((x - loc) / (scale * const(scale, 2)), const(x, 0), const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(df / const(df, 2), _half_scaled(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(df / const(df, 2), _half_scaled(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return log(sf(x, df, loc, scale))
