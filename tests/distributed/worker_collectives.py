"""Run by test_distributed.py under `mpiexec -n 2`, with 2 CPU devices per process (and with
1, the second of 2 that `JAX_LOCAL_DEVICE_IDS=1` leaves visible): pmap over every process's devices, every collective compared with NumPy on the gathered
inputs. Writes each check that holds to `$TRACEJIT_TEST_REPORTS/<process>.txt`; a failing one
raises, which aborts the job.
"""

import functools
import os
import warnings

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import spmd
from tracejit.experimental import multihost_utils

jax.distributed.initialize(heartbeat_timeout_seconds=60)  # (a loaded machine compiles slowly)
p, n = jax.process_index(), jax.process_count()
local = jax.local_device_count()
size = n * local  # the pmap axis spans every process's devices
mine = slice(p * local, (p + 1) * local)  # this process's members


def passed(check: str) -> None:
    with open(os.path.join(os.environ["TRACEJIT_TEST_REPORTS"], f"{p}.txt"), "a") as report:
        report.write(f"{check}\n")


def close(actual, expected, dtype=np.float32, rtol=1e-6) -> None:
    actual = np.asarray(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-6)


# devices and processes
ids = [d.id for d in jax.devices()]
assert ids == [q * 2048 + i for q in range(n) for i in range(local)], ids
assert [d.process_index for d in jax.devices()] == [q for q in range(n) for _ in range(local)]
assert jax.local_devices() == [d for d in jax.devices() if d.process_index == p]
assert jax.local_devices(process_index=1 - p) == [
    d for d in jax.devices() if d.process_index == 1 - p
]
assert (n, jax.device_count(), jax.process_indices()) == (2, size, [0, 1])
assert all(isinstance(d, jax.Device) for d in jax.devices())
passed("devices")
if "JAX_LOCAL_DEVICE_IDS" in os.environ:  # "1": of its 2 CPU devices, each process keeps one
    assert local == 1 and jax.devices()[p].id == 2048 * p, jax.devices()
    passed("local_device_ids")

# each process makes its own members' data; the global array is what process_allgather gives
rng = np.random.default_rng(p)
x_local = rng.standard_normal((local, 4, 6)).astype(np.float32)
x = multihost_utils.process_allgather(x_local, tiled=True)  # (size, 4, 6), members in order
assert x.shape == (size, 4, 6) and np.array_equal(x[mine], x_local)
passed("process_allgather")


def pmapped(f):
    return np.asarray(jax.pmap(f, axis_name="i")(x_local))


close(pmapped(lambda v: lax.psum(v, "i")), np.broadcast_to(x.sum(0), (local, 4, 6)), rtol=1e-5)
passed("psum")
close(pmapped(lambda v: lax.pmax(v, "i")), np.broadcast_to(x.max(0), (local, 4, 6)))
passed("pmax")
close(pmapped(lambda v: lax.pmin(v, "i")), np.broadcast_to(x.min(0), (local, 4, 6)))
passed("pmin")
close(pmapped(lambda v: lax.pmean(v, "i")), np.broadcast_to(x.mean(0), (local, 4, 6)), rtol=1e-5)
passed("pmean")
counts = np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), "i")(np.arange(local) + 10 * p))
expected = n * sum(range(local)) + 10 * local * sum(range(n))
assert counts.dtype == np.int32 and counts.tolist() == [expected] * local
passed("psum int32")
psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")  # one pmap, two dtypes of one shape
assert np.asarray(psum(np.ones((local, 3), np.float32))).dtype == np.float32
ints = np.asarray(psum(np.ones((local, 3), np.int32)))
assert ints.dtype == np.int32 and (ints == size).all(), ints
passed("another dtype, same shape")
# a large message (from 64 KB) is reduced in shares (a process each) and gathered: the same
# bits in every process, as with a small one
large = rng.standard_normal((local, 3, 30001)).astype(np.float32)
out = np.asarray(psum(large))
everywhere = multihost_utils.process_allgather(out)
assert all(np.array_equal(e, everywhere[0]) for e in everywhere)
close(
    out,
    np.broadcast_to(multihost_utils.process_allgather(large, tiled=True).sum(0), out.shape),
    rtol=1e-5,
)
passed("psum large")
halves = np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), "i")(x_local.astype(np.float16)))
close(halves, np.broadcast_to(x.astype(np.float16).sum(0), halves.shape), np.float16, 1e-2)
passed("psum float16")
pair = jax.pmap(lambda v: lax.psum({"a": v, "b": 2 * v}, "i"), "i")(x_local)
close(pair["b"], 2 * np.broadcast_to(x.sum(0), (local, 4, 6)), rtol=1e-5)
passed("psum pytree")

