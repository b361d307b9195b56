"""The client: a plugin's devices, compilation and host-to-device transfers.

`get_client()` is the process-wide client, created on first use with the configured number of
CPU devices: `TRACEJIT_NUM_CPU_DEVICES=N`, or as JAX reads it,
`XLA_FLAGS=--xla_force_host_platform_device_count=N`. Several CPU devices are how multi-device
programs (replicas, collectives) run and are tested on one machine. Creating the client loads
the plugin; importing this module does not.

    client = get_client()
    client.local_devices()          # [CpuDevice(id=0), ...]
    exe = client.compile(stablehlo_text, num_replicas=2)
    x = client.buffer_from_numpy(np.arange(4.0), client.local_devices()[1])

A client is never destroyed by a finalizer (see `pjrt`): `close()` is explicit, and runs for
every client at interpreter exit (`shut_down_clients_at_exit`), which waits for work still in flight (the plugin crashes the
process if it exits under running work); from then on, finalizers of the client's buffers and
executables skip their destroy calls.
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Mapping, Sequence

import numpy as np

from tracejit._src.runtime import formats
from tracejit._src.runtime.buffer import Buffer, HostSource, new_buffer
from tracejit._src.runtime.device import DeviceBase
from tracejit._src.runtime.executable import Executable
from tracejit._src.runtime.pjrt import Plugin, XlaRuntimeError, load_plugin

DEVICE_IDS_PER_PROCESS = 2048  # (process p's CPU devices are 2048 p, 2048 p + 1, ... in JAX)


class Device(DeviceBase):
    """One device of a client. Devices live as long as their client; nothing to destroy."""

    __slots__ = (
        "_host_memory",  # whether its buffers live in host memory; None until a buffer says
        "_ptr",
        "_text",
        "client",
        "device_kind",
        "id",
        "local_hardware_id",
        "pjrt_id",  # the plugin's own id, which device assignments name
        "process_index",
    )

    def __init__(self, client: Client, pointer):
        plugin = client.plugin
        self.client = client
        self._ptr = pointer
        self._host_memory = None
        description = plugin.call("PJRT_Device_GetDescription", device=pointer).device_description
        self.id = int(plugin.call("PJRT_DeviceDescription_Id", device_description=description).id)
        self.pjrt_id = self.id
        kind = plugin.call("PJRT_DeviceDescription_Kind", device_description=description)
        self.device_kind = plugin.ffi.string(kind.device_kind, kind.device_kind_size).decode()
        self.process_index = int(
            plugin.call(
                "PJRT_DeviceDescription_ProcessIndex", device_description=description
            ).process_index
        )
        text = plugin.call("PJRT_DeviceDescription_ToString", device_description=description)
        self._text = plugin.ffi.string(text.to_string, text.to_string_size).decode()
        try:
            hardware = plugin.call("PJRT_Device_LocalHardwareId", device=pointer)
            self.local_hardware_id = int(hardware.local_hardware_id)
        except XlaRuntimeError:
            self.local_hardware_id = -1

    @property
    def platform(self) -> str:
        return self.client.platform

    def number_for_process(self, process_index: int) -> None:
        """Give this device the global id of local device `pjrt_id` of process
        `process_index` in a multi-process run, numbered as JAX numbers CPU devices."""
        self.process_index = process_index
        self.id = process_index * DEVICE_IDS_PER_PROCESS + self.pjrt_id
        self._text = f"CpuDevice(id={self.id})" if self.platform == "cpu" else ""

    def __repr__(self) -> str:
        return self._text or f"{self.platform}:{self.id}"


def configured_cpu_device_count() -> int | None:
    """The number of CPU devices asked for: `TRACEJIT_NUM_CPU_DEVICES=N`, else (as JAX reads
    it) `XLA_FLAGS=--xla_force_host_platform_device_count=N`, else None (the plugin's default)."""
    value = os.environ.get("TRACEJIT_NUM_CPU_DEVICES")
    if value:
        return int(value)
    match = re.search(
        r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", "")
    )
    return int(match.group(1)) if match else None


_live_clients: weakref.WeakSet = weakref.WeakSet()


def shut_down_clients_at_exit() -> None:
    """Let in-flight work finish before the process exits, then leave every handle alone.

    The plugin's own exit handlers crash if its worker threads are still running a program or
    reading a host array, and Python frees objects at exit in no order PJRT could follow. So
    copies in flight are waited for, the clients are marked dead (finalizers then skip their
    destroy calls), and each client is destroyed, which waits for its running programs.

    Run from `atexit` (registered when `tracejit` is imported, so that the exit handlers of
    libraries imported after it, such as chex's report of its pending checks, still find the
    clients open, as with JAX). When the exit handlers are run by hand while the program goes
    on (`atexit._run_exitfuncs()`: the main thread is still alive), only the copies are
    waited for and the clients stay open.
    """
    exiting = not threading.main_thread().is_alive()
    for client in list(_live_clients):
        try:
            if exiting:
                client.close()
            else:
                client._finish_copies()
        except XlaRuntimeError:
            pass


class Client:
    """A PJRT client: its devices, compilation, and host<->device transfers.

    `cpu_device_count` (XLA CPU plugin only) sets the number of CPU devices; `options` passes
    any other create options the plugin understands, by name.
    """

    def __init__(
        self,
        plugin: Plugin | None = None,
        *,
        cpu_device_count: int | None = None,
        options: Mapping[str, object] | None = None,
        process_index: int = 0,
    ):
        self.plugin = plugin = plugin or load_plugin()
        self._alive = False
        self._copies_in_flight: list[HostSource] = []
        self._copies_lock = threading.Lock()
        named = dict(options or {})
        if cpu_device_count is not None:
            named["cpu_device_count"] = int(cpu_device_count)
        array, keep = plugin.named_values(named)
        args = plugin.call("PJRT_Client_Create", create_options=array, num_options=len(named))
        del keep
        self._ptr = args.client
        self._alive = True
        _live_clients.add(self)
        ffi = plugin.ffi
        name = plugin.call("PJRT_Client_PlatformName", client=self._ptr)
        self.platform = ffi.string(name.platform_name, name.platform_name_size).decode()
        version = plugin.call("PJRT_Client_PlatformVersion", client=self._ptr)
        self.platform_version = ffi.string(
            version.platform_version, version.platform_version_size
        ).decode()
        self._process_index = process_index or int(
            plugin.call("PJRT_Client_ProcessIndex", client=self._ptr).process_index
        )
        self._device_by_address: dict[int, Device] = {}
        listed = plugin.call("PJRT_Client_Devices", client=self._ptr)
        self._devices = [self._device(listed.devices[i]) for i in range(listed.num_devices)]
        listed = plugin.call("PJRT_Client_AddressableDevices", client=self._ptr)
        self._local_devices = [
            self._device(listed.addressable_devices[i])
            for i in range(listed.num_addressable_devices)
        ]
        if process_index:
            for device in self._devices:
                device.number_for_process(process_index)
        self._transfer_pool = plugin.pool("PJRT_Client_BufferFromHostBuffer_Args")
        self._from_host = plugin.function("PJRT_Client_BufferFromHostBuffer")
        self._semantics_copy = plugin.lib.PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes
        self._semantics_alias = plugin.lib.PJRT_HostBufferSemantics_kImmutableZeroCopy

    def _device(self, pointer) -> Device:
        address = int(self.plugin.ffi.cast("uintptr_t", pointer))
        device = self._device_by_address.get(address)
        if device is None:
            device = self._device_by_address[address] = Device(self, pointer)
        return device

    def devices(self) -> list[Device]:
        """All devices, addressable by this process or not."""
        return list(self._devices)

    def local_devices(self) -> list[Device]:
        """The devices this process can put buffers on and run programs on."""
        return list(self._local_devices)

    def device_count(self) -> int:
        return len(self._devices)

    def process_index(self) -> int:
        return self._process_index

    def device(self, device_id: int) -> Device:
        for device in self._devices:
            if device.id == device_id:
                return device
        raise ValueError(f"no device with id {device_id}; devices: {self._devices}")

    def close(self) -> None:
        """Destroy the client, after waiting for its copies and programs in flight. Buffers and
        executables still alive become inert: their finalizers skip the destroy calls, and
        they must not be used again."""
        if self._alive:
            self._finish_copies()
            self._alive = False
            self.plugin.call("PJRT_Client_Destroy", client=self._ptr)

    def check_alive(self) -> None:
        """Raise instead of calling into a destroyed client (which would crash the process)."""
        if not self._alive:
            raise RuntimeError(f"{self!r} is closed")

    def __repr__(self) -> str:
        state = "" if self._alive else ", closed"
        return f"Client(platform={self.platform!r}, devices={len(self._devices)}{state})"

    # -- compilation ------------------------------------------------------------------------

    def default_device_assignment(self, num_replicas: int, num_partitions: int) -> list[list[int]]:
        """`[replica][partition] -> device id`, as the client would place a program."""
        count = num_replicas * num_partitions
        ids = self.plugin.ffi.new("int[]", count)
        self.plugin.call(
            "PJRT_Client_DefaultDeviceAssignment",
            client=self._ptr,
            num_replicas=num_replicas,
            num_partitions=num_partitions,
            default_assignment_size=count,
            default_assignment=ids,
        )
        return [
            [int(ids[r * num_partitions + p]) for p in range(num_partitions)]
            for r in range(num_replicas)
        ]

    def compile(
        self,
        mlir_text: str | bytes,
        num_replicas: int = 1,
        num_partitions: int = 1,
        *,
        device_assignment: Sequence[Sequence[int]] | None = None,
        compile_options: bytes | None = None,
    ) -> Executable:
        """Compile a StableHLO module (MLIR text or bytecode) for this client's devices.

        `compile_options` (a serialized CompileOptionsProto, see `formats`) overrides the
        options built from the other arguments.
        """
        self.check_alive()
        ffi = self.plugin.ffi
        code = mlir_text.encode() if isinstance(mlir_text, str) else bytes(mlir_text)
        if compile_options is None:
            compile_options = formats.compile_options_proto(
                num_replicas, num_partitions, device_assignment=device_assignment
            )
        code_buffer = ffi.new("char[]", code)
        format_buffer = ffi.new("char[]", b"mlir")
        options_buffer = ffi.new("char[]", compile_options)
        program = self.plugin.new(
            "PJRT_Program",
            code=code_buffer,
            code_size=len(code),
            format=format_buffer,
            format_size=4,
        )
        args = self.plugin.call(
            "PJRT_Client_Compile",
            client=self._ptr,
            program=program,
            compile_options=options_buffer,
            compile_options_size=len(compile_options),
        )
        return Executable(self, args.executable)

    def deserialize(self, data: bytes) -> Executable:
        """Load an executable written by `Executable.serialize()` (same plugin and version)."""
        self.check_alive()
        data_buffer = self.plugin.ffi.new("char[]", bytes(data))
        args = self.plugin.call(
            "PJRT_Executable_DeserializeAndLoad",
            client=self._ptr,
            serialized_executable=data_buffer,
            serialized_executable_size=len(data),
        )
        return Executable(self, args.loaded_executable)

    # -- transfers --------------------------------------------------------------------------

    def buffer_from_numpy(
        self, array, device: Device | None = None, *, zero_copy: bool = False
    ) -> Buffer:
        """Copy a host array to `device` (default: the first local device).

        The copy may finish after this returns; the host array is kept alive until it has
        (until the buffer is next used, waited on or destroyed, whichever is first).
        `zero_copy=True` lets the plugin alias the host memory instead (CPU): the array is
        then kept alive as long as the buffer and must not be mutated.
        """
        if not self._alive:
            self.check_alive()
        if type(array) is not np.ndarray:
            array = np.asarray(array)
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)  # (which would make a 0-d array 1-d)
        dtype = array.dtype
        plugin = self.plugin
        type_code = plugin.type_of_dtype.get(dtype)
        if type_code is None:
            raise TypeError(f"no PJRT element type for dtype {dtype}")
        if device is None:
            device = self._local_devices[0]
        ffi = plugin.ffi
        data = ffi.from_buffer(array) if array.size else ffi.new("char[]", 1)
        shape = array.shape
        pool = self._transfer_pool
        args = pool.take()
        dims = ffi.new("int64_t[]", shape) if shape else ffi.NULL
        args.client = self._ptr
        args.data = data
        args.type = type_code
        args.dims = dims
        args.num_dims = len(shape)
        args.host_buffer_semantics = self._semantics_alias if zero_copy else self._semantics_copy
        args.device = device._ptr
        try:
            plugin.check(self._from_host(args))
            event, pointer = args.done_with_host_buffer, args.buffer
        finally:
            pool.give(args)
        buffer = new_buffer(Buffer, self, pointer, shape, dtype, device)
        # No device_layout given: dense row-major by the API's contract, but sub-byte types
        # are packed on the device.
        buffer._layout_dense = type_code not in plugin.sub_byte_types
        if zero_copy:
            buffer._host = HostSource(plugin, event, (array, data), aliased=True)
        elif event:
            if plugin.event_is_ready(event):  # small copies are done already
                plugin.destroy_event(event)
            else:
                buffer._host = source = HostSource(plugin, event, (array, data), aliased=False)
                self._track_copy(source)
        return buffer

    def _track_copy(self, source: HostSource) -> None:
        """Remember a copy still in flight, so that its source is freed once it is done even if
        the buffer is never touched, and waited for at exit (freeing the source of a running
        copy crashes the process). Finished copies are swept out here."""
        with self._copies_lock:
            in_flight = [s for s in self._copies_in_flight if not s.released]
            self._copies_in_flight = in_flight + [source]
        for earlier in in_flight:
            earlier.release(wait=False)

    def _finish_copies(self) -> None:
        for source in self._copies_in_flight:
            source.release(wait=True)


