"""Training throughput: jitted steps per second of the examples' digits MLP and convnet,
tracejit next to real JAX (and PyTorch, where an interpreter with it is given), same run.

    python bench/training.py [--jax-python PATH] [--torch-python PATH] [--out bench/results/training.json]

Each framework runs in its own process (`--worker NAME`: this file, with `jax` or `tracejit`
imported as `jax`), on the same networks written once over `stax` and `optimizers`: the MLP of
`examples/digits_classifier.py` (64-256-256-10, batch 128, momentum SGD) and a small convnet
on 8x8x1 images (conv 16 and 32 channels 3x3 SAME, max pooling 2x2, dense 10, batch 128,
NHWC). A step is forward, backward and update in one `jit`; the figure is the median over
rounds of steps per second, each round long enough to time, after a warm-up. Goal (issue
20): at least JAX's throughput. Inputs are random (throughput does not depend on values).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BATCH = 128


def networks(stax):
    return {
        "mlp": (
            stax.serial(stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu, stax.Dense(10),
                        stax.LogSoftmax),
            (BATCH, 64),
        ),
        "convnet": (
            stax.serial(
                stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,
                stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
                stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten,
                stax.Dense(10), stax.LogSoftmax,
            ),
            (BATCH, 8, 8, 1),
        ),
    }  # fmt: skip


def steps_per_second(framework: str, rounds: int) -> dict:
    jax = importlib.import_module(framework)
    jnp = importlib.import_module(f"{framework}.numpy")
    stax = importlib.import_module(f"{framework}.example_libraries.stax")
    optimizers = importlib.import_module(f"{framework}.example_libraries.optimizers")
    rng = np.random.default_rng(0)
    results = {}
    for name, ((init_fun, apply_fun), shape) in networks(stax).items():
        _, params = init_fun(jax.random.PRNGKey(0), shape)
        opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)
        images = jnp.asarray(rng.random(shape, dtype=np.float32))
        labels = jnp.asarray(rng.integers(0, 10, BATCH).astype(np.int32))

        def loss(params, images, labels, apply_fun=apply_fun):
            log_probs = apply_fun(params, images)
            return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))

        @jax.jit
        def step(i, state, images, labels, loss=loss, get_params=get_params, opt_update=opt_update):
            return opt_update(i, jax.grad(loss)(get_params(state), images, labels), state)

        state = jax.block_until_ready(step(0, opt_init(params), images, labels))
        number = 1
        while True:
            start = time.perf_counter()
            for i in range(number):
                state = step(i, state, images, labels)
            jax.block_until_ready(state)
            if time.perf_counter() - start > 0.2:
                break
            number *= 2
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            for i in range(number):
                state = step(i, state, images, labels)
            jax.block_until_ready(state)
            times.append((time.perf_counter() - start) / number)
        results[name] = 1.0 / statistics.median(times)
    return results


def run_worker(python: str, framework: str, rounds: int) -> dict:
    out = subprocess.run(
        [python, os.path.abspath(__file__), "--worker", framework, "--rounds", str(rounds)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"the {framework} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "training.json")
    )
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(steps_per_second(args.worker, args.rounds)))
        return
    results = {"tracejit": run_worker(sys.executable, "tracejit", args.rounds)}
    if args.jax_python:
        results["jax"] = run_worker(args.jax_python, "jax", args.rounds)
    print(f"jitted training steps per second (batch {BATCH}), median of {args.rounds} rounds")
    print(f"{'network':<10}" + "".join(f"{c:>12}" for c in results)
          + ("   tracejit/jax" if "jax" in results else ""))  # fmt: skip
    for name in results["tracejit"]:
        row = "".join(f"{results[c][name]:>12.0f}" for c in results)
        if "jax" in results:
            row += f"   {results['tracejit'][name] / results['jax'][name]:>12.2f}x"
        print(f"{name:<10}{row}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
