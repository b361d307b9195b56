"""`lax.ragged_all_to_all`: each member sends ragged slices of its operand to the others,
which write them into their `output` (JAX 0.10.2's docstring is the specification).

JAX's printouts and errors are recorded by `make_jax_reference_ragged.py`; JAX gives no values
on CPU (its XLA:CPU cannot compile a ragged all-to-all), so the values are checked against the
docstring's loop (`ragged_cases.reference`) on random ragged patterns with empty slices, under
shard_map (eager and jitted), pmap, vmap with axis_name, axis_index_groups and two mesh axes,
on devices and on the NumPy platform. Its derivatives are those of a linear function of
`operand` and `output`, transposed as JAX transposes it."""

import json
import os
import re

import numpy as np
import pytest
from distributed.test_distributed import launch, needs_mpi
from parallel.devices import needs_plugin, run_with_devices
from parallel.ragged_cases import DOCSTRING_EXAMPLE, grouped_pattern, ragged_pattern, reference

import tracejit as jax
from tracejit import lax

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "data", "ragged_all_to_all.json")) as _file:
    JAX_ANSWERS = json.load(_file)

EXAMPLE = [np.asarray(DOCSTRING_EXAMPLE[name]) for name in (
    "operand", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes"
)]  # fmt: skip
EXAMPLE = [EXAMPLE[0].astype(np.float32), EXAMPLE[1].astype(np.float32), *EXAMPLE[2:]]


def ragged(*args, **params):
    return lax.ragged_all_to_all(*args, axis_name="x", **params)


@pytest.fixture(scope="module")
def answers():
    out = run_with_devices(
        f"""
        import json, sys
        sys.path.insert(0, {HERE!r})
        from ragged_cases import run_all
        print(json.dumps(run_all(jax, jnp, lax, P)))
        """,
        platform="numpy",
    )
    return json.loads(out)


def sorted_sets(text: str) -> str:
    """The printout with each frozenset's members sorted: Python prints them in its string
    hashes' order, which differs between processes (JAX's printouts too)."""
    members = lambda m: ", ".join(sorted(m.group(1).split(", ")))
    return re.sub(r"frozenset\(\{([^}]*)\}\)", lambda m: f"frozenset({{{members(m)}}})", text)


# JAX types the result as varying where `output` does, whatever the operand's type (a result
# that differs between members typed as the same on all); tracejit types it as varying where
# any operand does, with a pvary of `output` before the exchange
UNSOUND_IN_JAX = pytest.mark.xfail(strict=True, reason="JAX types the result as output's")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[UNSOUND_IN_JAX] if n == "replicated_output" else [])
        for n in sorted(JAX_ANSWERS)
    ],
)
def test_printouts_and_errors_are_jax_s(answers, name):
    assert sorted_sets(answers[name]) == sorted_sets(JAX_ANSWERS[name])


# --- values under vmap with axis_name (any platform, one device) ------------------------------
# (JAX 0.10.2 raises NotImplementedError here; tracejit carries it out by the same composite
# that the NumPy platform's shard_map and the lowering use)


def test_docstring_example_under_vmap():
    got = jax.vmap(ragged, axis_name="x")(*EXAMPLE)
    np.testing.assert_array_equal(np.asarray(got), DOCSTRING_EXAMPLE["result"])
    assert got.dtype == np.float32


