"""pmap and shard_map on 4 CPU devices (each test in its own process, see `devices.py`):
collectives against NumPy, transformations, sharded Arrays, JAX's errors."""

from parallel.devices import needs_plugin, run_with_devices

pytestmark = needs_plugin


COLLECTIVES = """
x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
pm = lambda f, **kw: jax.pmap(f, axis_name="i", **kw)
close(pm(lambda v: v / lax.psum(v, "i"))(x), x / x.sum(0))
close(pm(lambda v: lax.pmean(v, "i"))(x), np.broadcast_to(x.mean(0), x.shape))
close(pm(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i"))(x), np.full((4, 2), 6.0))
close(pm(lambda v: lax.all_gather(v, "i"))(x), np.broadcast_to(x, (4, 4, 2)))
close(pm(lambda v: lax.all_gather(v, "i", axis=1))(x), np.broadcast_to(x.T, (4, 2, 4)))
close(pm(lambda v: lax.all_gather(v, "i", tiled=True))(x), np.tile(x.ravel(), (4, 1)))
close(pm(lambda v: lax.axis_index("i") + 0 * v)(x), np.repeat(np.arange(4), 2).reshape(4, 2))
assert pm(lambda v: v * lax.axis_size("i"))(x)[0, 0] == 0.0
ring = [(0, 1), (1, 2), (2, 3), (3, 0)]
close(pm(lambda v: lax.ppermute(v, "i", ring))(x), np.roll(x, 1, axis=0))
close(pm(lambda v: lax.ppermute(v, "i", [(0, 2)]))(x), [[0, 0], [0, 0], [0, 1], [0, 0]])
close(pm(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]))(x), np.roll(x, -1, axis=0))
y = np.arange(16.0, dtype=np.float32).reshape(4, 4)
close(pm(lambda v: lax.psum_scatter(v, "i"))(y), y.sum(0))
close(pm(lambda v: lax.pswapaxes(v, "i", 0))(y), y.T)
z = np.arange(32.0, dtype=np.float32).reshape(4, 4, 2)
close(pm(lambda v: lax.all_to_all(v, "i", 0, 1))(z), np.transpose(z, (1, 2, 0)))
# the same under vmap (the collectives' batching rules) and on the NumPy reference
for f in (lambda v: v / lax.psum(v, "i"), lambda v: lax.ppermute(v, "i", ring)):
    close(jax.vmap(f, axis_name="i")(x), pm(f)(x))
"""


def test_collectives_in_pmap_against_numpy():
    run_with_devices(COLLECTIVES)


def test_pmap_arrays_stay_on_their_devices():
    run_with_devices(
        """
        assert jax.local_device_count() == 4 and jax.device_count() == 4
        assert jax.process_index() == 0 and jax.process_count() == 1
        y = jax.pmap(lambda v: v * 2)(jnp.arange(8.0).reshape(4, 2))
        assert y.shape == (4, 2) and not y.is_fully_replicated
        assert y.devices() == set(jax.devices())
        shards = y.addressable_shards
        assert [s.device for s in shards] == jax.devices()
        assert shards[1].index == (slice(1, 2), slice(None)) and shards[1].data.shape == (1, 2)
        close(shards[1].data, [[4.0, 6.0]])
        assert "P('_internal_pmap_axis_name',)" in repr(y.sharding)
        close(np.asarray(y), np.arange(8.0).reshape(4, 2) * 2)
        close(y[2], [8.0, 10.0])
        close(y + 1, np.arange(8.0).reshape(4, 2) * 2 + 1)
        z = jax.pmap(lambda v: v + 1)(y)  # the buffers are passed where they are
        close(z, np.arange(8.0).reshape(4, 2) * 2 + 1)
        two = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.ones((2, 3)))
        assert len(two.sharding.device_set) == 2
        close(two, np.full((2, 3), 2.0))
        assert jnp.zeros(3).sharding.is_fully_replicated
        # a jit of a pmap runs as the pmap (JAX 0.10.2's sharding and shards)
        w = jax.jit(jax.pmap(lambda v: v * 2))(jnp.arange(4.0))
        assert w.sharding == jax.pmap(lambda v: v)(jnp.arange(4.0)).sharding
        assert [s.index for s in w.addressable_shards] == [(slice(k, k + 1),) for k in range(4)]
        close(w, np.arange(4.0) * 2)
        # a jit calling a pmap among other operations is partitioned over the pmap's devices
        x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
        p = jax.pmap(lambda v: v / lax.psum(v, "i") + lax.axis_index("i"), axis_name="i")
        for f, spec in ((lambda v: p(v) * 2, P("i")), (lambda v: p(v).sum(0), P())):
            out = jax.jit(f)(x)
            assert out.sharding.spec == spec and len(out.sharding.device_set) == 4
            close(out, f(jnp.asarray(x)))
        grad = jax.jit(jax.grad(lambda v: (p(v) ** 2).sum()))(x)
        close(grad, jax.grad(lambda v: (p(v) ** 2).sum())(x))
        """
    )