# a donated operand: the result takes its buffer, and with one device per process the exchange
# runs in place on it (the custom call's result aliases its operand); the same bits as without
# donation (small, in shares from 64 KB, in huge pages from 4 MiB), and the donated Array is
# deleted afterwards, as in JAX. A NumPy argument is copied, never overwritten.
identity = jax.pmap(lambda v: v, "i")
for shape in [(local, 4, 6), (local, 3, 30001), (local, 1 << 20)]:
    for collective in (lax.psum, lax.pmax):
        value = rng.standard_normal(shape).astype(np.float32)
        reduce = functools.partial(collective, axis_name="i")
        kept = np.asarray(jax.pmap(reduce, "i")(value))
        donating = jax.pmap(reduce, "i", donate_argnums=0)
        operand = identity(value)
        result = donating(operand)
        assert operand.is_deleted()
        assert np.array_equal(np.asarray(result), kept)
        again = donating(result)  # (a result donated back: as a training loop does)
        assert result.is_deleted() and np.array_equal(again, np.asarray(donating(identity(kept))))
        copy = value.copy()
        assert np.array_equal(np.asarray(donating(value)), kept) and np.array_equal(value, copy)
in_place = ["output_operand_aliases" in p.text for p in spmd._programs.values()]
assert any(in_place) == (local == 1), in_place
total = jax.pmap(lambda v: lax.psum(jnp.sum(v), "i"), "i", donate_argnums=0)
with warnings.catch_warnings(record=True) as caught:  # a donation no output can take: JAX's
    warnings.simplefilter("always")  # warning, at the caller's line, when compiled
    total(identity(value)), total(identity(value))
assert [(str(w.message).split(":")[0], w.filename) for w in caught] == [
    ("Some donated buffers were not usable", __file__)
], caught
passed("psum donated")

close(pmapped(lambda v: lax.all_gather(v, "i")), np.broadcast_to(x, (local, size, 4, 6)))
passed("all_gather")
tiled = np.concatenate(list(x), axis=1)
close(pmapped(lambda v: lax.all_gather(v, "i", axis=1, tiled=True)), np.stack([tiled] * local))
passed("all_gather tiled")

summed = x.sum(0)  # (4, 6): member j keeps block j of rows
blocks = summed.reshape(size, 4 // size, 6)[mine]
close(pmapped(lambda v: lax.psum_scatter(v, "i", tiled=True)), blocks, rtol=1e-5)
passed("psum_scatter")
close(
    pmapped(lambda v: lax.psum_scatter(v[:size], "i", scatter_dimension=0)),
    summed[mine],
    rtol=1e-5,
)
passed("psum_scatter untiled")

# all_to_all: member j receives block j (along axis 0) of every member, stacked along axis 1
a2a = pmapped(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))
b = 4 // size
expected = np.stack(
    [np.concatenate([x[k][j * b : (j + 1) * b] for k in range(size)], axis=1) for j in range(size)]
)
close(a2a, expected[mine])
passed("all_to_all")

shift = [(j, (j + 1) % size) for j in range(size)]  # crosses the processes both ways
close(pmapped(lambda v: lax.ppermute(v, "i", shift)), np.roll(x, 1, axis=0)[mine])
passed("ppermute")
partial = [(0, size - 1)]  # members nobody sends to get zeros
expected = np.zeros_like(x)
expected[size - 1] = x[0]
close(pmapped(lambda v: lax.ppermute(v, "i", partial)), expected[mine])
passed("ppermute partial")

index = np.asarray(jax.pmap(lambda v: lax.axis_index("i"), "i")(x_local))
assert index.dtype == np.int32 and index.tolist() == list(range(size))[mine]
passed("axis_index")


# several collectives in one program, one inside a loop (the same exchange, again and again)
def loop(v):
    return lax.fori_loop(0, 3, lambda _, c: lax.psum(c, "i") / size, v) + lax.pmax(v, "i")


