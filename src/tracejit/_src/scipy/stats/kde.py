"""`gaussian_kde`: SciPy's kernel density estimate with Gaussian kernels, as JAX has it (a
pytree, so it passes through `jit` and `vmap`).

The kernel's covariance is the data's weighted covariance times factor², the factor given by
Scott's or Silverman's rule of the effective sample size (or by the user). Densities are
evaluated in coordinates whitened by the Cholesky factor L of that covariance (L⁻¹ x), where
the kernel is the standard normal: each point's density is Σᵢ wᵢ N(L⁻¹(x - xᵢ)) / det L.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.nn.functions import logsumexp
from tracejit._src.numpy import lib, manipulation
from tracejit._src.numpy.creation import asarray, zeros
from tracejit._src.numpy.linalg import inv
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.numpy.reductions import sum as jnp_sum
from tracejit._src.numpy.statistics import cov
from tracejit._src.numpy.ufuncs import exp, log, sqrt, square
from tracejit._src.random.distributions import choice
from tracejit._src.random.keys import split
from tracejit._src.random.matrices import multivariate_normal
from tracejit._src.scipy import special
from tracejit._src.tree_util import register_pytree_node_class

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _bandwidth_factor(kde, bw_method):
    d, neff = kde.dataset.shape[0], kde.neff
    if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
        return neff ** (-1.0 / (d + 4))
    if isinstance(bw_method, str) and bw_method == "silverman":
        return (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
    if np.isscalar(bw_method) and not isinstance(bw_method, str):
        return bw_method
    if callable(bw_method):
        return bw_method(kde)
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")


def _whiten(factor, vectors):
    """L⁻¹ v for each column v of `vectors` (d, k)."""
    return lax_linalg.triangular_solve(factor, vectors, left_side=True, lower=True)


def _log_normal_kernel(factor, points, data):
    """log N(L⁻¹(p - x); 0, I) - log det L for every point p (columns of `points`, d x m) and
    datum x (d x n): an (m, n) array. Points of a wider dtype than the data widen it, as in
    JAX (float64 points against a float32 KDE give float64 densities)."""
    factor, points, data = promote_dtypes_inexact(factor, points, data)
    d = data.shape[0]
    difference = _whiten(factor, points)[:, :, None] - _whiten(factor, data)[:, None, :]
    log_det = jnp_sum(log(lib.diagonal(factor)))
    return -0.5 * jnp_sum(square(difference), axis=0) - log_det - d / 2 * math.log(2 * math.pi)


def _convolved_density(sum_cov, mean, dataset, weights):
    """Σᵢ wᵢ N(mean; xᵢ, sum_cov): the integral of a KDE's density times a Gaussian."""
    factor = lax_linalg.cholesky(sum_cov)
    return jnp_sum(weights * exp(_log_normal_kernel(factor, mean[:, None], dataset)[0]))


@register_pytree_node_class
class gaussian_kde:
    """A Gaussian kernel density estimate of `dataset` (d x n, or n points in 1-D)."""

    def __init__(self, dataset, bw_method=None, weights=None):
        (dataset,) = promote_dtypes_inexact(*to_operands("gaussian_kde", (dataset,)))
        dataset = manipulation.atleast_2d(dataset)
        if dtypes.is_complex(dataset.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        n = dataset.shape[1]
        if weights is None:
            weights = zeros(n, dataset.dtype) + 1.0 / n
        else:
            weights = manipulation.atleast_1d(asarray(weights)).astype(dataset.dtype)
            weights = weights / jnp_sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / jnp_sum(square(weights))
        factor = _bandwidth_factor(self, bw_method)
        data_covariance = manipulation.atleast_2d(cov(dataset, rowvar=True, bias=False,
                                                      aweights=weights))  # fmt: skip
        self.covariance = data_covariance * factor**2
        self.inv_cov = inv(data_covariance) / factor**2

    def tree_flatten(self):
        return tuple(getattr(self, name) for name in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = object.__new__(cls)
        for name, value in zip(_FIELDS, children, strict=True):
            setattr(kde, name, value)
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def _points(self, points):
        """Points as columns of a (d, m) array; a 1-D array of d values is one point."""
        points = manipulation.atleast_2d(asarray(points))
        if dtypes.is_complex(points.dtype):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return manipulation.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _log_kernels(self, points):
        factor = lax_linalg.cholesky(self.covariance)
        return _log_normal_kernel(factor, self._points(points), self.dataset)

    def evaluate(self, points):
        """The density at each point."""
        return jnp_sum(self.weights * exp(self._log_kernels(points)), axis=1)

    __call__ = pdf = evaluate

    def logpdf(self, x):
        """The log density at each point (a log-sum-exp: no underflow far from the data)."""
        return logsumexp(self._log_kernels(x), axis=1, b=self.weights[None, :])

    def integrate_gaussian(self, mean, cov):
        """∫ kde(x) N(x; mean, cov) dx."""
        mean = manipulation.atleast_1d(manipulation.squeeze(asarray(mean)))
        cov = manipulation.atleast_2d(asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        return _convolved_density(self.covariance + cov, mean, self.dataset, self.weights)

    def integrate_box_1d(self, low, high):
        """∫ kde(x) dx from `low` to `high` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = manipulation.squeeze(sqrt(self.covariance))
        low = manipulation.squeeze((low - self.dataset) / sigma)
        high = manipulation.squeeze((high - self.dataset) / sigma)
        return jnp_sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def integrate_kde(self, other):
        """∫ kde(x) other(x) dx."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        sum_cov = self.covariance + other.covariance
        factor = lax_linalg.cholesky(sum_cov)
        kernels = exp(_log_normal_kernel(factor, self.dataset, other.dataset))
        return jnp_sum(self.weights[:, None] * kernels * other.weights[None, :])

    def resample(self, key, shape=()):
        """Samples of shape (d, *shape): a datum drawn by weight plus kernel noise."""
        index_key, noise_key = split(key)
        shape = tuple(shape)
        indices = choice(index_key, self.n, shape=shape, p=self.weights)
        noise = multivariate_normal(
            noise_key,
            zeros(self.d, self.covariance.dtype),
            self.covariance,
            shape=shape,
            dtype=self.dataset.dtype,
        )
        return self.dataset[:, indices] + manipulation.moveaxis(noise, -1, 0)

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")