# make_jaxpr(pmap(lambda u: lax.pmean(u, "i"), axis_name="i")) of f32[4,3], as JAX 0.10.2
# prints it: the shard_map's body named afresh, the mean a division by the static size
JAX_PMEAN = """{ lambda ; a:f32[4,3]. let
    b:f32[4,3] = jit[
      name=_fun
      jaxpr={ lambda ; a:f32[4,3]. let
          b:f32[4,3] = shard_map[
            check_vma=False
            in_specs=(P('i',),)
            jaxpr={ lambda ; c:f32[1,3]. let
                d:f32[3] = squeeze[dimensions=(0,)] c
                e:f32[3] = psum[axes=('i',) axis_index_groups=None] d
                f:f32[3] = div e 4.0:f32[]
                g:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] f
              in (g,) }
            mesh=Mesh('i': 4, axis_types=(Auto,))
            newly_manual_axes=frozenset({'i'})
            out_specs=(P('i',),)
          ] a
        in (b,) }
    ] a
  in (b,) }"""


def test_pmap_compiles_once_and_prints_as_jax():
    run_with_devices(
        """
        from tracejit._src import spmd
        f = jax.pmap(lambda v: v / lax.psum(v, "i"), axis_name="i")
        x = jnp.arange(8.0).reshape(4, 2)
        f(x); f(x + 1)
        assert len(spmd._programs) == 1
        text = str(jax.make_jaxpr(f)(x))
        assert "jit[\\n      name=_fun" in text, text
        assert "shard_map[\\n            check_vma=False\\n            in_specs=(P('i',),)" in text
        assert "mesh=Mesh('i': 4, axis_types=(Auto,))" in text
        assert "newly_manual_axes=frozenset({'i'})" in text
        assert "psum[axes=('i',) axis_index_groups=None]" in text
        mean = jax.pmap(lambda u: lax.pmean(u, "i"), axis_name="i")
        assert str(jax.make_jaxpr(mean)(np.ones((4, 3), np.float32))) == JAX_PMEAN, text
        """.replace("JAX_PMEAN", repr(JAX_PMEAN))
    )


