"""tracejit.random next to NumPy's Generator and, where installed, real JAX, in the same run.

    python bench/prng.py [--jax-python /path/to/python] [--out bench/results/prng.json]

Cases (issue 13): `normal(key, (10**6,))` jitted, `split(key, 1000)`, and eager small draws
per call: `uniform(key, (100,))` fetched into NumPy (`np.asarray`) and as a draw alone
(`.block_until_ready()`, JAX's way of timing one), `normal` and `randint` of 100. JAX runs in
the interpreter `--jax-python` names (a virtualenv with jax installed; tracejit never imports
it), NumPy's `default_rng` in this one. Goals: jitted normal of 1e6 within 1.2x of JAX; eager
small draws at most 2x NumPy's Generator per call. Prints a table (median seconds per call)
and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit

import numpy as np

# Each case, as code run by both tracejit and JAX: `random`, `jax` (the package), `key` defined.
CASES = {
    "normal_1e6_jit": (
        "f = jax.jit(lambda k: random.normal(k, (10**6,))); np.asarray(f(key))",
        "np.asarray(f(key))",
    ),
    "split_1000": ("", "np.asarray(random.split(key, 1000))"),
    "split_1000_jit": (
        "g = jax.jit(lambda k: random.split(k, 1000)); np.asarray(g(key))",
        "np.asarray(g(key))",
    ),
    "uniform_100_eager": ("", "np.asarray(random.uniform(key, (100,)))"),
    "uniform_100_draw": ("", "random.uniform(key, (100,)).block_until_ready()"),
    "normal_100_draw": ("", "random.normal(key, (100,)).block_until_ready()"),
    "randint_100_draw": ("", "random.randint(key, (100,), 0, 10).block_until_ready()"),
}
NUMPY_CASES = {
    "normal_1e6_jit": "rng.standard_normal(10**6, dtype=np.float32)",
    "split_1000": "rng.integers(0, 2**32, (1000, 2), dtype=np.uint32)",
    "split_1000_jit": "rng.integers(0, 2**32, (1000, 2), dtype=np.uint32)",
    "uniform_100_eager": "rng.random(100, dtype=np.float32)",
    "uniform_100_draw": "rng.random(100, dtype=np.float32)",
    "normal_100_draw": "rng.standard_normal(100, dtype=np.float32)",
    "randint_100_draw": "rng.integers(0, 10, 100, dtype=np.int32)",
}

_TIMER = """
import statistics, timeit, json
import numpy as np
{imports}
key = random.PRNGKey(0)
out = {{}}
for name, (setup, stmt) in CASES.items():
    namespace = dict(globals())
    exec(setup, namespace)
    number = 1
    while timeit.timeit(stmt, globals=namespace, number=number) < 0.05:
        number *= 4
    out[name] = statistics.median(
        timeit.timeit(stmt, globals=namespace, number=number) / number for _ in range(7)
    )
print(json.dumps(out))
"""


def time_in(python: str, imports: str) -> dict:
    code = f"CASES = {CASES!r}\n" + _TIMER.format(imports=imports)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def time_numpy() -> dict:
    rng = np.random.default_rng(0)
    times = {}
    for name, stmt in NUMPY_CASES.items():
        namespace = {"rng": rng, "np": np}
        number = 1
        while timeit.timeit(stmt, globals=namespace, number=number) < 0.05:
            number *= 4
        times[name] = statistics.median(
            timeit.timeit(stmt, globals=namespace, number=number) / number for _ in range(7)
        )
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "prng.json")
    )
    args = parser.parse_args()
    results = {
        "tracejit": time_in(sys.executable, "import tracejit as jax\nfrom tracejit import random"),
        "numpy": time_numpy(),
    }
    if args.jax_python:
        results["jax"] = time_in(args.jax_python, "import jax\nfrom jax import random")
    columns = list(results)
    print(f"{'case':<20}" + "".join(f"{c:>14}" for c in columns))
    for name in CASES:
        print(f"{name:<20}" + "".join(f"{results[c][name] * 1e6:>12.1f}us" for c in columns))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
