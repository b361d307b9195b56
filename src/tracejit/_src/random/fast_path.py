"""Eager draws in one call: the common samplers on a concrete key, computed by the C
accelerator's `sampling` part (`csrc/accel/sampling.c`) instead of a compiled program.

An eager `uniform(key, (100,))` otherwise runs its sampler's compiled program (the key moved
to the device, the program run, the result fetched back): tens of microseconds for a
microsecond of arithmetic. Each public sampler built on this (`uniform`, `bits`, `randint`,
`bernoulli`, `split`, `fold_in`) starts with

    if STATE[0] is not None and type(key) in KEY_TYPES and current_trace() is eval_trace:
        value = accel.uniform(key._value, shape, dtype, minval, maxval, STATE[0])
        if value is not None:
            return make_array(value)

and otherwise (under a transformation, for a NumPy or sharded key, for arguments the C code
declines: arrays as bounds, unlisted dtypes, bad shapes) goes on to its Python path, which
gives the same values, bit for bit, and raises JAX's errors. `normal` has no fast path: its
erfinv in C gave XLA's float32 values only to 3 ulp (its log1p is not XLA's), and an eager
draw must equal the same draw under `jit`. It sits inside `@consumes_key`, so the
key-reuse check sees every draw.

`STATE[0]` is what the C functions read of the configuration, rebuilt when an option changes,
or None where the fast path is off: no accelerator, or an option under which the Python path
does more than draw (a transfer guard, NaN checks, `jax_disable_jit`, `jax_no_tracing`).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.array import Array, DeviceArray
from tracejit._src.config import config
from tracejit._src.numpy import scalar_types
from tracejit._src.transfer_guard import level

KEY_TYPES = (Array, DeviceArray)
"""Concrete keys, on one device (a ShardedArray's value is spread over several)."""

STATE = [None]

# `state[0]`'s flags, as sampling.c numbers them.
_PARTITIONABLE, _X64, _RAW_KEYS = 1, 2, 4

_DTYPE_NAMES = {
    "float": ("float16", "bfloat16", "float32", "float64"),
    "uint": ("uint8", "uint16", "uint32", "uint64"),
    "int": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
}


def _default_dtype(kind: str) -> np.dtype:
    return {
        "float": dtypes.default_float_dtype,
        "uint": dtypes.default_uint_dtype,
        "int": dtypes.default_int_dtype,
    }[kind]()


@functools.cache
def _table(kind: str, x64: bool) -> dict:
    """`dtype` arguments -> the dtype of the result, for the spellings of the dtypes of a kind
    that name one exactly (not a 64-bit dtype truncated, with a warning, when x64 is off); None
    and the Python type of the kind (`float`, `int`) give its default dtype."""
    assert config.enable_x64 == x64
    table = {None: _default_dtype(kind)}
    if kind != "uint":
        table[{"float": float, "int": int}[kind]] = _default_dtype(kind)
    for name in _DTYPE_NAMES[kind]:
        dtype = np.dtype(getattr(dtypes, name, name))
        for spelling in (dtype, dtype.type, name, getattr(scalar_types, name)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    canonical = dtypes.check_user_dtype(spelling)
                except (Warning, TypeError, ValueError):
                    continue
            if canonical == dtype:
                table[spelling] = dtype
    return table


def _transfers_guarded() -> bool:
    directions = ("host_to_device", "device_to_device", "device_to_host")
    return any(level(direction) != "allow" for direction in directions)


def _update(option_name: str) -> None:
    off = (
        accel is None
        or config.disable_jit
        or config.no_tracing
        or config.debug_nans
        or config.debug_infs
        or _transfers_guarded()
    )
    if off:
        STATE[0] = None
        return
    x64 = config.enable_x64
    flags = (
        _PARTITIONABLE * config.threefry_partitionable
        + _X64 * x64
        + _RAW_KEYS * (config.legacy_prng_key == "allow")
    )
    STATE[0] = (
        flags,
        dtypes.key_fry,
        np.dtype(dtypes.bfloat16),
        _table("float", x64),
        _table("uint", x64),
        _table("int", x64),
        config.max_array_bytes,
    )


config.on_update(_update)
_update("")
