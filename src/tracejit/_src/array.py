"""`tracejit.Array`: an immutable array with a dtype that JAX's rules fixed.

An Array wraps a NumPy value whose dtype is already canonical (no 64-bit types unless x64 is
enabled) and remembers whether that dtype is *weak* (it came from a Python scalar). Arrays
are immutable: NumPy views of them are read-only and `x[0] = 1` raises, pointing to `x.at[]`.
Arithmetic operators and methods are attached by `tracejit.numpy` (`_src/numpy/array_methods.py`)
so that Arrays and tracers answer the same operators the same way.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray


class Array:
    # `_buffer`: a device buffer holding the value, set once the Array has been passed to a
    # compiled program (then reused by later calls), or from the start for a DeviceArray.
    # `_signature`: what `jit` keys its programs on (shape, dtype, weak type, ...), set the
    # first time the Array is passed to a jitted function (Arrays are immutable).
    __slots__ = ("__weakref__", "_buffer", "_signature", "_value", "weak_type")
    __array_priority__ = 100

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "tracejit.Array cannot be constructed directly: use jnp.array or jnp.asarray"
        )

    @property
    def aval(self) -> ShapedArray:
        value = self._value
        return ShapedArray(value.shape, value.dtype, self.weak_type)

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return dtypes.user_dtype(self._value.dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    @property
    def nbytes(self):
        return self._value.nbytes

    @property
    def itemsize(self):
        return self._value.itemsize

    def __array__(self, dtype=None, copy=None):
        if self._value.dtype == dtypes.key_fry:
            raise TypeError(
                "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                "jax.random.key_data(arr) if you wish to extract the underlying integer array."
            )
        if copy:
            return np.array(self._value, dtype=dtype, copy=True)
        view = np.asarray(self._value, dtype=dtype)
        if view is self._value or view.base is self._value:
            view = view.view()
            view.flags.writeable = False
        return view

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The value as a DLPack capsule, exported by NumPy from a read-only view: a consumer
        must speak DLPack 1.0 (which can mark memory read-only; NumPy 2's `from_dlpack` does)
        or ask for a copy."""
        options = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
        options = {k: v for k, v in options.items() if v is not None}  # NumPy 1.26: none
        return self.__array__().__dlpack__(stream=stream, **options)

    def __dlpack_device__(self) -> tuple:
        return self.__array__().__dlpack_device__()

    def block_until_ready(self) -> Array:
        return self

    def is_deleted(self) -> bool:
        """Whether `delete()` was called or the Array was donated to a jitted computation."""
        return False

    def delete(self) -> None:
        """Frees the value now (device memory at once, rather than when the Array dies);
        using the Array afterwards raises RuntimeError."""
        buffer = getattr(self, "_buffer", None)
        mark_deleted(self)
        if buffer is not None:
            buffer.delete()  # deferred by the buffer while NumPy views of it live

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def __len__(self):
        if not self._value.ndim:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        return self._value.__index__()

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __setitem__(self, index, value):
        raise TypeError(
            "'Array' object does not support item assignment: tracejit arrays are immutable. "
            "Use x.at[idx].set(y) (or .add, .mul, .min, .max) for an updated copy, "
            "e.g. x = x.at[idx].set(y)."
        )

    def __reduce__(self):
        return (_rebuild_array, (np.asarray(self._value), self.weak_type))

    def __format__(self, format_spec):
        if self._value.ndim == 0:
            return format(self._value.item(), format_spec)
        return format(str(self), format_spec)

    def __str__(self):
        if self._value.dtype == dtypes.key_fry:
            return repr(self)
        return str(self._value)

    def __repr__(self):
        value = self._value
        if value.dtype == dtypes.key_fry:  # as JAX shows typed keys: their words below
            return f"Array({value.shape}, dtype=key<fry>) overlaying:\n{value['fry']}"
        value = np.asarray(value)
        suffix = f", dtype={value.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if value.size == 0:
            body = f"[], shape={value.shape}"
        else:  # lines wrapped as JAX wraps them: before the comma, whatever follows it
            body = np.array2string(value, separator=", ", prefix="Array(", suffix=",")
        return f"Array({body}{suffix})"


def make_array(value, weak_type: bool = False) -> Array:
    """Wraps a NumPy value whose dtype is already canonical. The one way Arrays are made."""
    array = object.__new__(Array)
    array._value = value
    array.weak_type = weak_type
    return array


def _rebuild_array(value, weak_type):
    return make_array(value, weak_type)


class DeviceArray(Array):
    """An Array whose value lives in a device buffer (a jitted computation's output).

    Its shape and dtype come from the buffer, so passing it to another jitted call moves no
    data; the NumPy value is fetched on first use (for the CPU plugin a zero-copy view of the
    buffer's memory) and kept. The buffer, and with it the device memory, is released when the
    array dies. Dispatch is asynchronous: the buffer may still be being computed.
    """

    __slots__ = ()

    def __getattr__(self, name):
        if name == "_value":  # the slot is empty until first read
            value = np.asarray(self._buffer)
            value.flags.writeable = False
            self._value = value
            return value
        raise AttributeError(f"'Array' object has no attribute {name!r}")

    @property
    def aval(self) -> ShapedArray:
        buffer = self._buffer
        return ShapedArray(buffer.shape, buffer.dtype, self.weak_type)

    @property
    def shape(self):
        return self._buffer.shape

    @property
    def dtype(self):
        return dtypes.user_dtype(self._buffer.dtype)

    @property
    def ndim(self):
        return len(self._buffer.shape)

    @property
    def size(self):
        return self._buffer.size

    def block_until_ready(self) -> DeviceArray:
        self._buffer.block_until_ready()
        return self


