"""`jax.experimental.mesh_utils` and `jax.experimental.pjit`, as JAX 0.10.2 answers on CPU
devices (4 of them, in a process of their own)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracejit as jax
from tracejit.experimental import mesh_utils
from tracejit.experimental.pjit import pjit


def test_a_mesh_of_the_one_device_and_jaxs_errors():
    mesh = mesh_utils.create_device_mesh((1, 1))
    assert mesh.shape == (1, 1) and mesh.dtype == object and mesh[0, 0] == jax.devices()[0]
    with pytest.raises(
        ValueError, match=r"Number of devices 1 must equal the product of mesh_shape \(2,\)"
    ):
        mesh_utils.create_device_mesh((2,))
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mesh_utils.create_hybrid_device_mesh((1,), (1,))


def test_four_devices_in_order_and_by_process(tmp_path):
    script = textwrap.dedent(
        """
        import tracejit as jax
        from tracejit.experimental import mesh_utils
        devices = jax.devices()
        print(mesh_utils.create_device_mesh((2, 2)).tolist() == [devices[:2], devices[2:]])
        reverse = mesh_utils.create_device_mesh((2, 2), devices=devices[::-1])
        print(reverse.tolist() == [devices[:1:-1], devices[1::-1]])
        hybrid = mesh_utils.create_hybrid_device_mesh((2, 2), (1, 1), process_is_granule=True)
        print(hybrid.tolist() == [devices[:2], devices[2:]])
        mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((4,)), ("i",))
        print(dict(mesh.shape))
        """
    )
    env = {"TRACEJIT_NUM_CPU_DEVICES": "4", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout.split("\n")
    assert out[:4] == ["True", "True", "True", "{'i': 4}"]


def test_pjit_is_jit_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="Please use `jax.jit` instead"):
        f = pjit(lambda x: x * 2, None, None)
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_host_local_and_global_arrays_within_one_process():
    """With one process the local data is the whole array, laid out on the mesh by the specs
    (a prefix of the inputs), as JAX's multihost_utils gives it."""
    from tracejit.experimental import multihost_utils
    from tracejit.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(mesh_utils.create_device_mesh((1,)), ("x",))
    local = {"a": np.arange(4.0), "b": np.ones(2)}
    specs = {"a": PartitionSpec("x"), "b": None}
    placed = multihost_utils.host_local_array_to_global_array(local, mesh, specs)
    assert placed["a"].sharding == NamedSharding(mesh, PartitionSpec("x"))
    back = multihost_utils.global_array_to_host_local_array(placed, mesh, PartitionSpec())
    for name, value in local.items():
        np.testing.assert_array_equal(back[name], value)
