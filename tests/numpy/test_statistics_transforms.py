"""The NaN-aware reductions, statistics, histograms, set operations, polynomials and windows
under transformations: values against NumPy on random inputs, derivatives by finite
differences (`check_grads`), vmap against a loop, and the `ConcretizationTypeError` of a
value-dependent size under jit. Dtypes, weak types and errors against recorded JAX results
are in `test_stats_reference.py`."""

import numpy as np
import pytest
from helpers import assert_close, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.errors import ConcretizationTypeError
from tracejit.test_util import check_grads

rng = np.random.RandomState(1)
X = rng.randn(4, 5).astype(np.float32)
XN = X.copy()
XN[0, 2] = XN[3, 0] = XN[3, 4] = np.nan
W = rng.rand(4, 5).astype(np.float32) + 0.1
INTS = rng.randint(-4, 5, size=(13,)).astype(np.int32)
INTS2 = rng.randint(-4, 5, size=(9,)).astype(np.int32)


# --- values against NumPy ---------------------------------------------------------------------

NUMPY_CASES = {
    "nansum": (lambda m, a: m.nansum(a, axis=1), (XN,)),
    "nanprod": (lambda m, a: m.nanprod(a, axis=0), (XN,)),
    "nanmax": (lambda m, a: m.nanmax(a, axis=(0, 1)), (XN,)),
    "nanmin": (lambda m, a: m.nanmin(a, axis=1, keepdims=True), (XN,)),
    "nanmean": (lambda m, a: m.nanmean(a, axis=0), (XN,)),
    "nanvar": (lambda m, a: m.nanvar(a, axis=1, ddof=1), (XN,)),
    "nanstd": (lambda m, a: m.nanstd(a), (XN,)),
    "nanargmax": (lambda m, a: m.nanargmax(a, axis=1), (XN,)),
    "nanargmin": (lambda m, a: m.nanargmin(a), (XN,)),
    "nancumsum": (lambda m, a: m.nancumsum(a, axis=1), (XN,)),
    "nancumprod": (lambda m, a: m.nancumprod(a), (XN,)),
    "var-where": (lambda m, a: m.var(a, axis=1, where=a > -0.5), (X,)),
    "std-mean": (lambda m, a: m.std(a, axis=0, mean=m.mean(a, axis=0, keepdims=True)), (X,)),
    "ptp": (lambda m, a: m.ptp(a, axis=0), (X,)),
    "count_nonzero": (lambda m, a: m.count_nonzero(a, axis=0), (INTS.reshape(1, -1),)),
    "average": (lambda m, a, w: m.average(a, axis=1, weights=w, returned=True), (X, W)),
    "cov": (lambda m, a, w: m.cov(a, aweights=w[0], ddof=2), (X, W)),
    "corrcoef": (lambda m, a: m.corrcoef(a, rowvar=False), (X,)),
    "gradient": (lambda m, a: m.gradient(a, 0.5, np.cumsum(W[0])), (X,)),
    "trapezoid": (lambda m, a: m.trapezoid(a, x=np.cumsum(W[0])), (X,)),
    "histogram": (lambda m, a, w: m.histogram(a, bins=4, weights=w, density=True), (X, W)),
    "histogram_bin_edges": (lambda m, a: m.histogram_bin_edges(a, bins=6), (X,)),
    "histogram2d": (lambda m, a, w: m.histogram2d(a[0], a[1], bins=(2, 3), weights=w[0]), (X, W)),
    "histogramdd": (lambda m, a: m.histogramdd(a.T, bins=(2, 2, 3, 2)), (X,)),
    "isin": (lambda m, a, b: m.isin(a, b), (INTS, INTS2)),
    "union1d": (lambda m, a, b: m.union1d(a, b), (INTS, INTS2)),
    "intersect1d": (lambda m, a, b: m.intersect1d(a, b, return_indices=True), (INTS, INTS2)),
    "setdiff1d": (lambda m, a, b: m.setdiff1d(a, b), (INTS, INTS2)),
    "setxor1d": (lambda m, a, b: m.setxor1d(a, b), (INTS, INTS2)),
    "poly": (lambda m, a: m.poly(a[0]), (X,)),
    "polyadd": (lambda m, a: m.polyadd(a[0], a[1, :3]), (X,)),
    "polysub": (lambda m, a: m.polysub(a[0, :2], a[1]), (X,)),
    "polymul": (lambda m, a: m.polymul(a[0], a[1, :3]), (X,)),
    "polydiv": (lambda m, a: m.polydiv(a[0], a[1, :3]), (X,)),
    "polyder": (lambda m, a: m.polyder(a[0], 2), (X,)),
    "polyint": (lambda m, a: m.polyint(a[0], 2, np.array([1.0, -2.0])), (X,)),
    "trim_zeros": (lambda m, a: m.trim_zeros(a), (np.array([0, 0, 3, 0, 2, 0], np.int32),)),
    **{
        name: (lambda m, name=name: getattr(m, name)(9), ())
        for name in ("bartlett", "blackman", "hamming", "hanning")
    },
    "kaiser": (lambda m: m.kaiser(9, 3.5), ()),
}


