"""jit of sharded Arrays and jit(in_shardings=, out_shardings=): XLA partitions the program
over the mesh's devices (GSPMD annotations); `with_sharding_constraint` inside. 4 devices,
each test in its own process."""

from parallel.devices import needs_plugin, run_with_devices

pytestmark = needs_plugin


def test_xla_partitions_a_2x2_matmul_over_sharded_arguments():
    # (Auto axes: XLA lays the product out; on Explicit ones its type would need out_sharding)
    run_with_devices(
        """
        from tracejit.sharding import AxisType
        mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
        A = jax.device_put(a, NamedSharding(mesh, P("x", "y")))
        B = jax.device_put(b, NamedSharding(mesh, P("y", None)))
        out = jax.jit(lambda u, v: jnp.tanh(u @ v))(A, B)
        assert len(out.addressable_shards) == 4
        close(out, np.tanh(a @ b))
        doubled = jax.jit(lambda u: u * 2 + 1)(A)
        assert doubled.sharding == A.sharding  # an element-wise result keeps the layout
        assert [s.data.shape for s in doubled.addressable_shards] == [(2, 2)] * 4
        close(doubled, a * 2 + 1)
        rows = NamedSharding(mesh, P("x", None))
        h = jax.jit(lambda u, v: u @ v, in_shardings=(rows, None), out_shardings=rows)
        out = h(a, b)
        assert out.sharding == rows and out.addressable_shards[2].index[0] == slice(2, 4)
        close(out, a @ b)
        constrained = jax.jit(lambda u: lax.with_sharding_constraint(u * 3, rows) + 1)
        close(constrained(A), a * 3 + 1)
        close(constrained(a), a * 3 + 1)  # unpartitioned: the identity
        close(jax.grad(lambda u: jnp.sum(lax.with_sharding_constraint(u * u, rows)))(a), 2 * a)
        close(jax.vmap(lambda u: lax.with_sharding_constraint(u, rows))(a[None]), a[None])
        """
    )


def test_data_parallel_sgd_as_sharded_jit():
    run_with_devices(
        """
        rng = np.random.default_rng(0)
        params = [jnp.asarray(rng.normal(0, 0.1, s).astype(np.float32)) for s in [(8, 16), (16, 4)]]
        xs = rng.normal(size=(32, 8)).astype(np.float32)
        ys = rng.normal(size=(32, 4)).astype(np.float32)
        def loss(p, x, y):
            return jnp.mean((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)
        def step(p, x, y):
            g = jax.grad(loss)(p, x, y)
            return [w - 0.1 * gw for w, gw in zip(p, g)]
        expected = jax.jit(step)(params, xs, ys)
        mesh = Mesh(np.array(jax.devices()), ("batch",))
        batch = NamedSharding(mesh, P("batch"))
        X, Y = jax.device_put(xs, batch), jax.device_put(ys, batch)
        got = jax.jit(step)(params, X, Y)
        for e, g in zip(expected, got):
            close(g, e, 1e-5)
        """
    )


def test_bad_shardings_give_jax_errors():
    run_with_devices(
        """
        import pytest
        mesh = Mesh(np.array(jax.devices()), ("i",))
        with pytest.raises(ValueError, match="does not evenly divide"):
            jax.jit(lambda u: u, in_shardings=NamedSharding(mesh, P("i")))(jnp.ones(6))
        with pytest.raises(ValueError, match="requires a non-empty mesh"):
            lax.with_sharding_constraint(jnp.ones(4), P("i"))
        with jax.set_mesh(mesh):
            close(lax.with_sharding_constraint(jnp.ones(4), P("i")), np.ones(4))
        """
    )


def test_arrays_made_from_blocks_and_resharded():
    run_with_devices(
        """
        mesh = jax.make_mesh((2, 2), ("x", "y"))
        sharding = NamedSharding(mesh, P("x", "y"))
        a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        made = jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])
        assert made.sharding == sharding and made.dtype == np.float32
        close(made, a)
        blocks = [jax.device_put(a[s.index], s.device) for s in made.addressable_shards]
        again = jax.make_array_from_single_device_arrays(a.shape, sharding, blocks)
        assert [s.device for s in again.addressable_shards] == jax.devices()
        close(again, a)
        rows = NamedSharding(mesh, P("x"))
        moved = jax.reshard(made, rows)
        assert moved.sharding == rows
        close(moved, a)
        close(jax.jit(lambda u: jax.reshard(u * 2, rows))(made), 2 * a)
        """
    )


def test_results_come_back_with_the_sharding_xla_chose():
    # the specs JAX 0.10.2 gives on an Auto 2x2 mesh (recorded by hand with real JAX)
    run_with_devices(
        """
        from tracejit.sharding import AxisType
        mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
        b = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        A = jax.device_put(a, NamedSharding(mesh, P("x", None)))
        B = jax.device_put(b, NamedSharding(mesh, P(None, "y")))
        f = lambda u, v: (u @ v, u + u, jnp.sum(u), u.T, u[:, None, :], jnp.sum(u, 0))
        outs = jax.jit(f)(A, B)
        specs = [P("x", "y"), P("x", None), P(), P(None, "x"), P("x"), P()]
        for out, spec, want in zip(outs, specs, f(a, b)):
            assert out.sharding.spec == spec, (out.shape, out.sharding)
            assert tuple(out.sharding.spec) == tuple(spec)  # trailing Nones as JAX's
            close(out, want)
            for shard in out.addressable_shards:  # each device holds the block it says
                close(shard.data, np.asarray(want)[shard.index])
        assert outs[1].sharding is A.sharding  # the argument's own sharding, kept
        C = jax.device_put(a, NamedSharding(mesh, P(("y", "x"))))
        assert jax.jit(lambda u: u * 2)(C).sharding.spec == P(("y", "x"))
        assert repr(outs[0].sharding) == (
            "NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), "
            "spec=P('x', 'y'), memory_kind=device)"
        )
        rows = NamedSharding(mesh, P("x"))
        given = jax.jit(lambda u: (u * 2, u.T), out_shardings=(rows, None))(A)
        assert given[0].sharding is rows and given[1].sharding.spec == P(None, "x")
        """
    )


