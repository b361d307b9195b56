"""The runtime: XLA through the PJRT C API, driven with cffi.

Layers, each importing only those before it:

    header.py      find the plugin, turn its pjrt_c_api.h into cffi declarations (cached)
    formats.py     dtype <-> PJRT element type names; the compile-options proto, hand-encoded
    pjrt.py        load the plugin; errors as XlaRuntimeError; argument-struct plumbing
    buffer.py      Buffer (device array, zero-copy NumPy views), Event
    executable.py  Executable: execute with prebuilt argument structs, serialize, cost analysis
    device.py      DeviceBase: what every kind of device answers as JAX's do
    client.py      Client, Device, get_client() (the process-wide client)
    ffi.py         host callbacks: XLA FFI handler (cffi callback), callable registry by id

Nothing is loaded until first used: `import tracejit` imports none of this, and importing this
package imports neither cffi nor the plugin. Names below resolve on first access. Importing
it registers the clients' exit handler, so that it runs after those of libraries imported
later, whatever creates the first client.
"""

import atexit
import sys

_EXPORTS = {
    "Buffer": "buffer",
    "Event": "buffer",
    "Client": "client",
    "Device": "client",
    "configured_cpu_device_count": "client",
    "get_client": "client",
    "DEVICE_IDS_PER_PROCESS": "client",
    "set_process_index": "client",
    "set_visible_cpu_device_count": "client",
    "started": "client",
    "Executable": "executable",
    "CallbackResultError": "ffi",
    "HostCallback": "ffi",
    "callback_error_message": "ffi",
    "check_results": "ffi",
    "custom_call_attributes": "ffi",
    "ensure_handler": "ffi",
    "block_until_ready": "executable",
    "DEBUG_OPTIONS": "formats",
    "compile_options_proto": "formats",
    "output_shardings": "formats",
    "PluginNotFoundError": "header",
    "write_atomically": "header",
    "Plugin": "pjrt",
    "XlaRuntimeError": "pjrt",
    "load_plugin": "pjrt",
    "platform_available": "pjrt",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
    globals()[name] = value
    return value


def _shut_down_at_exit() -> None:
    client = sys.modules.get(f"{__name__}.client")
    if client is not None:
        client.shut_down_clients_at_exit()


atexit.register(_shut_down_at_exit)
