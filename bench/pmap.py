"""pmap: a data-parallel SGD step over 1, 2 and 4 CPU devices, and the cost of a launch.

    python bench/pmap.py [--out bench/results/pmap.json]

(a) one SGD step of an MLP (784-512-512-10, float32, global batch 256) in a training loop
    (each step given the parameters the previous one returned), the gradients averaged
    over the devices with `pmean`, written as `pmap` and as `jit(shard_map)`, on 1, 2 and 4
    devices, against the single-device jitted step on the whole batch. Every way is given its
    batch already on its devices (placed once, as an input pipeline does: the single-device
    step's on its device, the others' split over theirs). Each configuration runs
    in its own process (the device count is fixed when the runtime starts); the single-device
    step also pinned to one core (`taskset -c 0`), since XLA's CPU builds ignore the
    single-thread flag. Goal (issue 18): on this 2-core machine, 2 devices give at least 1.5x
    the throughput of the single-device step pinned to one core.
(b) dispatch: a trivial pmapped function on 4 devices against a trivial jit, result ready.
Medians over rounds, in ms per step (µs per call for dispatch). Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

WORKER = r"""
import json, statistics, time, itertools
import numpy as np
import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.sharding import Mesh, NamedSharding, PartitionSpec as P

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

def training_loop(step, *batch):  # each step is given the parameters the last one returned
    state = [params]
    def one():
        state[0] = step(state[0], *batch)
        return state[0]
    return one

rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(jnp.asarray(rng.normal(0, 0.05, (m, n)).astype(np.float32)),
           jnp.zeros(n, jnp.float32)) for m, n in itertools.pairwise(sizes)]
xs = jnp.asarray(rng.normal(size=(256, 784)).astype(np.float32))
ys = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)])

def loss(p, x, y):
    for w, b in p[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = p[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b) * y, axis=1))

def update(p, g):
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

def averaged_step(p, x, y):
    return update(p, lax.pmean(jax.grad(loss)(p, x, y), "i"))

n = jax.local_device_count()
mesh = Mesh(np.array(jax.devices()), ("i",))
split = NamedSharding(mesh, P("i"))  # the batch, one block per device
case = CASE
result = {}
if case == "single":
    step = jax.jit(lambda p, x, y: update(p, jax.grad(loss)(p, x, y)))
    result["step_ms"] = 1e3 * median_time(training_loop(step, xs, ys))
    f = jax.jit(lambda v: v + 1)
    v = jnp.ones(4)
    result["dispatch_us"] = 1e6 * median_time(lambda: f(v), number=2000)
elif case == "pmap":
    step = jax.pmap(averaged_step, axis_name="i", in_axes=(None, 0, 0), out_axes=None)
    bx = jax.device_put(xs.reshape(n, 256 // n, 784), split)
    by = jax.device_put(ys.reshape(n, 256 // n, 10), split)
    result["step_ms"] = 1e3 * median_time(training_loop(step, bx, by))
    g = jax.pmap(lambda v: v + 1)
    v = jnp.ones((n, 4))
    result["dispatch_us"] = 1e6 * median_time(lambda: g(v), number=2000)
elif case == "shard_map":
    step = jax.jit(jax.shard_map(averaged_step, mesh=mesh, in_specs=(P(), P("i"), P("i")),
                                 out_specs=P(), check_vma=False))
    bx, by = jax.device_put(xs, split), jax.device_put(ys, split)
    result["step_ms"] = 1e3 * median_time(training_loop(step, bx, by))
print(json.dumps(result))
"""


def run(case: str, devices: int, pinned: bool) -> dict:
    env = dict(os.environ, TRACEJIT_NUM_CPU_DEVICES=str(devices))
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(src), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-c", WORKER.replace("CASE", repr(case))]
    if pinned and shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = [("single", 1, True), ("single", 1, False)]
    rows += [(case, n, False) for case in ("pmap", "shard_map") for n in (1, 2, 4)]
    results = []
    for case, devices, pinned in rows:
        figures = run(case, devices, pinned)
        results.append({"case": case, "devices": devices, "pinned": pinned, **figures})
    baseline = results[0]["step_ms"]
    print(f"{'case':<12}{'devices':>8}{'cores':>7}{'ms/step':>10}{'speedup':>9}{'dispatch':>12}")
    for r in results:
        dispatch = f"{r['dispatch_us']:.1f} µs" if "dispatch_us" in r else ""
        r["speedup_vs_pinned_single"] = baseline / r["step_ms"]
        print(
            f"{r['case']:<12}{r['devices']:>8}{'1' if r['pinned'] else 'all':>7}"
            f"{r['step_ms']:>10.2f}{r['speedup_vs_pinned_single']:>8.2f}x{dispatch:>12}"
        )
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as file:
            json.dump({"mlp": "784-512-512-10", "global_batch": 256, "rows": results}, file,
                      indent=2)  # fmt: skip


if __name__ == "__main__":
    main()
