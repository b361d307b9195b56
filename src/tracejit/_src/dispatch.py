"""Running a jitted jaxpr: compile once with XLA through PJRT, or evaluate with NumPy.

The backend is PJRT (`runtime/`) when a plugin loads, else the NumPy evaluator, which runs the
staged jaxpr with `eval_jaxpr` on the eval trace (still traced once per signature), with a
one-time warning. `TRACEJIT_PLATFORM=numpy` forces the NumPy evaluator. A jaxpr holding a
primitive that has no lowering rule yet is also evaluated with NumPy, with a warning naming it.

A compiled program belongs to whoever asked for it: a jitted function keeps one per signature
and frees them with itself. The process-wide caches (programs of jaxprs bound eagerly,
executables by StableHLO text, shared between equal programs) keep only the most recently used
(`LRUCache`), so memory stays bounded however many programs a process compiles. Executables
also persist on disk between processes (`compile_cache`).
"""

from __future__ import annotations

import collections
import functools
import os
import threading
import warnings

import numpy as np

from tracejit._src import (  # (importing runtime loads neither cffi nor XLA)
    compile_cache,
    dtypes,
    monitoring,
    prng,
    runtime,
    transfer_guard,
)
from tracejit._src.accel import accel
from tracejit._src.array import (
    Array,
    DeviceArray,
    Shard,
    ShardedArray,
    make_array,
    make_device_array,
    make_sharded_array,
    mark_deleted,
)
from tracejit._src.config import config
from tracejit._src.core import ShapedArray, Tracer, python_scalar_types
from tracejit._src.interpreters.eval import to_numpy
from tracejit._src.jaxpr import ClosedJaxpr, eval_jaxpr, used_inputs
from tracejit._src.lax.sharding_constraints import with_sharding_constraint
from tracejit._src.lowering.lower import falls_back_to_numpy, lower_jaxpr_to_module
from tracejit._src.runtime.device import DeviceBase
from tracejit._src.sharding import (
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_mesh,
)
from tracejit._src.tree_util import tree_map

_backend = None
_warned = set()  # one per warning given: bounded by the plugin and the program's source lines


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def backend() -> str:
    """'pjrt' or 'numpy'."""
    global _backend
    if _backend is None:
        if os.environ.get("TRACEJIT_PLATFORM", "").lower() == "numpy":
            _backend = "numpy"
        else:
            _backend = "pjrt" if runtime.platform_available() else "numpy"
            if _backend == "numpy":
                _warn_once(
                    "no-plugin",
                    "No PJRT plugin could be loaded (XLA's CPU plugin, xla_cpu_pjrt, has wheels "
                    "for Linux x86-64 only): jit evaluates its staged programs with NumPy.",
                )
    return _backend


_SCALAR_BUFFERS = 16


