"""`tracejit.experimental.mesh_utils`, as `jax.experimental.mesh_utils`."""

from tracejit._src.mesh_utils import (  # noqa: F401
    create_device_mesh,
    create_hybrid_device_mesh,
    device_kind_handler_dict,
)