_client: Client | None = None
_client_lock = threading.Lock()
_process_index = [0]  # this process's index in a multi-process run (`distributed.initialize`)
_visible_cpu_devices = [None]  # how many CPU devices `initialize(local_device_ids=)` leaves


def started() -> bool:
    """Whether the process-wide client exists (the plugin is loaded, its devices fixed)."""
    return _client is not None


def set_process_index(index: int) -> None:
    """Number the devices of the client created next as those of process `index` (a
    multi-process run, see `distributed.py`); before the client exists."""
    if _client is not None:
        raise RuntimeError("the process index must be set before the runtime starts")
    _process_index[0] = int(index)


def set_visible_cpu_device_count(count: int) -> None:
    """Start the CPU plugin with `count` devices whatever the configuration asks for (the
    devices `distributed.initialize(local_device_ids=...)` leaves visible); before the client
    exists."""
    if _client is not None:
        raise RuntimeError("the visible devices must be set before the runtime starts")
    _visible_cpu_devices[0] = int(count)


def get_client() -> Client:
    """The process-wide client, created on first use.

    With the XLA CPU plugin it has `configured_cpu_device_count()` devices, 1 by default as in
    JAX (the plugin's own default is several). Another plugin (`TRACEJIT_PJRT_PLUGIN`) gets the
    option only when `TRACEJIT_NUM_CPU_DEVICES` asks for it explicitly.
    """
    global _client
    client = _client
    if client is None:
        with _client_lock:
            if _client is None:
                count = _visible_cpu_devices[0] or configured_cpu_device_count()
                process = _process_index[0]
                if not os.environ.get("TRACEJIT_PJRT_PLUGIN"):
                    _client = Client(cpu_device_count=count or 1, process_index=process)
                elif os.environ.get("TRACEJIT_NUM_CPU_DEVICES"):
                    _client = Client(cpu_device_count=count, process_index=process)
                else:
                    _client = Client(process_index=process)
            client = _client
    return client
