"""Each distribution's samples agree with its theory: a Kolmogorov-Smirnov test against SciPy's
CDF for the continuous ones, sample mean and variance for the discrete ones (n = 100,000,
fixed keys, so the tests are deterministic)."""

import numpy as np
import pytest
from scipy import special, stats

import tracejit
from tracejit import random

N = 100_000
KEY = random.PRNGKey(1234)

CONTINUOUS = {
    "uniform": (lambda k: random.uniform(k, (N,), minval=-1.0, maxval=3.0), stats.uniform(-1, 4)),
    "normal": (lambda k: random.normal(k, (N,)), stats.norm()),
    "exponential": (lambda k: random.exponential(k, (N,)), stats.expon()),
    "laplace": (lambda k: random.laplace(k, (N,)), stats.laplace()),
    "logistic": (lambda k: random.logistic(k, (N,)), stats.logistic()),
    "cauchy": (lambda k: random.cauchy(k, (N,)), stats.cauchy()),
    "gumbel": (lambda k: random.gumbel(k, (N,)), stats.gumbel_r()),
    "gumbel_high": (lambda k: random.gumbel(k, (N,), mode="high"), stats.gumbel_r()),
    "truncated_normal": (
        lambda k: random.truncated_normal(k, -0.5, 1.5, (N,)),
        stats.truncnorm(-0.5, 1.5),
    ),
    "normal_f64": (lambda k: random.normal(k, (N,), np.float64), stats.norm()),
    "rayleigh": (lambda k: random.rayleigh(k, 2.0, (N,)), stats.rayleigh(scale=2.0)),
    "maxwell": (lambda k: random.maxwell(k, (N,)), stats.maxwell()),
    "double_sided_maxwell": (
        lambda k: abs(random.double_sided_maxwell(k, 0.0, 1.0, (N,))),
        stats.maxwell(),
    ),
    "pareto": (lambda k: random.pareto(k, 3.0, (N,)), stats.pareto(3.0)),
    "weibull_min": (
        lambda k: random.weibull_min(k, 2.0, 1.5, (N,)),
        stats.weibull_min(1.5, scale=2.0),
    ),
    "lognormal": (lambda k: random.lognormal(k, 0.5, (N,)), stats.lognorm(0.5)),
    "triangular": (
        lambda k: random.triangular(k, -1.0, 0.5, 2.0, (N,)),
        stats.triang(0.5, loc=-1.0, scale=3.0),
    ),
    "wald": (lambda k: random.wald(k, 1.5, (N,)), stats.invgauss(1.5)),
    "gamma_small": (lambda k: random.gamma(k, 0.3, (N,)), stats.gamma(0.3)),
    "gamma": (lambda k: random.gamma(k, 2.5, (N,)), stats.gamma(2.5)),
    "loggamma": (lambda k: tracejit.numpy.exp(random.loggamma(k, 2.5, (N,))), stats.gamma(2.5)),
    "beta": (lambda k: random.beta(k, 2.0, 0.5, (N,)), stats.beta(2.0, 0.5)),
    "chisquare": (lambda k: random.chisquare(k, 3.0, (N,)), stats.chi2(3.0)),
    "t": (lambda k: random.t(k, 4.0, (N,)), stats.t(4.0)),
    "f": (lambda k: random.f(k, 3.0, 5.0, (N,)), stats.f(3.0, 5.0)),
    "generalized_normal": (
        lambda k: random.generalized_normal(k, 1.5, (N,)),
        stats.gennorm(1.5),
    ),
}


@pytest.mark.parametrize("name", CONTINUOUS)
def test_continuous_distribution_ks(name, request):
    sample, law = CONTINUOUS[name]
    if name.endswith("f64"):
        request.getfixturevalue("enable_x64")
    values = np.asarray(tracejit.jit(sample)(KEY), np.float64)
    assert np.isfinite(values).all()
    assert stats.kstest(values, law.cdf).pvalue > 1e-3


def _moments(values):
    values = np.asarray(values, np.float64)
    return values.mean(), values.var()


