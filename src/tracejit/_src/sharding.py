"""Meshes and shardings: how a global array is laid out over devices (plain data).

A `Mesh` arranges devices in an n-dimensional grid with named axes; a `PartitionSpec` says,
per array dimension, which mesh axes split it (`None`: not split); a `NamedSharding` pairs
them. Every device of the mesh holds one block of the array: the dimension split over mesh
axes of total size k is cut into k equal blocks, and the devices that differ only along mesh
axes the spec does not name hold the same block (replicas). `devices_indices_map` gives each
device's block as a tuple of slices; the runtime keeps one buffer per device in the order of
`mesh.devices.flat` (`_device_assignment`).

    mesh = Mesh(np.array(devices).reshape(2, 2), ("x", "y"))
    NamedSharding(mesh, P("x", None))   # rows split over x, each block on both y devices
"""

from __future__ import annotations

import collections
import enum
import itertools
import math

import numpy as np


class AxisType(enum.Enum):
    """How a mesh axis is treated by `jit`: XLA decides (`Auto`), the types carry the sharding
    (`Explicit`), or the user's function sees per-device blocks (`Manual`, inside shard_map)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class PartitionSpec(tuple):
    """Per array dimension: the mesh axis (or tuple of axes, or None) that splits it."""

    UNCONSTRAINED = "unconstrained"

    def __new__(cls, *partitions):
        for entry in partitions:
            if isinstance(entry, list):
                raise TypeError(f"PartitionSpec entries must be str, tuple or None; got {entry}")
        # (as JAX: a tuple of one axis is that axis, an empty one is None)
        partitions = [
            (entry[0] if len(entry) == 1 else entry or None) if isinstance(entry, tuple) else entry
            for entry in partitions
        ]
        return super().__new__(cls, partitions)

    def __repr__(self):
        return "P" + tuple.__repr__(self)

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(("PartitionSpec", tuple(self)))

    def __reduce__(self):
        return (PartitionSpec, tuple(self))

    def axes_of(self, dim: int) -> tuple:
        """The mesh axes splitting array dimension `dim` (none past the spec's length)."""
        if dim >= len(self):
            return ()
        entry = self[dim]
        if entry is None:
            return ()
        return entry if isinstance(entry, tuple) else (entry,)

    def mesh_axes(self) -> tuple:
        return tuple(name for dim in range(len(self)) for name in self.axes_of(dim))


P = PartitionSpec


class AbstractMesh:
    """A mesh's shape and axis names without its devices (what tracing needs)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, device_kind=None, platform=None):
        self.device_kind, self.platform = device_kind, platform
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(
                f"Mesh axis names {self.axis_names} and sizes {self.axis_sizes} differ in length"
            )
        self.axis_types = _axis_types(axis_types, len(self.axis_names))

    @property
    def shape(self) -> collections.OrderedDict:
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _axes_text(self) -> str:
        if self.empty:
            return "()"
        return ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)

    def _types_text(self) -> str:
        types = ", ".join(t.name for t in self.axis_types)
        return f"({types},)" if len(self.axis_types) == 1 else f"({types})"

    def __repr__(self):
        devices = ""
        if self.platform is not None:
            devices = f", device_kind={self.device_kind}, num_cores=None, platform={self.platform}"
        return f"AbstractMesh({self._axes_text()}, axis_types={self._types_text()}{devices})"


def _axis_types(axis_types, count: int) -> tuple:
    if axis_types is None:
        return (AxisType.Auto,) * count
    if isinstance(axis_types, AxisType):
        return (axis_types,) * count
    axis_types = tuple(axis_types)
    if len(axis_types) != count:
        raise ValueError(f"Number of axis_types {len(axis_types)} must match {count} mesh axes")
    return axis_types


class Mesh(AbstractMesh):
    """Devices in a grid (`devices`, a NumPy array of devices) with named axes; usable as a
    context manager, which makes it the current mesh (`get_abstract_mesh`)."""

    def __init__(self, devices, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        devices = np.asarray(devices, dtype=object)
        if devices.ndim != len(tuple(axis_names)):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length of "
                f"its second argument (`axis_names`), but got devices.ndim == {devices.ndim} and "
                f"len(axis_names) == {len(tuple(axis_names))}."
            )
        if len(set(axis_names)) != len(tuple(axis_names)):
            raise ValueError(f"Mesh axis names must be unique, got {tuple(axis_names)}")
        super().__init__(devices.shape, axis_names, axis_types)
        self.devices = devices
        self._identity = (tuple(d.id for d in devices.flat), *super()._key())
        self._hash = hash(self._identity)

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        return list(self.devices.flat)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        first = self.devices.flat[0] if self.devices.size else None
        return AbstractMesh(
            self.axis_sizes,
            self.axis_names,
            self.axis_types,
            device_kind=getattr(first, "device_kind", None),
            platform=getattr(first, "platform", None),
        )

    def _key(self):
        return self._identity

    def __eq__(self, other):
        return self is other or (type(other) is Mesh and self._identity == other._identity)

    def __hash__(self):
        return self._hash

    def __enter__(self):
        _mesh_stack.append(self)
        return self

    def __exit__(self, *exc):
        _mesh_stack.pop()

    def __repr__(self):
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={self._types_text()})"
        )

    def __str__(self):
        return f"Mesh({self._axes_text()}, axis_types={self._types_text()})"


_mesh_stack: list = []


class set_mesh:
    """Makes `mesh` (or None: no mesh) the current mesh (`get_mesh`, `get_abstract_mesh`) from
    now on; used as a context manager, within the block only (the previous one comes back at
    its end), as JAX's `jax.set_mesh`."""

    def __init__(self, mesh: Mesh | None):
        self.mesh = mesh
        self._previous = list(_mesh_stack)
        _mesh_stack.append(mesh)

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _mesh_stack[:] = self._previous


def get_abstract_mesh() -> AbstractMesh:
    """The current mesh's abstract form; an empty one outside every `set_mesh`."""
    mesh = get_mesh()
    return AbstractMesh((), ()) if mesh is None else mesh.abstract_mesh


def get_mesh():
    return _mesh_stack[-1] if _mesh_stack else None


class Sharding:
    """The layout of an array over devices (base class)."""

    @property
    def device_set(self) -> set:
        return set(self._device_assignment)

    @property
    def addressable_devices(self) -> set:
        return self.device_set

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    def addressable_devices_indices_map(self, global_shape) -> dict:
        return self.devices_indices_map(global_shape)

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Whether both place the same blocks on the same devices."""
        mine, theirs = self._device_assignment, getattr(other, "_device_assignment", None)
        if mine != theirs:
            return False
        shape = (len(mine),) * ndim  # (divisible by every split: positions decide, not sizes)
        return self._blocks(shape) == other._blocks(shape)

    def _blocks(self, global_shape) -> list:
        indices = self.devices_indices_map(global_shape)
        return [_slices_key(indices[d]) for d in self._device_assignment]


def _slices_key(index) -> tuple:
    return tuple((s.start, s.stop) for s in index)


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._device_assignment = (device,)
        self._memory_kind = "device" if memory_kind is None else memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def devices_indices_map(self, global_shape) -> dict:
        return {self._device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device.id))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class NamedSharding(Sharding):
    """An array split over a mesh's axes as a `PartitionSpec` says."""

    def __init__(self, mesh, spec=None, *, memory_kind=None):
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        check_spec_axes(spec, mesh)
        self.mesh = mesh
        self.spec = spec
        self._device_assignment = tuple(mesh.devices.flat) if isinstance(mesh, Mesh) else ()
        # (a mesh without devices has no memories: JAX gives its shardings no memory kind)
        if memory_kind is None and isinstance(mesh, Mesh):
            memory_kind = "device"
        self._memory_kind = memory_kind
        self._identity = (mesh, _trimmed(spec), memory_kind)
        self._hash = hash(self._identity)

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[name] == 1 for name in self.spec.mesh_axes())

    def shard_shape(self, global_shape) -> tuple:
        check_divisible(self, global_shape)
        return tuple(size // self._ways(dim) for dim, size in enumerate(global_shape))

    def _ways(self, dim: int) -> int:
        return math.prod(self.mesh.shape[name] for name in self.spec.axes_of(dim))

    def devices_indices_map(self, global_shape) -> dict:
        """Each device's block of an array of `global_shape`, as slices."""
        block = self.shard_shape(global_shape)
        return {
            device: tuple(
                slice(None) if not self.spec.axes_of(dim) else slice(p * size, (p + 1) * size)
                for dim, (p, size) in enumerate(zip(positions, block, strict=True))
            )
            for device, positions in zip(
                self.mesh.devices.flat,
                _tile_coords(self.mesh, self.spec, len(global_shape)),
                strict=True,
            )
        }

    def replica_ids(self) -> list:
        """Per device (mesh order): which copy of its block it holds (0 for the first)."""
        names = [n for n in self.mesh.axis_names if n not in self.spec.mesh_axes()]
        sizes = [self.mesh.shape[n] for n in names]
        ids = []
        for coords in itertools.product(*map(range, self.mesh.axis_sizes)):
            where = dict(zip(self.mesh.axis_names, coords, strict=True))
            ids.append(int(np.ravel_multi_index([where[n] for n in names], sizes)) if names else 0)
        return ids

    def __eq__(self, other):
        return self is other or (
            isinstance(other, NamedSharding) and self._identity == other._identity
        )

    def __hash__(self):
        return self._hash

    def __repr__(self):
        memory = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{memory})"


