"""`make_array_from_process_local_data` with one process: the local data is the whole array,
laid out as the sharding says (its blocks equal to `make_array_from_callback`'s), in the
canonical dtype; a `global_shape` other than the data's is JAX's ValueError. Cases and messages
as JAX 0.10.2 gives them on 4 CPU devices."""

import numpy as np
import pytest
from parallel.devices import needs_plugin, run_with_devices

import tracejit as jax
from tracejit.sharding import SingleDeviceSharding


def test_one_device_holds_it_all():
    sharding = SingleDeviceSharding(jax.devices()[0])
    data = np.arange(6.0).reshape(2, 3)  # float64: made float32
    out = jax.make_array_from_process_local_data(sharding, data)
    assert out.dtype == np.float32 and out.shape == (2, 3) and not out.weak_type
    np.testing.assert_array_equal(out, data.astype(np.float32))
    assert jax.make_array_from_process_local_data(sharding, 2.0).weak_type
    with pytest.raises(ValueError, match=r"global_shape=\(4, 3\) and local_data.shape=\(2, 3\)"):
        jax.make_array_from_process_local_data(sharding, data, (4, 3))


@needs_plugin
def test_four_devices_as_jax_lays_them_out():
    run_with_devices(
        """
        from tracejit.sharding import SingleDeviceSharding

        mesh = jax.make_mesh((2, 2), ("a", "b"))
        grid = NamedSharding(mesh, P("a", "b"))
        x = np.arange(16.0).reshape(4, 4)
        for given in (x, jnp.asarray(x)):
            out = jax.make_array_from_process_local_data(grid, given, (4, 4))
            assert out.sharding == grid and out.dtype == np.float32 and out.shape == (4, 4)
            close(out, x)
            expected = [
                (0, (slice(0, 2), slice(0, 2))), (1, (slice(0, 2), slice(2, 4))),
                (2, (slice(2, 4), slice(0, 2))), (3, (slice(2, 4), slice(2, 4))),
            ]
            shards = [(s.device.id, s.index) for s in out.addressable_shards]
            assert shards == expected, shards
            for shard in out.addressable_shards:
                close(shard.data, x[shard.index])
        replicated = jax.make_array_from_process_local_data(NamedSharding(mesh, P()), x)
        assert all(s.index == (slice(None), slice(None)) for s in replicated.addressable_shards)
        ints = jax.make_array_from_process_local_data(grid, np.ones((4, 4), np.int64))
        assert ints.dtype == np.int32
        scalar = jax.make_array_from_process_local_data(NamedSharding(mesh, P()), 3.0)
        assert scalar.shape == () and scalar.weak_type and float(scalar) == 3.0
        one = jax.make_array_from_process_local_data(SingleDeviceSharding(jax.devices()[1]), x)
        assert [s.device.id for s in one.addressable_shards] == [1]
        for bad, message in [
            ((8, 4), "global_shape=(8, 4) and local_data.shape=(4, 4)."),
            ((4, 4, 1), "global_shape=(4, 4, 1) and local_data.shape=(4, 4)."),
        ]:
            try:
                jax.make_array_from_process_local_data(grid, x, bad)
                raise AssertionError("accepted")
            except ValueError as err:
                assert str(err).startswith(
                    "When calling `make_array_from_process_local_data` on a single process, "
                    "global_shape should be None or equal to local_data.shape.Got "
                ) and str(err).endswith(message), err
        try:
            jax.make_array_from_process_local_data(grid, np.ones((3, 4)))
            raise AssertionError("accepted")
        except ValueError as err:
            assert "does not evenly divide the dimension size 3" in str(err), err
        """
    )


@needs_plugin
def test_the_other_makers_refuse_what_jax_refuses():
    run_with_devices(
        """
        mesh = jax.make_mesh((2, 2), ("a", "b"))
        grid = NamedSharding(mesh, P("a", "b"))
        x = np.arange(16.0).reshape(4, 4)
        where = (
            "Shape of Array is float32[4@a,4@b] with sharding NamedSharding(mesh=Mesh('a': 2, "
            "'b': 2, axis_types=(Explicit, Explicit)), spec=P('a', 'b'), memory_kind=device)"
        )
        out = jax.make_array_from_callback((4, 4), grid, lambda i: x[i])
        assert out.dtype == np.float32
        close(out, x)
        blocks = [jax.device_put(np.ones((3, 2), np.float32), d) for d in jax.devices()]
        for make, message in [
            (
                lambda: jax.make_array_from_callback((4, 4), grid, lambda i: x[i], dtype=np.int32),
                "If `dtype` is provided to `jax.make_array_from_callback`, it must match the "
                "dtype of the addressable shards. Got dtype=int32 and shard dtype=float32`.",
            ),
            (
                lambda: jax.make_array_from_callback((4, 4), grid, lambda i: np.ones((3, 3))),
                "Expected shard shape (2, 2) doesn't match the single device array shape "
                "(3, 3). " + where,
            ),
            (
                lambda: jax.make_array_from_single_device_arrays((4, 4), grid, blocks[:3]),
                "Expected 4 per-device arrays (this is how many devices are addressable by the "
                "sharding), but got 3",
            ),
            (
                lambda: jax.make_array_from_single_device_arrays((4, 4), grid, blocks),
                "Expected shard shape (2, 2) doesn't match the single device array shape "
                "(3, 2). " + where,
            ),
        ]:
            try:
                make()
                raise AssertionError("accepted")
            except ValueError as err:
                assert str(err) == message, err
        """
    )