TRANSFORMATIONS = """
x = jnp.arange(4.0)
g = lambda v: v * lax.psum(v, "i")
pm = jax.pmap(g, axis_name="i")
# grad of pmap and pmap of grad (JAX's values; psum transposes to psum per member)
close(jax.grad(lambda v: pm(v).sum())(x), np.full(4, 12.0))
close(jax.pmap(jax.grad(lambda v: lax.psum(v * v, "i")), axis_name="i")(x), 8 * x)
close(jax.jit(pm)(x), jax.vmap(g, axis_name="i")(x))
ones = jnp.ones((3, 4))
close(jax.vmap(jax.pmap(lambda v: v + lax.psum(v, "i"), axis_name="i"))(ones), 5 * ones)
inner = jax.vmap(lambda v: v + lax.psum(v, "j"), axis_name="j")
close(jax.pmap(inner, axis_name="i")(ones.T), 4 * ones.T)
both = jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j")
close(jax.pmap(both, axis_name="i")(ones.T), 12 * ones.T)
# (the vmap outside: its axis is named in the body's collectives too)
outer = jax.vmap(jax.pmap(lambda v: lax.psum(v, ("i", "j")), axis_name="i"), axis_name="j")
close(outer(ones), 12 * ones)
rows = jax.vmap(jax.pmap(lambda v: v - lax.pmean(v, "j"), axis_name="i"), axis_name="j")
close(rows(x.reshape(2, 2) * jnp.ones((3, 2, 2))), np.zeros((3, 2, 2)))
loop = lambda v: lax.fori_loop(0, 3, lambda k, c: c + lax.psum(c, "i"), v)
close(jax.pmap(loop, axis_name="i")(jnp.ones(4)), np.full(4, 125.0))
# (every member must take the branch holding a collective: it waits for all of them)
branch = lambda v: lax.cond(lax.psum(v, "i") > 1, lambda u: lax.psum(u, "i"), lambda u: u, v)
close(jax.pmap(branch, axis_name="i")(x), [6.0] * 4)
scan = lambda v: lax.scan(lambda c, _: (c + lax.pmax(c, "i"), None), v, None, 2)[0]
close(jax.pmap(scan, axis_name="i")(x), jax.vmap(scan, axis_name="i")(x))
"""


def test_transformations_of_pmap():
    run_with_devices(TRANSFORMATIONS)


def test_data_parallel_sgd_matches_the_single_device_step():
    run_with_devices(
        """
        rng = np.random.default_rng(0)
        params = [jnp.asarray(rng.normal(0, 0.1, s).astype(np.float32)) for s in [(8, 16), (16, 4)]]
        xs = jnp.asarray(rng.normal(size=(32, 8)).astype(np.float32))
        ys = jnp.asarray(rng.normal(size=(32, 4)).astype(np.float32))
        def loss(p, x, y):
            return jnp.mean((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)
        def step(p, x, y):
            g = jax.grad(loss)(p, x, y)
            return [w - 0.1 * gw for w, gw in zip(p, g)]
        def pstep(p, x, y):
            g = lax.pmean(jax.grad(loss)(p, x, y), "i")
            return [w - 0.1 * gw for w, gw in zip(p, g)]
        expected = jax.jit(step)(params, xs, ys)
        got = jax.pmap(pstep, axis_name="i", in_axes=(None, 0, 0))(
            params, xs.reshape(4, 8, 8), ys.reshape(4, 8, 4)
        )
        for e, g in zip(expected, got):
            close(g[0], e, 1e-5)
            close(g[3], e, 1e-5)
        mesh = Mesh(np.array(jax.devices()), ("i",))
        sm = jax.shard_map(pstep, mesh=mesh, in_specs=(P(), P("i"), P("i")), out_specs=P())
        for e, g in zip(expected, jax.jit(sm)(params, xs, ys)):
            close(g, e, 1e-5)
        """
    )


