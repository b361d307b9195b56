"""scipy.stats' rankdata, mode and sem against SciPy (random data with ties, every method and
axis), under jit and vmap, with sem's gradient, and JAX's errors for bad arguments."""

import numpy as np
import pytest
import scipy.stats as ss
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy import stats
from tracejit.test_util import check_grads

METHODS = ["average", "min", "max", "dense", "ordinal"]


def _ties(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 4, shape).astype(np.float32)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_rankdata_against_scipy(method, axis):
    a = _ties((4, 6))
    got = stats.rankdata(a, method, axis=axis)
    assert got.dtype == np.float32
    assert_close(got, ss.rankdata(a, method, axis=axis))
    assert_close(tracejit.jit(lambda a: stats.rankdata(a, method, axis=axis))(a), got)


def test_rankdata_vmap_and_nan():
    a = _ties((3, 5), seed=1)
    check_vmap(lambda row: stats.rankdata(row, "min"), (a,), (0,))
    with_nan = a.copy()
    with_nan[1, 2] = np.nan
    ranks = np.asarray(stats.rankdata(with_nan, axis=1))
    assert np.isnan(ranks[1]).all() and not np.isnan(ranks[[0, 2]]).any()


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mode_against_scipy(axis, keepdims):
    a = _ties((5, 7), seed=2).astype(np.int32)
    got = stats.mode(a, axis=axis, keepdims=keepdims)
    want = ss.mode(a, axis=axis, keepdims=keepdims)
    assert_close(got.mode, want.mode, dtype=np.int32)
    assert_close(got.count, want.count, dtype=np.int32)
    jitted = tracejit.jit(lambda a: stats.mode(a, axis=axis, keepdims=keepdims))(a)
    assert_close(jitted.mode, want.mode)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_sem_against_scipy(axis, ddof, enable_x64):
    a = np.random.default_rng(3).normal(size=(4, 5))
    assert_close(stats.sem(a, axis, ddof), ss.sem(a, axis, ddof), 1e-12)
    assert_close(
        stats.sem(a, axis, ddof, keepdims=True), ss.sem(a, axis, ddof, keepdims=True), 1e-12
    )
    with_nan = a.copy()
    with_nan[1, 1] = with_nan[2, 3] = np.nan
    want = ss.sem(with_nan, axis, ddof, nan_policy="omit")
    assert_close(stats.sem(with_nan, axis, ddof, "omit"), want, 1e-12)


def test_sem_grad_and_vmap():
    a = np.random.default_rng(4).normal(size=(3, 5))
    check_grads(lambda a: stats.sem(a, axis=1), (a,), order=2)
    check_vmap(lambda row: stats.sem(row), (a.astype(np.float32),), (0,), tol=1e-5)


def test_bad_arguments_raise_jax_errors():
    a = np.array([1.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        stats.rankdata(a, "foo")
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        stats.rankdata(a, nan_policy="bad")
    with pytest.raises(NotImplementedError, match="omit is not implemented"):
        stats.mode(a, nan_policy="omit")
    with pytest.raises(NotImplementedError, match="we cannot know whether `x` contains nans"):
        stats.rankdata(a, nan_policy="raise")
    with pytest.raises(ValueError, match="raise is not supported"):
        stats.sem(a, nan_policy="raise")
    with pytest.raises(ValueError, match="out of bounds"):
        stats.mode(a, axis=5)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        stats.rankdata([1, 2])
