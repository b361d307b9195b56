"""jax.scipy.cluster.vq.vq: codes and distances equal SciPy's for 2-D and 1-D observations,
with JAX's dtypes (default-int codes, inexact distances, integers promoted); it runs under jit and
vmap, and mismatched ranks or vector lengths raise JAX's errors."""

import numpy as np
import pytest
import scipy.cluster.vq as scipy_vq
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy.cluster.vq import vq

RNG = np.random.default_rng(0)
OBS = RNG.normal(size=(20, 3))
CODES = RNG.normal(size=(4, 3))


def test_matches_scipy(enable_x64):
    code, dist = vq(OBS, CODES)
    want_code, want_dist = scipy_vq.vq(OBS, CODES)
    assert_close(code, want_code, dtype=np.int64)  # argmin gives the default int, as in JAX
    assert_close(dist, want_dist, 1e-12, dtype=np.float64)


def test_one_dimensional_and_integer_input():
    code, dist = vq(np.array([1, 2, 3, 9]), np.array([0, 4, 8]))
    assert_close(code, [0, 0, 1, 2], dtype=np.int32)
    assert_close(dist, [1.0, 2, 1, 1], dtype=np.float32)


def test_ties_go_to_the_first_code():
    assert_close(vq(np.array([[1.0, 1.0]]), np.array([[0.0, 0.0], [2.0, 2.0]]))[0], [0])


def test_jit_and_vmap():
    obs = OBS.astype(np.float32)
    codes = CODES.astype(np.float32)
    for got, want in zip(tracejit.jit(vq)(obs, codes), vq(obs, codes), strict=True):
        assert_close(got, want, 1e-6, dtype=np.asarray(want).dtype)
    check_vmap(lambda o: vq(o, codes), (obs.reshape(4, 5, 3),), (0,), tol=1e-6, jit=True)


@pytest.mark.parametrize(
    ("obs", "codes", "error", "message"),
    [
        (np.ones((2, 2, 2)), CODES, ValueError, "same rank"),
        (np.ones((2, 2, 2)), np.ones((2, 2, 2)), ValueError, "ndim different than 1 or 2"),
        (np.ones((2, 2)), CODES, TypeError, r"\(2, 2\) and codes of shape \(4, 3\)"),
    ],
)
def test_bad_input(obs, codes, error, message):
    with pytest.raises(error, match=message):
        vq(obs, codes)
