"""Student's t distribution (density only, as in JAX)."""

import numpy as np

from tracejit._src.lax.special import lgamma
from tracejit._src.numpy.ufuncs import exp, log, log1p
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("t.logpdf", x, df, loc, scale)
    two = const(x, 2)
    scaled_x = (x - loc) / scale
    df_over_two = df / two
    df_plus_one_over_two = df_over_two + const(x, 0.5)
    normalize_term = (
        lgamma(df_over_two)
        + log(scale * scale * const(x, np.pi) * df) / two
        - lgamma(df_plus_one_over_two)
    )
    return -(normalize_term + df_plus_one_over_two * log1p(scaled_x * scaled_x / df))


def pdf(x, df, loc=0, scale=1):
    return exp(logpdf(x, df, loc, scale))
