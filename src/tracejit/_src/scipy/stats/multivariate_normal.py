"""The multivariate normal distribution, through the Cholesky factor of its covariance: with
cov = L Lᵀ and y = L⁻¹ (x - mean), the log density is -½ y·y - (n/2) log 2π - Σ log Lᵢᵢ.
A scalar `cov` is σ² times the identity; a scalar `mean` makes it the univariate normal."""

import numpy as np

from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.numpy import lib, manipulation
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.numpy.reductions import sum as jnp_sum
from tracejit._src.numpy.ufuncs import exp, log, square
from tracejit._src.scipy.stats.common import const


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(*to_operands("multivariate_normal.logpdf",
                                                       (x, mean, cov)))  # fmt: skip
    if mean.ndim == 0:
        return -0.5 * square(x - mean) / cov - 0.5 * (const(x, np.log(2 * np.pi)) + log(cov))
    n = mean.shape[-1]
    if cov.ndim == 0:
        y = x - mean
        return -0.5 * jnp_sum(square(y), axis=-1) / cov - n / 2 * (
            const(x, np.log(2 * np.pi)) + log(cov)
        )
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax_linalg.cholesky(cov)
    deviation = x - mean
    batch = manipulation.broadcast_shapes(factor.shape[:-2], deviation.shape[:-1])
    factor = manipulation.broadcast_to(factor, (*batch, n, n))
    columns = manipulation.broadcast_to(deviation, (*batch, n))[..., None]
    y = lax_linalg.triangular_solve(factor, columns, left_side=True, lower=True)[..., 0]
    log_diagonal = jnp_sum(log(lib.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp_sum(square(y), axis=-1) - const(x, n / 2 * np.log(2 * np.pi)) - log_diagonal


def pdf(x, mean, cov):
    return exp(logpdf(x, mean, cov))
