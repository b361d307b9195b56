"""Host callbacks: Python functions that XLA calls in the middle of a compiled program.

XLA's typed FFI (`stablehlo.custom_call` with `api_version = 4`) calls a C function, the
*handler*, with one `XLA_FFI_CallFrame*`: the operand buffers, the result buffers (already
allocated by XLA, of the declared shapes), and the op's attributes. A plugin that offers the
PJRT FFI extension registers handlers by name. This module declares those C structs for cffi
(`xla/ffi/api/c_api.h` and `xla/pjrt/c/pjrt_c_api_ffi_extension.h`, the extension's version 3,
whose names `PJRT_FFI_Type_Register_Args` the plugin's binary holds; from their documentation:
no header for them ships with the plugin), and registers one handler, `tracejit_host_callback`,
a cffi callback in ABI mode, for each plugin a client uses. A program calls Python like this:

    %r = "stablehlo.custom_call"(%x) {call_target_name = "tracejit_host_callback",
           api_version = 4 : i32, has_side_effect = true,
           backend_config = {callback_id = 7 : i64}} : (tensor<3xf32>) -> tensor<3xf32>

`HostCallback(function, result_avals)` registers `function` under a fresh id (the attribute);
the handler finds it by id, wraps each operand buffer as a read-only NumPy array without
copying (valid only during the call), calls it, checks what it returns against the declared
results (a clear error naming the callback, never a write past a buffer) and copies the results
into XLA's buffers. The `HostCallback` object owns the id: lowering hands it to the executable
compiled from the module, and when the last owner dies the id is unregistered. An executable
that holds callbacks must never be serialized to a persistent cache: its ids mean nothing in
another process.

Errors. cffi runs the handler with the GIL taken (XLA calls it from its own threads while the
caller waits in `execute` or in an event, with the GIL released). A Python exception must never
cross into C: the handler catches everything and returns an XLA FFI error whose message carries
the traceback and a marker `[host callback error N]`. When PJRT reports that error (at once, or
when an output is awaited), `pjrt.Plugin.error` passes it through `error_hooks`, and the hook
here chains the user's exception as `__cause__` of the `XlaRuntimeError`
(a `tracejit.errors.JaxRuntimeError`).
"""

from __future__ import annotations

import itertools
import math
import pathlib
import threading
import traceback
import weakref
from collections import OrderedDict

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.runtime import pjrt

TARGET_NAME = "tracejit_host_callback"
ID_ATTRIBUTE = "callback_id"

# The declarations, shared with the C accelerator's handler (csrc/accel/callbacks.c).
CDEF = (pathlib.Path(__file__).parent / "xla_ffi.h").read_text()

# `XLA_FFI_DEFINE_STRUCT_TRAITS(name, last_field)`: a struct's `struct_size` is the end of its
# last field (the C API's own definition; for XLA_FFI_CallFrame that is not the last field
# declared). XLA_FFI_Api grows with each version: we declare and check only what we call.
STRUCT_LAST_FIELDS = {
    "XLA_FFI_Extension_Base": "next",
    "XLA_FFI_Api_Version": "minor_version",
    "XLA_FFI_Error_Create_Args": "errc",
    "XLA_FFI_Buffer": "dims",
    "XLA_FFI_Args": "args",
    "XLA_FFI_Rets": "rets",
    "XLA_FFI_Attrs": "attrs",
    "XLA_FFI_CallFrame": "attrs",
    "XLA_FFI_Metadata": "traits",
    "XLA_FFI_Metadata_Extension": "metadata",
    "XLA_FFI_Api": "XLA_FFI_Error_Create",  # (the last field we use: later versions add more)
    "PJRT_FFI_Type_Register_Args": "type_info",
    "PJRT_FFI_UserData_Add_Args": "user_data",
    "PJRT_FFI_Register_Handler_Args": "traits",
    "PJRT_FFI_Extension": "register_handler",
}

_PJRT_EXTENSION_TYPE_FFI = 5  # PJRT_Extension_Type_FFI in pjrt_c_api.h
_XLA_FFI_EXTENSION_METADATA = 1
_XLA_FFI_ERROR_INTERNAL = 13
_XLA_FFI_ERROR_INVALID_ARGUMENT = 3
_XLA_FFI_ATTR_SCALAR = 3
_XLA_FFI_STAGE_EXECUTE = 3
_XLA_FFI_TOKEN = 17

