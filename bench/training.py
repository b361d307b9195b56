"""Training throughput: jitted steps per second of the examples' digits MLP and convnet,
tracejit next to real JAX, in the same run.

    python bench/training.py [--jax-python PATH] [--rounds 9] [--out bench/results/training.json]

Each framework runs in its own process (`--worker NAME`: this file, with `jax` or `tracejit`
imported as `jax`), on the same networks written once over `stax` and `optimizers`: the MLP of
`examples/digits_classifier.py` (64-256-256-10, batch 128, momentum SGD) and a small convnet
on 8x8x1 images (conv 16 and 32 channels 3x3 SAME, max pooling 2x2, dense 10, batch 128,
NHWC). A step is forward, backward and update in one `jit`. The workers stay alive and take
turns: each round times one network in one framework then in the other (the order swapped
every round), so that both meet the same load on a shared machine, where runs one after the
other differed by more than the frameworks do. Figures: the median over rounds of steps per
second, and the median of the rounds' ratios. Goal (issue 20): at least JAX's throughput.
Inputs are random (throughput does not depend on values).
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
NETWORKS = ("mlp", "convnet")


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


class Trainer:
    """One framework's jitted training steps, each network warmed up and calibrated to a
    number of steps that takes at least 0.2 s."""

    def __init__(self, framework: str):
        jax = self.jax = importlib.import_module(framework)
        jnp = importlib.import_module(f"{framework}.numpy")
        stax = importlib.import_module(f"{framework}.example_libraries.stax")
        optimizers = importlib.import_module(f"{framework}.example_libraries.optimizers")
        rng = np.random.default_rng(0)
        self.runs = {}
        for name, ((init_fun, apply_fun), shape) in networks(stax).items():
            _, params = init_fun(jax.random.PRNGKey(0), shape)
            opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)
            images = jnp.asarray(rng.random(shape, dtype=np.float32))
            labels = jnp.asarray(rng.integers(0, 10, BATCH).astype(np.int32))

            def loss(params, images, labels, apply_fun=apply_fun):
                log_probs = apply_fun(params, images)
                return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))

            @jax.jit
            def step(
                i, state, images, labels, loss=loss, get_params=get_params, opt_update=opt_update
            ):
                return opt_update(i, jax.grad(loss)(get_params(state), images, labels), state)

            state = jax.block_until_ready(step(0, opt_init(params), images, labels))
            run = [step, state, images, labels, 1]
            while self.time_steps(run) * run[4] < 0.2:
                run[4] *= 2
            self.runs[name] = run

    def time_steps(self, run) -> float:
        """Seconds per step over the run's number of steps (its state carried on)."""
        step, state, images, labels, number = run
        start = time.perf_counter()
        for i in range(number):
            state = step(i, state, images, labels)
        self.jax.block_until_ready(state)
        run[1] = state
        return (time.perf_counter() - start) / number


def serve(framework: str) -> None:
    """The worker: "ready" once warmed up, then one timed round per network name read."""
    trainer = Trainer(framework)
    print("ready", flush=True)
    for line in sys.stdin:
        print(trainer.time_steps(trainer.runs[line.strip()]), flush=True)


class Worker:
    def __init__(self, python: str, framework: str):
        self.framework = framework
        self.process = subprocess.Popen(
            [python, os.path.abspath(__file__), "--worker", framework],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._read()

    def _read(self) -> str:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(
                f"the {self.framework} worker failed:\n{self.process.stderr.read()[-3000:]}"
            )
        return line

    def seconds_per_step(self, network: str) -> float:
        self.process.stdin.write(network + "\n")
        self.process.stdin.flush()
        return float(self._read())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "training.json")
    )
    args = parser.parse_args()
    if args.worker:
        serve(args.worker)
        return
    workers = [Worker(sys.executable, "tracejit")]
    if args.jax_python:
        workers.append(Worker(args.jax_python, "jax"))
    times = {w.framework: {name: [] for name in NETWORKS} for w in workers}
    for r in range(args.rounds):
        for name in NETWORKS:
            for worker in workers if r % 2 == 0 else workers[::-1]:
                times[worker.framework][name].append(worker.seconds_per_step(name))
    for worker in workers:
        worker.close()
    results = {
        framework: {name: 1.0 / statistics.median(t) for name, t in by_network.items()}
        for framework, by_network in times.items()
    }
    if "jax" in times:
        results["tracejit/jax"] = {
            name: statistics.median(
                j / t for t, j in zip(times["tracejit"][name], times["jax"][name], strict=True)
            )
            for name in NETWORKS
        }
    print(f"jitted training steps per second (batch {BATCH}), median of {args.rounds} rounds, "
          "the frameworks taking turns")  # fmt: skip
    columns = [c for c in results if c != "tracejit/jax"]
    print(f"{'network':<10}" + "".join(f"{c:>12}" for c in columns)
          + ("   tracejit/jax (median of rounds)" if "jax" in times else ""))  # fmt: skip
    for name in NETWORKS:
        row = "".join(f"{results[c][name]:>12.0f}" for c in columns)
        if "jax" in times:
            row += f"   {results['tracejit/jax'][name]:>12.2f}x"
        print(f"{name:<10}{row}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
