"""tracejit.distributed: all-reduce across 2 processes against MPI's own, and a data-parallel
SGD step on 1 process x 2 devices against 2 processes x 1 device.

    python bench/distributed.py [--out bench/results/distributed.json]

(a) all-reduce latency and bandwidth: `pmap(lambda v: psum(v, 'i'))` over 2 processes of one
    CPU device each (`mpiexec -n 2`), float32 messages of 4 B to 64 MB already on the device,
    result ready ("tracejit"), against mpi4py's `Allreduce` of NumPy arrays of the same size
    between the same two processes, in three forms: into a fresh array per call ("MPI fresh":
    like a call that returns a new result, so the issue's goal is judged by it), in place
    (`MPI.IN_PLACE`), and into one preallocated array ("prealloc", the column reported until
    stop 29). "donated": the same psum with its argument donated (`donate_argnums=0`, each
    result donated back, as a training loop does), which runs in place, against mpi4py in
    place. The difference is what tracejit adds to MPI (the program's launch, the host
    callback, the rendezvous of the replicas, the fresh result buffer): goal (issue 22) at
    most 20 µs per call, and 10% at 64 MB. "XLA's op": the operand is computed by XLA (its
    own 4 KiB pages) rather than by an exchange (huge pages). "same msgs": tracejit's exchange
    itself (the same point-to-point messages, `distributed_collectives.allreduce`) on NumPy
    arrays, outside any program: MPICH's Allreduce takes another, slower route here from
    about 1 MB, so at 64 MB this, not MPI's Allreduce, is the floor of ours. Bandwidth is the
    message size over the time of one call.
(b) the cost of one exchange inside a program: 64 dependent psums of 4 B in one pmapped
    program, per psum, across the 2 processes and in one process (XLA alone).
(c) one SGD step of the MLP of bench/pmap.py (784-512-512-10, float32, global batch 256,
    gradients averaged with `pmean`) in a training loop: one process of 2 devices (the
    collectives stay in XLA) against two processes of 1 device each (each collective is an MPI
    call), and the single-device jitted step on the whole batch.
"pmap alone" is the same pmapped psum in one process of one device (no MPI): the launch of
the program, and at 64 MB XLA's copy into a fresh result in 4 KiB pages. On a machine whose
cores other work shares, the two processes also wait for each other's scheduling, which
lands in the overhead too: the rounds of every column alternate, so that all meet the same
load, and "of minima" is the overhead between the fastest rounds (the least disturbed). The
two largest messages are measured again with glibc keeping the memory freed
(`KEEP_FREED_MEMORY`): each call's fresh result buffer then reuses the last one's pages
instead of faulting in new ones. Medians over rounds. Prints a table, writes JSON. Needs
mpi4py and mpiexec (`tracejit[mpi]`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

COMMON = r"""
import json, statistics, time, itertools
import numpy as np
import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

def median_time(fn, rounds=7, number=10):
    jax.block_until_ready(fn())
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            out = fn()
        jax.block_until_ready(out)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)
"""

CHAINED = 64

ALLREDUCE = r"""
if MULTI:
    jax.distributed.initialize()
    from mpi4py import MPI
    from tracejit._src import distributed_collectives
    comm = MPI.COMM_WORLD
psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")
donating = jax.pmap(lambda v: lax.psum(v, "i"), "i", donate_argnums=0)
copy = jax.pmap(lambda v: v * 2, "i")

