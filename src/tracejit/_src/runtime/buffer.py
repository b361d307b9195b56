"""Device buffers and events: the PJRT handles a program's inputs and outputs live in.

A `Buffer` owns one `PJRT_Buffer*`. It is created by `Client.buffer_from_numpy` or as an output
of `Executable.execute*`, and may not be ready yet: XLA dispatches asynchronously, so the
buffer's contents are computed (or copied in) after the call that made it returns.
`ready()` asks, `block_until_ready()` waits, and `to_numpy()` waits and copies out.

Its handle is a cffi pointer (`_ptr`) and, with the C accelerator, also its address as an int
(`_address`), by which the accelerator waits for and destroys it; the accelerator makes the
outputs of a jitted function's steady calls itself, with the address only, and `_ptr` is made
from it when Python first needs it.

On the CPU the buffer's memory is host memory, so `numpy_view()` (and `np.asarray(buffer)`)
gives a read-only NumPy array over it without a copy. The array's `base` is a small
`_BufferView` object that holds the buffer, so the memory stays valid as long as any NumPy
array derived from it lives; the view also raises PJRT's external reference count, which keeps
the plugin from donating or moving that memory meanwhile. `delete()` while views are alive is
deferred until the last one dies.

`Event` owns a `PJRT_Event*`, e.g. the completion of one device's part of an execution.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tracejit._src.runtime.pjrt import XlaRuntimeError

if TYPE_CHECKING:
    from tracejit._src.runtime.client import Client, Device

_new_object = object.__new__


def new_buffer(cls, client: Client, pointer, shape, dtype, device, dense=None) -> Buffer:
    """Wrap a `PJRT_Buffer*` that the caller owns; `shape`/`dtype`/`device`/`dense` (the layout
    is dense row-major) may be None, then read from the plugin when first needed."""
    buffer = _new_object(cls)
    buffer._ptr = pointer
    plugin = client.plugin
    if plugin.accel is not None:  # which waits for and destroys buffers by their address
        buffer._address = int(plugin.ffi.cast("uintptr_t", pointer))
    buffer._client = client
    buffer._shape = shape
    buffer._dtype = dtype
    buffer._device = device
    buffer._ready = False
    buffer._host = None
    buffer._views = 0
    buffer._deleted = False
    buffer._layout_dense = dense
    return buffer


class Buffer:
    """An array on a device, owned by this object (see the module docstring)."""

    __slots__ = (
        "__weakref__",
        "_address",  # the handle's address, an int (with the accelerator only)
        "_client",
        "_deleted",  # delete() was called (the device memory is freed or will be)
        "_device",
        "_dtype",
        "_host",  # None, or the HostSource a copy into this buffer reads
        "_layout_dense",  # dense row-major in memory; None until asked
        "_ptr",
        "_ready",  # known ready: skip asking the plugin again
        "_shape",
        "_views",  # number of live zero-copy NumPy views
    )

    def __init__(self, *args, **kwargs):
        raise TypeError("Buffers come from Client.buffer_from_numpy or Executable.execute")

    def __getattr__(self, name):
        """The handle as a cffi pointer, made from its address when first asked: the C
        accelerator makes output Buffers with the address only (`_address`)."""
        if name == "_ptr":
            address = _address_slot.__get__(self)
            pointer = self._ptr = self._client.plugin.ffi.cast("PJRT_Buffer*", address)
            return pointer
        raise AttributeError(f"'Buffer' object has no attribute {name!r}")

    def __del__(self):
        try:
            client = self._client  # (set after the handle: a Buffer that has it owns one)
        except AttributeError:
            return
        if not client._alive:
            return
        client.plugin.destroy_buffer(self)
        host = self._host
        if host is not None:
            # A zero-copy source is in use until the buffer is destroyed: hence this order.
            self._host = None
            host.release(wait=True)

    # -- metadata ---------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        shape = self._shape
        if shape is None:
            plugin = self._client.plugin
            args = plugin.call("PJRT_Buffer_Dimensions", buffer=self._ptr)
            shape = self._shape = tuple(int(args.dims[i]) for i in range(args.num_dims))
        return shape

    @property
    def dtype(self) -> np.dtype:
        dtype = self._dtype
        if dtype is None:
            plugin = self._client.plugin
            code = int(plugin.query("PJRT_Buffer_ElementType", "buffer", self._ptr, "type"))
            dtype = plugin.dtype_of_type.get(code)
            if dtype is None:
                raise TypeError(f"PJRT element type {code} has no NumPy dtype")
            self._dtype = dtype
        return dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> Device:
        device = self._device
        if device is None:
            client = self._client
            pointer = client.plugin.call("PJRT_Buffer_Device", buffer=self._ptr).device
            device = self._device = client._device(pointer)
        return device

    @property
    def client(self) -> Client:
        return self._client

    def on_device_size_in_bytes(self) -> int:
        plugin = self._client.plugin
        args = plugin.call("PJRT_Buffer_OnDeviceSizeInBytes", buffer=self._ptr)
        return int(args.on_device_size_in_bytes)

    def __repr__(self) -> str:
        state = "deleted" if self._deleted else ("ready" if self._ready else "pending")
        return f"Buffer({self.shape}, {self.dtype}, {self.device}, {state})"

    # -- readiness --------------------------------------------------------------------------

    def _release_host(self) -> None:
        """Once the contents are ready, the copy in is done: drop its source. A zero-copy
        source stays as long as the buffer."""
        host = self._host
        if not host.aliased:
            self._host = None
            host.release(wait=True)

    def ready(self) -> bool:
        """Whether the contents are computed, without waiting."""
        if self._ready:
            return True
        self._client.check_alive()
        plugin = self._client.plugin
        event = plugin.query("PJRT_Buffer_ReadyEvent", "buffer", self._ptr, "event")
        try:
            ready = plugin.event_is_ready(event)
        finally:
            plugin.destroy_event(event)
        if ready:
            if self._host is not None:
                self._release_host()
            self._ready = True
        return ready

    def block_until_ready(self) -> Buffer:
        """Wait until the contents are computed; raise the computation's error if it failed."""
        if not self._ready:
            client = self._client
            if not client._alive:
                client.check_alive()
            client.plugin.await_buffer_ready(self)
            if self._host is not None:
                self._release_host()
            self._ready = True
        return self

    # -- reading ----------------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """A new host array with the contents (waits for them).

        From host memory (CPU) NumPy copies directly: the plugin's `ToHostBuffer` hands the
        copy to a worker thread, which costs ~20 us even for a few bytes.
        """
        self._client.check_alive()
        self.block_until_ready()
        if self._view_possible():
            if self.size == 0:
                return np.empty(self.shape, self.dtype)
            return np.array(self._view_unprotected(), copy=True)
        out = np.empty(self.shape, self.dtype)
        if out.size == 0:
            return out
        plugin = self._client.plugin
        destination = plugin.ffi.from_buffer(out, require_writable=True)
        args = plugin.call(
            "PJRT_Buffer_ToHostBuffer", src=self._ptr, dst=destination, dst_size=out.nbytes
        )
        plugin.await_event(args.event)
        return out

    def unsafe_pointer(self) -> int:
        """The address of the device memory (a host address on the CPU). Valid only while this
        buffer lives and is not deleted."""
        plugin = self._client.plugin
        return int(plugin.query("PJRT_Buffer_UnsafePointer", "buffer", self._ptr, "buffer_pointer"))

    def is_on_cpu(self) -> bool:
        """Whether the memory is host memory (same for every buffer of a device: cached there)."""
        device = self.device
        on_cpu = device._host_memory
        if on_cpu is None:
            plugin = self._client.plugin
            on_cpu = bool(plugin.query("PJRT_Buffer_IsOnCpu", "buffer", self._ptr, "is_on_cpu"))
            device._host_memory = on_cpu
        return on_cpu

    def _view_possible(self) -> bool:
        """A zero-copy view needs host memory in dense row-major order with at least a byte per
        element, and not deleted."""
        if self._deleted or not self.is_on_cpu():
            return False
        dense = self._layout_dense
        if dense is None:
            dense = self._layout_dense = self._layout_is_dense()
        return dense

    def _layout_is_dense(self) -> bool:
        plugin = self._client.plugin
        if plugin.type_of_dtype.get(self.dtype) in plugin.sub_byte_types:
            return False
        try:
            args = plugin.call("PJRT_Buffer_GetMemoryLayout", buffer=self._ptr)
        except XlaRuntimeError:
            return False
        layout = args.layout  # memory inside `args`: keep `args` alive while reading it
        ndim = len(self.shape)
        if layout.type == plugin.lib.PJRT_Buffer_MemoryLayout_Type_Tiled:
            tiled = layout.tiled
            order = [int(tiled.minor_to_major[i]) for i in range(tiled.minor_to_major_size)]
            return order == list(range(ndim - 1, -1, -1)) and tiled.num_tiles == 0
        strides = layout.strides
        got = [int(strides.byte_strides[i]) for i in range(strides.num_byte_strides)]
        return got == list(np.empty(self.shape, self.dtype).strides)

    def _view_unprotected(self) -> np.ndarray:
        """A view that does not raise the external reference count: for an immediate copy."""
        holder = _BufferView(None, self.unsafe_pointer(), self.shape, self.dtype)
        array = np.asarray(holder)
        return array if array.dtype == self.dtype else array.view(self.dtype)

    def numpy_view(self) -> np.ndarray:
        """A read-only NumPy array over the buffer's memory, without a copy (CPU only: raises
        ValueError where the memory is not host memory in row-major order)."""
        self._client.check_alive()
        self.block_until_ready()
        if not self._view_possible():
            raise ValueError(f"{self!r} cannot be viewed without a copy")
        dtype = self.dtype
        if self.size == 0:
            return np.empty(self.shape, dtype)
        plugin = self._client.plugin
        plugin.query("PJRT_Buffer_IncreaseExternalReferenceCount", "buffer", self._ptr)
        self._views += 1
        holder = _BufferView(self, self.unsafe_pointer(), self.shape, dtype)
        array = np.asarray(holder)
        return array if array.dtype == dtype else array.view(dtype)  # ml_dtypes: see _BufferView

    def __array__(self, dtype=None, copy=None):
        if copy is not True and self._view_possible_after_wait():
            array = self.numpy_view()
        elif copy is False:
            raise ValueError(f"{self!r} cannot be converted to NumPy without a copy")
        else:
            array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def _view_possible_after_wait(self) -> bool:
        self.block_until_ready()
        return self._view_possible()

    def _release_view(self) -> None:
        self._views -= 1
        client = self._client
        if not client._alive:
            return
        plugin = client.plugin
        plugin.query("PJRT_Buffer_DecreaseExternalReferenceCount", "buffer", self._ptr)
        if self._views == 0 and self._deleted:
            plugin.query("PJRT_Buffer_Delete", "buffer", self._ptr)

    # -- moving and freeing -----------------------------------------------------------------

    def copy_to_device(self, device: Device) -> Buffer:
        """A copy of this buffer on `device` (asynchronous, like everything else)."""
        client = self._client
        client.check_alive()
        plugin = client.plugin
        args = plugin.call("PJRT_Buffer_CopyToDevice", buffer=self._ptr, dst_device=device._ptr)
        return new_buffer(Buffer, client, args.dst_buffer, self._shape, self._dtype, device)

    def delete(self) -> None:
        """Free the device memory now (deferred while zero-copy views of it live). The buffer
        cannot be used afterwards; its handle is still destroyed by the finalizer."""
        if self._deleted:
            return
        self._deleted = True
        if self._views == 0 and self._client._alive:
            self._client.plugin.query("PJRT_Buffer_Delete", "buffer", self._ptr)

    def is_deleted(self) -> bool:
        """Deleted by `delete()`, or donated to a computation that reused its memory."""
        if self._deleted:
            return True
        plugin = self._client.plugin
        return bool(plugin.query("PJRT_Buffer_IsDeleted", "buffer", self._ptr, "is_deleted"))


_address_slot = Buffer.__dict__["_address"]


class HostSource:
    """Host memory that the plugin reads for a buffer: the source of a copy still in flight,
    or the aliased array of a zero-copy buffer. `keep` holds it until the plugin's
    "done with host buffer" event has fired; then `release` destroys the event and lets go.

    Several parties may try to release one source (the buffer's finalizer, the client's sweep
    of finished copies, the exit hook), possibly from different threads. The event sits in a
    one-element list, and whoever pops it owns it: exactly one waits and destroys it, and
    `keep` is dropped only after that wait.
    """

    __slots__ = ("_event", "aliased", "keep", "plugin", "released")

    def __init__(self, plugin, event, keep, aliased: bool):
        self.plugin = plugin
        self._event = [event] if event else []
        self.keep = keep
        self.aliased = aliased
        self.released = not event

    def release(self, wait: bool) -> bool:
        """Drop the host memory once the plugin is done with it (without `wait`: only if it
        already is). Returns whether it has been released."""
        try:
            event = self._event.pop()
        except IndexError:
            return self.released
        if not wait and not self.plugin.event_is_ready(event):
            self._event.append(event)
            return False
        try:
            self.plugin.await_event(event)
        except XlaRuntimeError:
            pass  # a failed copy: the buffer reports it; the source is free either way
        finally:
            self.keep = None
            self.released = True
        return True


_typestrs: dict[np.dtype, str] = {}  # one per dtype


def _typestr(dtype: np.dtype) -> str:
    """`dtype.str` where NumPy reads it back as `dtype`, else an unsigned integer as wide."""
    typestr = _typestrs.get(dtype)
    if typestr is None:
        try:
            native = np.dtype(dtype.str) == dtype
        except TypeError:
            native = False
        typestr = _typestrs[dtype] = dtype.str if native else f"<u{dtype.itemsize}"
    return typestr


class _BufferView:
    """The `base` of a zero-copy NumPy view: it holds the buffer and tells NumPy where the
    memory is. NumPy's array interface cannot name ml_dtypes types (bfloat16, ...), so those
    are described as unsigned integers of the same size and viewed as their dtype afterwards.
    """

    __slots__ = ("__array_interface__", "buffer")

    def __init__(self, buffer: Buffer | None, address: int, shape, dtype: np.dtype):
        self.buffer = buffer
        typestr = _typestr(dtype)
        self.__array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (address, True),  # read-only, as JAX's views of device arrays are
            "strides": None,
        }

    def __del__(self):
        buffer = self.buffer
        if buffer is not None:
            self.buffer = None
            buffer._release_view()


class Event:
    """A PJRT event: it becomes ready when some asynchronous work is done."""

    __slots__ = ("_client", "_ptr")

    def __init__(self, client: Client, pointer):
        self._client = client
        self._ptr = pointer

    def __del__(self):
        try:
            pointer, client = self._ptr, self._client
        except AttributeError:
            return
        if client._alive:
            client.plugin.destroy_event(pointer)

    def is_ready(self) -> bool:
        return self._client.plugin.event_is_ready(self._ptr)

    def wait(self) -> None:
        """Block until ready; raise the error of the work it tracks, if that failed."""
        self._client.plugin.await_event(self._ptr, destroy=False)