# XLA_FFI_DataType (xla_data.proto's PrimitiveType) -> NumPy dtype
_DTYPES = {
    1: np.dtype(np.bool_),
    2: np.dtype(np.int8),
    3: np.dtype(np.int16),
    4: np.dtype(np.int32),
    5: np.dtype(np.int64),
    6: np.dtype(np.uint8),
    7: np.dtype(np.uint16),
    8: np.dtype(np.uint32),
    9: np.dtype(np.uint64),
    10: np.dtype(np.float16),
    11: np.dtype(np.float32),
    12: np.dtype(np.float64),
    15: np.dtype(np.complex64),
    16: np.dtype(dtypes.bfloat16),
    18: np.dtype(np.complex128),
}

_DTYPE_OF_CODE = tuple(_DTYPES.get(code) for code in range(max(_DTYPES) + 1))

_ffi = None
_ffi_lock = threading.Lock()


def cffi_types():
    """The cffi `FFI` holding the declarations above (created once)."""
    global _ffi
    if _ffi is None:
        with _ffi_lock:
            if _ffi is None:
                import cffi

                ffi = cffi.FFI()
                ffi.cdef(CDEF)
                _INT64_POINTER.append(ffi.typeof("int64_t*"))
                _ffi = ffi
    return _ffi


def struct_size(name: str) -> int:
    """`offsetof(last field) + sizeof(last field)`, as XLA_FFI_STRUCT_SIZE / PJRT_STRUCT_SIZE."""
    ffi = cffi_types()
    field = dict(ffi.typeof(name).fields)[STRUCT_LAST_FIELDS[name]]
    return field.offset + ffi.sizeof(field.type)


# ------------------------------------------------------------------------------------------------
# The registry of callables, by id


class HostCallback:
    """A Python function a compiled program may call, registered under `self.id` while this
    object lives (lowering hands it to the executable, which keeps it).

    `function(*operands)` receives read-only NumPy views of the operand buffers (valid only
    during the call) and returns a sequence of array-likes, one per `result_avals` entry (each
    with `.shape` and `.dtype`); `name` names it in error messages. `operand_avals`, when the
    caller knows them (lowering does), spare the handler reading each buffer's type.
    `writes_results=True`: `function` instead receives writable NumPy views of the result
    buffers as the keyword argument `out` (valid only during the call), fills them and returns
    nothing, which spares a copy of large results. `sequenced=True` (with `writes_results`):
    the last operand and the last result only order the call after another (a value threaded
    from call to call, see `distributed_collectives.py`); `function` sees neither, and the
    result is left unwritten, which spares two views per call.
    """

    __slots__ = (
        "__weakref__",
        "function",
        "id",
        "name",
        "operand_specs",
        "result_dtypes",
        "result_shapes",
        "result_specs",
        "sequenced",
        "writes_results",
    )

    def __init__(
        self,
        function,
        result_avals,
        name: str,
        operand_avals=None,
        *,
        writes_results=False,
        sequenced=False,
    ):
        if sequenced and (not writes_results or operand_avals is None):
            raise ValueError("a sequenced host callback writes its results and knows its operands")
        self.function = function
        self.writes_results = writes_results
        self.sequenced = int(sequenced)  # (how many operands and results `function` skips)
        if sequenced:
            result_avals, operand_avals = result_avals[:-1], operand_avals[:-1]
        self.name = name
        self.result_shapes = tuple(tuple(a.shape) for a in result_avals)
        self.result_dtypes = tuple(np.dtype(a.dtype) for a in result_avals)
        self.result_specs = _specs(result_avals)
        self.operand_specs = None if operand_avals is None else _specs(operand_avals)
        self.id = next(_ids)
        _registry[self.id] = self
        _live.add(self.id)
        weakref.finalize(self, _unregister, self.id)

    def __repr__(self):
        return f"HostCallback({self.name}, id={self.id})"


def _specs(avals) -> tuple:
    """(shape, dtype, size in bytes) of each aval: what the handler makes its views with."""
    return tuple(
        (tuple(a.shape), np.dtype(a.dtype), math.prod(a.shape) * np.dtype(a.dtype).itemsize)
        for a in avals
    )


def _unregister(callback_id: int) -> None:
    _registry.pop(callback_id, None)
    _live.discard(callback_id)


_ids = itertools.count(1)
_registry: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_live: set = set()


def is_registered(callback_id: int) -> bool:
    return callback_id in _live


def registered_count() -> int:
    """How many callbacks are registered now (for leak tests)."""
    return len(_live)


