"""jnp.fft, jitted, next to NumPy's pocketfft and, where installed, real JAX, in the same run.

    python bench/fft.py [--jax-python /path/to/python] [--out bench/results/fft.json]

Cases (issue 16): the `fft` of 2**20 complex64 points and the `rfft2` of a 1024 x 1024
float32 image, jitted (`stablehlo.fft`, XLA's DUCC), the input already an array and the
result read back to NumPy. NumPy's `np.fft` (which keeps single precision) runs in this
interpreter, JAX in the one `--jax-python` names (a virtualenv with jax installed; tracejit
never imports it). Goal: within 1.5x of NumPy. Prints a table (median seconds per call) and
writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_DATA = """
rng = np.random.default_rng(0)
signal = (rng.standard_normal(2**20) + 1j * rng.standard_normal(2**20)).astype(np.complex64)
image = rng.standard_normal((1024, 1024)).astype(np.float32)
"""

# Each case, as code run by both tracejit and JAX: `jnp`, `jax` (the package) and the data.
CASES = {
    "fft_2^20_c64_jit": (
        "f = jax.jit(jnp.fft.fft); x = jnp.asarray(signal); np.asarray(f(x))",
        "np.asarray(f(x))",
    ),
    "rfft2_1024x1024_f32_jit": (
        "g = jax.jit(jnp.fft.rfft2); y = jnp.asarray(image); np.asarray(g(y))",
        "np.asarray(g(y))",
    ),
}
NUMPY_CASES = {  # (np.fft keeps single precision: complex64 results, as jnp's)
    "fft_2^20_c64_jit": ("", "np.fft.fft(signal)"),
    "rfft2_1024x1024_f32_jit": ("", "np.fft.rfft2(image)"),
}

_TIMER = """
import statistics, timeit, json
import numpy as np
{imports}
{data}
out = {{}}
for name, (setup, stmt) in CASES.items():
    namespace = dict(globals())
    exec(setup, namespace)
    number = 1
    while timeit.timeit(stmt, globals=namespace, number=number) < 0.2:
        number *= 2
    out[name] = statistics.median(
        timeit.timeit(stmt, globals=namespace, number=number) / number for _ in range(7)
    )
print(json.dumps(out))
"""


def time_in(python: str, imports: str, cases: dict) -> dict:
    """Median seconds per call of each case, timed in a fresh `python`."""
    code = f"CASES = {cases!r}\n" + _TIMER.format(imports=imports, data=_DATA)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "fft.json")
    )
    args = parser.parse_args()
    results = {
        "tracejit": time_in(
            sys.executable, "import tracejit as jax\nimport tracejit.numpy as jnp", CASES
        ),
        "numpy": time_in(sys.executable, "", NUMPY_CASES),
    }
    if args.jax_python:
        results["jax"] = time_in(args.jax_python, "import jax\nimport jax.numpy as jnp", CASES)
    columns = list(results)
    print(f"{'case':<26}" + "".join(f"{c:>14}" for c in columns) + f"{'tracejit/numpy':>16}")
    for name in CASES:
        ratio = results["tracejit"][name] / results["numpy"][name]
        times = "".join(f"{results[c][name] * 1e3:>12.2f}ms" for c in columns)
        print(f"{name:<26}{times}{ratio:>15.2f}x")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