def _trimmed(spec: PartitionSpec) -> tuple:
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def check_spec_axes(spec: PartitionSpec, mesh) -> None:
    """ValueError (JAX's) for a spec naming an axis the mesh lacks or an axis twice."""
    for name in spec.mesh_axes():
        if name not in mesh.axis_names:
            raise ValueError(
                f"Resource axis: {name} of {spec!r} is not found in mesh: {mesh.axis_names}."
            )
    used = spec.mesh_axes()
    if len(set(used)) != len(used):
        raise ValueError(
            f"A single NamedSharding spec specification can map every mesh axis "
            f"to at most one positional dimension, but {spec!r} has duplicate "
            f"entries"
        )


def check_divisible(sharding: NamedSharding, global_shape) -> None:
    """ValueError (JAX's) where a split dimension does not divide into its blocks."""
    spec = sharding.spec
    if len(spec) > len(global_shape):
        raise ValueError(
            f"Sharding {sharding!r} is only valid for values of rank at least {len(spec)}, but "
            f"was applied to a value of rank {len(global_shape)}"
        )
    for dim, size in enumerate(global_shape):
        ways = sharding._ways(dim)
        if size % ways:
            raise ValueError(
                f"Sharding spec {spec.axes_of(dim)} implies that array axis {dim} is "
                f"partitioned {ways} times, but does not evenly divide the dimension size "
                f"{size}. Got shape: {tuple(global_shape)} and sharding {sharding!r}"
            )