def custom_call_attributes(callback: HostCallback, has_side_effect: bool) -> dict[str, str]:
    """The attributes of the `stablehlo.custom_call` that calls `callback`."""
    return {
        "call_target_name": f'"{TARGET_NAME}"',
        "api_version": "4 : i32",
        "has_side_effect": "true" if has_side_effect else "false",
        "backend_config": f"{{{ID_ATTRIBUTE} = {callback.id} : i64}}",
    }


# ------------------------------------------------------------------------------------------------
# Errors raised in a callback, until PJRT reports them

_errors: OrderedDict = OrderedDict()  # number -> the user's exception
_error_numbers = itertools.count(1)
_MAX_KEPT_ERRORS = 64
_MARKER = "[host callback error "


def _keep_error(exception: BaseException) -> int:
    number = next(_error_numbers)
    _errors[number] = exception
    while len(_errors) > _MAX_KEPT_ERRORS:  # errors nobody awaited
        _errors.popitem(last=False)
    return number


def _chain_user_exception(error: pjrt.XlaRuntimeError) -> None:
    """`pjrt.error_hooks` entry: the user's exception as `__cause__` of the runtime error."""
    message = error.plugin_message
    start = message.find(_MARKER)
    if start < 0:
        return
    end = message.find("]", start)
    try:
        number = int(message[start + len(_MARKER) : end])
    except ValueError:
        return
    cause = _errors.pop(number, None)
    if cause is not None:
        error.__cause__ = cause


pjrt.error_hooks.append(_chain_user_exception)


def callback_error_message(callback_name: str, exception: BaseException) -> str:
    """What the runtime error says: JAX's words, the traceback of the user's exception."""
    text = "".join(traceback.format_exception(exception))
    return f"CpuCallback error calling callback {callback_name}: {text}"


class CallbackResultError(ValueError):
    """A host callback returned results that differ from the declared ones."""


def check_results(name: str, shapes, dtypes_, results) -> list[np.ndarray]:
    """A callback's `results` as NumPy arrays of the declared `shapes` and `dtypes_`, or a
    `CallbackResultError` naming the callback (`name`) and what differs. A result of another
    numeric dtype is cast to the declared one, as JAX does."""
    if not isinstance(results, (list, tuple)):
        results = [results]
    if len(results) != len(shapes):
        raise CallbackResultError(
            f"host callback {name} returned {len(results)} results, but {len(shapes)} were declared"
        )
    arrays = []
    for k, (value, shape, dtype) in enumerate(zip(results, shapes, dtypes_, strict=True)):
        if type(value) is np.ndarray and value.dtype == dtype and value.shape == shape:
            arrays.append(value if value.flags.c_contiguous else value.copy())
            continue
        array = np.asarray(value)
        if array.shape != shape:
            raise CallbackResultError(
                f"host callback {name}: result {k} has shape {array.shape}, "
                f"but {shape} was declared"
            )
        if array.dtype != dtype:
            if array.dtype.kind not in "biufc" or dtype.kind not in "biufc":
                raise CallbackResultError(
                    f"host callback {name}: result {k} has dtype {array.dtype}, "
                    f"but {dtype} was declared"
                )
            array = array.astype(dtype)
        arrays.append(array if array.flags.c_contiguous else array.copy())
    return arrays


# ------------------------------------------------------------------------------------------------
# The handler


def _view(ffi, buffer):
    """A read-only NumPy view of an `XLA_FFI_Buffer*` whose type the handler reads (None for a
    token)."""
    code = buffer.dtype
    if code == _XLA_FFI_TOKEN:
        return None
    dtype = _DTYPES.get(code)
    if dtype is None:
        raise TypeError(f"host callbacks do not support XLA element type {code}")
    shape = tuple(ffi.unpack(buffer.dims, buffer.rank)) if buffer.rank else ()
    return _view_of(ffi, buffer.data, shape, dtype, math.prod(shape) * dtype.itemsize)


def _view_of(ffi, data, shape, dtype, nbytes):
    if nbytes == 0:
        array = np.zeros(shape, dtype)
    else:
        array = np.frombuffer(ffi.buffer(data, nbytes), dtype).reshape(shape)
    array.flags.writeable = False
    return array


def _result_views(ffi, rets, callback) -> list:
    buffers = rets.rets
    buffers = [buffers[i] for i in range(rets.size - callback.sequenced)]
    specs = callback.result_specs
    if len(buffers) != len(specs):
        buffers = [b for b in buffers if b.dtype != _XLA_FFI_TOKEN]
    return [
        np.frombuffer(ffi.buffer(buffer.data, nbytes) if nbytes else bytearray(0), dtype).reshape(
            shape
        )
        for buffer, (shape, dtype, nbytes) in zip(buffers, specs, strict=True)
    ]