@pytest.mark.parametrize("members,per_member", [(1, 1), (2, 1), (3, 2), (4, 3)])
@pytest.mark.parametrize(
    "dtype,trailing",
    [(np.float32, ()), (np.int32, (3,)), (np.bool_, ()), (np.complex64, (2, 2))],
)
def test_vmap_with_axis_name_matches_the_docstring_loop(members, per_member, dtype, trailing):
    rng = np.random.default_rng(members * 10 + per_member)
    args = ragged_pattern(rng, members, per_member, trailing, dtype)
    want = np.stack(reference(*args))
    got = jax.vmap(ragged, axis_name="x")(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(jax.vmap(ragged, axis_name="x"))(*args)
    np.testing.assert_array_equal(np.asarray(jitted), want)


def test_overlapping_slices_are_written_in_entry_order():
    """Outside the caller's promise but defined by the docstring's loop: the later entry wins."""
    operand = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    output = np.zeros((2, 3), np.float32)
    offsets = np.array([[0, 1], [0, 0]], np.int32)
    sizes = np.array([[2, 2], [2, 2]], np.int32)
    args = (operand, output, offsets, sizes, np.array([[0, 0], [1, 1]], np.int32), sizes)
    got = jax.vmap(ragged, axis_name="x")(*args)
    np.testing.assert_array_equal(np.asarray(got), np.stack(reference(*args)))


def test_axis_index_groups_under_vmap():
    args, groups = grouped_pattern(np.random.default_rng(7))
    want = np.stack(reference(*args, groups=groups))
    got = jax.vmap(lambda *a: ragged(*a, axis_index_groups=groups), axis_name="x")(*args)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_an_output_the_same_on_every_member():
    in_axes = (0, None, 0, 0, 0, 0)
    got = jax.vmap(ragged, axis_name="x", in_axes=in_axes)(EXAMPLE[0], EXAMPLE[1][0], *EXAMPLE[2:])
    np.testing.assert_array_equal(np.asarray(got), DOCSTRING_EXAMPLE["result"])


# --- on devices: shard_map, pmap, groups, two mesh axes ---------------------------------------

ON_DEVICES = f"""
import sys
sys.path.insert(0, {HERE!r})
from ragged_cases import DOCSTRING_EXAMPLE, grouped_pattern, ragged_pattern, reference
from tracejit.sharding import AxisType
auto = AxisType.Auto
rng = np.random.default_rng(0)
flat = lambda a: a.reshape(-1, *a.shape[2:])

def check(fun, args, groups=None, mapped_by_pmap=True):
    want = np.stack(reference(*args, groups=groups))
    if mapped_by_pmap:
        got = fun(*args)
    else:
        got = fun(*map(flat, args)).reshape(want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)

ragged = lambda *a, **k: lax.ragged_all_to_all(*a, axis_name="x", **k)
for members in (2, 4):
    mesh = jax.make_mesh((members,), ("x",), axis_types=(auto,))
    sharded = jax.shard_map(ragged, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    for per_member, dtype, trailing in [(1, np.float32, ()), (2, np.int32, (3,)),
                                        (3, np.bool_, ()), (2, jnp.bfloat16, (2,)),
                                        (1, np.complex64, ())]:
        args = ragged_pattern(rng, members, per_member, trailing, dtype)
        check(sharded, args, mapped_by_pmap=False)
        check(jax.jit(sharded), args, mapped_by_pmap=False)
        check(jax.pmap(ragged, axis_name="x"), args)

example = [np.asarray(DOCSTRING_EXAMPLE[k]) for k in ("operand", "output", "input_offsets",
           "send_sizes", "output_offsets", "recv_sizes")]
example = [example[0].astype(np.float32), example[1].astype(np.float32), *example[2:]]
check(jax.pmap(ragged, axis_name="x"), example)

args, groups = grouped_pattern(rng)
grouped = lambda *a: ragged(*a, axis_index_groups=groups)
check(jax.pmap(grouped, axis_name="x"), args, groups)
mesh = jax.make_mesh((4,), ("x",), axis_types=(auto,))
check(jax.jit(jax.shard_map(grouped, mesh=mesh, in_specs=P("x"), out_specs=P("x"))), args,
      groups, mapped_by_pmap=False)

square = jax.make_mesh((2, 2), ("x", "y"), axis_types=(auto, auto))
both = jax.shard_map(lambda *a: lax.ragged_all_to_all(*a, axis_name=("x", "y")), mesh=square,
                     in_specs=P(("x", "y")), out_specs=P(("x", "y")))
args = ragged_pattern(rng, 4, 2, (2,))
check(both, args, mapped_by_pmap=False)
check(jax.jit(both), args, mapped_by_pmap=False)
"""


@needs_plugin
def test_values_on_devices_match_the_docstring_loop():
    run_with_devices(ON_DEVICES)


def test_values_on_the_numpy_platform_match_the_docstring_loop():
    run_with_devices(ON_DEVICES, platform="numpy")


# --- derivatives ------------------------------------------------------------------------------

GRADIENTS = f"""
import sys
sys.path.insert(0, {HERE!r})
from ragged_cases import ragged_pattern, reference
from tracejit.sharding import AxisType
from tracejit.test_util import check_grads
jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(1)
mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
operand, output, *indices = ragged_pattern(rng, 4, 2, (2,), np.float64)
weights = rng.normal(size=output.shape)
flat = lambda a: a.reshape(-1, *a.shape[2:])
spec = P("x")
ragged = lambda u, v, *i: lax.ragged_all_to_all(u, v, *i, axis_name="x")
exchange = jax.shard_map(ragged, mesh=mesh, in_specs=spec, out_specs=spec)
f = lambda u, v: exchange(u, v, *map(flat, indices))
check_grads(f, (flat(operand), flat(output)), order=2, modes=("fwd", "rev"))

# the cotangents, from the loop: an output row keeps its cotangent unless a slice overwrote
# it; a sent row gets the cotangent of the row it was written to
rows = [np.arange(len(o), dtype=np.float64)[:, None] + 0 * o for o in operand]
written = np.stack(reference(rows, [0 * o - 1 for o in output], *indices)) >= 0
want_output = np.where(written, 0, weights)
want_operand = np.zeros_like(operand)
for source in range(4):
    only = [r if s == source else np.full_like(r, -1) for s, r in enumerate(rows)]
    for receiver, got in enumerate(reference(only, [0 * o - 1 for o in output], *indices)):
        hit = got >= 0
        cols = np.nonzero(hit)[1]
        np.add.at(want_operand[source], (got[hit].astype(int), cols), weights[receiver][hit])

loss = lambda u, v, w, *i: (ragged(u, v, *i) * w).sum()
inside = jax.shard_map(jax.grad(loss, (0, 1)), mesh=mesh, in_specs=spec, out_specs=spec)
outside = jax.grad(lambda u, v: (f(u, v) * flat(weights)).sum(), (0, 1))
for grads in (outside(flat(operand), flat(output)),
              inside(flat(operand), flat(output), flat(weights), *map(flat, indices)),
              jax.jit(inside)(flat(operand), flat(output), flat(weights), *map(flat, indices))):
    np.testing.assert_array_equal(np.asarray(grads[0]), flat(want_operand))
    np.testing.assert_array_equal(np.asarray(grads[1]), flat(want_output))
"""


def test_derivatives_are_those_of_a_linear_exchange():
    run_with_devices(GRADIENTS, platform="numpy")


@needs_plugin
def test_derivatives_on_devices():
    run_with_devices(GRADIENTS)


# --- bad input --------------------------------------------------------------------------------


def test_outside_a_mapped_context_it_is_jax_s_runtime_error():
    with pytest.raises(RuntimeError, match="must be used within a mapped context"):
        lax.ragged_all_to_all(*(a[0] for a in EXAMPLE), axis_name="x")


def test_an_unbound_axis_under_jit_is_jax_s_name_error():
    with pytest.raises(NameError, match="Found an unbound axis name: x"):
        jax.jit(ragged)(*(a[0] for a in EXAMPLE))


def named(*args, **params):
    return jax.vmap(lambda *a: ragged(*a, **params), axis_name="x")(*args)


@pytest.mark.parametrize(
    "position,value,error,words",
    [
        (2, EXAMPLE[2].astype(np.float32), ValueError, "input_offsets must be integer type"),
        (5, EXAMPLE[5].astype(np.float32), ValueError, "recv_sizes must be integer type"),
        (3, EXAMPLE[3][:, None], ValueError, r"send_sizes must be rank 1 .* shape \(1, 2\)"),
        (4, EXAMPLE[4][:, :0], ValueError, r"output_offsets must be rank 1 .* shape \(0,\)"),
        (1, EXAMPLE[1].astype(np.int32), TypeError, "same dtype, got float32 and int32"),
        (1, EXAMPLE[1][:, :, None], ValueError, r"shapes \(3,\) and \(4, 1\)"),
        (0, EXAMPLE[0][:, 0], ValueError, r"rank at least 1 .* shapes \(\) and \(4,\)"),
        (3, EXAMPLE[3][:, :1], ValueError, r"one length, a multiple of the 2 members"),
    ],
)
def test_bad_operands_get_jax_s_errors(position, value, error, words):
    """JAX checks the index operands' dtypes and ranks when tracing; its XLA checks the rest
    when compiling, tracejit when tracing."""
    args = list(EXAMPLE)
    args[position] = value
    with pytest.raises(error, match=words):
        named(*args)


def test_three_entries_do_not_divide_over_two_members():
    args = [*EXAMPLE[:2], *(np.concatenate([a, a[:, :1]], 1) for a in EXAMPLE[2:])]
    with pytest.raises(ValueError, match=r"a multiple of the 2 members of axis \('x',\)"):
        named(*args)


def test_groups_must_cover_the_members():
    with pytest.raises(ValueError, match="exactly once"):
        named(*EXAMPLE, axis_index_groups=[[0]])


def test_vmap_over_an_unnamed_axis_is_not_built():
    """JAX 0.10.2 has no batching rule either (its vmap fails with an AssertionError)."""
    body = jax.vmap(lambda u: ragged(u, *[a[0] for a in EXAMPLE[1:]]))
    with pytest.raises(NotImplementedError, match=r"\[vmap\] ragged_all_to_all"):
        jax.vmap(body, axis_name="x", in_axes=None, axis_size=2)(np.ones((3, 3), np.float32))


# --- across processes ------------------------------------------------------------------------


@needs_mpi
def test_values_across_two_processes():
    """The composite's collectives exchange across the processes (`tracejit.distributed`)."""
    out = launch(os.path.join(HERE, "worker_ragged.py"))
    assert out.stdout.count("ragged across processes: ok") == 2, out.stdout + out.stderr[-4000:]
