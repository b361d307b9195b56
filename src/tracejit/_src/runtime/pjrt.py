"""XLA's PJRT C API through cffi: loading the plugin, errors, and argument-struct plumbing.

A PJRT plugin exports one function, `GetPjrtApi()`, returning a table of C function pointers.
Every function takes one `PJRT_<Name>_Args*` struct (inputs and outputs are its fields, and its
`struct_size` tells the plugin which header version the caller was built against) and returns
a `PJRT_Error*`, NULL on success. We load the table with cffi in ABI mode (`ffi.dlopen`, no
compiler), with the declarations of the plugin's own header (see `header.py`). The objects built
on this module (`client.py`, `executable.py`, `buffer.py`) are used like this:

    client = get_client()                              # process-wide, N CPU devices
    exe = client.compile(mlir_text)                    # StableHLO text -> Executable
    x = client.buffer_from_numpy(np.ones(4, np.float32))
    (y,) = exe.execute_one([x, x])                     # returns at once: dispatch is async
    y.to_numpy()                                       # waits, then copies to the host

Ownership. The plugin allocates errors, events, buffers and executables, and the caller must
destroy each exactly once. Each has one Python owner here: errors are read and destroyed at
once and raised as `XlaRuntimeError`; `Event`, `Buffer` and `Executable` destroy their handle in
`__del__` (a finalizer costs far less than `weakref.finalize` on the hot path). `delete()` frees
the device memory early, while the handle stays valid until `__del__`, so using a deleted buffer
is a clean PJRT error, never a dangling pointer. A client is never destroyed by a finalizer:
every buffer and executable refers to it, but in a garbage cycle Python may finalize the client
first. `Client.close()` is explicit and runs for every client at exit; after it, finalizers
skip their destroy calls instead of touching a dead client. The plugin is loaded with
RTLD_NODELETE: it registers process-exit handlers, which crash if the library was unloaded.

Speed. A call through cffi costs well under a microsecond, but `ffi.new` of an argument struct
costs about as much again, so the hot paths (execute, destroy, await, one-field queries) reuse
argument structs from per-type pools: a pool (list pop/append) rather than one shared struct, so
that threads and finalizers running inside another call never share a struct.
With the C accelerator (`Plugin.accel`, a `Runtime`), waiting for a buffer and destroying one
are one C call each, by the buffer's address, on the same function pointers.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping

import numpy as np

from tracejit._src.accel import accel
from tracejit._src.errors import JaxRuntimeError
from tracejit._src.runtime import formats, header

# One class, as in JAX, where jaxlib's XlaRuntimeError is `jax.errors.JaxRuntimeError`.
XlaRuntimeError = JaxRuntimeError


def runtime_error(message: str, code: int = 2, code_name: str = "UNKNOWN") -> JaxRuntimeError:
    """An error reported by the plugin, e.g. a compile error or a shape mismatch at execution:
    its message is the plugin's own text, prefixed with the status code's name as JAX prints
    it; `code_name` (`INVALID_ARGUMENT`, ...), `code` (its number) and `plugin_message` (the
    text alone) are kept on it."""
    error = JaxRuntimeError(f"{code_name}: {message}")
    error.code, error.code_name, error.plugin_message = code, code_name, message
    return error


error_hooks: list = []
"""Functions called with each `XlaRuntimeError` read from the plugin before it is raised: the
host-callback handler (`ffi.py`) chains the user's exception to the errors it caused."""


# ------------------------------------------------------------------------------------------------
# The plugin


def _configure_logging() -> None:
    """The plugin logs through absl/TSL, which read `TF_CPP_MIN_LOG_LEVEL` when they first log.
    Quiet unless `TRACEJIT_PJRT_LOG=1`; a level the user set explicitly wins."""
    if os.environ.get("TRACEJIT_PJRT_LOG", "").strip().lower() in ("1", "true", "yes", "on"):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


class _ArgsPool:
    """Reusable argument structs of one type (see the module docstring)."""

    __slots__ = ("_free", "_name", "_plugin")

    def __init__(self, plugin: Plugin, name: str):
        self._free: list = []
        self._plugin = plugin
        self._name = name

    def take(self):
        try:
            return self._free.pop()
        except IndexError:
            return self._plugin.new(self._name)

    def give(self, args) -> None:
        self._free.append(args)