def test_shard_map_on_a_2x2_mesh_and_device_put():
    run_with_devices(
        """
        mesh = jax.make_mesh((2, 2), ("x", "y"))
        assert repr(mesh.axis_types) == "(Explicit, Explicit)"
        a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
        # data parallel over x, model parallel over y: a's columns and b's rows split over y
        mm = jax.shard_map(
            lambda u, v: lax.psum(u @ v, "y"),
            mesh=mesh, in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None),
        )
        # (Explicit axes: the arguments' types must say what in_specs say, as in JAX)
        A = jax.device_put(a, NamedSharding(mesh, P("x", "y")))
        B = jax.device_put(b, NamedSharding(mesh, P("y", None)))
        close(mm(A, B), a @ b)
        assert str(jax.typeof(mm(A, B))) == "float32[4@x,2]"
        close(jax.jit(mm)(A, B), a @ b)
        import pytest
        with pytest.raises(ValueError, match="does not match the specs of the input"):
            mm(a, b)
        s = NamedSharding(mesh, P("x", None))
        put = jax.device_put(a, s)
        assert put.sharding == s and [sh.replica_id for sh in put.addressable_shards] == [0, 1, 0, 1]
        close(put, a)
        idx = jax.shard_map(lambda u: u * 0 + lax.axis_index(("x", "y")), mesh=mesh,
                            in_specs=P("x", "y"), out_specs=P("x", "y"))
        close(idx(A), [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])
        close(jax.grad(lambda u: mm(u, B).sum())(A), np.tile(b.sum(1), (4, 1)))
        """
    )


def test_donation_through_pmap():
    run_with_devices(
        """
        f = jax.pmap(lambda v: v + 1, donate_argnums=0)
        x = jax.pmap(lambda v: v * 1)(jnp.arange(8.0).reshape(4, 2))
        y = f(x)
        close(y, np.arange(8.0).reshape(4, 2) + 1)
        assert x.is_deleted()
        """
    )


def test_alternating_programs_with_collectives_do_not_deadlock():
    run_with_devices(
        """
        f = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
        g = jax.pmap(lambda v: lax.pmax(v * 2, "i"), axis_name="i")
        x = jnp.ones((4, 256))
        outs = []
        for _ in range(200):
            outs.append(f(x)); outs.append(g(x))
        close(outs[-2], np.full((4, 256), 4.0)); close(outs[-1], np.full((4, 256), 2.0))
        """,
        timeout=120,
    )


def test_bad_input_gives_jax_errors():
    run_with_devices(
        """
        import pytest
        x = jnp.ones((4, 2))
        with pytest.raises(ValueError, match="partitioned 4 times"):
            jax.pmap(lambda v: v)(jnp.ones((5, 2)))
        with pytest.raises(ValueError, match="dimension size is 3"):
            jax.pmap(lambda v, w: v + w)(x, jnp.ones((3, 2)))
        with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
            jax.pmap(lambda v: v, in_axes=None)(x)
        with pytest.raises(NameError, match="unbound axis name: j"):
            jax.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(x)
        with pytest.raises(ValueError, match="sources and destinations must be unique"):
            jax.pmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), axis_name="i")(x)
        with pytest.raises(ValueError, match="all_to_all requires the size"):
            jax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(jnp.ones((4, 3)))
        mesh = Mesh(np.array(jax.devices()), ("i",))
        with pytest.raises(ValueError, match="Resource axis: z"):
            NamedSharding(mesh, P("z"))
        with pytest.raises(ValueError, match="does not evenly divide"):
            jax.device_put(jnp.ones(6), NamedSharding(mesh, P("i")))
        with pytest.raises(ValueError, match="refers to 'q'"):
            jax.shard_map(lambda v: v, mesh=mesh, in_specs=P("q"), out_specs=P())(jnp.ones(8))
        with pytest.raises(ValueError, match="not evenly divisible"):
            jax.shard_map(lambda v: v, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(jnp.ones(6))
        with pytest.raises(AttributeError, match="use jax.device_put instead"):
            jax.device_put_sharded
        """
    )


def test_one_device_process_gives_jax_errors():
    run_with_devices(
        """
        import pytest
        assert jax.local_device_count() == 1
        close(jax.pmap(lambda v: v * 2)(jnp.ones((1, 3))), np.full((1, 3), 2.0))
        with pytest.raises(ValueError, match="partitioned 1 times"):
            jax.pmap(lambda v: v)(jnp.ones((2, 3)))
        """,
        devices=1,
    )