# name -> (sample, mean, variance)
DISCRETE = {
    "bernoulli": (lambda k: random.bernoulli(k, 0.3, (N,)), 0.3, 0.21),
    "bernoulli_high": (lambda k: random.bernoulli(k, 0.3, (N,), mode="high"), 0.3, 0.21),
    "rademacher": (lambda k: random.rademacher(k, (N,)), 0.0, 1.0),
    "randint": (lambda k: random.randint(k, (N,), -3, 7), 1.5, (10**2 - 1) / 12),
    "choice_p": (
        lambda k: random.choice(k, 3, (N,), p=np.array([0.2, 0.3, 0.5])),
        1.3,
        0.3 + 4 * 0.5 - 1.3**2,
    ),
    "categorical": (
        lambda k: random.categorical(k, np.log(np.array([0.2, 0.3, 0.5])), shape=(N,)),
        1.3,
        0.3 + 4 * 0.5 - 1.3**2,
    ),
    "geometric": (lambda k: random.geometric(k, 0.3, (N,)), 1 / 0.3, 0.7 / 0.09),
    "poisson_small": (lambda k: random.poisson(k, 3.0, (N,)), 3.0, 3.0),
    "poisson_large": (lambda k: random.poisson(k, 40.0, (N,)), 40.0, 40.0),
    "binomial_small": (lambda k: random.binomial(k, 20.0, 0.2, (N,)), 4.0, 3.2),
    "binomial_large": (lambda k: random.binomial(k, 200.0, 0.7, (N,)), 140.0, 42.0),
    "multinomial_first": (
        lambda k: random.multinomial(k, 30.0, np.array([0.2, 0.3, 0.5]), shape=(N, 3))[:, 0],
        6.0,
        4.8,
    ),
    "permutation": (lambda k: random.permutation(k, N)[: N // 2], (N - 1) / 2, None),
}


@pytest.mark.parametrize("name", DISCRETE)
def test_discrete_distribution_moments(name):
    sample, mean, variance = DISCRETE[name]
    got_mean, got_variance = _moments(tracejit.jit(sample)(KEY))
    scale = np.sqrt(variance if variance is not None else N**2 / 12)
    assert abs(got_mean - mean) < 5 * scale / np.sqrt(N)
    if variance is not None:
        assert abs(got_variance - variance) < 0.05 * variance


def test_permutation_is_a_permutation():
    values = np.asarray(random.permutation(KEY, 5000))
    np.testing.assert_array_equal(np.sort(values), np.arange(5000))


def test_choice_without_replacement_is_distinct():
    values = np.asarray(random.choice(KEY, 50, (50,), replace=False))
    np.testing.assert_array_equal(np.sort(values), np.arange(50))


def test_split_keys_are_independent_streams():
    keys = random.split(KEY, 64)
    means = [np.asarray(random.uniform(k, (2000,))).mean() for k in keys]
    assert stats.kstest(means, stats.norm(0.5, np.sqrt(1 / 12 / 2000)).cdf).pvalue > 1e-3


def test_dirichlet_moments():
    alpha = np.array([0.5, 1.0, 2.5])
    values = np.asarray(tracejit.jit(lambda k: random.dirichlet(k, alpha, (N,)))(KEY))
    np.testing.assert_allclose(values.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(values.mean(0), alpha / alpha.sum(), atol=5e-3)


def test_ball_is_uniform_in_the_ball():
    d = 3
    points = np.asarray(tracejit.jit(lambda k: random.ball(k, d, shape=(N,)))(KEY), np.float64)
    radii = np.linalg.norm(points, axis=-1)
    assert radii.max() <= 1.0
    assert stats.kstest(radii, lambda r: r**d).pvalue > 1e-3  # P(|x| <= r) = r**d


@pytest.mark.parametrize("a", [0.2, 1.0, 4.0])
def test_gamma_reparameterized_gradient_is_unbiased(a):
    """E[Gamma(a)] = a, so the mean of d(sample)/da is 1; with log_space, E[log G] = digamma(a),
    whose derivative is trigamma(a)."""
    alphas = np.full(N, a, np.float32)
    grads = tracejit.jit(tracejit.grad(lambda x: random.gamma(KEY, x).sum()))(alphas)
    assert abs(np.asarray(grads, np.float64).mean() - 1.0) < 0.02
    log_grads = tracejit.jit(tracejit.grad(lambda x: random.loggamma(KEY, x).sum()))(alphas)
    trigamma = float(special.polygamma(1, a))
    assert abs(np.asarray(log_grads, np.float64).mean() - trigamma) < 0.02 * trigamma
