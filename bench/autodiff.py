"""Reverse-mode cost: eager `grad(loss)` of an MLP next to its forward pass, in the same run.

    python bench/autodiff.py [--out bench/results/autodiff.json]

The MLP is the seed's: layer sizes 784-512-512-10, batch 128, float32, tanh between layers and
a squared-error loss. For each of the forward pass (`loss`), `grad(loss)` and
`value_and_grad(loss)`, the median time per call over several timing rounds, and its ratio to
the forward pass (the median of the per-round ratios: the cases take turns in each round).
Goal (autodiff issue): `grad(loss)` at most about 3x the forward pass.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import timeit

import numpy as np


def interleaved_timings(cases: dict, *, rounds: int, target_seconds: float = 0.1) -> dict:
    """Per case, the times of one call in each of `rounds` rounds (each about target long).
    The cases take turns within every round, so that a change in the machine's load affects
    them alike and per-round ratios stay meaningful on a busy machine."""
    numbers = {}
    for name, fn in cases.items():
        fn()  # warm up (caches, first-call imports)
        number = 1
        while timeit.timeit(fn, number=number) < target_seconds / 4:
            number *= 2
        numbers[name] = number
    times = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            times[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    return times


def init_params(layer_sizes, rng):
    return [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            (0.1 * rng.standard_normal(n)).astype(np.float32),
        )
        for m, n in itertools.pairwise(layer_sizes)
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "autodiff.json")
    )
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    import tracejit
    import tracejit.numpy as jnp

    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return jnp.sum((preds - targets) ** 2)

    layer_sizes, batch_size = [784, 512, 512, 10], 128
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(W), jnp.asarray(b)) for W, b in init_params(layer_sizes, rng)]
    inputs = jnp.asarray(rng.standard_normal((batch_size, layer_sizes[0])).astype(np.float32))
    targets = jnp.asarray(rng.standard_normal((batch_size, layer_sizes[-1])).astype(np.float32))
    batch = (inputs, targets)

    grad_loss = tracejit.grad(loss)
    value_and_grad_loss = tracejit.value_and_grad(loss)
    cases = {
        "forward (loss)": lambda: loss(params, batch),
        "grad(loss)": lambda: grad_loss(params, batch),
        "value_and_grad(loss)": lambda: value_and_grad_loss(params, batch),
    }
    times = interleaved_timings(cases, rounds=args.rounds)
    forward = times["forward (loss)"]
    rows = [
        {
            "case": name,
            "ms": statistics.median(ts) * 1e3,
            "ratio_to_forward": statistics.median(t / f for t, f in zip(ts, forward, strict=True)),
        }
        for name, ts in times.items()
    ]

    print(f"MLP {'-'.join(map(str, layer_sizes))}, batch {batch_size}, float32, eager")
    print(f"{'case':<22} {'ms':>9} {'x forward':>10}")
    for r in rows:
        print(f"{r['case']:<22} {r['ms']:>9.3f} {r['ratio_to_forward']:>10.2f}")
    print("(goal: grad(loss) at most about 3x the forward pass)")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(
            {
                "layer_sizes": layer_sizes,
                "batch_size": batch_size,
                "dtype": "float32",
                "rows": rows,
            },
            f,
            indent=2,
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