def test_derivatives_of_each_collective_against_finite_differences():
    run_with_devices(
        """
        from tracejit.test_util import check_grads
        ring = [(0, 1), (1, 2), (2, 3), (3, 0)]
        collectives = {
            "psum": lambda v: v * lax.psum(v, "i"),
            "pmean": lambda v: jnp.sin(lax.pmean(v, "i")),
            "all_gather": lambda v: jnp.sum(lax.all_gather(v, "i") ** 2, 0) * v,
            "all_gather_tiled": lambda v: lax.all_gather(v, "i", tiled=True)[:4] * v,
            "ppermute": lambda v: lax.ppermute(v * v, "i", ring),
            "psum_scatter": lambda v: lax.psum_scatter(jnp.outer(v, v), "i", tiled=True).ravel()[:2],
            "all_to_all": lambda v: lax.all_to_all(jnp.outer(v, v)[:, :4], "i", 1, 0, tiled=True).ravel()[:2],
            "pswapaxes": lambda v: lax.pswapaxes(jnp.tile(v[:1], 4) * v[1], "i", 0)[:2],
        }
        x = np.random.default_rng(0).normal(size=(4, 4))
        for name, f in collectives.items():
            for mapped in (jax.pmap(f, axis_name="i"), jax.vmap(f, axis_name="i")):
                check_grads(mapped, (x,), order=1, modes=("rev",), atol=1e-4, rtol=1e-4)
            # per member, under pmap (JVPs of the body run on the devices)
            member_jvp = lambda v, t: jax.jvp(f, (v,), (t,))[1]
            close(
                jax.pmap(member_jvp, axis_name="i")(x, x + 1),
                jax.vmap(member_jvp, axis_name="i")(x, x + 1),
                1e-4,
            )
        """
    )


def test_shard_map_prints_and_composes_with_vmap():
    run_with_devices(
        """
        mesh = Mesh(np.array(jax.devices()), ("i",))
        f = jax.shard_map(lambda v: lax.psum(v, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
        text = str(jax.make_jaxpr(f)(jnp.arange(8.0)))
        assert "b:f32[2] = shard_map[\\n      check_vma=True\\n      in_specs=(P('i',),)" in text
        assert isinstance(f(jnp.arange(8.0)), jax.Array)
        close(f(jnp.arange(8.0)), [12.0, 16.0])
        xs = np.arange(16.0).reshape(2, 8)
        close(jax.vmap(f)(xs), np.stack([f(row) for row in xs]))
        close(jax.jit(jax.vmap(f))(xs), np.stack([f(row) for row in xs]))
        """
    )


def test_pmap_options():
    run_with_devices(
        """
        f = jax.pmap(lambda v, k: v * k, static_broadcasted_argnums=1)
        close(f(jnp.ones((4, 2)), 3), np.full((4, 2), 3.0))
        devs = jax.devices()[2:]
        g = jax.pmap(lambda v: v + lax.axis_index("i"), axis_name="i", devices=devs)
        out = g(jnp.zeros(2))
        assert [s.device for s in out.addressable_shards] == devs
        close(out, [0.0, 1.0])
        tree = jax.pmap(lambda d: {"s": d["a"] + d["b"]}, in_axes=({"a": 0, "b": None},))
        close(tree({"a": jnp.ones((4, 3)), "b": jnp.ones(3)})["s"], np.full((4, 3), 2.0))
        close(jax.pmap(lambda v: v, in_axes=1, out_axes=1)(np.ones((3, 4))), np.ones((3, 4)))
        """
    )


def test_host_callbacks_in_pmap_run_on_every_device():
    out = run_with_devices(
        """
        def f(x):
            jax.debug.print("member {}", x)
            y = jax.pure_callback(lambda v: v + 1, jax.ShapeDtypeStruct((), jnp.float32), x)
            return y * 2
        close(jax.pmap(f)(jnp.arange(4.0)), [2.0, 4.0, 6.0, 8.0])
        """
    )
    assert sorted(line for line in out.splitlines() if line.startswith("member")) == [
        f"member {i}.0" for i in range(4)
    ]