def _callback_id(ffi, attrs) -> int:
    for i in range(attrs.size):
        name = attrs.names[i]
        if ffi.unpack(name.ptr, name.len) == _ID_ATTRIBUTE_BYTES:
            scalar = attrs.attrs[i]
            if attrs.types[i] != _XLA_FFI_ATTR_SCALAR or scalar.dtype != _XLA_FFI_S64:
                break
            return ffi.cast(_INT64_POINTER[0], scalar.value)[0]
    raise LookupError(f"the custom call has no int64 attribute {ID_ATTRIBUTE!r}")


_ID_ATTRIBUTE_BYTES = ID_ATTRIBUTE.encode()
_XLA_FFI_S64 = 5
_INT64_POINTER: list = []  # the cffi type int64_t*, resolved with the declarations


def _registered_callback(callback_id: int) -> HostCallback:
    callback = _registry.get(callback_id)
    if callback is None:
        raise LookupError(
            f"no host callback with id {callback_id} (its executable was freed, or the program "
            "was compiled in another process)"
        )
    return callback


def _call(callback: HostCallback, operands, results) -> None:
    """The work of one call on views of its buffers (tokens and sequence values left out):
    call the function, have its results in `results`."""
    try:
        if callback.writes_results:
            callback.function(*operands, out=results)
            return
        returned = callback.function(*operands)
        arrays = check_results(
            callback.name, callback.result_shapes, callback.result_dtypes, returned
        )
        for view, array in zip(results, arrays, strict=True):
            if array.nbytes:
                np.copyto(view, array)
    except BaseException as exception:
        exception._tracejit_callback_name = callback.name
        raise


def _error_report(exception: BaseException) -> tuple[str, int]:
    """(message, XLA FFI error code) for an exception raised while handling a call; the
    exception is kept for the runtime error that reports it (`_chain_user_exception`)."""
    name = getattr(exception, "_tracejit_callback_name", "(unknown)")
    number = _keep_error(exception)
    if isinstance(exception, CallbackResultError):
        return f"{exception} {_MARKER}{number}]", _XLA_FFI_ERROR_INVALID_ARGUMENT
    return f"{callback_error_message(name, exception)}{_MARKER}{number}]", _XLA_FFI_ERROR_INTERNAL


def _handle(frame):
    """The C entry point of the cffi handler (`_the_handler`): never lets an exception out."""
    ffi = _ffi
    try:
        extension = frame.extension_start
        if extension != ffi.NULL and extension.type == _XLA_FFI_EXTENSION_METADATA:
            metadata = ffi.cast("XLA_FFI_Metadata_Extension*", extension).metadata
            if not reported_struct_sizes.get("XLA_FFI_Metadata"):
                reported_struct_sizes["XLA_FFI_Metadata"] = metadata.struct_size
                reported_struct_sizes["XLA_FFI_Metadata_Extension"] = extension.struct_size
            metadata.api_version.major_version = 0
            metadata.api_version.minor_version = 1
            metadata.traits = 0
            return ffi.NULL
        if frame.stage != _XLA_FFI_STAGE_EXECUTE:
            return ffi.NULL
        if not reported_struct_sizes.get("XLA_FFI_CallFrame"):
            _record_struct_sizes(frame)
        callback = _registered_callback(_callback_id(ffi, frame.attrs))
        args = frame.args
        specs = callback.operand_specs
        if specs is not None and len(specs) == args.size - callback.sequenced:
            buffers = args.args
            operands = [
                _view_of(ffi, buffers[i].data, shape, dtype, nbytes)
                for i, (shape, dtype, nbytes) in enumerate(specs)
            ]
        else:
            operands = [_view(ffi, args.args[i]) for i in range(args.size)]
            operands = [x for x in operands if x is not None]
        _call(callback, operands, _result_views(ffi, frame.rets, callback))
        return ffi.NULL
    except BaseException as exception:  # noqa: BLE001 (nothing may cross into C)
        try:
            message, code = _error_report(exception)
            return _new_error(ffi, frame, message, code)
        except BaseException:  # noqa: BLE001
            return _new_error(ffi, frame, "host callback failed", _XLA_FFI_ERROR_INTERNAL)


def _handle_at(address: int) -> int:
    """`_handle` for the C accelerator's handler, which passes here the calls it does not
    handle itself (the metadata query, the first call): the frame and the error by address."""
    ffi = cffi_types()
    error = _handle(ffi.cast("XLA_FFI_CallFrame*", address))
    return int(ffi.cast("uintptr_t", error))


