"""Catching reused keys: with `config.update("jax_debug_key_reuse", True)`, an eager raw key
passed to a second sampler raises `KeyReuseError` naming both uses.

Keys are pure values, so drawing twice from one key silently gives the same numbers: a common
bug. Every public function that draws from its key (the samplers, `bits`, `split`) is marked
`@consumes_key`; `fold_in`, `key_data` and `clone` do not consume (as in JAX, where `clone`
makes a key that may be used once more). What is tracked is the key object, an eager array
(tracers are not checked: a jitted function sees each key afresh): a dictionary from its id to
a weak reference and the user's line, so that a key's entry goes with the key. Only the
outermost marked call consumes: `choice` drawing through `randint` uses the user's key once.
JAX checks typed keys only, inside its checker; this covers eager raw keys, for the price of
one flag read per call when off.
"""

from __future__ import annotations

import functools
import threading
import weakref

from tracejit._src.config import config
from tracejit._src.core import Tracer
from tracejit._src.errors import KeyReuseError, user_location

_consumed: dict[int, tuple] = {}  # id(key) -> (weak reference to key, sampler name, user line)
_nesting = threading.local()


def _forget(key_id: int):
    return lambda _: _consumed.pop(key_id, None)


def _consume(name: str, key) -> None:
    entry = _consumed.get(id(key))
    if entry is not None and entry[0]() is key:
        _, first_name, first_site = entry
        raise KeyReuseError(
            f"{name}: this PRNG key was already consumed by {first_name} at {first_site}; "
            f"used again at {user_location()} it gives the same random bits. Split the key "
            "(random.split) for each use, or clone it (random.clone)."
        )
    try:
        reference = weakref.ref(key, _forget(id(key)))
    except TypeError:  # a value that cannot be referenced weakly (a list): random_wrap rejects it
        return
    _consumed[id(key)] = (reference, name, user_location())


_checking = [False]  # config.debug_key_reuse, read here without an attribute lookup per call


def consumes_key(sampler):
    """Marks a public function whose first argument is a key it draws from."""

    @functools.wraps(sampler)
    def checked(*args, **kwargs):
        # (no named `key` parameter: passing the arguments on untouched is the cheapest call
        # while the check is off, most of an eager draw's time otherwise)
        if not _checking[0]:
            return sampler(*args, **kwargs)
        key = args[0] if args else kwargs.get("key")
        depth = getattr(_nesting, "depth", 0)
        if depth == 0 and not isinstance(key, Tracer):
            _consume(sampler.__name__, key)
        _nesting.depth = depth + 1
        try:
            return sampler(*args, **kwargs)
        finally:
            _nesting.depth = depth

    return checked


def _clear(option_name: str) -> None:
    if option_name == "jax_debug_key_reuse":
        _checking[0] = config.debug_key_reuse
        _consumed.clear()


config.on_update(_clear)
_checking[0] = config.debug_key_reuse  # (set by the environment variable)
