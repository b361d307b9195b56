"""Structured control flow: the JAX paper's Table 1 jitted whole, and a 10,000-step scan.

    NPROC=1 python bench/control_flow.py [--out bench/results/control_flow.json] [--no-eager]

(a) Table 1, Truncated Newton-CG on CPU (the problems of `tracejit.demo`, float32): Newton
    steps in `lax.while_loop`, conjugate gradient in `lax.while_loop` with Hessian-vector
    products `jvp(grad(f))`, a backtracking line search in `lax.while_loop`, the HMM's forward
    algorithm in `lax.scan`. Against
    - NumPy: the same algorithm (the same Python function, with NumPy as its array module and
      a Python `while` as its loop) op by op, with hand-written gradients and Hessian-vector
      products (HMM: forward-backward gradient, HVP by complex step); the paper's "Python"
      column (which was Autograd, so slower per operation than hand-written NumPy);
    - eager: the staged code called without `jit`: `lax.while_loop` loops in Python and
      evaluates its body's jaxpr op by op on NumPy (`--no-eager` skips it; the HMM is slow).
    Compile time is the first call minus the median run, with the persistent cache off.
(b) `lax.scan` of 10,000 steps of a vec4 recurrence `h = tanh(W h + x_t)`: jitted (compile
    and run), eager `lax.scan` (a Python loop over its body's jaxpr), a Python loop of the
    eager step, and a Python loop of the same step in NumPy.
Medians over rounds. NPROC=1 limits NumPy's BLAS and XLA to one core, as in the paper's
single-thread runs (the process is pinned to one core).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

if os.environ.get("NPROC") == "1":
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    if hasattr(os, "sched_setaffinity"):  # XLA's thread pools too: one core for everything
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("TRACEJIT_CACHE_DIR", tempfile.mkdtemp(prefix="tracejit-bench-"))

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dispatch
from tracejit.demo import (
    ProgressBar,
    objectives_agree,
    staged_newton_cg,
    table1_problems,
    time_newton_cg,
)


def median_seconds(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table1(eager, numpy_runs=5, jit_runs=7):
    rows = {}
    for problem in table1_problems():
        bar = ProgressBar(f"{problem.name:<9}", total=numpy_runs + 1 + jit_runs + eager)
        row = time_newton_cg(problem, numpy_runs, jit_runs, numpy_budget_s=10.0, bar=bar)
        if eager:  # once: the staged program, unjitted
            solve = staged_newton_cg(problem)
            x0, data = jnp.asarray(problem.x0), jax.tree_util.tree_map(jnp.asarray, problem.data)
            start = time.perf_counter()
            result = jax.block_until_ready(solve(x0, data))
            row["eager_s"] = time.perf_counter() - start
            row["eager_objective"] = float(result[1])
            bar.advance("eager")
        bar.close()
        row["speedup"] = row["numpy_s"] / row["jit_s"]
        row["agree"] = objectives_agree(row)
        row["paper_python_s"], row["paper_jax_s"], row["paper_speedup"] = problem.paper
        rows[problem.name] = row
    return rows


def long_scan(steps=10_000, rounds=5):
    rng = np.random.default_rng(0)
    W = (rng.normal(size=(4, 4)) / 2).astype(np.float32)
    xs = rng.normal(size=(steps, 4)).astype(np.float32)
    h0 = np.zeros(4, np.float32)

    def step(h, x):
        h = jnp.tanh(jnp.dot(W, h) + x)
        return h, h

    def run_scan(h0, xs):
        return lax.scan(step, h0, xs)

    results = {}
    jitted = jax.jit(run_scan)
    h0_d, xs_d = jax.device_put(h0), jax.device_put(xs)
    start = time.perf_counter()
    final_jit = jax.block_until_ready(jitted(h0_d, xs_d))[0]
    first = time.perf_counter() - start
    results["jit_run_s"] = median_seconds(lambda: jitted(h0_d, xs_d), rounds)
    results["jit_compile_s"] = first - results["jit_run_s"]

    h0_e, xs_e = jnp.asarray(h0), jnp.asarray(xs)
    results["eager_scan_s"] = median_seconds(lambda: run_scan(h0_e, xs_e), 3)
    final_eager_scan = run_scan(h0_e, xs_e)[0]

    rows = [jnp.asarray(x) for x in xs]

    def eager_loop():
        h = h0_e
        for x in rows:
            h, _ = step(h, x)
        return h

    results["eager_loop_s"] = median_seconds(eager_loop, 3)
    final_eager_loop = eager_loop()

    def numpy_loop():
        h, out = h0, np.empty_like(xs)
        for t in range(steps):
            h = out[t] = np.tanh(W @ h + xs[t])
        return h

    results["numpy_loop_s"] = median_seconds(numpy_loop, rounds)
    final_numpy = numpy_loop()
    results["agree"] = bool(
        all(np.allclose(np.asarray(h), final_numpy, atol=1e-5)
            for h in (final_jit, final_eager_scan, final_eager_loop))
    )  # fmt: skip
    results["steps"] = steps
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(__file__), "results", "control_flow.json")
    parser.add_argument("--out", default=default_out)
    parser.add_argument("--no-eager", action="store_true", help="skip the eager Newton-CG runs")
    args = parser.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = {"backend": dispatch.backend(), "nproc": os.environ.get("NPROC", "all"),
               "load_average_1min_at_start": load}  # fmt: skip
    print(f"backend: {results['backend']}, NPROC={results['nproc']}, load average {load:.2f}")

    print("(a) Truncated Newton-CG on CPU, float32 (the JAX paper's Table 1)")
    rows = results["table1"] = table1(eager=not args.no_eager)
    header = (f"    {'problem':<10} {'NumPy s':>8} {'eager s':>8} {'jit s':>8} {'compile s':>9} "
              f"{'speedup':>8} {'paper':>6} {'eager/jit':>9} {'HVPs np/jit':>12}  "
              "objectives agree")  # fmt: skip
    print(header)
    for name, row in rows.items():
        eager = f"{row['eager_s']:>8.2f}" if "eager_s" in row else f"{'-':>8}"
        vs_eager = f"{row['eager_s'] / row['jit_s']:>8.0f}x" if "eager_s" in row else f"{'-':>9}"
        print(f"    {name:<10} {row['numpy_s']:>8.3f} {eager} {row['jit_s']:>8.4f} "
              f"{row['compile_s']:>9.2f} {row['speedup']:>7.1f}x {row['paper_speedup']:>5}x "
              f"{vs_eager} "
              f"{row['numpy_hvps']:>5}/{row['jit_hvps']:<6} {row['agree']} "
              f"({row['numpy_objective']:.6g} vs {row['jit_objective']:.6g})")  # fmt: skip
    print("    speedup = NumPy / jit; paper (one CPU thread, 2018, Python = Autograd op by op):\n    "
          + ", ".join(f"{n} {r['paper_python_s']} s vs {r['paper_jax_s']} s"
                      for n, r in rows.items()))  # fmt: skip

    scan = results["scan"] = long_scan()
    print(f"(b) lax.scan of {scan['steps']:,} steps of h = tanh(W h + x_t), h: f32[4]")
    print(f"    {'case':<36} {'s':>9} {'vs jit':>8}")
    for key, label in (("jit_compile_s", "jit(scan): compile (first - run)"),
                       ("jit_run_s", "jit(scan): run"),
                       ("eager_scan_s", "eager lax.scan"),
                       ("eager_loop_s", "eager Python loop of the step"),
                       ("numpy_loop_s", "NumPy Python loop of the step")):  # fmt: skip
        ratio = "" if key == "jit_compile_s" else f"{scan[key] / scan['jit_run_s']:>7.0f}x"
        print(f"    {label:<36} {scan[key]:>9.4f} {ratio:>8}")
    print(f"    final states agree: {scan['agree']}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