def _run_for_accel(callback_id: int, operands: tuple, results: tuple):
    """The Python half of the C accelerator's handler, which made the views of every buffer
    (tokens left out): None, or (message, XLA FFI error code) for the error to return."""
    try:
        callback = _registered_callback(callback_id)
        if callback.sequenced:
            operands, results = operands[: -callback.sequenced], results[: -callback.sequenced]
        _call(callback, operands, results)
        return None
    except BaseException as exception:  # noqa: BLE001 (nothing may cross into C)
        try:
            return _error_report(exception)
        except BaseException:  # noqa: BLE001
            return "host callback failed", _XLA_FFI_ERROR_INTERNAL


reported_struct_sizes: dict[str, int] = {}
"""The `struct_size` of each XLA FFI struct as the plugin filled it in, recorded from the first
call frame (and the metadata query): the tests compare them with our declarations'."""


def _record_struct_sizes(frame) -> None:
    sizes = {
        "XLA_FFI_CallFrame": frame.struct_size,
        "XLA_FFI_Args": frame.args.struct_size,
        "XLA_FFI_Rets": frame.rets.struct_size,
        "XLA_FFI_Attrs": frame.attrs.struct_size,
        "XLA_FFI_Api": frame.api.struct_size,
        "XLA_FFI_Api_Version": frame.api.api_version.struct_size,
    }
    if frame.args.size:
        sizes["XLA_FFI_Buffer"] = frame.args.args[0].struct_size
    reported_struct_sizes.update(sizes)


def _new_error(ffi, frame, message: str, code: int):
    text = ffi.new("char[]", message.encode("utf-8", "replace"))
    args = ffi.new("XLA_FFI_Error_Create_Args*")
    args.struct_size = struct_size("XLA_FFI_Error_Create_Args")
    args.message = text
    args.errc = code
    return frame.api.XLA_FFI_Error_Create(args)


_handler = None


def _handler_address() -> int:
    """The handler registered with XLA: the C accelerator's where it is built (a few
    microseconds less per call), else the cffi callback."""
    if accel is not None:
        return accel.host_callback_handler(_run_for_accel, _handle_at, _DTYPE_OF_CODE)
    return int(_ffi.cast("uintptr_t", _the_handler()))


def _the_handler():
    global _handler
    if _handler is None:
        ffi = cffi_types()
        _handler = ffi.callback("XLA_FFI_Error*(XLA_FFI_CallFrame*)", _handle)
    return _handler


# ------------------------------------------------------------------------------------------------
# Registration with the plugin


def ffi_extension(plugin: pjrt.Plugin):
    """The plugin's `PJRT_FFI_Extension*`, or None if it offers none."""
    ffi = cffi_types()
    address = int(plugin.ffi.cast("uintptr_t", plugin.api.extension_start))
    extension = ffi.cast("PJRT_Extension_Base*", address)
    while extension != ffi.NULL:
        if extension.type == _PJRT_EXTENSION_TYPE_FFI:
            return ffi.cast("PJRT_FFI_Extension*", extension)
        extension = extension.next
    return None


_registered: dict[int, bool] = {}
_register_lock = threading.Lock()
PLATFORM_NAME = "Host"


def ensure_handler(plugin: pjrt.Plugin) -> None:
    """Registers the host-callback handler with `plugin` (once; XLA's registry is global)."""
    key = id(plugin)
    if _registered.get(key):
        return
    with _register_lock:
        if _registered.get(key):
            return
        ffi = cffi_types()
        extension = ffi_extension(plugin)
        if extension is None:
            raise pjrt.runtime_error(
                "the PJRT plugin offers no FFI extension: host callbacks cannot run",
                12,
                "UNIMPLEMENTED",
            )
        target = ffi.new("char[]", TARGET_NAME.encode())
        platform = ffi.new("char[]", PLATFORM_NAME.encode())
        args = ffi.new("PJRT_FFI_Register_Handler_Args*")
        args.struct_size = struct_size("PJRT_FFI_Register_Handler_Args")
        args.target_name = target
        args.target_name_size = len(TARGET_NAME)
        args.handler = ffi.cast("void*", _handler_address())
        args.platform_name = platform
        args.platform_name_size = len(PLATFORM_NAME)
        args.traits = 0
        error = extension.register_handler(args)
        if error != ffi.NULL:
            raise plugin.error(plugin.ffi.cast("PJRT_Error*", int(ffi.cast("uintptr_t", error))))
        _registered[key] = True
