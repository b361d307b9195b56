"""What this process sees of the machine: its backend, devices and process, its live arrays,
and the caches it keeps (after JAX's module of the same name).

tracejit runs one process on the devices of one PJRT client (or on NumPy, without a plugin);
after `tracejit.distributed.initialize()` several processes run together (`distributed.py`):
`devices()` lists the devices of all of them, `local_devices()` this process's own. A backend
may be named by its platform (`"cpu"`), and `"gpu"` names whichever GPU platform the plugin
has.
"""

from __future__ import annotations

import abc
import gc
import platform as _platform
import sys
import warnings

import numpy as np

from tracejit._src import compile_cache, dispatch, distributed, transfer_guard
from tracejit._src.array import Array, DeviceArray
from tracejit._src.jit import clear_trace_caches
from tracejit._src.sharding import SingleDeviceSharding
from tracejit._src.tree_util import tree_leaves

_GPU_PLATFORMS = ("cuda", "rocm")
_KNOWN_PLATFORMS = ("cpu", "gpu", "tpu", *_GPU_PLATFORMS)


class Device(abc.ABC):
    """A device computations run on (`tracejit.devices()` lists them)."""

    @classmethod
    def __subclasshook__(cls, subclass):
        # PJRT devices exist only once the runtime's client module is loaded; asking for its
        # class earlier would load the plugin machinery at `import tracejit`.
        client = sys.modules.get("tracejit._src.runtime.client")
        if subclass in (dispatch.NumpyDevice, distributed.RemoteDevice) or (
            client is not None and issubclass(subclass, client.Device)
        ):
            return True
        return NotImplemented


def _check_backend(backend) -> None:
    """Raises JAX's RuntimeError unless `backend` (a platform name, or None for the default)
    names the platform this process computes on."""
    if backend is None:
        return
    present = dispatch.default_backend()
    name = str(backend).lower()
    if name == present or (name == "gpu" and present in _GPU_PLATFORMS):
        return
    if name in _KNOWN_PLATFORMS:
        raise RuntimeError(
            f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
            f"{backend} are present. Platforms present are: {present}"
        )
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['{present}']")


def devices(backend=None) -> list:
    """The devices of `backend` (default: the default backend), in id order: those of every
    process in a multi-process run."""
    _check_backend(backend)
    group = distributed.group()
    return dispatch.devices() if group is None else group.devices()


def local_devices(process_index=None, backend=None, host_id=None) -> list:
    """The devices process `process_index` (default: this one) addresses."""
    if host_id is not None:
        warnings.warn(
            "The argument to jax.local_devices has been renamed from `host_id` to "
            "`process_index`. This alias will eventually be removed; please update your code.",
            stacklevel=2,
        )
        process_index = host_id
    if process_index is None:
        _check_backend(backend)
        return dispatch.devices()
    if not 0 <= process_index < distributed.process_count():
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in devices(backend) if d.process_index == process_index]


def device_count(backend=None) -> int:
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    return len(local_devices(backend=backend))


def process_index(backend=None) -> int:
    """This process's index among the processes of a multi-process run (0 with one)."""
    _check_backend(backend)
    return distributed.process_index()


def process_count(backend=None) -> int:
    _check_backend(backend)
    return distributed.process_count()


def process_indices(backend=None) -> list:
    _check_backend(backend)
    return list(range(distributed.process_count()))


def _renamed(old: str, new: str) -> None:
    # (JAX's messages, verbatim: they name the new function on both sides)
    warnings.warn(
        f"jax.{old} has been renamed to jax.{new}. This alias will eventually be removed; "
        "please update your code.",
        stacklevel=3,
    )


def host_id(backend=None) -> int:
    _renamed("process_index", "process_index")
    return process_index(backend)


def host_ids(backend=None) -> list:
    _renamed("process_indexs", "process_indices")
    return process_indices(backend)


def host_count(backend=None) -> int:
    _renamed("process_count", "process_count")
    return process_count(backend)


def live_arrays(platform=None) -> list:
    """Every concrete array alive in the process (deleted and donated ones excepted): for
    finding what holds on to memory. Slow: it walks all objects the garbage collector tracks."""
    _check_backend(platform)
    return [x for x in gc.get_objects() if type(x) is Array or type(x) is DeviceArray]


def clear_caches() -> None:
    """Forgets every trace and compiled program held in memory: jitted functions trace and
    compile again on their next call. The on-disk compilation cache is kept (switch it off
    with `jax_enable_compilation_cache`)."""
    clear_trace_caches()
    dispatch.clear_program_caches()


def copy_to_host_async(x):
    """Starts copying each array of the pytree `x` to host memory; returns `x`. Arrays of the
    CPU backend are in host memory already, so there is nothing to start."""
    for leaf in tree_leaves(x):
        copy = getattr(leaf, "copy_to_host_async", None)
        if copy is not None:
            copy()
    return x


def print_environment_info(return_string: bool = False):
    """The versions and devices a bug report should name; printed, or returned as a string."""
    info = "\n".join(
        [
            f"tracejit: {compile_cache.tracejit_version()}",
            f"numpy:    {np.__version__}",
            f"python:   {sys.version}",
            (
                f"device info: {dispatch.default_backend()}-{device_count()}, "
                f"{local_device_count()} local devices"
            ),
            f"process_count: {process_count()}",
            f"platform: {_platform.uname()}",
        ]
    )
    if return_string:
        return info
    print(info)
    return None


def _default_destination() -> SingleDeviceSharding:
    return SingleDeviceSharding(devices()[0])


transfer_guard.default_destination[0] = _default_destination
