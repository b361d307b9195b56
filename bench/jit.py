"""jit: dispatch cost, first-call latency, and a compiled SGD step against eager.

    NPROC=1 python bench/jit.py [--out bench/results/jit.json]

(a) a jitted `x + 1` on a 4-element array, 10,000 calls with the result ready each time;
(b) first call (trace + lower + compile) of jit(grad(mlp_loss)) for MLPs of depth 2, 8, 32
    (width 64), with the persistent compilation cache off, then warm from disk;
(c) one SGD step of the seed's MLP (784-512-512-10, batch 128), jitted vs eager, and jitted
    with the parameters donated (`donate_argnums`), as a training loop would.
Medians over rounds. NPROC=1 limits NumPy's BLAS and XLA to one core so that figures are
comparable between machines (the process is pinned to one core).
"""

from __future__ import annotations

import argparse
import itertools
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
from tracejit._src import dispatch


def median_time(fn, rounds=7, number=1):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def mlp_params(rng, sizes):
    return [
        (jnp.asarray(rng.normal(0, 0.1, (m, n))), jnp.asarray(np.zeros(n)))
        for m, n in itertools.pairwise(sizes)
    ]


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    return jnp.sum((predict(params, inputs) - targets) ** 2)


def forget_compiled_programs():
    dispatch._programs.clear()
    dispatch._executables.clear()


def first_call_seconds(depth, rng):
    params = mlp_params(rng, [64] * (depth + 1))
    batch = (jnp.asarray(rng.normal(size=(32, 64))), jnp.asarray(rng.normal(size=(32, 64))))
    forget_compiled_programs()
    start = time.perf_counter()
    jax.block_until_ready(jax.jit(jax.grad(loss))(params, batch))
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = os.path.join(os.path.dirname(__file__), "results", "jit.json")
    parser.add_argument("--out", default=default_out)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = {"backend": dispatch.backend(), "nproc": os.environ.get("NPROC", "all")}

    # (a) dispatch
    add_one = jax.jit(lambda x: x + 1)
    x = jax.device_put(jnp.ones(4))
    add_one(x).block_until_ready()
    results["dispatch_us"] = 1e6 * median_time(
        lambda: add_one(x).block_until_ready(), rounds=5, number=10_000
    )

    # (b) first-call latency, cache off then warm from disk
    latency = {}
    for depth in (2, 8, 32):
        jax.config.update("jax_enable_compilation_cache", False)
        cold = first_call_seconds(depth, rng)
        jax.config.update("jax_enable_compilation_cache", True)
        first_call_seconds(depth, rng)  # writes the disk cache
        warm = first_call_seconds(depth, rng)
        latency[depth] = {"cache_off_s": cold, "warm_from_disk_s": warm}
    results["first_call"] = latency

    # (c) SGD step of the seed's MLP
    params = mlp_params(rng, [784, 512, 512, 10])
    batch = (jnp.asarray(rng.normal(size=(128, 784))), jnp.asarray(rng.normal(size=(128, 10))))

    def sgd_step(params, batch):
        grads = jax.grad(loss)(params, batch)
        return [(W - 1e-3 * dW, b - 1e-3 * db) for (W, b), (dW, db) in zip(params, grads)]

    jitted_step = jax.jit(sgd_step)
    jax.block_until_ready(jitted_step(params, batch))
    results["sgd_step_jit_ms"] = 1e3 * median_time(
        lambda: jax.block_until_ready(jitted_step(params, batch)), rounds=15
    )
    results["sgd_step_eager_ms"] = 1e3 * median_time(
        lambda: jax.block_until_ready(sgd_step(params, batch)), rounds=7
    )
    # the training-loop form: parameters donated, each step writing the next into their buffers
    donating_step = jax.jit(sgd_step, donate_argnums=0)
    state = [jax.device_put(params)]

    def donated_step():
        state[0] = jax.block_until_ready(donating_step(state[0], batch))

    donated_step()
    results["sgd_step_jit_donated_ms"] = 1e3 * median_time(donated_step, rounds=15)

    print(f"backend: {results['backend']}, NPROC={results['nproc']}")
    print(f"(a) dispatch, jit(x + 1) on f32[4], result ready: {results['dispatch_us']:.2f} µs/call")
    print("(b) first call of jit(grad(mlp_loss)), width 64:")
    print(f"    {'depth':>5} {'cache off s':>12} {'warm disk s':>12}")
    for depth, row in latency.items():
        print(f"    {depth:>5} {row['cache_off_s']:>12.3f} {row['warm_from_disk_s']:>12.3f}")
    print(
        f"(c) SGD step, MLP 784-512-512-10, batch 128: jit {results['sgd_step_jit_ms']:.2f} ms, "
        f"eager {results['sgd_step_eager_ms']:.2f} ms "
        f"({results['sgd_step_eager_ms'] / results['sgd_step_jit_ms']:.1f}x), "
        f"jit with donated parameters {results['sgd_step_jit_donated_ms']:.2f} ms"
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