class CompiledProgram:
    """A jaxpr compiled by XLA: call it with flat arguments, get flat Arrays back.

    `kept` lists the arguments that are the program's parameters (None: all), the others are
    never read and not transferred. `aliases` maps a parameter to the output that reuses its
    buffer (donation); when there are any, calls go through `_call_donating`.
    """

    def __init__(self, closed: ClosedJaxpr, name: str, text: str, executable, kept, aliases):
        self.closed = closed
        self.name = name
        self.text = text
        self.executable = executable
        self.out_weak_types = [aval.weak_type for aval in closed.out_avals]
        self.client = executable.client
        self.kept = kept
        self.donated = frozenset(aliases or ())
        self.plain = kept is None and not self.donated  # every argument passed as it is
        self.key_outputs = [
            i for i, aval in enumerate(closed.out_avals) if aval.dtype == dtypes.key_fry
        ]
        # A program that calls back into Python finishes before the call returns: its
        # callables live only as long as the executable, which the caller may drop at once.
        self.waits = bool(executable.host_callbacks)
        self.scalar_buffers = {}  # (type, repr) -> buffer of a Python scalar argument
        self._accelerated = None  # the C accelerator's `Program`, made by `accelerated()`

    def __call__(self, args):
        if self.plain:
            try:
                buffers = [x._buffer for x in args]
            except AttributeError:  # a host value: transferred (and kept by an Array)
                buffers = self._buffers(args)
        else:
            if self.kept is not None:
                args = [args[i] for i in self.kept]
            if self.donated:
                return self._call_donating(args)
            buffers = self._buffers(args)
        return self._outputs(self.executable.execute_one(buffers))

    def accelerated(self):
        """This program's call in C (the accelerator's `Program`: the same steps as `__call__`
        for device Arrays), or None where every call needs the Python path: without the
        accelerator, before a first call has shown the outputs' layouts, and for programs
        that donate, call back into Python, return keys or run on several devices."""
        if self._accelerated is not None:
            return self._accelerated
        calls = self.client.plugin.accel
        if calls is None or self.donated or self.waits or self.key_outputs:
            return None
        executable = self.executable
        ffi = self.client.plugin.ffi
        device = executable.devices[0]
        num_parameters = len(self.closed.in_avals if self.kept is None else self.kept)
        call = executable.reserved_call(num_parameters)
        if call is None:
            return None
        outputs = tuple(
            (shape, dtype, dense, weak, (shape, dtype, weak))
            for shape, dtype, dense, weak in zip(
                executable.output_shapes,
                executable.output_dtypes,
                executable._output_dense,
                self.out_weak_types,
                strict=True,
            )
        )
        self._accelerated = accel.Program(
            runtime=calls,
            num_arguments=num_parameters,
            client=self.client,
            device=device,
            client_address=int(ffi.cast("uintptr_t", self.client._ptr)),
            device_address=int(ffi.cast("uintptr_t", device._ptr)),
            buffer_type=runtime.Buffer,
            array_type=DeviceArray,
            host_array_type=Array,
            output_specs=outputs,
            **call,
        )
        return self._accelerated

    def scalar_spec(self, position: int) -> tuple:
        """How the accelerator makes the buffer of a Python scalar passed as argument
        `position`: its dtype and PJRT element type."""
        dtype = self.closed.in_avals[position].dtype
        return dtype, self.client.plugin.type_of_dtype[dtype]

    def _outputs(self, buffers) -> list:
        if self.waits:
            for buffer in buffers:
                buffer.block_until_ready()
        outs = [make_device_array(b, w) for b, w in zip(buffers, self.out_weak_types, strict=True)]
        for i in self.key_outputs:  # XLA hands back a key array's words
            outs[i] = make_array(prng.keys_of(outs[i]._value))
        return outs

    def _buffers(self, args) -> list:
        buffers = []
        for x in args:
            try:
                buffers.append(x._buffer)
            except AttributeError:
                buffers.append(self.transfer(x))
        return buffers

    def transfer(self, x):
        """A device buffer for a host value. An Array keeps it (Arrays are immutable, and the
        buffer aliases the Array's memory), so passing it again costs no transfer."""
        if type(x) in python_scalar_types:
            if transfer_guard.guarded[0]:  # (NumPy arguments: `transfer_guard.jit_arguments`)
                transfer_guard.host_to_device(*to_numpy(x), explicit=False)
            return self._scalar_buffer(x)
        value = host_value(x)
        if type(x) is not Array:
            return self.client.buffer_from_numpy(value)
        buffer = x._buffer = self.client.buffer_from_numpy(value, zero_copy=True)
        return buffer

    def _scalar_buffer(self, x):
        """Python scalars passed again and again (`f(x, 0.5)`, a sampler's bounds) are
        transferred once: their buffers are kept, the last `_SCALAR_BUFFERS` per program.
        Keyed by type and repr, which tell 0.0 from -0.0 and 1 from True."""
        key = (type(x), repr(x))
        buffer = self.scalar_buffers.get(key)
        if buffer is None:
            if len(self.scalar_buffers) >= _SCALAR_BUFFERS:
                del self.scalar_buffers[next(iter(self.scalar_buffers))]
            buffer = self.scalar_buffers[key] = self.client.buffer_from_numpy(host_value(x))
        return buffer

    def _call_donating(self, args):
        """A call that gives the donated parameters' buffers to XLA, which writes the aliased
        outputs into them; the Arrays they came from are deleted afterwards.

        Only memory nothing else can see is donated: a device buffer without NumPy views of
        it (PJRT itself refuses those: the Array then stays valid, as in JAX), or a fresh
        copy of a host value (never a zero-copy buffer, which aliases NumPy memory).
        """
        buffers, owners, donated = [], [], self.donated
        for position, x in enumerate(args):
            if position not in donated:
                try:
                    buffers.append(x._buffer)
                except AttributeError:
                    buffers.append(self.transfer(x))
                continue
            buffer = getattr(x, "_buffer", None)  # a DeletedArray raises RuntimeError here
            if buffer is None or (buffer._host is not None and buffer._host.aliased):
                # NumPy's memory, or a zero-copy buffer over it: donate a copy
                buffer = self.client.buffer_from_numpy(host_value(x))
            buffers.append(buffer)
            if isinstance(x, Array):
                owners.append((x, buffer))
        _check_no_donated_duplicates(args, owners)
        outs = self.executable.execute_one(buffers)
        for array, buffer in owners:
            if buffer.is_deleted():  # donated (not refused for live views)
                mark_deleted(array)
        return self._outputs(outs)

    def as_text(self) -> str:
        """The StableHLO module compiled (the C API hands out no optimized HLO text)."""
        return self.text

    def cost_analysis(self):
        return self.executable.cost_analysis()