def hlo_sharding(sharding, ndim: int) -> str:
    """XLA's text form of how `sharding` tiles an array of rank `ndim` over the partitions of
    a program whose device assignment is the mesh's devices in order: `{replicated}`, or
    `{devices=[tiles per dimension(, copies)]ids (last_tile_dim_replicate)}`."""
    if not isinstance(sharding, NamedSharding) or sharding.is_fully_replicated:
        return "{replicated}"
    mesh, spec = sharding.mesh, sharding.spec
    names = list(mesh.axis_names)
    by_dim = [spec.axes_of(dim) for dim in range(ndim)]
    used = [name for axes in by_dim for name in axes]
    unused = [name for name in names if name not in used]
    order = [names.index(name) for name in used + unused]
    tiles = [math.prod(mesh.shape[name] for name in axes) for axes in by_dim]
    copies = math.prod(mesh.shape[name] for name in unused)
    ids = np.arange(mesh.size).reshape(mesh.axis_sizes).transpose(order).ravel()
    dims = tiles + ([copies] if copies > 1 else [])
    text = f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, ids))}"
    return text + (" last_tile_dim_replicate}" if copies > 1 else "}")


def named_sharding_of_tiles(mesh: Mesh, ndim: int, tile_dims, partitions, replicate_last: bool):
    """The NamedSharding over `mesh` that places an XLA tiled sharding's blocks as it does
    (`tile_dims`: tiles per dimension, then copies when `replicate_last`; `partitions`: the
    position in the mesh of the device holding each tile, row-major), or None where no
    PartitionSpec of the mesh does. Its spec ends at its last split dimension, as JAX's."""
    if len(tile_dims) != ndim + replicate_last:
        return None
    grid = np.asarray(partitions, dtype=np.int64).reshape(tuple(tile_dims))
    tiles = tuple(tile_dims[:ndim])
    target = [None] * mesh.size
    for index in np.ndindex(grid.shape):
        target[grid[index]] = index[:ndim]
    for spec in _candidate_specs(mesh, tiles):
        if _tile_coords(mesh, spec, ndim) == target:
            return NamedSharding(mesh, spec)
    return None


