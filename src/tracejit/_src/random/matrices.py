"""Random vectors and matrices built with linear algebra: `multivariate_normal` (a factor F
of the covariance, F Fᵀ = cov, applied to standard normals) and `orthogonal` (the Q of a
Gaussian matrix's QR decomposition, its columns' signs fixed by R's diagonal, which makes
it uniform on the orthogonal group)."""

from __future__ import annotations

import operator

from tracejit._src.lax import elementwise, linalg_spectral
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.numpy import lib, manipulation
from tracejit._src.numpy.einsum import einsum
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.random.distributions import check_shape, normal, parametrized
from tracejit._src.random.key_reuse import consumes_key
from tracejit._src.random.keys import canonical_shape

_FACTORIZATIONS = ("svd", "eigh", "cholesky")


def _covariance_factor(cov, method: str):
    """F with F Fᵀ = cov."""
    if method == "cholesky":
        return lax_linalg.cholesky(cov)
    if method == "eigh":
        vectors, values = linalg_spectral.eigh(cov)
        return vectors * elementwise.sqrt(values)[..., None, :]
    u, s, _ = linalg_spectral.svd(cov)
    return u * elementwise.sqrt(s)[..., None, :]


@consumes_key
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):  # fmt: skip
    """Samples of N(mean, cov): mean + F z with z standard normal and F F^T = cov, F by
    `method` ('cholesky', 'eigh' or 'svd'; the last two also take semidefinite covariances).
    `shape` is the batch shape, which mean.shape[:-1] and cov.shape[:-2] broadcast to."""
    typed, dtype = parametrized("multivariate_normal", key, dtype, out_sharding)
    if method not in _FACTORIZATIONS:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = promote_dtypes_inexact(*to_operands("multivariate_normal", (mean, cov)))
    if mean.ndim < 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}"
        )
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {cov.shape}."
        )
    if shape is None:
        shape = manipulation.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = canonical_shape(shape)
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = _covariance_factor(cov, method)
    samples = normal(typed, (*shape, n), dtype)
    return mean + einsum("...ij,...j->...i", factor, samples)


@consumes_key
def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Matrices (n, m) with orthonormal columns (n >= m) or rows (n < m), uniform (Haar)
    on that set; m defaults to n: orthogonal matrices."""
    typed, dtype = parametrized("orthogonal", key, dtype, out_sharding)
    shape = canonical_shape(shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal(typed, (*shape, max(n, m), min(n, m)), dtype)
    q, r = linalg_spectral.qr(z, full_matrices=False)
    signs = elementwise.sign(lib.diagonal(r, axis1=-2, axis2=-1))
    q = q * signs[..., None, :]
    return manipulation.swapaxes(q, -1, -2) if n < m else q