def host_value(x) -> np.ndarray:
    """The NumPy value XLA is given for an argument: a key array as its words."""
    value = to_numpy(x)[0]
    return prng.words_of(value) if value.dtype == dtypes.key_fry else value


def _check_no_donated_duplicates(args, owners) -> None:
    """A donated Array passed a second time would be read after XLA reused its memory."""
    if not owners:
        return
    donated = {id(array) for array, _ in owners}
    if sum(id(x) in donated for x in args) > len(donated):
        raise ValueError(
            "A donated Array is also passed as another argument of the same call: its buffer "
            "would be reused while still being read. Pass a copy (jnp.copy) to one of them."
        )


class EvaluatedProgram:
    """The NumPy evaluator's stand-in for a compiled program."""

    def __init__(self, closed: ClosedJaxpr, name: str):
        self.closed = closed
        self.name = name

    def __call__(self, args):
        return eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)

    def as_text(self) -> str:
        return str(self.closed)

    def cost_analysis(self):
        return {}


class LRUCache(collections.OrderedDict):
    """A dict that keeps its `tracejit_compile_cache_size` most recently used entries.

    Every in-memory compile cache is one: an executable costs about 110 KB, so a process that
    compiles without end (a new function or shape each step) must forget old ones to hold a
    fixed amount of memory. A forgotten entry costs its next use a compile (or a load from the
    disk cache) again.
    """

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        """The entry of `key`, made the most recent. (Its key is hashed once: a signature of a
        thousand arguments takes 10 µs to hash. The last value is then the one moved, unless
        another thread came between: hence the lock.)"""
        with self._lock:
            try:
                self.move_to_end(key)
            except KeyError:
                return default
            return next(reversed(self.values()))

    def __setitem__(self, key, value):
        with self._lock:
            super().__setitem__(key, value)
            self.move_to_end(key)
            while len(self) > config.compile_cache_size:
                self.popitem(last=False)


# The process-wide compile caches. A jitted function keeps its own programs, one per signature
# (freed with it); these serve the jaxprs bound eagerly without one (the known and transposed
# calls of `grad(jit(f))`, a `jit` inside an evaluated jaxpr) and share executables between equal
# programs (a fresh `jit(lambda ...)` of the same body compiles once).
_programs = LRUCache()  # ClosedJaxpr (by identity) -> program
_executables = LRUCache()  # (StableHLO text, compiler options) -> Executable


def clear_program_caches() -> None:
    """Empties the in-memory compile caches (`tracejit.clear_caches`); the disk cache stays."""
    _programs.clear()
    _executables.clear()


def run_jaxpr(closed: ClosedJaxpr, name: str, args):
    """Runs `closed` (a jaxpr bound eagerly by the `jit` primitive) compiled."""
    program = _programs.get(closed)
    if program is None:
        program = _programs[closed] = compile_program(closed, name)
    return program(args)


