"""Transfer guards (`jax.transfer_guard`): log or refuse the transfers a program did not mean.

A transfer is *implicit* when tracejit makes it on its own: a NumPy array or a Python scalar
given to a jitted function or to an operation becomes a device array (host to device). It is
*explicit* when the program asks for it: `device_put`. Each direction has a level, its own
option (`jax_transfer_guard_host_to_device`, ...) or else the general `jax_transfer_guard`,
else "allow":

    allow               nothing happens
    log                 implicit transfers are logged (a warning of this module's logger)
    disallow            implicit transfers raise JaxRuntimeError; explicit ones are allowed
    log_explicit        every transfer is logged
    disallow_explicit   every transfer raises

On the CPU, as in JAX there, reading a device array on the host (`np.asarray`, `float`,
printing, `device_get`) copies nothing and is never guarded; device-to-device transfers are
`device_put`s from one CPU device to another (explicit).

The hooks on the transfer paths read one list item (`guarded`) that the options' listener keeps
current, so that they cost nothing while every level is "allow". They sit where the user's
values enter: a jitted call's NumPy arguments (`jit.py`) and Python scalars (`dispatch.py`),
the NumPy arrays and Python scalars `jnp` functions and operators are given, outside any
transformation (`numpy/promotion.py`), `jnp.array`/`jnp.asarray` (`numpy/creation.py`) and
`device_put` (`dispatch.py`). Values tracejit hands its own programs and primitives (eager
control flow, NumPy constants inside `jnp`) are not the user's transfers and are not guarded,
and neither are the few JAX makes itself (an integer index, `jnp.zeros`' fill value, `cond`'s
Python predicate), nor NumPy values given to `lax` functions directly. One difference remains:
a `jnp`/`nn` function that JAX jits but tracejit runs eagerly (`nn.relu`) has its Python
scalar constants guarded here.
"""

from __future__ import annotations

import contextlib
import logging

import numpy as np

from tracejit._src import dtypes
from tracejit._src.config import State, config
from tracejit._src.core import ShapedArray, current_trace
from tracejit._src.errors import JaxRuntimeError

logger = logging.getLogger(__name__)

_DIRECTIONS = ("host_to_device", "device_to_device", "device_to_host")

guarded = [False]
"""Whether some direction's level is not "allow": the transfer paths check this first."""

default_destination = [None]
"""`() -> Sharding`: where implicit transfers go (the default device), installed by
`xla_bridge` (the compilation layer, which knows the devices)."""


def level(direction: str) -> str:
    return config.read(f"jax_transfer_guard_{direction}") or config.transfer_guard or "allow"


def _update_guarded(name: str) -> None:
    if name.startswith("jax_transfer_guard"):
        guarded[0] = any(level(direction) != "allow" for direction in _DIRECTIONS)


config.on_update(_update_guarded)
_update_guarded("jax_transfer_guard")  # (levels set by environment variables)


transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
_general_level = State("jax_transfer_guard")


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """A context manager that sets the transfer guard level of every direction (host to
    device, device to device, device to host) inside its block: "allow", "log", "disallow",
    "log_explicit" or "disallow_explicit"."""
    with contextlib.ExitStack() as stack:
        for state in (
            transfer_guard_host_to_device,
            transfer_guard_device_to_device,
            transfer_guard_device_to_host,
            _general_level,
        ):
            stack.enter_context(state(new_val))
        yield


def eager_host_to_device(x) -> None:
    """The NumPy value or Python scalar `x` made an Array outside any transformation (under
    one, it is a constant of the program being built, not a transfer)."""
    if current_trace().parent is not None:
        return
    if isinstance(x, (np.ndarray, np.generic)):
        host_to_device(x, False, explicit=False)
    else:  # a Python scalar, transferred as its own type (`x + 1` moves an int32)
        dtype = dtypes.python_scalar_dtype(x)
        host_to_device(np.empty((), dtype), type(x) is not bool, explicit=False)


def jit_arguments(leaves) -> None:
    """The NumPy arguments of a jitted call, which its program is given as device buffers.
    (Python scalars are checked where their buffers are made; values that tracejit itself
    hands a program, such as those of eager control flow, are no transfers of the user's.)"""
    if guarded[0]:
        for leaf in leaves:
            if isinstance(leaf, (np.ndarray, np.generic)):
                host_to_device(leaf, False, explicit=False)


def host_to_device(value, weak_type: bool, *, explicit: bool, destination=None) -> None:
    """Logs or refuses moving the host value `value` (NumPy, canonical dtype) to a device."""
    aval = ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), weak_type)
    destination = destination if destination is not None else default_destination[0]()
    _check(
        level("host_to_device"),
        explicit,
        f"host-to-device transfer: aval={aval!r}, dst_sharding={destination!r}",
    )


def device_to_device(aval, destination, *, explicit: bool) -> None:
    """Logs or refuses copying a device array of type `aval` to `destination`."""
    _check(
        level("device_to_device"),
        explicit,
        f"device-to-device transfer: aval={ShapedArray(aval.shape, aval.dtype, aval.weak_type)!r}, "
        f"dst_sharding={destination!r}",
    )


def _check(level: str, explicit: bool, transfer: str) -> None:
    if level == "allow" or (explicit and not level.endswith("_explicit")):
        return
    if level.startswith("log"):
        logger.warning(transfer)
    else:
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {transfer}")
