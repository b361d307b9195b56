"""tracejit.distributed: all-reduce across 2 processes against MPI's own, and a data-parallel
SGD step on 1 process x 2 devices against 2 processes x 1 device.

    python bench/distributed.py [--out bench/results/distributed.json]

(a) all-reduce latency and bandwidth: `pmap(lambda v: psum(v, 'i'))` over 2 processes of one
    CPU device each (`mpiexec -n 2`), float32 messages of 4 B to 64 MB already on the device,
    result ready, against mpi4py's `Allreduce` of the same NumPy arrays between the same two
    processes. The difference is what tracejit adds to MPI (the program's launch, the host
    callback, the rendezvous of the replicas): goal (issue 22) at most 20 µs per call, and
    10% at 64 MB. Bandwidth is the message size over the time of one call.
(b) the cost of one exchange inside a program: 64 dependent psums of 4 B in one pmapped
    program, per psum, across the 2 processes and in one process (XLA alone).
(c) one SGD step of the MLP of bench/pmap.py (784-512-512-10, float32, global batch 256,
    gradients averaged with `pmean`) in a training loop: one process of 2 devices (the
    collectives stay in XLA) against two processes of 1 device each (each collective is an MPI
    call), and the single-device jitted step on the whole batch.
"pmap alone" is the same pmapped psum in one process of one device (no MPI): the launch of
the program, which the overhead includes. On a machine whose cores other work shares, the
two processes also wait for each other's scheduling, which lands in the overhead too: the
rounds of tracejit and of mpi4py alternate, so that both meet the same load, and "of minima"
is the overhead between the fastest rounds (the least disturbed). The two largest messages
are measured again with glibc keeping the memory freed (`KEEP_FREED_MEMORY`): each call's
fresh result buffer then reuses the last one's pages instead of faulting in new ones.
Medians over rounds. Prints a table, writes JSON. Needs mpi4py and mpiexec (`tracejit[mpi]`).
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
    comm = MPI.COMM_WORLD
psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")

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
    v = psum(np.ones((1, n), np.float32))  # (compiled, and on the device)
    per_call(lambda: psum(v), 1)
    if not MULTI:
        ours = [per_call(lambda: psum(v), number) for _ in range(rounds)]
        rows.append({"bytes": 4 * n, "pmap_alone_us": 1e6 * statistics.median(ours)})
        continue
    send, recv = np.ones(n, np.float32), np.empty(n, np.float32)
    def mpi():
        comm.Allreduce(send, recv)
        return recv
    ours, theirs = [], []
    for _ in range(rounds):  # (alternated, so that both meet the same load)
        comm.Barrier()
        ours.append(per_call(lambda: psum(v), number))
        comm.Barrier()
        theirs.append(per_call(mpi, number))
    rows.append({
        "bytes": 4 * n,
        "tracejit_us": 1e6 * statistics.median(ours),
        "mpi4py_us": 1e6 * statistics.median(theirs),
        "tracejit_min_us": 1e6 * min(ours),
        "mpi4py_min_us": 1e6 * min(theirs),
    })

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
    row["overhead_us"] = row["tracejit_us"] - row["mpi4py_us"]
    row["overhead_fraction"] = row["overhead_us"] / row["mpi4py_us"]
    row["overhead_of_minima_us"] = row["tracejit_min_us"] - row["mpi4py_min_us"]
    row["tracejit_gb_per_s"] = row["bytes"] / row["tracejit_us"] / 1e3
    return row


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
    print(f"{'bytes':>10}{'tracejit µs':>13}{'mpi4py µs':>11}{'pmap alone':>12}"
          f"{'overhead µs':>13}{'overhead':>10}{'of minima':>11}{'GB/s':>8}")  # fmt: skip
    for r, a in zip(allreduce, alone, strict=True):
        r["pmap_alone_us"] = a["pmap_alone_us"]
        _overheads(r)
        print(
            f"{r['bytes']:>10}{r['tracejit_us']:>13.1f}{r['mpi4py_us']:>11.1f}"
            f"{r['pmap_alone_us']:>12.1f}{r['overhead_us']:>13.1f}"
            f"{100 * r['overhead_fraction']:>9.0f}%{r['overhead_of_minima_us']:>11.1f}"
            f"{r['tracejit_gb_per_s']:>8.2f}"
        )
    print(
        "\nglibc keeping freed memory ("
        + " ".join(f"{k}={v}" for k, v in KEEP_FREED_MEMORY.items())
        + "):"
    )
    for r in kept["rows"]:
        _overheads(r)
        print(
            f"{r['bytes']:>10}{r['tracejit_us']:>13.1f}{r['mpi4py_us']:>11.1f}{'':>12}"
            f"{r['overhead_us']:>13.1f}{100 * r['overhead_fraction']:>9.0f}%"
            f"{r['overhead_of_minima_us']:>11.1f}{r['tracejit_gb_per_s']:>8.2f}"
        )
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