class Plugin:
    """A loaded PJRT plugin: the cffi types, the function table, and struct-size bookkeeping."""

    def __init__(self, location: header.PluginLocation):
        _configure_logging()
        self.location = location
        self.definitions = header.load_cdefinitions(location.header)
        ffi = self.ffi = header.load_ffi(self.definitions)
        self.lib = ffi.dlopen(
            str(location.library), ffi.RTLD_NOW | ffi.RTLD_LOCAL | ffi.RTLD_NODELETE
        )
        self.api = self.lib.GetPjrtApi()
        if self.api == ffi.NULL:
            raise header.PluginNotFoundError(f"GetPjrtApi() returned NULL in {location.library}")
        version = self.api.pjrt_api_version
        self.api_version = (version.major_version, version.minor_version)
        if self.api_version[0] != self.definitions.api_version[0]:
            raise header.PluginNotFoundError(
                f"{location.library} speaks PJRT C API {self.api_version}, but the header "
                f"{location.header} declares {self.definitions.api_version}"
            )
        self.NULL = ffi.NULL
        self._functions: dict[str, object] = {}
        self._struct_sizes: dict[str, int] = {}
        self._pointer_types: dict[str, object] = {}
        self._pools: dict[str, _ArgsPool] = {}
        self._queries: dict[str, tuple[_ArgsPool, object]] = {}
        self.error_code_names = {
            value: name.removeprefix("PJRT_Error_Code_")
            for value, name in ffi.typeof("PJRT_Error_Code").elements.items()
        }
        buffer_types = ffi.typeof("PJRT_Buffer_Type").relements
        self.type_of_dtype: dict[np.dtype, int] = {}
        self.dtype_of_type: dict[int, np.dtype] = {}
        for dtype, name in formats.PJRT_TYPE_NAMES.items():
            value = buffer_types.get("PJRT_Buffer_Type_" + name)
            if value is not None:
                self.type_of_dtype[dtype] = value
                self.dtype_of_type[value] = dtype
        self.sub_byte_types = frozenset(
            buffer_types["PJRT_Buffer_Type_" + n]
            for n in formats.SUB_BYTE_TYPE_NAMES
            if "PJRT_Buffer_Type_" + n in buffer_types
        )
        self.call("PJRT_Plugin_Initialize")
        self._destroy_buffer = self.function("PJRT_Buffer_Destroy")
        self._destroy_event = self.function("PJRT_Event_Destroy")
        self._await_event = self.function("PJRT_Event_Await")
        self._ready_event = self.function("PJRT_Buffer_ReadyEvent")
        self._ready_free_lists = tuple(
            self.pool(f"{name}_Args")._free
            for name in ("PJRT_Buffer_ReadyEvent", "PJRT_Event_Await", "PJRT_Event_Destroy")
        )
        self._destroy_buffer_free = self.pool("PJRT_Buffer_Destroy_Args")._free
        self.accel = self._accelerated_calls()

    def _accelerated_calls(self):
        """The C accelerator's `Runtime`: the PJRT functions of a call (their addresses, the
        sizes and field offsets of their argument structs), or None without the accelerator."""
        if accel is None:
            return None
        ffi = self.ffi

        def spec(name, *fields):
            args = name + "_Args"
            address = int(ffi.cast("uintptr_t", self.function(name)))
            return (address, self.struct_size(args), *(ffi.offsetof(args, f) for f in fields))

        return accel.Runtime(
            error=self.error_at,
            destroy_buffer=spec("PJRT_Buffer_Destroy", "buffer"),
            ready_event=spec("PJRT_Buffer_ReadyEvent", "buffer", "event"),
            await_event=spec("PJRT_Event_Await", "event"),
            destroy_event=spec("PJRT_Event_Destroy", "event"),
            from_host=spec(
                "PJRT_Client_BufferFromHostBuffer",
                "client",
                "data",
                "type",
                "host_buffer_semantics",
                "device",
                "done_with_host_buffer",
                "buffer",
            ),
            copy_during_call=self.lib.PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
        )

    # -- structs and functions ---------------------------------------------------------------

    def function(self, name: str):
        """The plugin's `name` function; UNIMPLEMENTED if its table predates or lacks it."""
        function = self._functions.get(name)
        if function is None:
            ffi = self.ffi
            if ffi.offsetof("PJRT_Api", name) >= self.api.struct_size:
                raise runtime_error(f"{name} is not offered by this plugin", 12, "UNIMPLEMENTED")
            function = getattr(self.api, name)
            if function == ffi.NULL:
                raise runtime_error(f"{name} is not offered by this plugin", 12, "UNIMPLEMENTED")
            self._functions[name] = function
        return function

    def struct_size(self, name: str) -> int:
        """`offsetof(last field) + sizeof(last field)`, as the header's PJRT_STRUCT_SIZE."""
        size = self._struct_sizes.get(name)
        if size is None:
            last = self.definitions.struct_last_fields.get(name)
            if last is None:
                size = self.ffi.sizeof(name)
            else:
                field = dict(self.ffi.typeof(name).fields)[last]
                size = field.offset + self.ffi.sizeof(field.type)
            self._struct_sizes[name] = size
        return size

    def new(self, name: str, **fields):
        """A zeroed `name` struct (owned by the returned cdata) with `struct_size` set."""
        pointer_type = self._pointer_types.get(name)
        if pointer_type is None:
            pointer_type = self._pointer_types[name] = self.ffi.typeof(name + "*")
        args = self.ffi.new(pointer_type)
        args.struct_size = self.struct_size(name)
        for key, value in fields.items():
            setattr(args, key, value)
        return args

    def pool(self, name: str) -> _ArgsPool:
        pool = self._pools.get(name)
        if pool is None:
            pool = self._pools[name] = _ArgsPool(self, name)
        return pool

    def call(self, name: str, **fields):
        """Call `name` with a fresh `<name>_Args` filled from `fields`; return the struct, whose
        output fields hold the results. For paths where a microsecond does not matter."""
        args = self.new(name + "_Args", **fields)
        self.check(self.function(name)(args))
        return args

    def query(self, name: str, field: str, value, output: str | None = None):
        """Call `name`, whose arguments are one input `field`, and return its `output` field (a
        number or a pointer). Uses pooled structs: about three times cheaper than `call`."""
        entry = self._queries.get(name)
        if entry is None:
            entry = self._queries[name] = (self.pool(name + "_Args"), self.function(name))
        pool, function = entry
        args = pool.take()
        setattr(args, field, value)
        error = function(args)
        result = getattr(args, output) if output is not None else None
        pool.give(args)
        if error:
            raise self.error(error)
        return result

    # -- errors and events ------------------------------------------------------------------

    def check(self, error) -> None:
        if error:
            raise self.error(error)

    def error(self, error) -> XlaRuntimeError:
        """Read a `PJRT_Error*` into an exception and destroy it."""
        try:
            message_args = self.new("PJRT_Error_Message_Args", error=error)
            self.function("PJRT_Error_Message")(message_args)
            message = self.ffi.string(message_args.message, message_args.message_size)
            message = message.decode("utf-8", "replace")
            code_args = self.new("PJRT_Error_GetCode_Args", error=error)
            code_error = self.function("PJRT_Error_GetCode")(code_args)
            code = 2 if code_error else int(code_args.code)
        finally:
            self.function("PJRT_Error_Destroy")(self.new("PJRT_Error_Destroy_Args", error=error))
        exception = runtime_error(message, code, self.error_code_names.get(code, "UNKNOWN"))
        for hook in error_hooks:
            hook(exception)
        return exception

    def error_at(self, address: int) -> XlaRuntimeError:
        """`error` of a `PJRT_Error*` the C accelerator got, given by its address."""
        return self.error(self.ffi.cast("PJRT_Error*", address))

    def await_event(self, event, destroy: bool = True) -> None:
        """Block until `event` is ready (the GIL is released meanwhile); raise its error."""
        pool = self.pool("PJRT_Event_Await_Args")
        args = pool.take()
        args.event = event
        try:
            error = self._await_event(args)
        finally:
            pool.give(args)
            if destroy:
                self.destroy_event(event)
        self.check(error)

    def await_buffer_ready(self, buffer) -> None:
        """Block until the `Buffer`'s contents are computed; raise the computation's error. The
        three calls (ReadyEvent, Await, Destroy) in one C call with the accelerator; without,
        in one frame, their pooled structs taken from the pools' free lists directly: this is
        on the path of every `block_until_ready`."""
        if self.accel is not None:
            error = self.accel.await_buffer(buffer._address)
            if error:
                raise self.error_at(error)
            return
        buffer = buffer._ptr
        ready_free, await_free, destroy_free = self._ready_free_lists
        try:  # (not `if ready_free`: another thread may take the last one in between)
            ready = ready_free.pop()
        except IndexError:
            ready = self.new("PJRT_Buffer_ReadyEvent_Args")
        ready.buffer = buffer
        error = self._ready_event(ready)
        event = ready.event
        ready_free.append(ready)
        if error:
            raise self.error(error)
        try:
            waiting = await_free.pop()
        except IndexError:
            waiting = self.new("PJRT_Event_Await_Args")
        waiting.event = event
        error = self._await_event(waiting)
        await_free.append(waiting)
        try:
            destroy = destroy_free.pop()
        except IndexError:
            destroy = self.new("PJRT_Event_Destroy_Args")
        destroy.event = event
        self._destroy_event(destroy)
        destroy_free.append(destroy)
        if error:
            raise self.error(error)

    def event_is_ready(self, event) -> bool:
        return bool(self.query("PJRT_Event_IsReady", "event", event, "is_ready"))

    def destroy_event(self, event) -> None:
        pool = self.pool("PJRT_Event_Destroy_Args")
        args = pool.take()
        args.event = event
        self._destroy_event(args)
        pool.give(args)

    def destroy_buffer(self, buffer) -> None:
        """Destroy the handle a `Buffer` owns (from its finalizer)."""
        if self.accel is not None:
            error = self.accel.destroy_buffer(buffer._address)
            if error:
                raise self.error_at(error)
            return
        buffer = buffer._ptr
        free = self._destroy_buffer_free  # (its pool's free list: every buffer dies here)
        try:
            args = free.pop()
        except IndexError:
            args = self.new("PJRT_Buffer_Destroy_Args")
        args.buffer = buffer
        error = self._destroy_buffer(args)
        free.append(args)
        if error:
            raise self.error(error)

    # -- named values -----------------------------------------------------------------------

    def named_values(self, values: Mapping[str, object]):
        """A `PJRT_NamedValue[]` for `values` and the cdata objects that must outlive its use."""
        ffi = self.ffi
        array = ffi.new("PJRT_NamedValue[]", max(len(values), 1))
        keep = [array]
        for entry, (name, value) in zip(array, values.items()):
            entry.struct_size = self.struct_size("PJRT_NamedValue")
            encoded = name.encode()
            keep.append(name_buffer := ffi.new("char[]", encoded))
            entry.name, entry.name_size, entry.value_size = name_buffer, len(encoded), 1
            if isinstance(value, bool):
                entry.type, entry.bool_value = self.lib.PJRT_NamedValue_kBool, value
            elif isinstance(value, int):
                entry.type, entry.int64_value = self.lib.PJRT_NamedValue_kInt64, value
            elif isinstance(value, float):
                entry.type, entry.float_value = self.lib.PJRT_NamedValue_kFloat, value
            elif isinstance(value, str):
                keep.append(text := ffi.new("char[]", value.encode()))
                entry.type, entry.string_value = self.lib.PJRT_NamedValue_kString, text
                entry.value_size = len(value.encode())
            else:
                items = [int(v) for v in value]
                keep.append(ints := ffi.new("int64_t[]", items))
                entry.type, entry.int64_array_value = self.lib.PJRT_NamedValue_kInt64List, ints
                entry.value_size = len(items)
        return array, keep

    def read_named_values(self, array, count: int) -> dict[str, object]:
        ffi, lib = self.ffi, self.lib
        out: dict[str, object] = {}
        for index in range(count):
            entry = array[index]
            name = ffi.string(entry.name, entry.name_size).decode()
            kind = entry.type
            if kind == lib.PJRT_NamedValue_kString:
                out[name] = ffi.string(entry.string_value, entry.value_size).decode()
            elif kind == lib.PJRT_NamedValue_kInt64:
                out[name] = int(entry.int64_value)
            elif kind == lib.PJRT_NamedValue_kInt64List:
                out[name] = [int(entry.int64_array_value[i]) for i in range(entry.value_size)]
            elif kind == lib.PJRT_NamedValue_kFloat:
                out[name] = float(entry.float_value)
            elif kind == lib.PJRT_NamedValue_kBool:
                out[name] = bool(entry.bool_value)
        return out

    def attributes(self) -> dict[str, object]:
        """The plugin's self-description (XLA version, StableHLO versions, ...)."""
        args = self.call("PJRT_Plugin_Attributes")
        return self.read_named_values(args.attributes, args.num_attributes)

    def fingerprint(self) -> str:
        """A string that changes whenever the plugin binary does: for persistent-cache keys."""
        stat = os.stat(self.location.library)
        identity = (
            f"{os.path.realpath(self.location.library)}:{stat.st_size}:{stat.st_mtime_ns}:"
            f"{self.api_version}:{sorted(self.attributes().items())}"
        )
        return hashlib.sha256(identity.encode()).hexdigest()[:32]


_plugin: Plugin | None = None
_plugin_error: BaseException | None = None
_plugin_lock = threading.Lock()


def load_plugin() -> Plugin:
    """The process's plugin, loaded on first use; later calls return it (or raise the same
    error as the first attempt, without retrying the slow load)."""
    global _plugin, _plugin_error
    if _plugin is not None:
        return _plugin
    with _plugin_lock:
        if _plugin is None:
            if _plugin_error is not None:
                raise _plugin_error
            try:
                _plugin = Plugin(header.locate_plugin())
            except BaseException as error:
                _plugin_error = error
                raise
    return _plugin


def platform_available() -> bool:
    """Whether a PJRT plugin can be loaded here (False on macOS/Windows or without the wheel)."""
    try:
        load_plugin()
    except Exception:  # noqa: BLE001  (any failure to load means "not available")
        return False
    return True
