"""tracejit.random against values recorded from JAX 0.10.2 (`make_reference.py`): the same key,
shape and dtype give the same bits and floats eagerly, under `jit`, under `vmap` over keys and
inside `scan`, in both settings of `jax_threefry_partitionable` and with x64 on."""

import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest

import tracejit
from tracejit import lax, random

_spec = importlib.util.spec_from_file_location(
    "random_reference", pathlib.Path(__file__).parent / "make_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))


@pytest.fixture
def partitionable(request):
    previous = tracejit.config.read("jax_threefry_partitionable")
    tracejit.config.update("jax_threefry_partitionable", request.param)
    yield request.param
    tracejit.config.update("jax_threefry_partitionable", previous)


def _assert_matches(actual, expected, exact: bool, eps: int = 4):
    """Bit-exact for exact samplers; else within `eps` eps of max(|expected|, 1): XLA's
    transcendental functions differ from JAX's build or NumPy's by an ulp or two, which a
    cancellation (logistic's log(x) - log1p(-x) near 0) turns into more ulps of a small result,
    not more eps of 1."""
    actual = np.asarray(actual)
    if expected.dtype.kind == "V":  # NumPy's .npz keeps bfloat16 as raw 2-byte records
        expected = expected.view(ml_dtypes.bfloat16)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if exact or expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected)
        return
    real = np.finfo(expected.dtype).dtype
    actual, expected = (np.asarray(x).view(real).astype(np.float64) for x in (actual, expected))
    bound = eps * np.finfo(real).eps * np.maximum(np.abs(expected), 1.0)
    assert np.all(np.abs(actual - expected) <= bound), np.max(np.abs(actual - expected) / bound)


def _keys():
    return np.stack([np.asarray(random.PRNGKey(seed)) for seed in reference.SEEDS])


# Cases whose arithmetic XLA contracts into fused multiply-adds (`uniform`'s
# `u * (maxval - minval) + minval`), as JAX's compiled samplers are: eager NumPy rounds the
# product, so there the values are within the bound of `_assert_matches`, not bit-exact.
FMA_CONTRACTED = {"uniform_range"}


# Cases whose results amplify the ulp of a transcendental function: a cancellation (wald's
# `mean + ... - mean / 2 * sqrt_term`) or exp of a log-gamma value of a few units (f's ratio of
# two chi-square values); within 8 eps there, 4 elsewhere.
AMPLIFIED = {"wald", "f"}


def _check(mode: str, name: str, fun, expected, exact: bool):
    exact = exact and (mode == "jit" or name not in FMA_CONTRACTED)
    _assert_matches(_run(mode, fun), expected, exact, eps=8 if name in AMPLIFIED else 4)


def _run(mode: str, fun):
    """`fun(key)` for every seed's key, stacked: eagerly, jitted, vmapped or scanned."""
    sample = lambda key: fun(random, key)
    keys = _keys()
    if mode == "eager":
        return np.stack([np.asarray(sample(key)) for key in keys])
    if mode == "jit":
        jitted = tracejit.jit(sample)
        return np.stack([np.asarray(jitted(key)) for key in keys])
    if mode == "vmap":
        return tracejit.vmap(sample)(keys)
    assert mode == "scan"
    return lax.scan(lambda carry, key: (carry, sample(key)), 0, keys)[1]


MODES = ("eager", "jit", "vmap", "scan")


def _cases(cases, names=None):
    return [pytest.param(name, *cases[name], id=name) for name in (names or cases)]


@pytest.mark.parametrize("seed_index", range(len(reference.KEY_SEEDS["x32"])))
def test_prng_key(seed_index):
    seed = reference.KEY_SEEDS["x32"][seed_index]
    expected = DATA["PRNGKey/x32"][seed_index]
    _assert_matches(random.PRNGKey(seed), expected, exact=True)
    if not isinstance(seed, int):
        _assert_matches(tracejit.jit(random.PRNGKey)(seed), expected, exact=True)


@pytest.mark.parametrize("seed_index", range(len(reference.KEY_SEEDS["x64"])))
def test_prng_key_x64(seed_index, enable_x64):
    seed = reference.KEY_SEEDS["x64"][seed_index]
    expected = DATA["PRNGKey/x64"][seed_index]
    _assert_matches(random.PRNGKey(seed), expected, exact=True)
    _assert_matches(
        tracejit.jit(random.PRNGKey)(np.int64(seed) if isinstance(seed, int) else seed),
        expected,
        exact=True,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, fun, exact", _cases(reference.CASES))
def test_matches_jax(mode, name, fun, exact):
    expected = DATA[f"x32/partitionable=True/{name}"]
    _check(mode, name, fun, expected, exact)


@pytest.mark.parametrize("partitionable", [False], indirect=True)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, fun, exact", _cases(reference.CASES, reference.PARTITION_SENSITIVE))
def test_matches_jax_original_counters(mode, name, fun, exact, partitionable):
    expected = DATA[f"x32/partitionable=False/{name}"]
    _check(mode, name, fun, expected, exact)


@pytest.mark.parametrize("partitionable", [True], indirect=True)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, fun, exact", _cases(reference.CASES_X64))
def test_matches_jax_x64(mode, name, fun, exact, partitionable, enable_x64):
    expected = DATA[f"x64/partitionable=True/{name}"]
    _check(mode, name, fun, expected, exact)


@pytest.mark.parametrize("partitionable", [False], indirect=True)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "name, fun, exact", _cases(reference.CASES_X64, reference.PARTITION_SENSITIVE_X64)
)
def test_matches_jax_x64_original_counters(mode, name, fun, exact, partitionable, enable_x64):
    expected = DATA[f"x64/partitionable={partitionable}/{name}"]
    _check(mode, name, fun, expected, exact)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", reference.GRAD_CASES)
def test_sample_derivatives_match_jax(mode, name):
    """Implicit reparameterization (random_gamma_grad): compiled as JAX's within 4 eps; eagerly
    within 16 (NumPy's lgamma and digamma, a few ulp from XLA's, feed iterated series)."""
    fun = reference.GRAD_CASES[name]

    def derivative(key):
        return fun(tracejit, key)

    if mode == "jit":
        derivative = tracejit.jit(derivative)
    actual = np.stack([np.asarray(derivative(key)) for key in _keys()])
    _assert_matches(actual, DATA[f"grad/{name}"], exact=False, eps=4 if mode == "jit" else 16)
