"""Record what JAX 0.10.2 gives for the statistics, NaN-aware reductions, histograms, set
operations, polynomials and windows of `tracejit.numpy`: values, dtypes, weak types and error
classes, into `data/jax_reference_stats.json`, which `test_stats_reference.py` replays eagerly
and under jit.

Run by hand with real JAX (never imported by the package or the tests):

    cd tests/numpy && /work/jaxref/bin/python make_jax_reference_stats.py

Each case is an expression over `jnp`, `np` and the named inputs below; a case marked
`eager_only` needs concrete values (its result's shape depends on them).
"""

import json
import pathlib

import numpy as np

rng = np.random.RandomState(0)
with_nans = rng.randn(3, 4).astype(np.float32)
with_nans[0, 1] = with_nans[2, 3] = np.nan
all_nan_row = with_nans.copy()
all_nan_row[1] = np.nan
INPUTS = {
    "x": rng.randn(3, 4).astype(np.float32),
    "xn": with_nans,
    "xa": all_nan_row,
    "h": rng.randn(2, 3).astype(np.float16),
    "i": rng.randint(-3, 4, size=(3, 4)).astype(np.int32),
    "i8": rng.randint(-3, 4, size=(6,)).astype(np.int8),
    "u8": rng.randint(0, 5, size=(6,)).astype(np.uint8),
    "b": rng.rand(3, 4) > 0.5,
    "m": rng.rand(3, 4) > 0.3,
    "c": (rng.randn(3, 4) + 1j * rng.randn(3, 4)).astype(np.complex64),
    "v": rng.randn(12).astype(np.float32),
    "w": rng.rand(12).astype(np.float32),
    "s1": np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.int32),
    "s2": np.array([2, 7, 1, 8, 2, 8, 1, 8], np.int32),
    "sf": np.array([1.0, np.nan, 2.0, np.nan, 1.0, 0.5], np.float32),
    "p": np.array([1.0, -3.0, 2.0], np.float32),
    "q": np.array([2.0, 0.0, 1.0, -1.0], np.float32),
    "pi": np.array([1, 2, 3], np.int32),
    "z": np.array([0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0], np.float32),
    "e": np.zeros((0,), np.float32),
}

