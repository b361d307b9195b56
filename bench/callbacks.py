"""Host callbacks: the cost of calling Python from compiled code, next to real JAX if asked.

    python bench/callbacks.py [--jax-python /path/to/python] [--out bench/results/callbacks.json]

Cases (issue 15), each a jitted call waited for (`block_until_ready`), median seconds per call:
- `jit_plain` and `jit_pure_callback`: `x + 1` on 3 floats, without and with an identity
  `pure_callback` inside; their difference is one callback round trip (goal: under 20 us).
- `loop_plain` and `loop_unused_debug_print`: a 1,000-step `fori_loop` of elementwise math on
  1,024 floats, without and with a `debug.print` in the body behind a `cond` that never fires:
  an unused print must cost (almost) nothing, i.e. not stop XLA from fusing the rest.
- `loop_print_once`: the loop, then one `debug.print` of the result per call (to /dev/null).
JAX runs the same code in the interpreter `--jax-python` names (tracejit never imports it).
Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SETUP = """
x3 = jnp.ones(3)
xs = jnp.linspace(0.0, 1.0, 1024)
spec = jax.ShapeDtypeStruct((3,), jnp.float32)

def body(i, x):
    return jnp.sin(x) * 0.5 + 0.25

def body_with_print(i, x):
    lax.cond(i < 0, lambda: jax.debug.print("never {}", x), lambda: None)
    return body(i, x)

def print_once(x):
    x = lax.fori_loop(0, 1000, body, x)
    jax.debug.print("{}", x[0])
    return x

plain = jax.jit(lambda x: x + 1)
with_callback = jax.jit(lambda x: jax.pure_callback(lambda a: a, spec, x) + 1)
loop_plain = jax.jit(lambda x: lax.fori_loop(0, 1000, body, x))
loop_unused_print = jax.jit(lambda x: lax.fori_loop(0, 1000, body_with_print, x))
loop_print_once = jax.jit(print_once)
"""

CASES = {
    "jit_plain": "plain(x3).block_until_ready()",
    "jit_pure_callback": "with_callback(x3).block_until_ready()",
    "loop_plain": "loop_plain(xs).block_until_ready()",
    "loop_unused_debug_print": "loop_unused_print(xs).block_until_ready()",
    "loop_print_once": "loop_print_once(xs).block_until_ready()",
}

_TIMER = """
import os, statistics, sys, timeit, json
import numpy as np
{imports}
namespace = dict(globals())
exec(SETUP, namespace)
real_stdout, sys.stdout = sys.stdout, open(os.devnull, "w")
out = {{}}
for name, stmt in CASES.items():
    number = 1
    while timeit.timeit(stmt, globals=namespace, number=number) < 0.1:
        number *= 4
    out[name] = statistics.median(
        timeit.timeit(stmt, globals=namespace, number=number) / number for _ in range(7)
    )
sys.stdout = real_stdout
print(json.dumps(out))
"""


def time_in(python: str, imports: str) -> dict:
    code = f"SETUP = {SETUP!r}\nCASES = {CASES!r}\n" + _TIMER.format(imports=imports)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "callbacks.json")
    )
    args = parser.parse_args()
    results = {
        "tracejit": time_in(
            sys.executable,
            "import tracejit as jax\nimport tracejit.numpy as jnp\nfrom tracejit import lax",
        )
    }
    if args.jax_python:
        results["jax"] = time_in(
            args.jax_python, "import jax\nimport jax.numpy as jnp\nfrom jax import lax"
        )
    for name, times in results.items():
        times["callback_round_trip"] = times["jit_pure_callback"] - times["jit_plain"]
        times["unused_print_overhead"] = times["loop_unused_debug_print"] - times["loop_plain"]
    columns = list(results)
    print(f"{'case':<26}" + "".join(f"{c:>14}" for c in columns))
    for name in [*CASES, "callback_round_trip", "unused_print_overhead"]:
        print(f"{name:<26}" + "".join(f"{results[c][name] * 1e6:>12.1f}us" for c in columns))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
