"""tracejit.scipy.stats's distributions: values against SciPy at random points of the support
(float32 and float64), against JAX 0.10.2 at the edges (outside the support, invalid
parameters, NaN and infinities: `make_jax_reference_stats.py`), JAX's dtypes and weak types,
jit and staging against eager, vmap against a loop, and gradients against finite differences.
"""

import importlib.util
import json
import pathlib

import numpy as np
import pytest
import scipy.stats as ss
from helpers import assert_close, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.scipy import stats
from tracejit.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "jax_stats_reference", pathlib.Path(__file__).parent / "make_jax_reference_stats.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
RECORDED = json.loads(reference.DATA.read_text())
FUNCTIONS = [f"{d}.{f}" for d, f in reference.functions()]


def _fun(name):
    dist, fun = name.split(".")
    return getattr(getattr(stats, dist), fun)


# --- JAX at the edges -------------------------------------------------------------------------


@pytest.mark.parametrize("name", FUNCTIONS)
def test_edges_float32(name):
    dist, fun = name.split(".")
    want = RECORDED["float32"][name]
    got = _fun(name)(*reference.grid_arguments(dist, fun, np.float32))
    assert str(got.dtype) == want["dtype"]
    assert_close(got, np.asarray(want["values"]), 2e-5, atol=2e-6, err_msg=name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_edges_float64(name, enable_x64):
    dist, fun = name.split(".")
    want = RECORDED["float64"][name]
    got = _fun(name)(*reference.grid_arguments(dist, fun, np.float64))
    assert str(got.dtype) == want["dtype"]
    # JAX's float64 betaln is good to about 1e-6 only; tracejit's agrees with SciPy's.
    tol = 2e-6 if dist == "betabinom" else 1e-10
    assert_close(got, np.asarray(want["values"]), tol, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_python_scalars_dtype_and_weak_type(name):
    dist, fun = name.split(".")
    want = RECORDED["float32"][name]
    got = _fun(name)(*reference.scalar_arguments(dist, fun))
    assert (str(got.dtype), got.weak_type) == (want["scalar_dtype"], want["scalar_weak_type"])


# --- SciPy at random points of the support ----------------------------------------------------


def _loc_scale(rng, n, x):
    loc, scale = rng.uniform(-1, 1, n), rng.uniform(0.5, 2, n)
    return loc + scale * x, (loc, scale)


def _between(rng, n, low, high):
    return rng.uniform(low, high, n)


# distribution -> sampler(rng, n) -> (first argument in the support, parameters)
SUPPORT = {
    "norm": lambda rng, n: _loc_scale(rng, n, rng.uniform(-3, 3, n)),
    "cauchy": lambda rng, n: _loc_scale(rng, n, rng.uniform(-5, 5, n)),
    "laplace": lambda rng, n: _loc_scale(rng, n, rng.choice([-1, 1], n) * rng.uniform(0.1, 3, n)),
    "logistic": lambda rng, n: _loc_scale(rng, n, rng.uniform(-5, 5, n)),
    "gumbel_l": lambda rng, n: _loc_scale(rng, n, rng.uniform(-3, 1.5, n)),
    "gumbel_r": lambda rng, n: _loc_scale(rng, n, rng.uniform(-1.5, 3, n)),
    "expon": lambda rng, n: _loc_scale(rng, n, rng.uniform(0.1, 4, n)),
    "uniform": lambda rng, n: _loc_scale(rng, n, rng.uniform(0.05, 0.95, n)),
    "t": lambda rng, n: (rng.uniform(-4, 4, n), (rng.uniform(1, 10, n),)),
    "pareto": lambda rng, n: (rng.uniform(1.1, 5, n), (rng.uniform(0.5, 3, n),)),
    "wrapcauchy": lambda rng, n: (rng.uniform(0.1, 6.1, n), (rng.uniform(0.1, 0.9, n),)),
    "vonmises": lambda rng, n: (rng.uniform(-3, 3, n), (rng.uniform(0.5, 5, n),)),
    "gennorm": lambda rng, n: (
        rng.choice([-1, 1], n) * rng.uniform(0.2, 2.5, n),
        (rng.uniform(0.8, 3, n),),
    ),
    "beta": lambda rng, n: (
        rng.uniform(0.05, 0.95, n),
        (rng.uniform(0.5, 4, n), rng.uniform(0.5, 4, n)),
    ),
    "gamma": lambda rng, n: (rng.uniform(0.1, 6, n), (rng.uniform(0.5, 5, n),)),
    "chi2": lambda rng, n: (rng.uniform(0.1, 8, n), (rng.uniform(1, 8, n),)),
    "truncnorm": lambda rng, n: _truncnorm(rng, n),
    "bernoulli": lambda rng, n: (rng.integers(0, 2, n), (rng.uniform(0.1, 0.9, n),)),
    "binom": lambda rng, n: _binomial_counts(rng, n, (rng.uniform(0.1, 0.9, n),)),
    "betabinom": lambda rng, n: _binomial_counts(
        rng, n, (rng.uniform(0.5, 3, n), rng.uniform(0.5, 3, n))
    ),
    "geom": lambda rng, n: (rng.integers(1, 10, n), (rng.uniform(0.1, 0.9, n),)),
    "nbinom": lambda rng, n: (
        rng.integers(0, 10, n),
        (rng.uniform(0.5, 5, n), rng.uniform(0.1, 0.9, n)),
    ),
    "poisson": lambda rng, n: (rng.integers(0, 12, n), (rng.uniform(0.5, 10, n),)),
}


def _truncnorm(rng, n):
    a = rng.uniform(-2, 1, n)
    b = a + rng.uniform(0.5, 3, n)
    return a + (b - a) * rng.uniform(0.05, 0.95, n), (a, b)


def _binomial_counts(rng, n, params):
    trials = rng.integers(1, 10, n)  # counts below n: n + eps and n - eps are in the support
    return rng.integers(0, trials), (trials.astype(float), *params)


def _arguments(name, dtype, n=12, seed=0):
    """Arguments of `name` in the support (quantile functions: probabilities), in `dtype`."""
    dist, fun = name.split(".")
    rng = np.random.default_rng(seed)
    first, params = SUPPORT[dist](rng, n)
    if fun in ("ppf", "isf"):
        first = rng.uniform(0.02, 0.98, n)
    if fun == "entropy":
        return [np.asarray(rng.uniform(0.5, 200, n), dtype)]
    return [np.asarray(a, dtype) for a in (first, *params)]


def _scipy(name, args):
    dist, fun = name.split(".")
    if fun == "entropy":
        return ss.poisson(args[0]).entropy()
    return getattr(getattr(ss, dist), fun)(*args)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values_float32(name):
    args = _arguments(name, np.float32)
    got = check_traced_matches_eager(_fun(name), *args, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32
    want = _scipy(name, [a.astype(np.float64) for a in args])
    assert_close(got, want, 2e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values_float64(name, enable_x64):
    args = _arguments(name, np.float64, seed=1)
    got = _fun(name)(*args)
    assert got.dtype == np.float64
    # JAX's entropy truncates the sum over the support and, above mu = 100, the asymptotic
    # series at 1 / (12 mu): both good to about 1e-6.
    tol = 1e-5 if name == "poisson.entropy" else 1e-9
    assert_close(got, _scipy(name, args), tol, atol=1e-12, err_msg=name)


# Functions computed by iterations (series, continued fractions in while loops): batched, a loop
# runs until every member has converged, so members may take a few more (better) steps.
ITERATIVE = {
    *(f"{d}.{f}" for d in ("beta", "chi2", "gamma") for f in ("cdf", "logcdf", "sf", "logsf")),
    "gennorm.cdf",
    "poisson.cdf",
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_jit_and_vmap(name):
    args = [jnp.asarray(a) for a in _arguments(name, np.float32, n=6, seed=2)]
    fun = _fun(name)
    tol = 1e-4 if name in ITERATIVE else 1e-5
    assert_close(tracejit.jit(fun)(*args), fun(*args), tol, atol=1e-6, err_msg=name)
    check_vmap(fun, args, (0,) * len(args), tol=tol, atol=1e-6)
    check_vmap(fun, args, (0,) + (None,) * (len(args) - 1), tol=tol, atol=1e-6)


# --- gradients --------------------------------------------------------------------------------

# Counts are not differentiated (the functions are piecewise constant or undefined between
# integers); nor are beta's CDFs in a and b (betainc's derivatives in them: JAX refuses them
# too); everything else is, as in JAX.
DISCRETE_FIRST = {f"{d}.{f}" for d, f in reference.functions() if d in reference.DISCRETE}
BETA_CDFS = {f"beta.{f}" for f in ("cdf", "logcdf", "sf", "logsf")}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_grads(name):
    args = [np.asarray(a, np.float64) for a in _arguments(name, np.float64, n=4, seed=3)]
    fun = _fun(name)
    if name in DISCRETE_FIRST and name != "poisson.entropy":
        counts, args = args[0], args[1:]
        check_grads(lambda *params: fun(counts, *params), args, order=1, rtol=1e-4, atol=1e-4)
    elif name in BETA_CDFS:
        x, a, b = args
        in_x_loc_scale = (x, np.zeros_like(x), np.ones_like(x))
        check_grads(
            lambda *xls: fun(xls[0], a, b, *xls[1:]), in_x_loc_scale, 1, rtol=1e-4, atol=1e-4
        )
        with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
            tracejit.grad(lambda a: fun(0.3, a, 2.0).sum())(a)
    else:
        check_grads(fun, args, order=1, rtol=1e-4, atol=1e-4)


# --- the multivariate ones --------------------------------------------------------------------


def test_dirichlet_against_scipy(enable_x64):
    rng = np.random.default_rng(4)
    alpha = rng.uniform(0.5, 3, 4)
    x = rng.dirichlet(np.ones(4), size=5).T  # components along the first axis
    assert_close(stats.dirichlet.logpdf(x, alpha), ss.dirichlet.logpdf(x, alpha), 1e-10)
    assert_close(stats.dirichlet.pdf(x[:3], alpha), ss.dirichlet.pdf(x, alpha), 1e-10)
    off = np.array([0.5, 0.6, -0.05, -0.05])
    assert float(stats.dirichlet.logpdf(off, alpha)) == -np.inf
    check_grads(lambda a: stats.dirichlet.logpdf(x, a), (alpha,), order=1)


def test_dirichlet_errors():
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.dirichlet.logpdf(np.ones((2, 2)) / 2, np.ones((2, 2)))
    with pytest.raises(ValueError, match="one entry fewer"):
        stats.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))


def test_multinomial_against_scipy(enable_x64):
    p = np.array([0.2, 0.3, 0.5])
    x = np.array([[1, 2, 3], [0, 0, 6], [2, 2, 1]])
    for row in x[:2]:
        assert_close(stats.multinomial.logpmf(row, 6, p), ss.multinomial.logpmf(row, 6, p), 1e-12)
    assert float(stats.multinomial.logpmf(x[2], 6, p)) == -np.inf  # counts sum to 5, not 6
    # As in JAX, the counts' sum is taken over all of x, not per row: rows are not batched.
    assert np.all(np.asarray(stats.multinomial.logpmf(x[:2], 6, p)) == -np.inf)
    assert_close(stats.multinomial.pmf(x[0], 6, p), ss.multinomial.pmf(x[0], 6, p), 1e-12)
    check_grads(lambda p: stats.multinomial.logpmf(x[0], 6, p), (p,), order=1)
    with pytest.raises(ValueError, match="integer type"):
        stats.multinomial.logpmf(x.astype(float), 6, p)
