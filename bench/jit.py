"""jit in the steady state and on first calls, tracejit next to real JAX, one thread and all.

    python bench/jit.py [--jax-python /path/to/python] [--rounds 7] [--quick]
                        [--threads 1|all|both] [--dispatch-only] [--out bench/results/jit.json]

The figures of issue 21, each measured the same way in each framework:
- `dispatch`: a jitted `x + 1` on f32[4], result ready (10,000 calls per round);
- `dispatch_1000_args`: a jitted sum of 1,000 f32[] arguments (one list), result ready; the
  per-argument cost is its excess over `dispatch`, divided by 999;
- `grad_depth8`, `grad_depth32`: a steady call of `jit(grad(loss))` for a tanh MLP of width 64,
  batch 32;
- `sgd_step`: one SGD step of the seed's MLP (784-512-512-10, batch 128), and the same step
  with the parameters donated (`sgd_step_donated`), as a training loop runs it;
- `newton_cg_quadratic`, `newton_cg_hmm`: the jitted Truncated Newton-CG solves of the JAX
  paper's Table 1 (`tracejit.demo`'s problems, float32; real JAX runs the same source file with
  `tracejit` bound to `jax`);
- `first_call_depth{2,8,32}`: the first call of `jit(grad(loss))` (trace, lower, compile, run),
  tracejit with its persistent cache in a fresh folder, so this is a cold compile.

`--dispatch-only` measures the first two figures only (a minute instead of several).

Each framework and thread setting runs in its own process (tracejit never imports JAX, and
JAX runs in the interpreter `--jax-python` names): single-threaded under `taskset -c 0` with
XLA's `--xla_cpu_multi_thread_eigen=false` and one BLAS thread (the pin is what counts: newer
XLA builds ignore the flag), and on all cores unpinned. Per figure the median wall-clock time
of the rounds and the median CPU time of the process over the same rounds (on a shared machine,
what single-threaded runs compare best). Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(os.path.dirname(_HERE), "src", "tracejit", "demo.py")

# Run with `jax`, `jnp` bound to one framework, and ROUNDS, QUICK, DISPATCH_ONLY, DEMO given.
# Prints one JSON line: figure -> [median wall seconds, median CPU seconds] per call.
_CASES = """
import importlib.util, itertools, json, statistics, sys, time
import numpy as np

def measure(fn, number):
    fn()
    walls, cpus = [], []
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        walls.append((time.perf_counter() - wall) / number)
        cpus.append((time.process_time() - cpu) / number)
    return [statistics.median(walls), statistics.median(cpus)]

def mlp_params(rng, sizes):
    return [(jnp.asarray(rng.normal(0, 0.1, (m, n)), jnp.float32), jnp.zeros(n, jnp.float32))
            for m, n in itertools.pairwise(sizes)]

def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs

def loss(params, batch):
    inputs, targets = batch
    return jnp.sum((predict(params, inputs) - targets) ** 2)

def batch_of(rng, n, d_in, d_out):
    return (jnp.asarray(rng.normal(size=(n, d_in)), jnp.float32),
            jnp.asarray(rng.normal(size=(n, d_out)), jnp.float32))

scale = 10 if QUICK else 1
rng = np.random.default_rng(0)
results = {}

