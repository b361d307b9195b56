"""PRNG keys as `tracejit.random` takes them: raw keys (`PRNGKey`: arrays of two uint32 words)
and typed keys (`key`: arrays of dtype `key<fry>`, one element per key), and the functions that
make keys from keys.

Every sampler turns the key it is given into a typed key (`check_prng_key`: raw keys are
wrapped, their words checked by `prng.random_wrap`) and draws with the key primitives of
`_src/prng.py`. A function that returns keys (`split`, `fold_in`, `clone`) returns them in the
form it was given: raw keys as words, typed keys typed, as JAX does.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from tracejit._src import dtypes, prng
from tracejit._src.accel import accel
from tracejit._src.array import Array, make_array
from tracejit._src.config import config
from tracejit._src.core import Tracer, current_trace, get_aval
from tracejit._src.errors import warn_at_user_line
from tracejit._src.interpreters.eval import eval_trace
from tracejit._src.lax import slicing
from tracejit._src.numpy.creation import asarray
from tracejit._src.random.fast_path import KEY_TYPES, STATE
from tracejit._src.random.key_reuse import consumes_key

_IMPL = "fry"
_IMPL_NAMES = (None, "threefry2x32")


def is_typed_key(key) -> bool:
    return getattr(key, "dtype", None) == dtypes.key_fry


def check_prng_key(name: str, key, *, allow_batched: bool = False):
    """The typed key of a key, raw or typed (a raw key's words are checked by `random_wrap`)."""
    if not isinstance(key, (Array, Tracer, np.ndarray, np.generic)):
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if is_typed_key(key):
        typed = key
    else:
        _check_legacy_key_allowed()
        typed = prng.random_wrap(key, impl=_IMPL)
    if not allow_batched and get_aval(typed).shape:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{get_aval(typed).shape} != (). Use jax.vmap for batching."
        )
    return typed


def _check_legacy_key_allowed() -> None:
    """`jax_legacy_prng_key`: raw keys allowed, warned about, or refused."""
    if config.legacy_prng_key == "allow":
        return
    message = (
        "Legacy uint32 key array passed as key to jax.random function. Please create keys "
        "using jax.random.key(). If use of a raw key array was intended, set "
        'jax_legacy_prng_key="allow".'
    )
    if config.legacy_prng_key == "error":
        raise ValueError(message)
    warn_at_user_line(message)


def _as_given(key, typed):
    """Keys returned in the form `key` came in: typed, or as raw words."""
    return typed if is_typed_key(key) else prng.random_unwrap(typed)


def canonical_shape(shape) -> tuple:
    """A shape as a tuple of ints; one int is a rank-1 shape, as JAX takes it."""
    try:
        if not isinstance(shape, Sequence) and not isinstance(shape, np.ndarray):
            return (operator.index(shape),)
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
        ) from None


def _check_impl(impl) -> None:
    if impl not in _IMPL_NAMES and impl != dtypes.key_fry:
        raise NotImplementedError(f"PRNG implementation {impl!r}: only threefry2x32 is built")


def _seed_keys(name: str, seed):
    """Typed keys made from a scalar integer seed: its high and low 32 bits."""
    if is_typed_key(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{name} accepts a scalar seed, but was given an array of shape {np.shape(seed)} "
            "!= (). Use jax.vmap for batching"
        )
    # A Python int goes through int64 first, so that a hash too large for int32 is truncated
    # instead of overflowing (as JAX does when x64 is off).
    seeds = asarray(np.int64(seed)) if isinstance(seed, int) else asarray(seed)
    return prng.random_seed(seeds, impl=_IMPL)


def PRNGKey(seed, *, impl=None):
    """A raw key (`uint32[2]`) made from an integer seed."""
    _check_impl(impl)
    return prng.random_unwrap(_seed_keys("PRNGKey", seed))


def key(seed, *, impl=None, dtype=None):
    """A typed key (dtype `key<fry>`, shape ()) made from an integer seed."""
    _check_impl(impl)
    _check_impl(dtype)
    return _seed_keys("key", seed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys whose words are `key_bits_array` (uint32, trailing dimension 2)."""
    _check_impl(impl)
    _check_impl(dtype)
    return prng.random_wrap(asarray(key_bits_array), impl=_IMPL)


def key_data(keys):
    """The uint32 words of keys: for raw keys, the keys themselves (checked)."""
    return prng.random_unwrap(check_prng_key("key_data", keys, allow_batched=True))


def key_impl(keys) -> str:
    """The name of the PRNG implementation of keys: always Threefry-2x32 here."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def key_dtype(impl_spec=None):
    """The dtype of typed keys of a PRNG implementation."""
    _check_impl(impl_spec)
    return dtypes.key_fry


@consumes_key
def split(key, num: int | tuple[int, ...] = 2):
    """`num` new keys (a shape, for a tuple) derived from `key`."""
    state = STATE[0]
    if state is not None and type(key) in KEY_TYPES and current_trace() is eval_trace:
        keys = accel.split(key._value, num, state)
        if keys is not None:
            return make_array(keys)
    typed = check_prng_key("split", key)
    shape = canonical_shape(tuple(num) if isinstance(num, Sequence) else (num,))
    if any(d < 0 for d in shape):
        raise ValueError(f"split: the number of keys must not be negative, got {num}")
    return _as_given(key, prng.random_split(typed, shape))


def fold_in(key, data):
    """A new key derived from `key` and the integer `data` (taken as uint32)."""
    state = STATE[0]
    if state is not None and type(key) in KEY_TYPES and current_trace() is eval_trace:
        folded = accel.fold_in(key._value, data, state)
        if folded is not None:
            return make_array(folded)
    typed = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array of shape {np.shape(data)} != (). "
            "Use jax.vmap for batching."
        )
    if isinstance(data, int) and not 0 <= data < 2**32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    msg = asarray(data, np.uint32)
    return _as_given(key, prng.random_fold_in(typed, msg))


def clone(key):
    """A copy of `key` that JAX's key-reuse checks count as a new key."""
    return prng.random_clone(key)


def split_in_two(typed):
    """Two typed keys split from one."""
    keys = prng.random_split(typed, (2,))
    return (slicing.index_in_dim(keys, i, keepdims=False) for i in (0, 1))
