"""The Dirichlet distribution over the simplex; `x` holds the K components (or the first
K - 1, the last being implied) along its first axis, `alpha` is 1-D."""

import numpy as np

from tracejit._src.numpy import manipulation, reductions
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.numpy.ufuncs import abs, exp, where
from tracejit._src.scipy.special import gammaln, xlogy
from tracejit._src.scipy.stats.common import const


def _is_simplex(x):
    x_sum = reductions.sum(x, axis=0)
    return reductions.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-06)


def logpdf(x, alpha):
    x, alpha = promote_dtypes_inexact(*to_operands("dirichlet.logpdf", (x, alpha)))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        last = one - reductions.sum(x, axis=0, keepdims=True)
        x = manipulation.concatenate([x, last], axis=0)
    normalize_term = reductions.sum(gammaln(alpha)) - gammaln(reductions.sum(alpha))
    alpha = manipulation.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = reductions.sum(xlogy(alpha - one, x), axis=0) - normalize_term
    return where(_is_simplex(x), log_probs, -np.inf)


def pdf(x, alpha):
    return exp(logpdf(x, alpha))