def test_explicit_meshes_place_products_and_say_what_is_missing():
    # jax.make_mesh's default Explicit axes: the values are XLA's, laid out as asked, and the
    # arrays' types carry their shardings
    run_with_devices(
        """
        import pytest
        from tracejit.sharding import auto_axes, explicit_axes
        mesh = jax.make_mesh((2, 2), ("x", "y"))
        a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        with pytest.raises(ValueError, match="Please set a mesh"):
            jax.device_put(a, P("x"))
        with jax.set_mesh(mesh):
            A = jax.device_put(a, P("x", None))
            B = jax.device_put(a, P(None, "y"))
            assert A.sharding == NamedSharding(mesh, P("x", None))
            D = jnp.dot(A, B, out_sharding=P("x", None))
            assert D.sharding.spec == P("x", None)
            close(D, a @ a)
            M = jnp.matmul(A, B, out_sharding=NamedSharding(mesh, P(None, "x")))
            assert M.sharding.spec == P(None, "x")
            close(M, a @ a)
            T = jax.jit(lambda u, v: jnp.tensordot(u, v, 1, out_sharding=P("y")))(A, B)
            assert T.sharding.spec == P("y", None)  # (its type's spec, as JAX)
            close(T, a @ a)
            f = auto_axes(lambda u: u * 2, out_sharding=P("y", None))
            assert f(A).sharding.spec == P("y", None)
            close(jax.jit(f)(A), 2 * a)
            g = explicit_axes(lambda u: u + 1, in_sharding=P(None, "x"))
            close(g(a), a + 1)
            with pytest.raises(TypeError, match="out_sharding"):
                auto_axes(lambda u: u)(A)
            assert str(jax.typeof(A)) == "float32[4@x,4]"
            assert str(jax.typeof(D)) == "float32[4@x,4]" and str(jax.typeof(M)) == "float32[4,4@x]"
        auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        assert jax.typeof(jax.device_put(a, NamedSharding(auto, P("x")))).shape == (4, 4)
        """
    )


def test_max_and_min_over_split_dimensions_keep_nans_and_order_zeros():
    # (XLA's CPU all-reduce takes only plain maximum/minimum, which drop NaNs and pick either
    # zero: JAX 0.10.2 answers 29.0 for the NaN case below; the values are NumPy's)
    run_with_devices(
        """
        import ml_dtypes
        from tracejit.sharding import AxisType
        mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
        rng = np.random.default_rng(0)
        values = np.array([-0.0, 0.0, -1.5, 2.5, -np.inf, np.inf, np.nan])
        reductions = [
            lambda v: v.max(), lambda v: v.min(), lambda v: v.max(0), lambda v: v.min(0),
            lambda v: jnp.max(v, 1),
        ]
        for dtype in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16):
            for _ in range(10):
                a = rng.choice(values, (8, 3), p=[0.3, 0.3, 0.15, 0.1, 0.05, 0.05, 0.05])
                a = a.astype(dtype)
                x = jax.device_put(a, NamedSharding(mesh, P("i")))
                for f in reductions:
                    got = np.asarray(jax.jit(f)(x)).astype(np.float64)
                    want = np.asarray(f(jnp.asarray(a))).astype(np.float64)
                    np.testing.assert_array_equal(got, want)
                    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (a, f)
        nan_late = np.arange(32, dtype=np.float32).reshape(8, 4)
        nan_late[7, 3] = np.nan
        x = jax.device_put(nan_late, NamedSharding(mesh, P("i")))
        assert np.isnan(jax.jit(lambda v: v.max())(x))
        empty = jax.device_put(np.zeros((4, 0), np.float32), NamedSharding(mesh, P("i")))
        close(jax.jit(lambda v: lax.reduce_max(v, (1,)))(empty), np.full(4, -np.inf))
        close(jax.jit(lambda v: lax.reduce_min(v, (1,)))(empty), np.full(4, np.inf))
        """
    )


def test_filled_arrays_like_a_spread_array_are_laid_out_as_it_is():
    # (JAX 0.10.2's layouts: eagerly the prototype's, on Auto and pmap's meshes too; with
    # another shape, or under jit on Auto axes, one device's)
    run_with_devices(
        """
        from tracejit.sharding import AxisType, SingleDeviceSharding
        mesh = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
        x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("i", "j")))
        for like in (jnp.ones_like(x), jnp.zeros_like(x, dtype=jnp.int32), jnp.full_like(x, 2)):
            assert like.sharding == x.sharding
        close(jnp.full_like(x, 2), np.full((8, 4), 2.0))
        assert isinstance(jnp.ones_like(x, shape=(2,)).sharding, SingleDeviceSharding)
        y = jax.pmap(lambda v: v)(np.ones((4, 2), np.float32))
        assert jnp.zeros_like(y).sharding == y.sharding
        """
    )
