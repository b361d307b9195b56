"""Collectives' further forms on 4 devices, and the same on the NumPy platform (vmap over the
mesh axes): `axis_index_groups`, `ppermute`/`all_to_all` over several axes at once, and
`shard_map` over some of the mesh's axes (`axis_names=`) and `smap`, which maps over one;
`pcast` and `pbroadcast`. The expected values are JAX
0.10.2's (recorded by hand), each also what NumPy gives."""

import pytest
from parallel.devices import needs_plugin, run_with_devices

GROUPS = """
x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
pairs, evens = [[0, 1], [2, 3]], [[0, 2], [1, 3]]
def each_group(groups, reduce):
    out = np.empty_like(x)
    for group in groups:
        out[group] = reduce(x[group], axis=0)
    return out
cases = [
    (lambda v: lax.psum(v, "i", axis_index_groups=pairs), each_group(pairs, np.sum)),
    (lambda v: lax.psum(v, "i", axis_index_groups=evens), each_group(evens, np.sum)),
    (lambda v: lax.pmax(v, "i", axis_index_groups=[[0, 3], [1, 2]]),
     each_group([[0, 3], [1, 2]], np.max)),
    (lambda v: lax.pmin(v, "i", axis_index_groups=evens), each_group(evens, np.min)),
    (lambda v: lax.pmean(v, "i", axis_index_groups=pairs), each_group(pairs, np.mean)),
    (lambda v: lax.psum(v, "i", axis_index_groups=[[0], [1, 2, 3]]),
     each_group([[0], [1, 2, 3]], np.sum)),
    (lambda v: lax.all_gather(v, "i", axis_index_groups=pairs), x.reshape(2, 1, 2, 2).repeat(2, 1).reshape(4, 2, 2)),
    (lambda v: lax.all_gather(v, "i", axis_index_groups=evens, tiled=True),
     [[0, 1, 4, 5], [2, 3, 6, 7], [0, 1, 4, 5], [2, 3, 6, 7]]),
    (lambda v: lax.psum_scatter(v, "i", axis_index_groups=pairs), [2, 4, 10, 12]),
    (lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=pairs), [[0, 2], [1, 3], [4, 6], [5, 7]]),
]
for f, want in cases:
    close(jax.pmap(f, axis_name="i")(x), want)
    close(jax.vmap(f, axis_name="i")(x), want)
# derivatives: each member's operand reaches its group's results only
g = jax.grad(lambda v: jax.pmap(
    lambda u: lax.psum(u * u, "i", axis_index_groups=pairs), axis_name="i")(v)[1].sum())(x)
close(g, np.where(np.arange(4)[:, None] < 2, 2 * x, 0))
g = jax.grad(lambda v: jax.pmap(
    lambda u: lax.all_gather(u * u, "i", axis_index_groups=evens), axis_name="i")(v)[1].sum())(x)
close(g, np.where(np.arange(4)[:, None] % 2 == 1, 2 * x, 0))
import pytest
with pytest.raises(ValueError, match="exactly once"):
    jax.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(x)
with pytest.raises(ValueError, match="same size"):
    jax.pmap(lambda v: lax.all_gather(v, "i", axis_index_groups=[[0], [1, 2, 3]]), axis_name="i")(x)
"""

SEVERAL_AXES = """
from tracejit.sharding import AxisType
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
both = P(("x", "y"))
smap = lambda f: jax.shard_map(f, mesh=mesh, in_specs=both, out_specs=both)
perm = [(0, 3), (3, 1), (1, 2), (2, 0)]
permute = smap(lambda v: lax.ppermute(v, ("x", "y"), perm))
want = np.empty_like(x)
for source, destination in perm:
    want[destination] = x[source]
close(permute(x), want)
close(jax.jit(lambda u: permute(u) + 1)(x), want + 1)  # inside a larger program
text = str(jax.make_jaxpr(permute)(x))
assert "ppermute[\\n            axis_name=('x', 'y')\\n            perm=((0, 3), (3, 1), (1, 2), (2, 0))" in text, text
w = np.arange(16.0).reshape(4, 4)
grad = jax.grad(lambda v: (permute(v) * w).sum())(x)
close(grad, w[[3, 2, 0, 1]])  # each source gets its destination's weights
exchange = smap(lambda v: lax.all_to_all(v, ("x", "y"), 1, 1, tiled=True))
close(exchange(x), x.T)
close(jax.jit(lambda u: exchange(u) * 1)(x), x.T)
text = str(jax.make_jaxpr(exchange)(x))
assert "all_to_all[\\n            axis_index_groups=None\\n            axis_name=('x', 'y')" in text
stacked = smap(lambda v: lax.all_to_all(v, ("x", "y"), 1, 0))
close(stacked(x), x.T.reshape(16, 1))
close(jax.jit(lambda u: stacked(u) * 1)(x), x.T.reshape(16, 1))
"""

