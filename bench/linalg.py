"""tracejit's jitted linear algebra next to NumPy's (LAPACK) and, where installed, real JAX's,
in the same run.

    python bench/linalg.py [--jax-python /path/to/python] [--sizes 64 256 1024]
                           [--out bench/results/linalg.json]

Cases (issue 16): jitted `solve`, `cholesky`, `qr`, `eigh`, `svd` of n x n float32 matrices
(well conditioned: a random matrix plus n on the diagonal; positive definite for cholesky,
symmetric for eigh). JAX runs in the interpreter `--jax-python` names (a virtualenv with jax
installed; tracejit never imports it), NumPy in this one. Goals at n = 256: cholesky within
1.5x of NumPy/SciPy, solve/qr/eigh within 3x, svd within 5x. Prints a table (the best of 7
repeats, seconds per call: on a machine shared with other work the median mostly measures
the neighbours; and tracejit / NumPy) and writes JSON. LAPACK's threads follow the usual
variables: `OPENBLAS_NUM_THREADS=1` makes the three comparable on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# Each routine, as code run by tracejit and JAX (`jnp` is their numpy, `jax` the package) and
# by NumPy (`np`); `a` is the matrix of the case, `b` a right-hand side.
ROUTINES = {
    "solve": ("jnp.linalg.solve(a, b)", "np.linalg.solve(a, b)"),
    "cholesky": ("jnp.linalg.cholesky(a)", "np.linalg.cholesky(a)"),
    "qr": ("jnp.linalg.qr(a)", "np.linalg.qr(a)"),
    "eigh": ("jnp.linalg.eigh(a)", "np.linalg.eigh(a)"),
    "svd": ("jnp.linalg.svd(a)", "np.linalg.svd(a)"),
    # The FFT cases (`fft` of 2**20 points, `rfft2` of 1024 x 1024) are bench/fft.py's.
}

_INPUT = """
rng = np.random.default_rng(0)
a = rng.normal(size=(n, n)).astype(np.float32)
if routine == "cholesky":
    a = (a @ a.T / n + np.eye(n)).astype(np.float32)
elif routine == "eigh":
    a = (a + a.T) / 2
else:
    a = a + n * np.eye(n, dtype=np.float32)
b = rng.normal(size=(n,)).astype(np.float32)
"""

_TIMER = """
import timeit, json
import numpy as np
{imports}
out = {{}}
for routine, n, stmt in CASES:
    namespace = dict(globals(), routine=routine, n=n)
    exec(_INPUT, namespace)
    exec(setup.format(stmt=stmt), namespace)
    timed = call.format(stmt=stmt)
    number = 1
    while timeit.timeit(timed, globals=namespace, number=number) < 0.05:
        number *= 2
    out[f"{{routine}}_{{n}}"] = min(
        timeit.timeit(timed, globals=namespace, number=number) / number for _ in range(7)
    )
print(json.dumps(out))
"""

_JITTED = (
    (
        "f = jax.jit(lambda a, b: {stmt}); a, b = jnp.asarray(a), jnp.asarray(b)\n"
        "jax.block_until_ready(f(a, b))"
    ),
    "jax.block_until_ready(f(a, b))",
)


_TRACEJIT = "import tracejit as jax\nimport tracejit.numpy as jnp"


_TRACEJIT = "import tracejit as jax\nimport tracejit.numpy as jnp"


def time_in(python: str, imports: str, cases, setup: str, call: str) -> dict:
    code = (
        f"CASES = {cases!r}\n_INPUT = {_INPUT!r}\nsetup = {setup!r}\ncall = {call!r}\n"
        + _TIMER.format(imports=imports)
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "linalg.json")
    )
    args = parser.parse_args()
    traced = [(r, n, stmt) for r, (stmt, _) in ROUTINES.items() for n in args.sizes]
    plain = [(r, n, stmt) for r, (_, stmt) in ROUTINES.items() for n in args.sizes]
    results = {
        "tracejit": time_in(sys.executable, _TRACEJIT, traced, *_JITTED),
        "numpy": time_in(sys.executable, "", plain, "", "{stmt}"),
    }
    if args.jax_python:
        results["jax"] = time_in(
            args.jax_python, "import jax\nimport jax.numpy as jnp", traced, *_JITTED
        )
    columns = list(results)
    print(f"{'case':<16}" + "".join(f"{c:>14}" for c in columns) + f"{'tracejit/numpy':>16}")
    for routine, n, _ in traced:
        name = f"{routine}_{n}"
        ratio = results["tracejit"][name] / results["numpy"][name]
        times = "".join(f"{results[c][name] * 1e3:>12.3f}ms" for c in columns)
        print(f"{name:<16}{times}{ratio:>15.2f}x")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
