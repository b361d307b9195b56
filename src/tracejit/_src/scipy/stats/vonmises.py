"""The von Mises distribution (a normal distribution on the circle), concentration kappa > 0
(NaN otherwise). The normalizer 2 pi I0(kappa) is taken as log(2 pi i0e(kappa)) + kappa, so
that it does not overflow for large kappa."""

import numpy as np

from tracejit._src.lax.special import bessel_i0e
from tracejit._src.numpy.ufuncs import cos, exp, log, where
from tracejit._src.scipy.stats.common import const, inexact


def logpdf(x, kappa):
    x, kappa = inexact("vonmises.logpdf", x, kappa)
    log_probs = kappa * (cos(x) - 1) - log(2 * np.pi * bessel_i0e(kappa))
    return where(kappa > const(kappa, 0), log_probs, np.nan)


def pdf(x, kappa):
    return exp(logpdf(x, kappa))