add_one = jax.jit(lambda x: x + 1)
x = jax.device_put(jnp.ones(4, jnp.float32))
results["dispatch"] = measure(lambda: add_one(x).block_until_ready(), 10_000 // scale)

total = jax.jit(lambda xs: sum(xs))
xs = [jax.device_put(jnp.float32(i)) for i in range(1000)]
results["dispatch_1000_args"] = measure(lambda: total(xs).block_until_ready(), 1000 // scale)
if DISPATCH_ONLY:
    print(json.dumps(results))
    sys.exit()

for depth in (2, 8, 32):
    params = mlp_params(rng, [64] * (depth + 1))
    batch = batch_of(rng, 32, 64, 64)
    grad = jax.jit(jax.grad(loss))
    wall, cpu = time.perf_counter(), time.process_time()
    jax.block_until_ready(grad(params, batch))
    results[f"first_call_depth{depth}"] = [time.perf_counter() - wall, time.process_time() - cpu]
    if depth > 2:
        results[f"grad_depth{depth}"] = measure(
            lambda: jax.block_until_ready(grad(params, batch)), 200 // scale)

params = mlp_params(rng, [784, 512, 512, 10])
batch = batch_of(rng, 128, 784, 10)

def sgd_step(params, batch):
    grads = jax.grad(loss)(params, batch)
    return [(W - 1e-3 * dW, b - 1e-3 * db) for (W, b), (dW, db) in zip(params, grads)]

step = jax.jit(sgd_step)
results["sgd_step"] = measure(lambda: jax.block_until_ready(step(params, batch)), 20 // scale)
donating = jax.jit(sgd_step, donate_argnums=0)
state = [jax.tree_util.tree_map(jnp.copy, params)]

def donated_step():
    state[0] = jax.block_until_ready(donating(state[0], batch))

results["sgd_step_donated"] = measure(donated_step, 20 // scale)

# The demo's Newton-CG, its source run with `tracejit` bound to this framework.
sys.modules["tracejit"], sys.modules["tracejit.numpy"] = jax, jnp
spec = importlib.util.spec_from_file_location("table1", DEMO)
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)
for problem in demo.table1_problems()[:2]:
    solve = jax.jit(demo.staged_newton_cg(problem))
    x0 = jax.device_put(problem.x0)
    data = jax.tree_util.tree_map(jax.device_put, problem.data)
    results[f"newton_cg_{problem.name}"] = measure(
        lambda: jax.block_until_ready(solve(x0, data)), 3)
print(json.dumps(results))
"""

FRAMEWORKS = {
    "tracejit": "import tracejit as jax\nimport tracejit.numpy as jnp\n",
    "jax": "import jax\nimport jax.numpy as jnp\n",
}

# (figure, unit, scale) in the order of the table
FIGURES = [
    ("dispatch", "µs", 1e6),
    ("dispatch_1000_args", "µs", 1e6),
    ("grad_depth8", "µs", 1e6),
    ("grad_depth32", "µs", 1e6),
    ("sgd_step", "ms", 1e3),
    ("sgd_step_donated", "ms", 1e3),
    ("newton_cg_quadratic", "ms", 1e3),
    ("newton_cg_hmm", "ms", 1e3),
    ("first_call_depth2", "s", 1),
    ("first_call_depth8", "s", 1),
    ("first_call_depth32", "s", 1),
]


def run_cases(python, imports, single_thread, rounds, quick, dispatch_only):
    constants = (
        f"ROUNDS = {rounds}\nQUICK = {quick}\nDISPATCH_ONLY = {dispatch_only}\nDEMO = {DEMO!r}\n"
    )
    env = dict(os.environ, TRACEJIT_CACHE_DIR=tempfile.mkdtemp(prefix="tracejit-bench-"))
    command = [python, "-c", constants + imports + _CASES]
    if single_thread:
        flags = [env.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]
        env["XLA_FLAGS"] = " ".join(f for f in flags if f)
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = "1"
        command = ["taskset", "-c", "0", *command]
    out = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"{python} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def per_argument_us(row) -> float:
    """What each of the 1,000 arguments adds to a dispatch, in µs."""
    return 1e6 * (row["dispatch_1000_args"][0] - row["dispatch"][0]) / 999


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a tenth of the calls per round")
    parser.add_argument("--threads", choices=("1", "all", "both"), default="both")
    parser.add_argument(
        "--dispatch-only", action="store_true", help="only the two dispatch figures"
    )
    parser.add_argument("--out", default=os.path.join(_HERE, "results", "jit.json"))
    args = parser.parse_args()
    pythons = {"tracejit": sys.executable}
    if args.jax_python:
        pythons["jax"] = args.jax_python
    settings = ("1", "all") if args.threads == "both" else (args.threads,)
    results = {}
    for threads in settings:
        for name, python in pythons.items():
            row = run_cases(
                python,
                FRAMEWORKS[name],
                threads == "1",
                args.rounds,
                args.quick,
                args.dispatch_only,
            )
            results[f"{name}/{threads}"] = row
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"jit, median of {args.rounds} rounds (load average {load:.1f} at the end)")
    header = f"{'figure':<22}{'unit':>5}"
    for key in results:
        header += f"{key + ' wall':>20}{'cpu':>9}"
    if "jax/1" in results or "jax/all" in results:
        header += "".join(f"{'ratio ' + t:>10}" for t in settings)
    print(header)
    for figure, unit, scale in FIGURES:
        if figure not in results[next(iter(results))]:
            continue
        line = f"{figure:<22}{unit:>5}"
        for row in results.values():
            wall, cpu = row[figure]
            line += f"{wall * scale:>20.3g}{cpu * scale:>9.3g}"
        for threads in settings:
            if f"jax/{threads}" in results:
                ours, theirs = results[f"tracejit/{threads}"], results[f"jax/{threads}"]
                line += f"{ours[figure][0] / theirs[figure][0]:>9.2f}x"
        print(line)
    for key, row in results.items():
        print(f"{key}: per argument {per_argument_us(row):.3f} µs")
    print("ratio: tracejit's wall time over JAX's (below 1: tracejit is faster)")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