close(pmapped(loop), np.broadcast_to(x.mean(0) + x.max(0), (local, 4, 6)), rtol=1e-5)
passed("loop")
close(
    pmapped(jax.jit(lambda v: lax.psum(jnp.sin(v), "i"))), np.sin(x).sum(0)[None].repeat(local, 0)
)
passed("jit inside pmap")


# gradients: the transposes of the collectives are collectives across the processes too
def loss(v):
    return jnp.sum(v * lax.psum(v, "i")) + jnp.sum(lax.all_gather(v, "i")[0] ** 2)


grads = pmapped(jax.grad(loss))
expected = np.broadcast_to(2 * x.sum(0), x.shape).copy()  # d/dv_j sum_k v_k . S, summed over k
expected[0] += size * 2 * x[0]  # every member's loss reads member 0's value
close(grads, expected[mine], rtol=1e-5)
passed("grad")

# processes that bring different shapes to a collective fail, each naming both
try:
    jax.pmap(lambda v: lax.psum(v, "i"), "i")(np.ones((local, 3 + p), np.float32))
except Exception as error:  # noqa: BLE001 (XlaRuntimeError, with the cause chained)
    message = str(error)
    assert "process 0: psum of float32[3]" in message, message
    assert "process 1: psum of float32[4]" in message, message
    passed("mismatched shapes")
else:
    raise AssertionError("different shapes in the processes went unnoticed")

# under a transformation (jit, grad, vmap, make_jaxpr), JAX maps a pmap over this process's own
# devices, its collectives among them alone: the same program in each process
psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")
local_sum = np.broadcast_to(x_local.sum(0), x_local.shape)
close(jax.jit(psum)(x_local), local_sum, rtol=1e-5)
close(jax.grad(lambda v: jnp.sum(psum(v)))(x_local), np.full_like(x_local, local))
close(jax.vmap(psum)(np.stack([x_local, 2 * x_local])), np.stack([local_sum, 2 * local_sum]))
index = jax.jit(jax.pmap(lambda v: lax.axis_index("i"), "i"))(x_local)
assert np.asarray(index).tolist() == list(range(local)), index
assert "psum[axes=('i',)" in str(jax.make_jaxpr(psum)(x_local))
close(psum(x_local), np.broadcast_to(x.sum(0), x_local.shape), rtol=1e-5)  # (top level again)
passed("transformed pmap is per process")

# a pmap inside a pmap is JAX's ValueError (the inner mesh is not the context mesh)
try:
    jax.pmap(jax.pmap(lambda v: lax.psum(v, ("i", "j")), "j"), "i")(x_local[:, None])
except ValueError as error:
    assert f"The context mesh AbstractMesh('i': {size}, axis_types=(Manual,)" in str(error)
    assert "should match the mesh passed to shard_map Mesh('j': 1," in str(error), error
    passed("nested pmap")

# what is not built says so
try:
    jax.pmap(lambda v: v, "i")(np.ones((local + 1, 3), np.float32))
except ValueError as error:
    assert "one member per" in str(error), error
else:
    raise AssertionError("a pmap over fewer members than local devices ran")
mesh = jax.sharding.Mesh(np.array(jax.devices()), ("i",))
rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("i"))
for unbuilt in (
    lambda: jax.shard_map(lambda v: v, mesh=mesh, in_specs=rows.spec, out_specs=rows.spec)(x),
    lambda: jax.jit(lambda v: 2 * v, in_shardings=rows)(x),
    lambda: jax.jit(lambda v: 2 * v, out_shardings=rows)(x),
    lambda: jax.device_put(x, rows),
):
    try:
        unbuilt()
    except NotImplementedError as error:
        assert "other processes' devices" in str(error), error
    else:
        raise AssertionError("a program over other processes' devices ran")
passed("not built")

# host values across the processes
out = multihost_utils.broadcast_one_to_all({"a": np.arange(3) + p, "b": np.float32(p + 1)})
assert out["a"].tolist() == [0, 1, 2] and out["b"] == 1
assert multihost_utils.broadcast_one_to_all(np.int32(p), is_source=p == 1) == 1
passed("broadcast_one_to_all")
multihost_utils.sync_global_devices("end")
multihost_utils.assert_equal(np.arange(3))
try:
    multihost_utils.assert_equal(np.int32(p), "differ:")
except AssertionError as error:
    assert "differ:" in str(error)
    passed("assert_equal")
jax.distributed.shutdown()
assert not jax.distributed.is_initialized()
passed("shutdown")
