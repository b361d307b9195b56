"""Meshes, partition specs and named shardings as plain data (no devices needed): JAX's
reprs, each device's block, XLA's text form, and JAX's errors."""

import numpy as np
import pytest

from tracejit._src.sharding import hlo_sharding
from tracejit.sharding import AbstractMesh, AxisType, Mesh, NamedSharding
from tracejit.sharding import PartitionSpec as P


class FakeDevice:
    platform = kind = "cpu"

    def __init__(self, id):
        self.id = id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"


DEVICES = np.array([FakeDevice(i) for i in range(4)], dtype=object)
MESH = Mesh(DEVICES.reshape(2, 2), ("x", "y"))


def test_partition_specs_print_and_compare_as_jax():
    assert repr(P("x", ("x", "y"), None)) == "P('x', ('x', 'y'), None)"
    assert repr(P()) == "P()"
    assert P() != P(None) and P("x") != ("x",)
    assert NamedSharding(MESH, P("x")) == NamedSharding(MESH, P("x", None))


def test_meshes_print_as_jax():
    assert repr(MESH) == "Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), axis_types=(Auto, Auto))"
    assert str(MESH) == "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))"
    assert MESH.shape == {"x": 2, "y": 2} and MESH.size == 4
    explicit = Mesh(DEVICES, ("i",), axis_types=(AxisType.Explicit,))
    assert str(explicit) == "Mesh('i': 4, axis_types=(Explicit,))"
    assert repr(AbstractMesh((2,), ("i",))) == "AbstractMesh('i': 2, axis_types=(Auto,))"


def test_each_device_holds_its_block():
    sharding = NamedSharding(MESH, P("x", None))
    indices = sharding.devices_indices_map((4, 6))
    assert [indices[d] for d in DEVICES] == [
        (slice(0, 2), slice(None)),
        (slice(0, 2), slice(None)),
        (slice(2, 4), slice(None)),
        (slice(2, 4), slice(None)),
    ]
    assert sharding.replica_ids() == [0, 1, 0, 1]
    assert sharding.shard_shape((4, 6)) == (2, 6)
    both = NamedSharding(MESH, P(("y", "x")))  # y slowest-varying along dimension 0
    assert [both.devices_indices_map((8,))[d][0].start for d in DEVICES] == [0, 4, 2, 6]
    assert not sharding.is_fully_replicated and NamedSharding(MESH, P()).is_fully_replicated


def test_xla_text_of_shardings():
    assert hlo_sharding(NamedSharding(MESH, P("x", "y")), 2) == "{devices=[2,2]0,1,2,3}"
    assert hlo_sharding(NamedSharding(MESH, P("y", "x")), 2) == "{devices=[2,2]0,2,1,3}"
    assert (
        hlo_sharding(NamedSharding(MESH, P("x")), 2)
        == "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"
    )
    assert hlo_sharding(NamedSharding(MESH, P()), 1) == "{replicated}"


def test_bad_specs_give_jax_errors():
    with pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not found"):
        NamedSharding(MESH, P("z"))
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 2 times"):
        NamedSharding(MESH, P("x")).shard_shape((3,))
    with pytest.raises(ValueError, match="ndim of its first argument"):
        Mesh(DEVICES, ("x", "y"))
