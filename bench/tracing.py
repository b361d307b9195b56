"""Tracing and lowering scale linearly: programs of 1,000 to 100,000 equations.

    python bench/tracing.py [--sizes 1000 10000 100000] [--out bench/results/tracing.json]

The program is a chain `x = tanh(x * w + b)` on f32[8] repeated (three equations per link), so
every equation reads the one before it, as long programs do. For each size: the seconds of
`make_jaxpr` (tracing) and of lowering the jaxpr to StableHLO text, and each per equation. A
linear cost shows as a per-equation figure that stays flat from size to size. Medians of a few
rounds (one at the largest size).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src.lowering.lower import lower_jaxpr_to_module


def chain(links: int):
    def program(x, w, b):
        for _ in range(links):
            x = jnp.tanh(x * w + b)
        return x

    return program


def median_seconds(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "tracing.json")
    )
    args = parser.parse_args()
    x = np.ones(8, np.float32)
    w, b = np.float32(0.5), np.float32(0.1)
    rows = []
    for size in args.sizes:
        program = chain(size // 3)
        rounds = 1 if size >= 100_000 else 3
        closed = jax.make_jaxpr(program)(x, w, b)
        equations = len(closed.jaxpr.eqns)
        trace_s = median_seconds(lambda p=program: jax.make_jaxpr(p)(x, w, b), rounds)
        lower_s = median_seconds(lambda c=closed: lower_jaxpr_to_module(c, "jit_chain"), rounds)
        rows.append({"equations": equations, "trace_s": trace_s, "lower_s": lower_s,
                     "trace_us_per_eqn": 1e6 * trace_s / equations,
                     "lower_us_per_eqn": 1e6 * lower_s / equations})  # fmt: skip
    print(f"{'equations':>10}{'trace s':>10}{'µs/eqn':>9}{'lower s':>10}{'µs/eqn':>9}")
    for r in rows:
        print(f"{r['equations']:>10}{r['trace_s']:>10.3f}{r['trace_us_per_eqn']:>9.1f}"
              f"{r['lower_s']:>10.3f}{r['lower_us_per_eqn']:>9.1f}")  # fmt: skip
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
