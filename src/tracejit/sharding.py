"""`tracejit.sharding`, as `jax.sharding`: meshes, partition specs and shardings."""

from tracejit._src.shard_map import auto_axes, explicit_axes, reshard
from tracejit._src.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_abstract_mesh,
    get_mesh,
    make_single_device_sharding,
    set_mesh,
)

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
]
