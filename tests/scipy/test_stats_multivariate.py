"""`scipy.stats.multivariate_normal` and `gaussian_kde` against SciPy (float64 inputs, float32
results), batched, under jit and grad; `random.multivariate_normal`'s samples have the
requested moments."""

import numpy as np
import pytest
import scipy.stats

import tracejit
import tracejit.numpy as jnp
from tracejit import random
from tracejit.scipy import stats

RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 3))
COV = A @ A.T + np.eye(3)
MEAN = np.array([0.5, -1.0, 2.0])


def test_logpdf_matches_scipy():
    x = RNG.normal(size=(5, 3))
    expected = scipy.stats.multivariate_normal(MEAN, COV).logpdf(x)
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, MEAN, COV), expected, rtol=1e-5)
    np.testing.assert_allclose(
        stats.multivariate_normal.pdf(x, MEAN, COV), np.exp(expected), rtol=1e-5
    )


def test_scalar_covariance_and_scalar_mean():
    x = RNG.normal(size=(4, 3))
    expected = scipy.stats.multivariate_normal(MEAN, 2.0 * np.eye(3)).logpdf(x)
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, MEAN, 2.0), expected, rtol=1e-5)
    np.testing.assert_allclose(
        stats.multivariate_normal.logpdf(0.7, 0.2, 2.0),
        scipy.stats.norm(0.2, np.sqrt(2.0)).logpdf(0.7),
        rtol=1e-6,
    )


def test_batched_covariances_broadcast_against_points():
    covs = np.stack([COV, 2 * COV])
    x = RNG.normal(size=(2, 3))
    got = stats.multivariate_normal.logpdf(x, MEAN, covs)
    expected = [scipy.stats.multivariate_normal(MEAN, c).logpdf(xi) for xi, c in zip(x, covs)]
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_logpdf_jits_and_differentiates_in_the_mean():
    x = RNG.normal(size=3)
    f = lambda m: stats.multivariate_normal.logpdf(x, m, COV)
    np.testing.assert_allclose(tracejit.jit(f)(MEAN), f(MEAN), rtol=1e-6)
    np.testing.assert_allclose(
        tracejit.grad(f)(jnp.asarray(MEAN, jnp.float32)), np.linalg.solve(COV, x - MEAN), rtol=1e-4
    )


def test_logpdf_bad_input_is_jax_s_error():
    with pytest.raises(ValueError, match="incompatible shapes"):
        stats.multivariate_normal.logpdf(np.ones(3), MEAN, np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(np.ones(3), MEAN, COV, allow_singular=True)


def test_random_multivariate_normal_moments():
    samples = np.asarray(random.multivariate_normal(random.PRNGKey(1), MEAN, COV, (20_000,)))
    assert samples.shape == (20_000, 3)
    np.testing.assert_allclose(samples.mean(0), MEAN, atol=0.06)
    np.testing.assert_allclose(np.cov(samples.T), COV, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("bw_method", [None, "scott", "silverman", 0.4])
def test_kde_density_matches_scipy(bw_method):
    data = RNG.normal(size=(2, 30))
    weights = RNG.uniform(0.5, 1.5, size=30)
    points = RNG.normal(size=(2, 7))
    ours = stats.gaussian_kde(data, bw_method=bw_method, weights=weights)
    theirs = scipy.stats.gaussian_kde(data, bw_method=bw_method, weights=weights)
    np.testing.assert_allclose(ours.covariance, theirs.covariance, rtol=1e-5)
    np.testing.assert_allclose(ours(points), theirs(points), rtol=1e-5)
    np.testing.assert_allclose(ours.logpdf(points), theirs.logpdf(points), rtol=1e-5)
    np.testing.assert_allclose(ours.neff, theirs.neff, rtol=1e-5)


def test_kde_integrals_match_scipy():
    data = RNG.normal(size=20)
    ours, theirs = stats.gaussian_kde(data), scipy.stats.gaussian_kde(data)
    np.testing.assert_allclose(
        ours.integrate_box_1d(-0.5, 1.0), theirs.integrate_box_1d(-0.5, 1.0), rtol=1e-5
    )
    np.testing.assert_allclose(
        ours.integrate_gaussian(0.3, 1.5), theirs.integrate_gaussian(0.3, 1.5), rtol=1e-5
    )
    other = RNG.normal(size=15) + 1
    np.testing.assert_allclose(
        ours.integrate_kde(stats.gaussian_kde(other)),
        theirs.integrate_kde(scipy.stats.gaussian_kde(other)),
        rtol=1e-5,
    )


def test_kde_is_a_pytree_that_jit_takes():
    kde = stats.gaussian_kde(RNG.normal(size=(2, 10)))
    points = RNG.normal(size=(2, 4))
    np.testing.assert_allclose(tracejit.jit(lambda k, p: k(p))(kde, points), kde(points), rtol=1e-5)


def test_kde_resample_is_jax_s():
    """JAX 0.10.2's `gaussian_kde(np.linspace(-1, 2, 7)).resample(PRNGKey(0), (3,))`."""
    kde = stats.gaussian_kde(np.linspace(-1, 2, 7).astype(np.float32))
    np.testing.assert_allclose(
        kde.resample(random.PRNGKey(0), (3,)), [[-2.2876418, 0.0100783, 1.6504385]], rtol=1e-5
    )


def test_kde_bad_input_is_jax_s_error():
    kde = stats.gaussian_kde(RNG.normal(size=(2, 10)))
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        kde(np.ones((3, 2)))
    with pytest.raises(ValueError, match="bw_method"):
        stats.gaussian_kde(np.ones(4), bw_method="foo")
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        kde.integrate_box([0, 0], [1, 1])


def test_a_float32_kde_takes_points_of_either_width_in_64_bit_mode():
    """As JAX: float64 points widen the computation, float32 points keep it in float32."""
    data = np.linspace(-3, 3, 16).astype(np.float32)
    theirs = scipy.stats.gaussian_kde(data.astype(np.float64))
    with tracejit.enable_x64():
        kde = stats.gaussian_kde(jnp.asarray(data))
        for dtype in (np.float64, np.float32):
            points = jnp.asarray(np.array([0.0, 1.0], dtype))
            density, log_density = kde.evaluate(points), kde.logpdf(points)
            assert density.dtype == log_density.dtype == dtype
            np.testing.assert_allclose(density, theirs.evaluate([0.0, 1.0]), rtol=1e-5)
            np.testing.assert_allclose(log_density, theirs.logpdf([0.0, 1.0]), rtol=1e-5)