def plan_parameters(closed: ClosedJaxpr, donated=None, keep_unused=False, stacklevel=2):
    """(kept, aliases) for lowering: the inputs that become parameters (None: all) and, among
    those, the donated ones an output of equal shape and dtype can reuse -> that output.

    Donations are matched to outputs in order, each output taking the first donated parameter
    of its type still free. A donated input left without an output warns, as JAX does: its
    buffer cannot be reused (it is not deleted either).
    """
    n = len(closed.jaxpr.invars)
    kept = None if keep_unused else used_inputs(closed.jaxpr)
    if kept is not None and len(kept) == n:
        kept = None
    if not donated or not any(donated):
        return kept, {}
    indices = range(n) if kept is None else kept
    in_avals = closed.in_avals
    free: dict = {}  # (shape, dtype) -> donated parameter positions, in order
    for position, i in enumerate(indices):
        if donated[i]:
            free.setdefault((in_avals[i].shape, in_avals[i].dtype), []).append(position)
    aliases = {}
    for output, aval in enumerate(closed.out_avals):
        waiting = free.get((aval.shape, aval.dtype))
        if waiting:
            aliases[waiting.pop(0)] = output
    unusable = [_describe(in_avals[indices[p]]) for positions in free.values() for p in positions]
    if unusable:
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
            "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
    return kept, aliases