def per_call(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        out = fn()
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / number

rows = []
for size in SIZES:
    n = max(size // 4, 1)
    number = max(1, min(200, 2_000_000 // size))
    rounds = 9 if size < 2**24 else 5
    v = psum(np.zeros((1, n), np.float32))  # (compiled, and on the device)
    per_call(lambda: psum(v), 1)
    if not MULTI:
        ours = [per_call(lambda: psum(v), number) for _ in range(rounds)]
        rows.append({"bytes": 4 * n, "pmap_alone_us": 1e6 * statistics.median(ours)})
        continue
    w = copy(np.zeros((1, n), np.float32))  # an operand XLA computed (its own 4 KiB pages)
    state = [psum(np.zeros((1, n), np.float32))]
    def donated():  # (each result donated back, as a training loop does)
        state[0] = donating(state[0])
        return state[0]
    send, recv, inout = (np.zeros(n, np.float32) for _ in range(3))
    def preallocated():
        comm.Allreduce(send, recv)
        return recv
    def fresh():
        out = np.empty_like(send)
        comm.Allreduce(send, out)
        return out
    def in_place():
        comm.Allreduce(MPI.IN_PLACE, inout)
        return inout
    def same_messages():  # tracejit's exchange on NumPy arrays, outside any program
        out = np.empty_like(send)
        distributed_collectives.allreduce(send, "sum", 0, "psum", out)
        return out
    cases = {
        "tracejit": lambda: psum(v),
        "tracejit_xla_operand": lambda: psum(w),
        "tracejit_donated": donated,
        "mpi4py": preallocated,
        "mpi4py_fresh": fresh,
        "mpi4py_in_place": in_place,
        "same_messages": same_messages,
    }
    for fn in cases.values():
        per_call(fn, 1)
    times = {name: [] for name in cases}
    for _ in range(rounds):  # (alternated, so that all meet the same load)
        for name, fn in cases.items():
            comm.Barrier()
            times[name].append(per_call(fn, number))
    row = {"bytes": 4 * n}
    for name, measured in times.items():
        row[name + "_us"] = 1e6 * statistics.median(measured)
        row[name + "_min_us"] = 1e6 * min(measured)
    rows.append(row)

def chain(v):  # CHAINED dependent psums in one program: the cost of one exchange, launch apart
    for _ in range(CHAINED):
        v = lax.psum(v, "i") * 0.5
    return v
chained = jax.pmap(chain, "i")
v = chained(np.ones((1, 1), np.float32))
per_exchange = median_time(lambda: chained(v), 7, 20) / CHAINED
if jax.process_index() == 0:
    print(json.dumps({"rows": rows, "chained_psum_us": 1e6 * per_exchange}))
"""

STEP = r"""
if MULTI:
    jax.distributed.initialize()
rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(jnp.asarray(rng.normal(0, 0.05, (m, n)).astype(np.float32)),
           jnp.zeros(n, jnp.float32)) for m, n in itertools.pairwise(sizes)]
xs = rng.normal(size=(256, 784)).astype(np.float32)
ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]

def loss(p, x, y):
    for w, b in p[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = p[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b) * y, axis=1))

def update(p, g):
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

members, local = jax.device_count(), jax.local_device_count()
if members == 1:
    step = jax.jit(lambda p, x, y: update(p, jax.grad(loss)(p, x, y)))
    batch = (jnp.asarray(xs), jnp.asarray(ys))
else:
    step = jax.pmap(lambda p, x, y: update(p, lax.pmean(jax.grad(loss)(p, x, y), "i")),
                    axis_name="i", in_axes=(None, 0, 0), out_axes=None)
    mine = slice(jax.process_index() * local, (jax.process_index() + 1) * local)
    batch = (xs.reshape(members, -1, 784)[mine], ys.reshape(members, -1, 10)[mine])
state = [params]
def one():
    state[0] = step(state[0], *batch)
    return state[0]
ms = 1e3 * median_time(one)
if jax.process_index() == 0:
    print(json.dumps({"step_ms": ms}))
"""

SIZES = [4, 64, 1024, 16 * 1024, 256 * 1024, 4 * 2**20, 64 * 2**20]


def _mpiexec() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("mpiexec not found: pip install 'tracejit[mpi]'")
    return found


# glibc's malloc keeping the memory programs free, instead of giving each large buffer back to
# the kernel (which then faults in and zeroes the pages of the next one): an environment
# setting of the process, not tracejit's
KEEP_FREED_MEMORY = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(2**40)}


def run(code: str, processes: int, devices: int, **extra_env) -> object:
    env = dict(os.environ, TRACEJIT_NUM_CPU_DEVICES=str(devices), **extra_env)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(src), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-c", COMMON + code]
    if processes > 1:
        command = [_mpiexec(), "-n", str(processes), *command]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def _overheads(row: dict) -> dict:
    """Each tracejit call against its like in MPI: a fresh result against mpi4py's Allreduce
    into a fresh array, a donated operand against mpi4py's in place."""
    for ours, theirs, key in [
        ("tracejit", "mpi4py_fresh", "overhead"),
        ("tracejit_donated", "mpi4py_in_place", "donated_overhead"),
    ]:
        row[f"{key}_us"] = row[f"{ours}_us"] - row[f"{theirs}_us"]
        row[f"{key}_fraction"] = row[f"{key}_us"] / row[f"{theirs}_us"]
        row[f"{key}_of_minima_us"] = row[f"{ours}_min_us"] - row[f"{theirs}_min_us"]
    row["tracejit_gb_per_s"] = row["bytes"] / row["tracejit_us"] / 1e3
    return row


_COLUMNS = [  # (heading, key, width, format): µs unless said
    ("bytes", "bytes", 10, "d"),
    ("tracejit", "tracejit_us", 10, ".1f"),
    ("XLA's op", "tracejit_xla_operand_us", 10, ".1f"),
    ("donated", "tracejit_donated_us", 10, ".1f"),
    ("MPI fresh", "mpi4py_fresh_us", 10, ".1f"),
    ("in place", "mpi4py_in_place_us", 10, ".1f"),
    ("prealloc", "mpi4py_us", 10, ".1f"),
    ("same msgs", "same_messages_us", 10, ".1f"),
    ("pmap alone", "pmap_alone_us", 11, ".1f"),
    ("overhead", "overhead_us", 10, ".1f"),
    ("", "overhead_fraction", 6, ".0%"),
    ("of minima", "overhead_of_minima_us", 10, ".1f"),
    ("donated", "donated_overhead_us", 10, ".1f"),
    ("", "donated_overhead_fraction", 6, ".0%"),
    ("GB/s", "tracejit_gb_per_s", 7, ".2f"),
]


def _print_rows(rows) -> None:
    print("".join(f"{heading:>{width}}" for heading, _, width, _ in _COLUMNS))
    for row in rows:
        print(
            "".join(
                f"{row[key]:>{width}{form}}" if key in row else " " * width
                for _, key, width, form in _COLUMNS
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    code = ALLREDUCE.replace("CHAINED", str(CHAINED))
    multi, single = (
        run(code.replace("SIZES", repr(SIZES)).replace("MULTI", "True"), 2, 1),
        run(code.replace("SIZES", repr(SIZES)).replace("MULTI", "False"), 1, 1),
    )
    large = SIZES[-2:]
    kept = run(
        code.replace("SIZES", repr(large)).replace("MULTI", "True"), 2, 1, **KEEP_FREED_MEMORY
    )
    allreduce, alone = multi["rows"], single["rows"]
    for r, a in zip(allreduce, alone, strict=True):
        r["pmap_alone_us"] = a["pmap_alone_us"]
        _overheads(r)
    _print_rows(allreduce)
    print(
        "\nglibc keeping freed memory ("
        + " ".join(f"{k}={v}" for k, v in KEEP_FREED_MEMORY.items())
        + "):"
    )
    for r in kept["rows"]:
        _overheads(r)
    _print_rows(kept["rows"])
    chained = {
        "across_2_processes_us": multi["chained_psum_us"],
        "one_process_us": single["chained_psum_us"],
    }
    print(
        f"\none psum of 4 B among {CHAINED} in one program: "
        f"{chained['across_2_processes_us']:.1f} µs across 2 processes, "
        f"{chained['one_process_us']:.1f} µs in one process"
    )
    steps = [
        {"processes": 1, "devices_per_process": 1, **run(STEP.replace("MULTI", "False"), 1, 1)},
        {"processes": 1, "devices_per_process": 2, **run(STEP.replace("MULTI", "False"), 1, 2)},
        {"processes": 2, "devices_per_process": 1, **run(STEP.replace("MULTI", "True"), 2, 1)},
    ]
    print(f"\n{'processes x devices':<22}{'ms/step':>9}")
    for r in steps:
        print(f"{r['processes']} x {r['devices_per_process']:<18}{r['step_ms']:>9.2f}")
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as file:
            report = {
                "allreduce": allreduce,
                "allreduce_keeping_freed_memory": kept["rows"],
                "chained_psum": chained,
                "mlp_step": steps,
            }
            json.dump(report, file, indent=2)


if __name__ == "__main__":
    main()
