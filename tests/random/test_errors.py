"""Bad input to tracejit.random raises what JAX 0.10.2 raises (class and the gist of the
message); what JAX accepts (maxval <= minval, unnormalized probabilities) it accepts too."""

import numpy as np
import pytest

import tracejit
from tracejit import random

KEY = np.array([0, 0], np.uint32)

ERRORS = [
    (lambda: random.PRNGKey(1.0), TypeError, "seed must be an integer"),
    (lambda: random.PRNGKey(np.zeros(2, np.int32)), TypeError, "accepts a scalar seed"),
    (lambda: random.PRNGKey(2**70), OverflowError, "too large"),
    (lambda: random.split(KEY, -1), ValueError, "must not be negative"),
    (lambda: random.split(np.zeros(3, np.float32)), TypeError, r"end with \(2,\)"),
    (lambda: random.split(np.zeros(2, np.float32)), TypeError, "key_data.dtype = uint32"),
    (lambda: random.split(np.zeros((3, 2), np.uint32)), ValueError, "accepts a single key"),
    (lambda: random.split([0, 0]), TypeError, "unexpected PRNG key type"),
    (lambda: random.fold_in(KEY, np.arange(2)), TypeError, "fold_in accepts a scalar"),
    (lambda: random.uniform(KEY, (2,), np.int32), ValueError, "must be a float dtype"),
    (lambda: random.normal(KEY, (2,), np.int32), ValueError, "float or complex dtype"),
    (lambda: random.bits(KEY, (2,), np.int32), ValueError, "unsigned int dtype"),
    (lambda: random.randint(KEY, (2,), 0, 3, np.float32), TypeError, "integer dtypes"),
    (lambda: random.bernoulli(KEY, 1), TypeError, "must have a floating dtype"),
    (lambda: random.bernoulli(KEY, 0.5, mode="x"), ValueError, "expected 'high' or 'low'"),
    (lambda: random.gumbel(KEY, mode="x"), ValueError, "valid mode for gumbel"),
    (lambda: random.choice(KEY, 3, (5,), replace=False), ValueError, "larger sample"),
    (lambda: random.choice(KEY, 3, 5), TypeError, "must be a sequence"),
    (lambda: random.choice(KEY, 3, (2,), p=np.ones(4)), ValueError, "p must be None or a 1D"),
    (lambda: random.permutation(KEY, 2.0), TypeError, "integer or at least 1-dimensional"),
    (lambda: random.permutation(KEY, [1, 2]), TypeError, "requires ndarray or scalar arguments"),
    (lambda: random.choice(KEY, [1, 2, 3], (2,)), TypeError, "got <class 'list'> at position 0"),
    (lambda: random.binomial(KEY, [5.0], 0.5), TypeError, "requires ndarray or scalar"),
    (lambda: random.fold_in(KEY, -1), OverflowError, "out of bounds for uint32"),
    (
        lambda: random.categorical(KEY, np.zeros(3), shape=(4,), replace=False),
        ValueError,
        "cannot exceed",
    ),
    (lambda: random.truncated_normal(KEY, 0.0, np.ones(3), (2,)), ValueError, "broadcast"),
    (lambda: random.uniform(KEY, (2,), out_sharding=object()), NotImplementedError, "device"),
]


@pytest.mark.parametrize("fun, error, match", ERRORS)
def test_bad_input_raises_as_jax(fun, error, match):
    with pytest.raises(error, match=match):
        fun()


def test_shuffle_is_gone_as_in_jax():
    with pytest.raises(AttributeError):
        random.shuffle  # noqa: B018


def test_accepted_as_jax_accepts():
    assert np.all(np.asarray(random.randint(KEY, (4,), 5, 2)) == 5)
    probabilities = np.array([1.0, 1.0, 2.0])  # not normalized: JAX normalizes by the sum
    draws = np.asarray(random.choice(KEY, 3, (1000,), p=probabilities))
    assert set(np.unique(draws)) <= {0, 1, 2}
    assert np.asarray(random.uniform(KEY, 3)).shape == (3,)


def test_split_zero_keys():
    assert np.asarray(random.split(KEY, 0)).shape == (0, 2)
    assert np.asarray(tracejit.jit(lambda k: random.split(k, 0))(KEY)).shape == (0, 2)