# Results whose size depends on the values: eager only.
VALUE_DEPENDENT = {"union1d", "intersect1d", "setdiff1d", "setxor1d", "trim_zeros"}


def _leaves(result):
    if isinstance(result, (tuple, list)):
        return [leaf for r in result for leaf in _leaves(r)]
    return [result]


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_matches_numpy(name):
    fun, args = NUMPY_CASES[name]
    want = _leaves(fun(np, *args))
    results = [fun(jnp, *args)]
    if name not in VALUE_DEPENDENT:
        results.append(tracejit.jit(lambda *a: fun(jnp, *a))(*args))
    for result in results:
        got = _leaves(result)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_close(np.asarray(g), np.asarray(w, np.asarray(g).dtype), 3e-5, atol=3e-5)


# --- derivatives ------------------------------------------------------------------------------

GRAD_CASES = {
    "nansum": lambda a: jnp.nansum(jnp.where(a > 1.0, jnp.nan, a) ** 2, axis=1),
    "nanmean": lambda a: jnp.nanmean(jnp.where(a > 1.0, jnp.nan, a), axis=0),
    "nanvar": lambda a: jnp.nanvar(jnp.where(a > 1.0, jnp.nan, a), axis=1),
    "nanstd": lambda a: jnp.nanstd(jnp.where(a > 1.0, jnp.nan, a)),
    "nanmax": lambda a: jnp.nanmax(jnp.where(a > 1.0, jnp.nan, a), axis=0),
    "nanprod": lambda a: jnp.nanprod(jnp.where(a > 1.0, jnp.nan, a), axis=1),
    "nancumsum": lambda a: jnp.nancumsum(jnp.where(a > 1.0, jnp.nan, a), axis=1),
    "var-where": lambda a: jnp.var(a, axis=0, where=jnp.asarray(W) > 0.5, ddof=1),
    "std-where": lambda a: jnp.std(a, where=jnp.asarray(W) > 0.3),
    "average": lambda a: jnp.average(a, axis=0, weights=jnp.abs(a) + 1.0),
    "cov": lambda a: jnp.cov(a, aweights=jnp.asarray(W[0])),
    "corrcoef": lambda a: jnp.corrcoef(a),
    "gradient": lambda a: jnp.gradient(a, 0.5, jnp.asarray(np.cumsum(W[0]))),
    "trapezoid": lambda a: jnp.trapezoid(a, x=jnp.asarray(np.cumsum(W[0]))),
    "histogram-weights": lambda a: jnp.histogram(jnp.asarray(X), bins=3, weights=a)[0],
    "quantile-weights": lambda a: jnp.quantile(
        jnp.asarray(X), 0.4, axis=1, weights=a**2 + 0.5, method="inverted_cdf"
    ),
    "poly": lambda a: jnp.poly(a[0]),
    "polymul": lambda a: jnp.polymul(a[0], a[1]),
    "polydiv": lambda a: jnp.polydiv(a[0], a[1, :3] + jnp.asarray([3.0, 0.0, 0.0])),
    "polyder": lambda a: jnp.polyder(a[0], 2),
    "polyint": lambda a: jnp.polyint(a[0], 2, a[1, :2]),
    "intersect1d-size": lambda a: jnp.intersect1d(a[0], a[0, ::-1], size=3),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads(name):
    check_grads(GRAD_CASES[name], (X * 0.9,), order=1, modes=("fwd", "rev"), atol=1e-3, rtol=1e-3)


# --- vmap against a loop ----------------------------------------------------------------------

VMAP_CASES = {
    "nanmean": lambda a: jnp.nanmean(a, axis=0),
    "nanvar-where": lambda a: jnp.nanvar(a, where=a > -1.0),
    "nanargmin": lambda a: jnp.nanargmin(a),
    "nancumprod": lambda a: jnp.nancumprod(a),
    "var-mean": lambda a: jnp.var(a, mean=0.5),
    "cumulative_sum": lambda a: jnp.cumulative_sum(a, include_initial=True),
    "average": lambda a: jnp.average(a, weights=jnp.abs(a), returned=True),
    "cov": lambda a: jnp.cov(a, a[::-1]),
    "gradient": lambda a: jnp.gradient(a),
    "trapezoid": lambda a: jnp.trapezoid(a, dx=0.3),
    "histogram": lambda a: jnp.histogram(a, bins=3, range=(-1.0, 1.0)),
    "histogram-edges": lambda a: jnp.histogram(jnp.nan_to_num(a), bins=jnp.asarray([-1.0, 0, 2])),
    "isin": lambda a: jnp.isin(a, jnp.asarray(XN[0])),
    "union1d": lambda a: jnp.union1d(a, a * 2, size=12, fill_value=0.0),
    "intersect1d": lambda a: jnp.intersect1d(a, -a, size=3, return_indices=True),
    "setdiff1d": lambda a: jnp.setdiff1d(a, a[:2], size=4),
    "setxor1d": lambda a: jnp.setxor1d(a, a[1:3] + 1.0, size=6),
    "unique_all": lambda a: jnp.unique_all(a, size=5),
    "quantile-weights": lambda a: jnp.nanquantile(
        a, 0.5, weights=jnp.abs(a), method="inverted_cdf"
    ),
    "polymul": lambda a: jnp.polymul(a, a[:2]),
    "polydiv": lambda a: jnp.polydiv(a, jnp.asarray([1.0, 2.0])),
    "polyint": lambda a: jnp.polyint(a, k=a[0]),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap(name):
    check_vmap(VMAP_CASES[name], (np.round(XN, 1),), (0,), tol=1e-5, atol=1e-5, jit=True)


# --- value-dependent sizes under jit ------------------------------------------------------------

SIZE_CASES = {
    "union1d": (lambda a, b: jnp.union1d(a, b), "ar1"),
    "intersect1d": (lambda a, b: jnp.intersect1d(a, b), "ar1"),
    "setdiff1d": (lambda a, b: jnp.setdiff1d(a, b), "ar1"),
    "setxor1d": (lambda a, b: jnp.setxor1d(a, b), "ar1"),
    "setdiff1d-second": (lambda a, b: jnp.setdiff1d(np.asarray(INTS), b), "ar2"),
    "unique_values": (lambda a, b: jnp.unique_values(a), "ar"),
    "unique_all": (lambda a, b: jnp.unique_all(b), "ar"),
}


@pytest.mark.parametrize("name", sorted(SIZE_CASES))
def test_traced_operands_need_size(name):
    fun, argname = SIZE_CASES[name]
    with pytest.raises(ConcretizationTypeError, match=f"'{argname}'"):
        tracejit.jit(fun)(INTS, INTS2)


@pytest.mark.parametrize(
    "fun",
    [
        lambda n: jnp.hanning(n),
        lambda n: jnp.histogram_bin_edges(jnp.ones(3), bins=n),
        lambda n: jnp.trim_zeros(jnp.zeros(3) + n),
    ],
    ids=["hanning", "histogram_bin_edges", "trim_zeros"],
)
def test_static_arguments_must_be_concrete(fun):
    with pytest.raises(ConcretizationTypeError):
        tracejit.jit(fun)(3)


def test_polyder_order_is_a_static_argument_of_its_jit():
    # JAX's polyder is a jit with static `m`: a traced order cannot be hashed (ValueError)
    with pytest.raises((ValueError, ConcretizationTypeError)):
        tracejit.jit(lambda n: jnp.polyder(jnp.ones(3), n))(3)
