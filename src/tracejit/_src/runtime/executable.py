"""Compiled programs: running them with as little Python per call as possible.

`Client.compile` returns an `Executable`, which owns a `PJRT_LoadedExecutable*` (the program
loaded onto its devices) and the `PJRT_Executable*` describing it (outputs, cost, serialized
form); both are destroyed in `__del__`.

A call fills `PJRT_LoadedExecutable_Execute_Args`: a `[device][argument]` table of input
buffer handles and a `[device][output]` table the plugin fills with new buffers. Building those
tables and the options struct with `ffi.new` would cost more than the call itself, so each
executable keeps `_CallSlot`s: the whole struct tree allocated once and wired together, into
which a call only writes its argument handles. Slots come from a free list, so concurrent
calls (threads) each get their own. What a call then costs in Python is a handful of attribute
writes and one `Buffer` object per output, whose shape and dtype are known in advance from the
executable.

With the C accelerator, a jitted function's steady calls run from C (`tracejit._src._accel`,
`csrc/accel/dispatch.c`), on a slot set aside for that (`reserved_call`): the same struct tree,
the same execute function, called through their addresses.

The call returns as soon as XLA has dispatched the work: the outputs are `Buffer`s that become
ready later (`Buffer.block_until_ready`), and `execute_with_events` also returns one `Event`
per device that fires when that device has finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracejit._src.runtime.buffer import Buffer, Event, new_buffer
from tracejit._src.runtime.pjrt import XlaRuntimeError

if TYPE_CHECKING:
    from tracejit._src.runtime.client import Client, Device


class _CallSlot:
    """The prebuilt argument-struct tree of one execution (see the module docstring)."""

    __slots__ = ("args", "argument_arrays", "capacity", "keep", "options", "output_arrays")

    def __init__(self, executable: Executable, num_arguments: int):
        plugin = executable._client.plugin
        ffi = plugin.ffi
        devices = len(executable._devices)
        outputs = max(executable._num_outputs, 1)
        self.capacity = num_arguments
        self.options = plugin.new("PJRT_ExecuteOptions")
        self.argument_arrays = [
            ffi.new("PJRT_Buffer*[]", max(num_arguments, 1)) for _ in range(devices)
        ]
        self.output_arrays = [ffi.new("PJRT_Buffer*[]", outputs) for _ in range(devices)]
        argument_lists = ffi.new("PJRT_Buffer**[]", self.argument_arrays)
        output_lists = ffi.new("PJRT_Buffer**[]", self.output_arrays)
        self.keep = (argument_lists, output_lists)
        self.args = plugin.new(
            "PJRT_LoadedExecutable_Execute_Args",
            executable=executable._loaded,
            options=self.options,
            argument_lists=argument_lists,
            num_devices=devices,
            num_args=num_arguments,
            output_lists=output_lists,
        )


class Executable:
    """A program compiled and loaded onto its devices."""

    def __init__(self, client: Client, loaded_pointer):
        self._client = client
        self._loaded = loaded_pointer
        self._executable = None
        # what the program needs alive while it can run: the host callbacks it calls (see
        # `ffi.py`); such an executable must never go to a persistent cache
        self.host_callbacks: tuple = ()
        plugin = client.plugin
        self._executable = plugin.call(
            "PJRT_LoadedExecutable_GetExecutable", loaded_executable=loaded_pointer
        ).executable
        listed = plugin.call("PJRT_LoadedExecutable_AddressableDevices", executable=loaded_pointer)
        self._devices = [
            client._device(listed.addressable_devices[i])
            for i in range(listed.num_addressable_devices)
        ]
        described = self._executable
        self._num_outputs = int(
            plugin.call("PJRT_Executable_NumOutputs", executable=described).num_outputs
        )
        self.num_replicas = int(
            plugin.call("PJRT_Executable_NumReplicas", executable=described).num_replicas
        )
        self.num_partitions = int(
            plugin.call("PJRT_Executable_NumPartitions", executable=described).num_partitions
        )
        name = plugin.call("PJRT_Executable_Name", executable=described)
        self.name = plugin.ffi.string(name.executable_name, name.executable_name_size).decode()
        self.output_shapes, self.output_dtypes = self._output_types()
        self._slots: list[_CallSlot] = []
        # Whether each output's layout is dense row-major (zero-copy viewable): fixed at
        # compile time, so learned from the first call's outputs and then handed to each output.
        self._output_dense: list[bool | None] = [None] * self._num_outputs
        self._output_dense_unknown = True
        self._execute = plugin.function("PJRT_LoadedExecutable_Execute")
        self._deleted = False
        self._multi_device = len(self._devices) != 1
        self._output_specs = self._specs()

    def _specs(self) -> list[tuple]:
        """(index, shape, dtype, dense) of each output: what `execute_one` hands each buffer."""
        return [
            (i, shape, dtype, dense)
            for i, (shape, dtype, dense) in enumerate(
                zip(self.output_shapes, self.output_dtypes, self._output_dense, strict=True)
            )
        ]

    def _output_types(self):
        """Per-output shapes and dtypes, so output buffers need not ask the plugin; None where
        the plugin does not say (then each buffer asks when first needed)."""
        plugin = self._client.plugin
        count = self._num_outputs
        try:
            types = plugin.call("PJRT_Executable_OutputElementTypes", executable=self._executable)
            dims = plugin.call("PJRT_Executable_OutputDimensions", executable=self._executable)
        except XlaRuntimeError:
            return [None] * count, [None] * count
        dtypes = [plugin.dtype_of_type.get(int(types.output_types[i])) for i in range(count)]
        shapes, offset = [], 0
        for i in range(count):
            rank = int(dims.dim_sizes[i])
            shapes.append(tuple(int(dims.dims[offset + k]) for k in range(rank)))
            offset += rank
        if self.num_partitions > 1:  # per-device shapes of sharded outputs: ask each buffer
            shapes = [None] * count
        return shapes, dtypes

    def _learn_output_layouts(self, outputs: list[Buffer]) -> None:
        self._output_dense = [buffer._layout_is_dense() for buffer in outputs]
        for buffer, dense in zip(outputs, self._output_dense):
            buffer._layout_dense = dense
        self._output_specs = self._specs()
        self._output_dense_unknown = False

    def __del__(self):
        try:
            client = self._client
        except AttributeError:
            return
        if not client._alive:
            return
        plugin = client.plugin
        if self._executable is not None:
            plugin.call("PJRT_Executable_Destroy", executable=self._executable)
            self._executable = None
        if self._loaded is not None:
            plugin.call("PJRT_LoadedExecutable_Destroy", executable=self._loaded)
            self._loaded = None

    @property
    def client(self) -> Client:
        return self._client

    @property
    def devices(self) -> list[Device]:
        """The devices it runs on, in the order of `execute`'s per-device argument lists."""
        return list(self._devices)

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    def __repr__(self) -> str:
        return f"Executable({self.name!r}, devices={self._devices}, outputs={self._num_outputs})"

    # -- running ----------------------------------------------------------------------------

    def _take_slot(self, num_arguments: int) -> _CallSlot:
        try:
            slot = self._slots.pop()
        except IndexError:
            return _CallSlot(self, num_arguments)
        if slot.capacity < num_arguments:
            return _CallSlot(self, num_arguments)
        return slot

    def execute_one(self, arguments: Sequence[Buffer]) -> list[Buffer]:
        """Run a single-device program: the hot path of a jitted call. Returns its outputs at
        once; they become ready when the computation finishes. (Written for speed: locals
        bound once, the slot taken inline.)"""
        if self._multi_device:
            raise ValueError(f"{self!r} runs on {len(self._devices)} devices: use execute()")
        client = self._client
        if not client._alive:
            client.check_alive()
        count = len(arguments)
        slots = self._slots
        try:  # (a free list shared by threads: pop, not test-then-pop)
            slot = slots.pop()
        except IndexError:
            slot = None
        if slot is None or slot.capacity < count:
            slot = _CallSlot(self, count)
        slot.argument_arrays[0][0:count] = [buffer._ptr for buffer in arguments]
        args = slot.args
        args.num_args = count
        error = self._execute(args)
        if error:
            slots.append(slot)
            raise client.plugin.error(error)
        device = self._devices[0]
        outputs = slot.output_arrays[0]
        buffers = [
            new_buffer(Buffer, client, outputs[i], shape, dtype, device, dense)
            for i, shape, dtype, dense in self._output_specs
        ]
        slots.append(slot)  # only now: another call may reuse its output table
        if self._output_dense_unknown:
            self._learn_output_layouts(buffers)
        return buffers

    def reserved_call(self, num_arguments: int) -> dict | None:
        """A call's struct tree set aside for one caller that runs the program from C (the
        accelerator's `Program`): the addresses of the execute function, its argument struct
        (`num_args` set) and that struct's argument and output tables of the one device, and
        `keep`, the objects owning them and the program. None where the outputs' types and
        layouts are not all known yet (before a first call) or the program runs on several
        devices."""
        known = None not in self.output_shapes and None not in self.output_dtypes
        if self._multi_device or self._output_dense_unknown or not known:
            return None
        slot = _CallSlot(self, num_arguments)
        slot.args.num_args = num_arguments
        address = self._client.plugin.ffi.cast
        return {
            "execute": int(address("uintptr_t", self._execute)),
            "execute_args": int(address("uintptr_t", slot.args)),
            "arguments": int(address("uintptr_t", slot.argument_arrays[0])),
            "outputs": int(address("uintptr_t", slot.output_arrays[0])),
            "keep": (slot, self),  # (the program itself: loaded while it can be called)
        }

    def execute(self, argument_lists: Sequence[Sequence[Buffer]]) -> list[list[Buffer]]:
        """Run on every device of the program: `argument_lists[d]` are the inputs on
        `self.devices[d]`; returns `outputs[d][i]` at once (asynchronous)."""
        outputs, _ = self._execute_lists(argument_lists, with_events=False)
        return outputs

    def execute_with_events(
        self, argument_lists: Sequence[Sequence[Buffer]]
    ) -> tuple[list[list[Buffer]], list[Event]]:
        """As `execute`, plus one `Event` per device that fires when its part is done (also for
        programs without outputs)."""
        return self._execute_lists(argument_lists, with_events=True)

    def _execute_lists(self, argument_lists, with_events: bool):
        devices = self._devices
        if len(argument_lists) != len(devices):
            raise ValueError(
                f"{self!r} runs on {len(devices)} devices, got {len(argument_lists)} argument lists"
            )
        count = len(argument_lists[0]) if argument_lists else 0
        for arguments in argument_lists:
            if len(arguments) != count:
                raise ValueError("every device needs the same number of arguments")
        client = self._client
        client.check_alive()
        plugin = client.plugin
        slot = self._take_slot(count)
        for array, arguments in zip(slot.argument_arrays, argument_lists):
            for index, buffer in enumerate(arguments):
                array[index] = buffer._ptr
        args = slot.args
        args.num_args = count
        events = plugin.ffi.new("PJRT_Event*[]", len(devices)) if with_events else plugin.NULL
        args.device_complete_events = events
        error = self._execute(args)
        args.device_complete_events = plugin.NULL
        if error:
            self._slots.append(slot)
            raise plugin.error(error)
        shapes, dtypes, dense = self.output_shapes, self.output_dtypes, self._output_dense
        outputs = [
            [
                new_buffer(Buffer, client, pointers[i], shapes[i], dtypes[i], device, dense[i])
                for i in range(self._num_outputs)
            ]
            for pointers, device in zip(slot.output_arrays, devices)
        ]
        self._slots.append(slot)  # only now: another call may reuse its output table
        if self._output_dense_unknown and outputs:
            self._learn_output_layouts(outputs[0])
        done = [Event(client, events[d]) for d in range(len(devices))] if with_events else []
        return outputs, done

    def delete(self) -> None:
        """Free the loaded program now; it cannot run afterwards."""
        if not self._deleted:
            self._deleted = True
            self._client.plugin.call("PJRT_LoadedExecutable_Delete", executable=self._loaded)

    # -- describing -------------------------------------------------------------------------

    def serialize(self) -> bytes:
        """The compiled program as bytes, for `Client.deserialize` in this or a later process
        with the same plugin: a persistent compilation cache stores these."""
        plugin = self._client.plugin
        args = plugin.call("PJRT_Executable_Serialize", executable=self._executable)
        try:
            return bytes(plugin.ffi.buffer(args.serialized_bytes, args.serialized_bytes_size))
        finally:
            args.serialized_executable_deleter(args.serialized_executable)

    def cost_analysis(self) -> dict[str, object]:
        """XLA's cost estimates (`flops`, `bytes accessed`, ...), where the plugin offers them."""
        plugin = self._client.plugin
        args = plugin.call("PJRT_Executable_GetCostAnalysis", executable=self._executable)
        return plugin.read_named_values(args.properties, args.num_properties)

    def compiled_memory_stats(self) -> dict[str, int]:
        """Sizes of generated code, arguments, outputs and temporaries, in bytes."""
        plugin = self._client.plugin
        args = plugin.call("PJRT_Executable_GetCompiledMemoryStats", executable=self._executable)
        names = [name for name, _ in plugin.ffi.typeof(args).item.fields][3:]
        return {name: int(getattr(args, name)) for name in names}

    def optimized_program(self) -> tuple[str, bytes]:
        """The program after XLA's optimizations: (format, bytes); the format is "hlo", a
        serialized `xla.HloModuleProto` (the C API offers no text form)."""
        plugin = self._client.plugin
        ffi = plugin.ffi
        program = plugin.new("PJRT_Program")
        function = plugin.function("PJRT_Executable_OptimizedProgram")
        args = plugin.new(
            "PJRT_Executable_OptimizedProgram_Args", executable=self._executable, program=program
        )
        plugin.check(function(args))  # first call: sizes only
        code = ffi.new("char[]", max(program.code_size, 1))
        program.code = code
        plugin.check(function(args))
        data = bytes(ffi.buffer(code, program.code_size))
        return ffi.string(program.format, program.format_size).decode(), data

    def fingerprint(self) -> str | None:
        """A fingerprint of the compiled program, where the plugin computes one."""
        plugin = self._client.plugin
        try:
            args = plugin.call("PJRT_Executable_Fingerprint", executable=self._executable)
        except XlaRuntimeError:
            return None
        if args.executable_fingerprint == plugin.NULL:
            return None
        text = plugin.ffi.string(args.executable_fingerprint, args.executable_fingerprint_size)
        return text.hex() if not text.isascii() else text.decode()


def block_until_ready(buffers: Sequence[Buffer]) -> None:
    """Wait for every buffer (e.g. all outputs of a call)."""
    for buffer in buffers:
        buffer.block_until_ready()
