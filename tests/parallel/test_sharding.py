"""Meshes, partition specs and named shardings as plain data (no devices needed): JAX's
reprs, each device's block, XLA's text form, and JAX's errors."""

import numpy as np
import pytest

from tracejit._src.runtime.formats import OpSharding, _bytes_field, _int_field, _packed_ints_field
from tracejit._src.sharding import hlo_sharding, named_sharding_of_tiles
from tracejit.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    get_abstract_mesh,
    get_mesh,
    set_mesh,
)
from tracejit.sharding import PartitionSpec as P


class FakeDevice:
    platform = device_kind = "cpu"

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
    assert P(("x",), ()) == P("x", None) and repr(P(("x",))) == "P('x',)"
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


def test_shardings_print_their_memory_kind_as_jax():
    named = NamedSharding(MESH, P("x"))
    assert repr(named) == (
        "NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), spec=P('x',), "
        "memory_kind=device)"
    )
    assert named.memory_kind == "device"
    abstract = NamedSharding(MESH.abstract_mesh, P("x"))  # no devices, no memories
    assert abstract.memory_kind is None
    assert repr(abstract) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 2, axis_types=(Auto, Auto), "
        "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x',))"
    )
    host = NamedSharding(MESH, P("x"), memory_kind="pinned_host")
    assert "memory_kind=pinned_host" in repr(host) and host != named


def test_xla_tiled_shardings_read_back_as_partition_specs():
    # tiles per dimension (then copies), and the mesh position holding each tile
    assert named_sharding_of_tiles(MESH, 2, (2, 2), range(4), False).spec == P("x", "y")
    assert named_sharding_of_tiles(MESH, 2, (2, 2), [0, 2, 1, 3], False).spec == P("y", "x")
    assert named_sharding_of_tiles(MESH, 2, (2, 1, 2), range(4), True).spec == P("x")
    assert named_sharding_of_tiles(MESH, 2, (1, 2, 2), [0, 2, 1, 3], True).spec == P(None, "y")
    assert named_sharding_of_tiles(MESH, 1, (4,), [0, 2, 1, 3], False).spec == P(("y", "x"))
    assert named_sharding_of_tiles(MESH, 1, (4,), [0, 3, 1, 2], False) is None  # no spec


def test_op_sharding_protos_decode_in_both_device_forms():
    listed = (
        _int_field(1, 3) + _packed_ints_field(3, [1, 2, 2]) + _packed_ints_field(4, [0, 2, 1, 3])
    )
    listed += _int_field(6, 1)
    op = OpSharding(listed)
    assert (op.kind, op.tile_dims, op.partitions, op.replicate_last) == (
        "tiled",
        (1, 2, 2),
        (0, 2, 1, 3),
        True,
    )
    iota = _int_field(1, 3) + _packed_ints_field(3, [2, 2])
    iota += _packed_ints_field(9, [2, 2]) + _packed_ints_field(10, [1, 0])  # <=[2,2]T(1,0)
    assert OpSharding(iota).partitions == (0, 2, 1, 3)
    pair = OpSharding(_int_field(1, 2) + _bytes_field(5, b"") + _bytes_field(5, listed))
    assert [o.kind for o in pair.tuple] == ["replicated", "tiled"]


def test_set_mesh_sets_the_mesh_or_scopes_it_as_jax():
    other = Mesh(DEVICES, ("k",), axis_types=(AxisType.Explicit,))
    assert get_abstract_mesh().empty and get_mesh() is None
    try:
        set_mesh(MESH)  # (a setter: from now on)
        set_mesh(other)
        assert get_mesh() is other
        with set_mesh(MESH) as entered:
            assert entered is MESH and get_abstract_mesh() == MESH.abstract_mesh
        assert get_mesh() is other  # (the previous one back)
        set_mesh(None)
        assert get_abstract_mesh().empty
    finally:
        set_mesh(None)