SOME_AXES = """
from tracejit.sharding import AxisType
import pytest
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
scaled = jax.shard_map(lambda v: v * lax.axis_index("x"), mesh=mesh, in_specs=P("x"),
                       out_specs=P("x"), axis_names={"x"})
want = x * np.repeat([0, 1], 2)[:, None]
close(scaled(x), want)
close(jax.jit(lambda u: scaled(u) + 0)(x), want)
text = str(jax.make_jaxpr(scaled)(x))
assert "jaxpr={ lambda ; c:f32[2,4]{V:x}. let" in text and "newly_manual_axes=frozenset({'x'})" in text
summed = jax.jit(jax.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x", None),
                               out_specs=P(), axis_names={"x"}))
close(summed(x), x[:2] + x[2:])
with pytest.raises(NameError, match="unbound axis name: y"):
    jax.shard_map(lambda v: lax.psum(v, "y"), mesh=mesh, in_specs=P("x"), out_specs=P(),
                  axis_names={"x"})(x)
with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
    jax.shard_map(lambda v: v, mesh=mesh, in_specs=P("y"), out_specs=P(), axis_names={"x"})(x)
"""

SMAP_PCAST_PBROADCAST = """
from tracejit.sharding import AxisType
import pytest
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
with jax.set_mesh(mesh):
    columns = jax.smap(lambda v: v * lax.axis_index("x"), in_axes=1, out_axes=1, axis_name="x")
    close(columns(x), x * np.repeat([0, 1], 2)[None, :])
    text = str(jax.make_jaxpr(columns)(x))
    assert "in_specs=(P(None, 'x'),)" in text and "newly_manual_axes=frozenset({'x'})" in text
    rows = jax.smap(lambda v, w: v + w, in_axes=(0, None), out_axes=0, axis_name="y")
    close(rows(x, np.ones(4, np.float32)), x + 1)
    summed = jax.smap(lambda v: lax.psum(v, "x"), in_axes=0, out_axes=None, axis_name="x")
    close(summed(x), x[:2] + x[2:])
    with pytest.raises(ValueError, match="to be a subset of"):
        jax.smap(lambda v: v, in_axes=0, out_axes=0, axis_name="z")(x)
    with pytest.raises(TypeError, match="in_axes was not specified"):
        jax.smap(lambda v: v, out_axes=0, axis_name="x")(x)
    sines = lambda v: jax.smap(jnp.sin, in_axes=0, out_axes=0, axis_name="x")(v).sum()
    close(jax.grad(sines)(x), np.cos(x))
with pytest.raises(ValueError, match="context mesh cannot be empty"):
    jax.smap(lambda v: v, in_axes=0, out_axes=0, axis_name="x")(x)
line = Mesh(np.array(jax.devices()), ("i",))
v = np.arange(8.0, dtype=np.float32)
cast = jax.shard_map(lambda a, b: a + lax.pcast(b, "i", to="varying"), mesh=line,
                     in_specs=(P("i"), P()), out_specs=P("i"))
close(cast(v, np.float32(1)), v + 1)
close(jax.grad(lambda b: cast(v, b).sum())(np.float32(1)), 8.0)
with pytest.raises(ValueError, match="Allowed `to` values"):
    jax.shard_map(lambda a: lax.pcast(a, "i", to="invariant"), mesh=line, in_specs=P("i"),
                  out_specs=P("i"))(v)
with pytest.raises(NameError):
    jax.shard_map(lambda a: lax.pcast(a, "j", to="varying"), mesh=line, in_specs=P("i"),
                  out_specs=P("i"))(v)
spread = jax.shard_map(lambda a: lax.pbroadcast(a, "i", source=2), mesh=line, in_specs=P("i"),
                       out_specs=P("i"))
close(spread(v), np.tile(v[4:6], 4))
close(jax.pmap(lambda a: lax.pbroadcast(a, "i", source=1), axis_name="i")(v.reshape(4, 2)),
      np.tile(v[2:4], (4, 1)))
close(jax.grad(lambda a: (spread(a) * np.arange(8.0)).sum())(v), [0, 0, 0, 0, 12, 16, 0, 0])
"""

SOURCES = {
    "groups": GROUPS,
    "several axes": SEVERAL_AXES,
    "some axes": SOME_AXES,
    "smap, pcast, pbroadcast": SMAP_PCAST_PBROADCAST,
}


@needs_plugin
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_on_devices(name):
    run_with_devices(SOURCES[name])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_on_the_numpy_platform(name):
    run_with_devices(SOURCES[name], platform="numpy")
