"""`jax.experimental.mesh_utils`: arrays of devices shaped for a `Mesh`.

On TPUs JAX orders the devices by their physical links; CPU devices have no topology, so a
mesh is the devices in the order given (all devices by default), reshaped. A hybrid mesh joins
per-process meshes ("granules": JAX's slices, which CPUs have not, so `process_is_granule=True`
is required as in JAX) along `dcn_mesh_shape`: member (i, j) of the result is member j of the
granule at i.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import xla_bridge

# JAX's device kinds with a mesh builder of their own (TPUs); none of tracejit's devices has one
device_kind_handler_dict: dict = {}


def create_device_mesh(
    mesh_shape,
    devices=None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """The devices (default: all) as an object array of shape `mesh_shape`."""
    devices = list(xla_bridge.devices() if devices is None else devices)
    if math.prod(mesh_shape) != len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must equal the product of mesh_shape {mesh_shape}"
        )
    mesh = np.empty(len(devices), dtype=object)
    mesh[:] = devices
    return mesh.reshape(tuple(mesh_shape))


def create_hybrid_device_mesh(
    mesh_shape,
    dcn_mesh_shape,
    devices=None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """Per-process meshes of `mesh_shape` laid out along `dcn_mesh_shape`: a mesh of shape
    `mesh_shape * dcn_mesh_shape` (elementwise)."""
    devices = list(xla_bridge.devices() if devices is None else devices)
    if not process_is_granule:
        raise ValueError(
            f"Device {devices[0]} does not have attribute slice_index. See `process_is_granule` "
            "option."
        )
    granules = {}
    for device in devices:
        granules.setdefault(device.process_index, []).append(device)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    if math.prod(dcn_mesh_shape) != len(keys):
        raise ValueError(
            f"Number of slices {len(keys)} must equal the product of dcn_mesh_shape "
            f"{tuple(dcn_mesh_shape)}"
        )
    meshes = [create_device_mesh(mesh_shape, granules[key]) for key in keys]
    blocks = np.empty(len(meshes), dtype=object)
    blocks[:] = meshes
    return np.block(blocks.reshape(tuple(dcn_mesh_shape)).tolist())