# (expression, eager_only)
CASES = [
    # reductions: where= / initial= / promote_integers / correction / mean=
    ("jnp.sum(x, axis=1, where=m)", False),
    ("jnp.sum(i, where=m, initial=2)", False),
    ("jnp.sum(i8, promote_integers=False)", False),
    ("jnp.sum(u8)", False),
    ("jnp.prod(x, axis=0, where=m, keepdims=True)", False),
    ("jnp.max(x, axis=1, where=m, initial=-1.0)", False),
    ("jnp.min(i, axis=0, where=m, initial=0)", False),
    ("jnp.max(x, where=m)", False),
    ("jnp.sum(x, where=i)", False),
    ("jnp.sum(x, initial=x[0])", False),
    ("jnp.all(x > 0, axis=1, where=m)", False),
    ("jnp.any(x > 0, axis=0, where=m)", False),
    ("jnp.mean(x, axis=1, where=m)", False),
    ("jnp.mean(i, where=m, keepdims=True)", False),
    ("jnp.mean(x, where=i)", False),
    ("jnp.var(x, axis=1, where=m)", False),
    ("jnp.var(x, where=m, ddof=1)", False),
    ("jnp.var(x, axis=0, where=jnp.zeros((3, 1), bool))", False),
    ("jnp.var(x, axis=1, mean=jnp.mean(x, axis=1, keepdims=True))", False),
    ("jnp.var(x, mean=0.0)", False),
    ("jnp.var(x, axis=0, correction=1)", False),
    ("jnp.var(x, ddof=1, correction=1)", False),
    ("jnp.var(c, axis=1, where=m)", False),
    ("jnp.var(i, dtype=jnp.float16)", False),
    ("jnp.var(c, dtype=jnp.float32)", False),
    ("jnp.var(h, axis=0)", False),
    ("jnp.std(x, axis=1, where=m, ddof=1)", False),
    ("jnp.std(x, axis=0, mean=jnp.zeros(4))", False),
    ("jnp.std(i, dtype=jnp.int32)", False),
    ("jnp.std(2.0)", False),
    ("jnp.ptp(x, axis=1)", False),
    ("jnp.ptp(u8)", False),
    ("jnp.ptp(i, axis=0, keepdims=True)", False),
    ("jnp.ptp(b)", False),
    ("jnp.count_nonzero(i)", False),
    ("jnp.count_nonzero(i, axis=0, keepdims=True)", False),
    ("jnp.count_nonzero(c, axis=1)", False),
    ("jnp.count_nonzero(2.0)", False),
    ("jnp.cumulative_sum(i8, include_initial=True)", False),
    ("jnp.cumulative_sum(x, axis=1)", False),
    ("jnp.cumulative_sum(x)", False),
    ("jnp.cumulative_sum(1.0)", False),
    ("jnp.cumulative_prod(u8, include_initial=True)", False),
    ("jnp.cumulative_prod(b, axis=0, dtype=jnp.float32)", False),
    ("jnp.cumsum(i, axis=1, dtype=bool)", False),
    ("jnp.cumsum(i8)", False),
    # NaN-aware reductions
    ("jnp.nansum(xn)", False),
    ("jnp.nansum(xa, axis=1)", False),
    ("jnp.nansum(xn, axis=0, where=m, initial=1.0)", False),
    ("jnp.nansum(i8)", False),
    ("jnp.nansum(h, axis=1, dtype=jnp.float32)", False),
    ("jnp.nanprod(xn, axis=1, keepdims=True)", False),
    ("jnp.nanprod(i, axis=0)", False),
    ("jnp.nanmax(xa, axis=1)", False),
    ("jnp.nanmax(xa, axis=1, initial=-5.0)", False),
    ("jnp.nanmax(xn, where=m, initial=0.0)", False),
    ("jnp.nanmin(xa, axis=1, keepdims=True)", False),
    ("jnp.nanmin(i, axis=0)", False),
    ("jnp.nanmin(e)", False),
    ("jnp.nanmin(xn, where=m)", False),
    ("jnp.nanmean(xa, axis=1)", False),
    ("jnp.nanmean(xn, axis=0, where=m)", False),
    ("jnp.nanmean(i)", False),
    ("jnp.nanmean(h)", False),
    ("jnp.nanmean(2.0)", False),
    ("jnp.nanmean(xn, dtype=jnp.float16)", False),
    ("jnp.nanvar(xa, axis=1)", False),
    ("jnp.nanvar(xn, axis=0, ddof=1)", False),
    ("jnp.nanvar(xn, axis=1, where=m, keepdims=True)", False),
    ("jnp.nanvar(xn, axis=1, mean=jnp.zeros((3, 1)))", False),
    ("jnp.nanvar(i, ddof=1)", False),
    ("jnp.nanvar(h)", False),
    ("jnp.nanvar(c)", False),
    ("jnp.nanvar(x, dtype=jnp.int32)", False),
    ("jnp.nanstd(xn, axis=1)", False),
    ("jnp.nanstd(xa, axis=0, ddof=2)", False),
    ("jnp.nanstd(c, axis=0)", False),
    ("jnp.nanargmax(xa, axis=1)", False),
    ("jnp.nanargmax(xn)", False),
    ("jnp.nanargmin(xa, axis=1, keepdims=True)", False),
    ("jnp.nanargmin(i, axis=0)", False),
    ("jnp.nanargmax(e)", False),
    ("jnp.nancumsum(xn, axis=1)", False),
    ("jnp.nancumsum(xn)", False),
    ("jnp.nancumsum(i8)", False),
    ("jnp.nancumprod(xn, axis=0)", False),
    ("jnp.nancumprod(b, axis=1)", False),
    # average, cov, corrcoef
    ("jnp.average(x)", False),
    ("jnp.average(i, axis=1, returned=True)", False),
    ("jnp.average(x, axis=0, weights=w[:3], returned=True, keepdims=True)", False),
    ("jnp.average(x, axis=(0, 1), weights=x * 0 + 1, returned=True)", False),
    ("jnp.average(x, axis=(1, 0), weights=jnp.abs(x.T))", False),
    ("jnp.average(x, weights=w[:4])", False),
    ("jnp.average(x, axis=0, weights=w[:4])", False),
    ("jnp.average(h, axis=1, weights=h)", False),
    ("jnp.average(i, weights=i)", False),
    ("jnp.cov(x)", False),
    ("jnp.cov(x, rowvar=False)", False),
    ("jnp.cov(v)", False),
    ("jnp.cov(x[0], x[1], bias=True)", False),
    ("jnp.cov(x, ddof=0)", False),
    ("jnp.cov(x, fweights=jnp.array([1, 2, 0, 3]))", False),
    ("jnp.cov(x, aweights=w[:4])", False),
    ("jnp.cov(x, fweights=jnp.array([1, 2, 1, 3]), aweights=w[:4], ddof=2)", False),
    ("jnp.cov(x, fweights=w[:4])", False),
    ("jnp.cov(x, dtype=jnp.float16)", False),
    ("jnp.cov(x, dtype=jnp.int32)", False),
    ("jnp.cov(i)", False),
    ("jnp.cov(c)", False),
    ("jnp.cov(x[:, :0])", False),
    ("jnp.cov(x[:0])", False),
    ("jnp.cov(x[:1, :1])", False),
    ("jnp.cov(jnp.ones((2, 2, 2)))", False),
    ("jnp.corrcoef(x)", False),
    ("jnp.corrcoef(x, rowvar=False)", False),
    ("jnp.corrcoef(x[0], x[1])", False),
    ("jnp.corrcoef(v)", False),
    ("jnp.corrcoef(c)", False),
    ("jnp.corrcoef(i, dtype=jnp.float16)", False),
    ("jnp.corrcoef(x, dtype=jnp.int32)", False),
    # gradient, trapezoid
    ("jnp.gradient(v)", False),
    ("jnp.gradient(x)", False),
    ("jnp.gradient(x, axis=1)", False),
    ("jnp.gradient(x, 2.0)", False),
    ("jnp.gradient(x, 2.0, jnp.array([0.0, 0.5, 1.5, 3.0]))", False),
    ("jnp.gradient(x, axis=(-1,))", False),
    ("jnp.gradient(x, axis=())", False),
    ("jnp.gradient(i, axis=0)", False),
    ("jnp.gradient(h)", False),
    ("jnp.gradient(v, jnp.cumsum(w))", False),
    ("jnp.gradient(v, w[:3])", False),
    ("jnp.gradient(x, 1.0, 2.0, 3.0)", False),
    ("jnp.gradient(x[:1], axis=0)", False),
    ("jnp.gradient(x, edge_order=1)", False),
    ("jnp.trapezoid(v)", False),
    ("jnp.trapezoid(x, dx=0.5)", False),
    ("jnp.trapezoid(x, axis=0)", False),
    ("jnp.trapezoid(x, x=jnp.array([0.0, 0.5, 1.5, 3.0]))", False),
    ("jnp.trapezoid(x, x=jnp.abs(x).cumsum(0), axis=0)", False),
    ("jnp.trapezoid(i)", False),
    ("jnp.trapezoid(h, dx=2)", False),
    ("jnp.trapezoid(x, dx=jnp.array([1.0, 2.0, 3.0, 4.0]))", False),
    # histograms
    ("jnp.histogram_bin_edges(v)", False),
    ("jnp.histogram_bin_edges(i, bins=4)", False),
    ("jnp.histogram_bin_edges(v, bins=3, range=(-1, 1))", False),
    ("jnp.histogram_bin_edges(jnp.ones(3), bins=2)", False),
    ("jnp.histogram_bin_edges(v, bins=jnp.array([0, 1, 3]))", False),
    ("jnp.histogram_bin_edges(v, bins='auto')", False),
    ("jnp.histogram_bin_edges(v, range=(0, 1, 2))", False),
    ("jnp.histogram(v)", False),
    ("jnp.histogram(x, bins=4, range=(-1.0, 1.0))", False),
    ("jnp.histogram(v, bins=jnp.array([-1.0, 0.0, 0.5, 2.0]), weights=w)", False),
    ("jnp.histogram(v, bins=5, density=True)", False),
    ("jnp.histogram(v, bins=jnp.array([-3.0, 0.0, 0.5, 3.0]), weights=w, density=True)", False),
    ("jnp.histogram(i, bins=3)", False),
    ("jnp.histogram(i8, bins=3, weights=u8)", False),
    ("jnp.histogram(h, bins=3)", False),
    ("jnp.histogram(jnp.array([0.0, 1.0, 1.0, 2.0]), bins=2)", False),
    ("jnp.histogram(v, weights=w[:3])", False),
    ("jnp.histogram2d(v, w)", False),
    ("jnp.histogram2d(v, w, bins=3, range=[(-1, 1), (0, 1)])", False),
    ("jnp.histogram2d(v, w, bins=[2, 4], weights=w, density=True)", False),
    ("jnp.histogram2d(v, w, bins=jnp.array([0.0, 0.5, 1.0]))", False),
    ("jnp.histogram2d(v, w, bins=[jnp.array([-1.0, 0.0, 1.0]), 3])", False),
    ("jnp.histogramdd(x.T)", False),
    ("jnp.histogramdd(x.T, bins=[2, 3, 2], range=[None, (-1, 1), None])", False),
    ("jnp.histogramdd(x.T, bins=2, weights=w[:4], density=True)", False),
    ("jnp.histogramdd(x.T, bins=[2, 3])", False),
    ("jnp.histogramdd(x.T, range=[(0, 1)])", False),
    ("jnp.histogramdd(x.T, weights=w)", False),
    ("jnp.histogramdd(i.T, bins=2)", False),
    # set operations
    ("jnp.isin(s1, s2)", False),
    ("jnp.isin(i, s2, invert=True)", False),
    ("jnp.isin(s1, s2, method='binary_search')", False),
    ("jnp.isin(s1, s2.astype(jnp.float32), method='sort', invert=True)", False),
    ("jnp.isin(sf, sf)", False),
    ("jnp.isin(s1, e)", False),
    ("jnp.isin(3, s1)", False),
    ("jnp.isin(s1, s2, method='hash')", False),
    ("jnp.union1d(s1, s2)", True),
    ("jnp.union1d(s1, sf)", True),
    ("jnp.union1d(s1, s2, size=14)", False),
    ("jnp.union1d(s1, s2, size=5, fill_value=-1)", False),
    ("jnp.union1d(i8, u8, size=12, fill_value=100)", False),
    ("jnp.setdiff1d(s1, s2)", True),
    ("jnp.setdiff1d(s1, s2, size=6)", False),
    ("jnp.setdiff1d(s1, s2, size=2, fill_value=7)", False),
    ("jnp.setdiff1d(s2, s1, assume_unique=True)", True),
    ("jnp.setdiff1d(s1[:5], s2, assume_unique=True, size=6, fill_value=-5)", False),
    ("jnp.setdiff1d(e, s2, size=3)", False),
    ("jnp.setdiff1d(s1, e)", True),
    ("jnp.setdiff1d(sf, s2)", True),
    ("jnp.intersect1d(s1, s2)", True),
    ("jnp.intersect1d(s1, s2, return_indices=True)", True),
    ("jnp.intersect1d(s1, s2, size=5)", False),
    ("jnp.intersect1d(s1, s2, size=5, fill_value=-1, return_indices=True)", False),
    ("jnp.intersect1d(s1, s2, size=1, return_indices=True)", False),
    ("jnp.intersect1d(s1[4:], s2[:4], assume_unique=True, return_indices=True)", True),
    ("jnp.intersect1d(s1[4:], s2[:4], assume_unique=True, return_indices=True, size=3)", False),
    ("jnp.intersect1d(i, s2.astype(jnp.float32))", True),
    ("jnp.intersect1d(-s1, s2, size=3)", False),
    ("jnp.intersect1d(s1, e, size=2, return_indices=True)", False),
    ("jnp.intersect1d(sf, sf, return_indices=True)", True),
    ("jnp.setxor1d(s1, s2)", True),
    ("jnp.setxor1d(s1, s2, size=12)", False),
    ("jnp.setxor1d(-s1, s2, size=12)", False),
    ("jnp.setxor1d(s1, s1, size=3)", False),
    ("jnp.setxor1d(s1, s2, size=4, fill_value=0)", False),
    ("jnp.setxor1d(s1[4:], s2[:4], assume_unique=True)", True),
    ("jnp.setxor1d(s1[4:], s2[:4], assume_unique=True, size=10)", False),
    ("jnp.setxor1d(e, e)", True),
    ("jnp.setxor1d(sf, s2)", True),
    ("jnp.unique(s1, return_index=True, return_inverse=True, return_counts=True)", True),
    ("jnp.unique(s1, size=12, fill_value=-1, return_counts=True)", False),
    ("jnp.unique(sf)", True),
    ("jnp.unique(sf, equal_nan=False)", True),
    ("jnp.unique(sf, size=6, return_index=True, return_inverse=True)", False),
    ("jnp.unique(i, axis=1, return_inverse=True)", True),
    ("jnp.unique(i, return_inverse=True)", True),
    ("jnp.unique(s1, sorted=False, size=10)", False),
    ("jnp.unique(e, size=2)", False),
    ("jnp.unique_all(s1)", True),
    ("jnp.unique_all(sf, size=7, fill_value=0)", False),
    ("jnp.unique_counts(sf)", True),
    ("jnp.unique_counts(i, size=8)", False),
    ("jnp.unique_inverse(i)", True),
    ("jnp.unique_inverse(s1, size=3)", False),
    ("jnp.unique_values(sf)", True),
    ("jnp.unique_values(i, size=10, fill_value=9)", False),
    # polynomials
    ("jnp.poly(p)", False),
    ("jnp.poly(pi)", False),
    ("jnp.poly(c[0])", False),
    ("jnp.poly(2.0)", False),
    ("jnp.poly(e)", False),
    ("jnp.poly(jnp.ones((2, 3)))", False),
    ("jnp.polyadd(p, q)", False),
    ("jnp.polyadd(pi, pi[:2])", False),
    ("jnp.polyadd(pi, 1.0)", False),
    ("jnp.polyadd(i8[:3], u8[:2])", False),
    ("jnp.polysub(p, q)", False),
    ("jnp.polysub(pi[:1], pi)", False),
    ("jnp.polymul(p, q)", False),
    ("jnp.polymul(pi, pi)", False),
    ("jnp.polymul(e, p)", False),
    ("jnp.polymul(z, p, trim_leading_zeros=True)", True),
    ("jnp.polydiv(q, p)", False),
    ("jnp.polydiv(pi, jnp.array([1, 1]))", False),
    ("jnp.polydiv(p, q)", False),
    ("jnp.polydiv(jnp.polymul(p, q), p, trim_leading_zeros=True)", True),
    ("jnp.polyder(q)", False),
    ("jnp.polyder(q, 2)", False),
    ("jnp.polyder(pi, m=0)", False),
    ("jnp.polyder(q, m=5)", False),
    ("jnp.polyder(q, m=-1)", False),
    ("jnp.polyint(q)", False),
    ("jnp.polyint(pi, m=2, k=3)", False),
    ("jnp.polyint(q, m=2, k=jnp.array([1.0, 2.0]))", False),
    ("jnp.polyint(q, m=0)", False),
    ("jnp.polyint(q, m=2, k=jnp.array([1.0, 2.0, 3.0]))", False),
    ("jnp.polyint(q, m=-1)", False),
    ("jnp.trim_zeros(z)", True),
    ("jnp.trim_zeros(z, trim='f')", True),
    ("jnp.trim_zeros(z, trim='B')", True),
    ("jnp.trim_zeros(z * 0)", True),
    ("jnp.trim_zeros(jnp.pad(i, 1))", True),
    ("jnp.trim_zeros(jnp.pad(i, 1), axis=1)", True),
    ("jnp.trim_zeros(z, trim='x')", True),
    # windows
    *[
        (f"jnp.{name}({n})", False)
        for name in ("bartlett", "blackman", "hamming", "hanning")
        for n in (0, 1, 2, 7)
    ],
    ("jnp.hanning(-1)", False),
    ("jnp.hamming(np.int64(5))", False),
    ("jnp.blackman(5.0)", False),
    # quantiles: empty slices, weights, out/overwrite_input
    ("jnp.quantile(e, 0.5)", False),
    ("jnp.percentile(e, jnp.array([10.0, 50.0]))", False),
    ("jnp.median(jnp.zeros((0, 3)), axis=0)", False),
    ("jnp.median(jnp.zeros((0, 3)), axis=1)", False),
    ("jnp.quantile(jnp.zeros((2, 0)), 0.5, axis=0)", False),
    ("jnp.nanquantile(e, 0.5)", False),
    ("jnp.nanmedian(jnp.zeros((2, 0)), axis=1)", False),
    ("jnp.nanpercentile(jnp.zeros((0, 3)), 50)", False),
    ("jnp.quantile(v, 0.3, weights=w, method='inverted_cdf')", False),
    (
        "jnp.quantile(x, jnp.array([0.1, 0.9]), axis=1, weights=x * 0 + 1, method='inverted_cdf')",
        False,
    ),
    ("jnp.quantile(x, 0.5, axis=0, weights=w[:3], method='inverted_cdf')", False),
    ("jnp.quantile(x, 0.5, axis=(0, 1), weights=jnp.abs(x), method='inverted_cdf')", False),
    ("jnp.quantile(x, 0.5, weights=w[:3], method='inverted_cdf')", False),
    ("jnp.quantile(x, 0.5, axis=1, weights=w[:3], method='inverted_cdf')", False),
    ("jnp.quantile(v, 0.5, weights=w - 0.5, method='inverted_cdf')", False),
    ("jnp.quantile(xn, 0.5, axis=1, weights=jnp.abs(x), method='inverted_cdf')", False),
    ("jnp.nanquantile(xa, 0.5, axis=1, weights=jnp.abs(x), method='inverted_cdf')", False),
    (
        "jnp.nanpercentile(xn, jnp.array([20, 70]), axis=0, weights=w[:3], method='inverted_cdf')",
        False,
    ),
    ("jnp.quantile(i, 0.5, weights=i, method='inverted_cdf')", False),
    ("jnp.quantile(x, 0.7, 1, weights=w[:4], method='inverted_cdf', keepdims=True)", False),
    ("jnp.quantile(v, 0.5, weights=w)", False),
    ("jnp.quantile(v, 0.5, weights=c.ravel(), method='inverted_cdf')", False),
    ("jnp.percentile(v, 50, weights=w, method='inverted_cdf')", False),
    ("jnp.quantile(v, 0.5, out=v)", False),
    ("jnp.nanquantile(v, 0.5, overwrite_input=True)", False),
    ("jnp.median(v, overwrite_input=True)", False),
]