def _candidate_specs(mesh: AbstractMesh, tiles):
    """The PartitionSpecs over `mesh` splitting each dimension into `tiles[d]` blocks: every
    way of giving each mesh axis (of more than one device) to a dimension or none, in every
    order within a dimension (the mesh's first)."""
    names = [name for name, size in mesh.shape_tuple if size > 1]
    for choice in itertools.product(range(-1, len(tiles)), repeat=len(names)):
        by_dim = [
            [n for n, d in zip(names, choice, strict=True) if d == dim] for dim in range(len(tiles))
        ]
        if any(
            math.prod(mesh.shape[n] for n in axes) != count
            for axes, count in zip(by_dim, tiles, strict=True)
        ):
            continue
        for orders in itertools.product(*map(itertools.permutations, by_dim)):
            entries = [None if not axes else axes[0] if len(axes) == 1 else axes for axes in orders]
            while entries and entries[-1] is None:
                entries.pop()
            yield PartitionSpec(*entries)


def _tile_coords(mesh: AbstractMesh, spec: PartitionSpec, ndim: int) -> list:
    """Per device (mesh order): its block's position along each dimension under `spec`."""
    coords = []
    for where in itertools.product(*map(range, mesh.axis_sizes)):
        at = dict(zip(mesh.axis_names, where, strict=True))
        block = []
        for dim in range(ndim):
            position = 0
            for name in spec.axes_of(dim):
                position = position * mesh.shape[name] + at[name]
            block.append(position)
        coords.append(tuple(block))
    return coords


class ShardingTypeError(Exception):
    """JAX's error for operands whose shardings (in their types, over Explicit mesh axes) an
    operation cannot combine without the user saying how (`out_sharding=`, `reshard`)."""


sharding_in_types = [False]
"""Whether some aval has carried an Explicit mesh's sharding in this process: until one does,
the traces skip the sharding rules (`sharding_types.apply_sharding_rules`) at the cost of one
list read."""


def typed_sharding(sharding, ndim: int):
    """The sharding an aval carries for a value laid out as `sharding` (a `NamedSharding` of a
    mesh, concrete or abstract): its spec over the Explicit axes only, on the abstract mesh;
    None where the mesh has no Explicit axis (Auto axes are XLA's to lay out, not typed)."""
    mesh = sharding.mesh
    if AxisType.Explicit not in mesh.axis_types:
        return None
    explicit = {
        n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t == AxisType.Explicit
    }
    entries = []
    for dim in range(ndim):
        axes = tuple(n for n in sharding.spec.axes_of(dim) if n in explicit)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    abstract = mesh.abstract_mesh if isinstance(mesh, Mesh) else mesh
    sharding_in_types[0] = True
    return NamedSharding(abstract, PartitionSpec(*entries))