def _describe(aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


# Call primitives whose eager evaluation is itself a program over several devices
# (`shard_map`) -> `compile(eqn, name, donated)`, its program: a jaxpr that is just such a call
# runs it directly (`jit(shard_map(f))`, which `pmap` is), with `jit`'s donations.
device_call_compilers: dict = {}


def device_call(closed: ClosedJaxpr):
    """The equation of a jaxpr that only passes its inputs to one device call, else None."""
    jaxpr = closed.jaxpr
    if len(jaxpr.eqns) != 1 or jaxpr.constvars:
        return None
    (eqn,) = jaxpr.eqns
    if list(eqn.invars) != list(jaxpr.invars) or list(eqn.outvars) != list(jaxpr.outvars):
        return None
    body = eqn.primitive.call_jaxpr_param  # a call of a device call: `jit(pmap(f))`
    if body is not None:
        return device_call(eqn.params[body])
    return eqn if eqn.primitive in device_call_compilers else None


def compile_program(
    closed: ClosedJaxpr, name: str, donated=None, keep_unused: bool = False, compiler_options=()
):
    """The program of `closed`, compiled now (its executable possibly shared or loaded from
    disk); the caller keeps it. `donated` (a bool per input, or None) and `keep_unused` are
    `jit`'s `donate_argnums` and `keep_unused`, per flat argument; `compiler_options` its XLA
    options as sorted (name, value) pairs."""
    if backend() == "numpy" or any(a.dtype == dtypes.float0 for a in closed.in_avals):
        return EvaluatedProgram(closed, name)
    eqn = device_call(closed)
    if eqn is not None:
        if compiler_options:
            raise NotImplementedError(
                "jit(compiler_options=) of a program over several devices is not built yet"
            )
        return device_call_compilers[eqn.primitive](eqn, name, donated)
    kept, aliases = plan_parameters(closed, donated, keep_unused, stacklevel=3)
    callbacks: list = []
    try:
        with monitoring.timed(monitoring.JAXPR_TO_MLIR_MODULE_DURATION, fun_name=f"jit({name})"):
            text = lower_jaxpr_to_module(
                closed, f"jit_{name}", kept_inputs=kept, aliases=aliases, callbacks=callbacks
            )
    except NotImplementedError as err:
        if not falls_back_to_numpy(err):
            raise
        _warn_once(str(err), f"{err}; jit evaluates {name} with NumPy instead.")
        return EvaluatedProgram(closed, name)
    with monitoring.timed(monitoring.BACKEND_COMPILE_DURATION, fun_name=f"jit({name})"):
        if callbacks:
            executable = _compile_with_callbacks(text, callbacks, compiler_options)
        else:
            key = (text, compiler_options)
            executable = _executables.get(key)
            if executable is None:
                executable = _executables[key] = compile_cache.compile_with_disk_cache(
                    text, compiler_options
                )
    return CompiledProgram(closed, name, text, executable, kept, aliases)


def _compile_with_callbacks(text: str, callbacks: list, compiler_options=()):
    """A program that calls Python on the host: compiled each time, never shared through the
    in-memory cache nor written to or read from disk, since the callback ids in its text
    belong to this process and to the executable that keeps their callables alive."""
    client = runtime.get_client()
    runtime.ensure_handler(client.plugin)
    options = runtime.compile_options_proto(env_option_overrides=dict(compiler_options))
    executable = client.compile(text, compile_options=options)
    executable.host_callbacks = tuple(callbacks)
    return executable


# --- devices --------------------------------------------------------------------------------


class NumpyDevice(DeviceBase):
    """A device of the NumPy evaluator: the host. There are as many as the CPU device count
    asks for (`TRACEJIT_NUM_CPU_DEVICES`, `XLA_FLAGS`), so that pmap and shard_map over them
    evaluate their global form."""

    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __init__(self, device_id: int):
        self.id = device_id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


@functools.cache  # one list per process: devices are compared by identity
def _numpy_devices() -> list:
    return [NumpyDevice(i) for i in range(runtime.configured_cpu_device_count() or 1)]


def devices() -> list:
    if backend() == "pjrt":
        return runtime.get_client().devices()
    return list(_numpy_devices())


def default_backend() -> str:
    return devices()[0].platform


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """`x` (an array-like or a pytree of them) committed to `device` (default: the first) or
    laid out as the `Sharding` (or PartitionSpec of the current mesh) says (one buffer per
    device of a `NamedSharding`).

    An Array already placed so is returned itself unless `may_alias=False` asks for a copy;
    host values are transferred."""
    device_type = runtime.Device if backend() == "pjrt" else NumpyDevice
    if isinstance(device, PartitionSpec):  # of the current mesh
        if get_mesh() is None:
            raise ValueError(
                "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put"
            )
        device = NamedSharding(get_mesh(), device)
    for given in (device, src):
        if given is not None and not isinstance(given, (device_type, Sharding)):
            raise ValueError(
                "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
                "`Format`, `jax.memory.Space` or a pytree of these values. Received invalid "
                f"value: {given!r}"
            )
    if donate and may_alias:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if isinstance(device, SingleDeviceSharding):
        device = device._device
    if isinstance(device, NamedSharding):
        return tree_map(lambda leaf: _put_sharded(leaf, device, may_alias), x)

    def put(leaf):
        if isinstance(leaf, Tracer):  # staged, or under a transformation: stays where it is
            return leaf
        on_device = backend() != "pjrt" or getattr(leaf, "_buffer", None) is not None
        placed = type(leaf) is not ShardedArray and isinstance(leaf, Array) and on_device
        if placed and may_alias is not False and device in (None, *_single_device(leaf)):
            return leaf
        value, weak = to_numpy(leaf)
        if transfer_guard.guarded[0]:
            _guard_put(leaf, value, weak, device)
        if backend() != "pjrt" or value.dtype == dtypes.key_fry:  # keys: passed as words
            return make_array(np.array(value), weak)
        return make_device_array(runtime.get_client().buffer_from_numpy(value, device), weak)

    return tree_map(put, x)


def _guard_put(leaf, value, weak: bool, device) -> None:
    """`device_put`'s explicit transfer of `leaf`, if it is one, under the transfer guard."""
    destination = SingleDeviceSharding(device if device is not None else devices()[0])
    if not isinstance(leaf, Array):
        transfer_guard.host_to_device(value, weak, explicit=True, destination=destination)
    elif destination._device not in _single_device(leaf):
        transfer_guard.device_to_device(leaf.aval, destination, explicit=True)


def _single_device(leaf) -> tuple:
    buffer = getattr(leaf, "_buffer", None)
    return (buffer.device,) if buffer is not None else (devices()[0],)


def _put_sharded(x, sharding: NamedSharding, may_alias):
    if isinstance(x, Tracer):  # staged: a constraint on the layout XLA gives it
        return with_sharding_constraint(x, sharding)
    if isinstance(x, ShardedArray) and x.sharding == sharding and may_alias is not False:
        return x
    value, weak = to_numpy(x)
    if transfer_guard.guarded[0]:
        _guard_put_sharded(x, value, weak, sharding)
    if backend() != "pjrt":
        raise NotImplementedError(
            "device_put with a NamedSharding needs a PJRT plugin: the NumPy platform has one device"
        )
    sharding.shard_shape(value.shape)  # (JAX's error for a dimension that does not divide)
    aval = ShapedArray(value.shape, value.dtype, weak)
    return make_sharded_array(device_buffers(value, sharding), sharding, aval)


def _guard_put_sharded(x, value, weak: bool, sharding: NamedSharding) -> None:
    if isinstance(x, Array):
        transfer_guard.device_to_device(x.aval, sharding, explicit=True)
    else:
        transfer_guard.host_to_device(value, weak, explicit=True, destination=sharding)


def device_buffers(x, sharding: NamedSharding) -> list:
    """One buffer per device of `sharding` (mesh order) holding its block of `x`: the buffers
    of an Array laid out so already (no copy), else copies of the blocks of its value (kept
    0-dimensional where they are: `ascontiguousarray` would make them 1-dimensional)."""
    if type(x) is ShardedArray:
        placed = x.placement.sharding
        if placed is sharding or placed == sharding or placed.is_equivalent_to(sharding, x.ndim):
            return list(x.placement.buffers)
    value = host_value(x)
    sharding.shard_shape(value.shape)
    client = runtime.get_client()
    indices = sharding.devices_indices_map(value.shape)
    return [
        client.buffer_from_numpy(np.require(value[indices[device]], requirements="C"), device)
        for device in sharding._device_assignment
    ]


# --- the placement of single-device Arrays: one shard on the first device -------------------


def _array_sharding(self) -> SingleDeviceSharding:
    return SingleDeviceSharding(_single_device(self)[0])


def _array_shards(self) -> list:
    return [Shard(_single_device(self)[0], (slice(None),) * self.ndim, 0, self)]


def _array_devices(self) -> set:
    return set(_single_device(self))


Array.sharding = property(_array_sharding)
Array.addressable_shards = property(_array_shards)
Array.devices = _array_devices


# --- what every Array answers about its placement, as jax.Array -------------------------------


def _array_device(self):
    """The device an Array is on; the sharding, if it is spread over several (JAX)."""
    devices = self.devices()
    return next(iter(devices)) if len(devices) == 1 else self.sharding


def _array_buffers(self) -> list:
    if type(self) is ShardedArray:
        return list(self.placement.buffers)
    buffer = getattr(self, "_buffer", None)
    return [] if buffer is None else [buffer]


def _array_is_ready(self) -> bool:
    """Whether every block is computed (an Array made on the host always is)."""
    return all(buffer.ready() for buffer in _array_buffers(self))


def _array_on_device_size_in_bytes(self) -> int:
    """The bytes of one device's block (CPU devices store them densely)."""
    return self.addressable_shards[0].data.nbytes


def _array_addressable_data(self, index: int):
    return self.addressable_shards[index].data


def _array_to_device(self, device, *, stream=None):
    """The array API's `to_device`: `device_put`."""
    if stream is not None:
        raise NotImplementedError("to_device(stream=) has no meaning on CPU devices")
    return device_put(self, device)


def _gone(name: str, instead: str):
    def raise_gone(self):
        raise AttributeError(f"arr.{name} has been deprecated. Use {instead}")

    return property(raise_gone)


Array.device = property(_array_device)
Array.is_fully_addressable = property(lambda self: True)  # (every array is this process's)
Array.is_ready = _array_is_ready
Array.on_device_size_in_bytes = _array_on_device_size_in_bytes
Array.platform = lambda self: next(iter(self.devices())).platform
Array.copy_to_host_async = lambda self: None  # (host memory already: nothing to start)
Array.to_device = _array_to_device
Array.addressable_data = _array_addressable_data
Array.global_shards = property(lambda self: self.addressable_shards)  # (one process)
Array.device_buffer = _gone("device_buffer", "arr.addressable_data(0)")
Array.device_buffers = _gone("device_buffers", "[x.data for x in arr.addressable_shards]")