class DeletedArray(Array):
    """An Array whose value is gone: donated to a jitted computation (`donate_argnums`), which
    reused its device memory for an output, or freed by `delete()`.

    An Array becomes one in place (`mark_deleted` swaps its class), so every reference the
    program holds sees the deletion. Its shape and dtype stay readable, as in JAX; anything
    that needs the value, passing it to a jitted function included, raises RuntimeError. The
    aval is kept in the base class's `_value` slot, which the properties below shadow.
    """

    __slots__ = ()

    def _deleted_error(self) -> RuntimeError:
        aval = _value_slot.__get__(self)
        shape = ",".join(map(str, aval.shape))
        return RuntimeError(f"Array has been deleted with shape={aval.dtype.name}[{shape}].")

    @property
    def _value(self):
        raise self._deleted_error()

    @property
    def _buffer(self):
        raise self._deleted_error()

    @property
    def aval(self) -> ShapedArray:
        return _value_slot.__get__(self)

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return dtypes.user_dtype(self.aval.dtype)

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return int(np.prod(self.aval.shape, dtype=np.int64))

    @property
    def nbytes(self):
        return self.size * self.aval.dtype.itemsize

    @property
    def itemsize(self):
        return self.aval.dtype.itemsize

    def block_until_ready(self):
        raise self._deleted_error()

    def is_deleted(self) -> bool:
        return True

    def delete(self) -> None:
        pass


_value_slot = Array.__dict__["_value"]
_buffer_slot = Array.__dict__["_buffer"]


def mark_deleted(array: Array) -> None:
    """Turns `array` into a `DeletedArray` in place, dropping its value and its buffer (whose
    handle is then destroyed; the caller frees or donated the memory itself)."""
    if type(array) is DeletedArray:
        return
    aval = ShapedArray(array.shape, array.dtype, array.weak_type)
    for slot in (_value_slot, _buffer_slot):
        try:
            slot.__delete__(array)
        except AttributeError:
            pass
    array.__class__ = DeletedArray
    _value_slot.__set__(array, aval)


def make_device_array(buffer, weak_type: bool = False) -> DeviceArray:
    array = object.__new__(DeviceArray)
    array._buffer = buffer
    array.weak_type = weak_type
    return array


class ShardedArray(Array):
    """An Array spread over several devices: one buffer per device of its sharding (in the
    order of `sharding._device_assignment`), each holding that device's block.

    Its shape is the global one; the NumPy value is assembled from the blocks on first use
    (printing, `np.asarray`, eager operations) and kept. A multi-device program given it with
    the same sharding reads its buffers where they are: no copy. The buffers, sharding and
    global aval live in the base class's `_buffer` slot (a `Placement`), so that an Array can
    become a `DeletedArray` in place; `_buffer` itself reads as absent, which makes
    single-device programs transfer the assembled value.
    """

    __slots__ = ()

    def __getattr__(self, name):
        if name == "_value":
            placement = self.placement
            aval = placement.aval
            value = np.empty(aval.shape, aval.dtype)
            indices = placement.sharding.devices_indices_map(aval.shape)
            for device, buffer in zip(placement.devices, placement.buffers, strict=True):
                value[indices[device]] = np.asarray(buffer)
            value.flags.writeable = False
            self._value = value
            return value
        raise AttributeError(f"'Array' object has no attribute {name!r}")

    @property
    def _buffer(self):
        raise AttributeError("a sharded Array has one buffer per device")

    @property
    def placement(self) -> Placement:
        return _buffer_slot.__get__(self)

    @property
    def aval(self) -> ShapedArray:
        return self.placement.aval

    @property
    def shape(self):
        return self.placement.aval.shape

    @property
    def dtype(self):
        return dtypes.user_dtype(self.placement.aval.dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def sharding(self):
        return self.placement.sharding

    @property
    def is_fully_replicated(self) -> bool:
        return self.placement.sharding.is_fully_replicated

    def devices(self) -> set:
        return set(self.placement.devices)

    @property
    def addressable_shards(self) -> list:
        placement = self.placement
        indices = placement.sharding.devices_indices_map(placement.aval.shape)
        replicas = placement.sharding.replica_ids()
        return [
            Shard(device, indices[device], replica, make_device_array(buffer, self.weak_type))
            for device, buffer, replica in zip(
                placement.devices, placement.buffers, replicas, strict=True
            )
        ]

    def block_until_ready(self) -> ShardedArray:
        for buffer in self.placement.buffers:
            buffer.block_until_ready()
        return self

    def delete(self) -> None:
        buffers = self.placement.buffers
        mark_deleted(self)
        for buffer in buffers:
            buffer.delete()


class Placement:
    """Where a sharded Array's blocks are: one buffer per device of `sharding`."""

    __slots__ = ("aval", "buffers", "devices", "sharding")

    def __init__(self, buffers, sharding, aval: ShapedArray):
        self.buffers = tuple(buffers)
        self.sharding = sharding
        self.devices = sharding._device_assignment
        self.aval = aval


class Shard:
    """One device's block of an Array: `device`, `index` (slices into the global array),
    `replica_id` and `data` (a single-device Array)."""

    __slots__ = ("data", "device", "index", "replica_id")

    def __init__(self, device, index, replica_id, data):
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self):
        return (
            f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
            f"data={self.data!r})"
        )


def make_sharded_array(buffers, sharding, aval: ShapedArray) -> ShardedArray:
    """(Over a mesh with Explicit axes, the array's type carries its sharding, as in JAX.)"""
    if aval._sharding is None and hasattr(sharding, "spec"):
        aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type, sharding=sharding)
    array = object.__new__(ShardedArray)
    _buffer_slot.__set__(array, Placement(buffers, sharding, aval))
    array.weak_type = aval.weak_type
    return array