def encode(value):
    if isinstance(value, (tuple, list)):
        return {"sequence": [encode(v) for v in value], "type": type(value).__name__}
    array = np.asarray(value)
    data = array.astype(np.complex128) if array.dtype.kind == "c" else array
    if array.dtype.kind == "c":
        data = np.stack([data.real, data.imag], -1)
    elif array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        data = data.astype(np.float64)
    return {
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "weak_type": bool(getattr(value, "weak_type", False)),
        "data": data.tolist(),
    }


def main():
    import jax
    import jax.numpy as jnp

    assert jax.__version__ == "0.10.2", jax.__version__
    env = {"jnp": jnp, "np": np, **{k: jnp.asarray(v) for k, v in INPUTS.items()}}
    cases = []
    for expr, eager_only in CASES:
        try:
            result = {"value": encode(eval(expr, env))}
        except Exception as error:  # noqa: BLE001 - the error class is what is recorded
            result = {"error": type(error).__name__}
        cases.append({"expr": expr, "eager_only": eager_only, **result})
    out = {
        "inputs": {k: encode(v) for k, v in INPUTS.items()},
        "cases": cases,
    }
    path = pathlib.Path(__file__).parent / "data" / "jax_reference_stats.json"
    path.parent.mkdir(exist_ok=True)
    lines = [json.dumps({"inputs": out["inputs"]})[:-1] + ', "cases": [']
    lines.append(",\n".join(json.dumps(case) for case in cases))
    path.write_text("\n".join(lines) + "]}\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
