"""`jax_debug_key_reuse`: a consumed eager raw key used again raises KeyReuseError naming both
uses; off (the default), nothing is checked."""

import numpy as np
import pytest

import tracejit
from tracejit import random
from tracejit.errors import KeyReuseError


@pytest.fixture
def key_reuse_checks():
    tracejit.config.update("jax_debug_key_reuse", True)
    yield
    tracejit.config.update("jax_debug_key_reuse", False)


def test_off_by_default_reuse_is_silent():
    key = random.PRNGKey(0)
    np.testing.assert_array_equal(random.normal(key, (2,)), random.normal(key, (2,)))


def test_second_sample_from_a_key_raises_naming_both_uses(key_reuse_checks):
    key = random.PRNGKey(0)
    random.uniform(key)  # first use
    with pytest.raises(
        KeyReuseError,
        match=r"normal: this PRNG key was already consumed by "
        r"uniform at .*test_key_reuse.py:\d+.*used again at .*test_key_reuse.py",
    ):
        random.normal(key)


def test_split_consumes_and_its_keys_are_fresh(key_reuse_checks):
    key = random.PRNGKey(1)
    k1, k2 = random.split(key)
    random.normal(k1)
    random.normal(k2)
    with pytest.raises(KeyReuseError, match="split: this PRNG key was already consumed by split"):
        random.split(key)


def test_fold_in_key_data_and_clone_do_not_consume(key_reuse_checks):
    key = random.PRNGKey(2)
    for i in range(3):
        random.normal(random.fold_in(key, i))
    random.key_data(key)
    random.normal(key)
    random.normal(random.clone(key))


def test_nested_samplers_consume_the_users_key_once(key_reuse_checks):
    key = random.PRNGKey(3)
    random.choice(key, 5, (3,))  # draws through randint with the same key
    with pytest.raises(KeyReuseError):
        random.categorical(key, np.zeros(3))


def test_traced_keys_are_not_checked(key_reuse_checks):
    f = tracejit.jit(lambda k: random.normal(k) + random.normal(k))
    f(random.PRNGKey(4))
    tracejit.vmap(lambda k: random.normal(k) + random.normal(k))(random.split(random.PRNGKey(5)))


def test_turning_the_flag_off_forgets(key_reuse_checks):
    key = random.PRNGKey(6)
    random.normal(key)
    tracejit.config.update("jax_debug_key_reuse", False)
    tracejit.config.update("jax_debug_key_reuse", True)
    random.normal(key)
