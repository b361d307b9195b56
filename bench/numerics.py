"""How often tracejit's values differ from JAX's in their last bits, function by function.

    python bench/numerics.py [--jax-python /path/to/python] [--size N]
                             [--out bench/results/numerics.json]

Not a speed benchmark: a table of agreement, kept beside them because it measures a trade the
speed figures make. Eagerly, tracejit computes elementwise functions with NumPy (fast, and
exact where IEEE arithmetic is exact), where JAX runs XLA's kernels, whose exp, log, tanh, ...
are polynomial approximations of their own: both are within a few units in the last place
(ulps) of the true value, rarely the same one. Under `jit` both run XLA's kernels, and differ
only where the plugin's XLA build computes a function differently from jaxlib's.

For each case, on `--size` float32 inputs from its domain, the table gives the share of
elements whose bits differ and the largest difference in ulps: tracejit eager against JAX
eager, tracejit `jit` against JAX `jit`, and tracejit eager against tracejit `jit`. JAX runs in
the interpreter `--jax-python` names (a virtualenv with jax installed; tracejit never imports
it); without it only the last column is printed. `docs/numerics.md` discusses the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

# name -> (expression of `x` with `jnp`, `lax`, `nn` bound; the inputs' domain)
CASES = {
    "exp": ("jnp.exp(x)", "normal3"),
    "log": ("jnp.log(x)", "positive"),
    "log1p": ("jnp.log1p(x)", "positive"),
    "expm1": ("jnp.expm1(x)", "normal3"),
    "exp2": ("jnp.exp2(x)", "normal3"),
    "tanh": ("jnp.tanh(x)", "normal3"),
    "logistic": ("lax.logistic(x)", "normal3"),
    "sin": ("jnp.sin(x)", "normal3"),
    "cos": ("jnp.cos(x)", "normal3"),
    "tan": ("jnp.tan(x)", "normal3"),
    "arctan": ("jnp.arctan(x)", "normal3"),
    "arcsin": ("jnp.arcsin(x)", "unit"),
    "arcsinh": ("jnp.arcsinh(x)", "normal3"),
    "arctanh": ("jnp.arctanh(x)", "unit"),
    "cbrt": ("jnp.cbrt(x)", "normal3"),
    "sqrt": ("jnp.sqrt(x)", "positive"),
    "rsqrt": ("lax.rsqrt(x)", "positive"),
    "power_1.7": ("jnp.power(x, 1.7)", "positive"),
    "erf": ("lax.erf(x)", "normal3"),
    "erf_inv": ("lax.erf_inv(x)", "unit"),
    "gelu": ("nn.gelu(x)", "normal3"),
    "softplus": ("nn.softplus(x)", "normal3"),
    "x / 3.7 (broadcast divisor)": ("x / 3.7", "normal3"),
    "mean": ("jnp.mean(x.reshape(-1, 10), axis=1)", "normal3"),
    "sum": ("jnp.sum(x.reshape(-1, 100), axis=1)", "normal3"),
    "complex multiply": ("(x[::2] + 1j * x[1::2]) * (x[1::2] - 2j * x[::2])", "normal3"),
    "complex divide": ("(x[::2] + 1j * x[1::2]) / (x[1::2] - 2j * x[::2])", "normal3"),
    "complex exp": ("jnp.exp(x[::2] + 1j * x[1::2])", "normal3"),
}

_RUNNER = """
import json, sys
import numpy as np
{imports}
cases, size, path = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
normal = rng.standard_normal(size)
domains = {{
    "normal3": (3 * normal).astype(np.float32),
    "positive": (np.abs(3 * normal) + 0.01).astype(np.float32),
    "unit": np.clip(normal / 3, -0.99, 0.99).astype(np.float32),
}}
out = {{}}
for name, (expression, domain) in cases.items():
    fun = eval("lambda x: " + expression, {{"jnp": jnp, "lax": lax, "nn": nn}})
    x = jnp.asarray(domains[domain])
    out[name + "/eager"] = np.asarray(fun(x))
    out[name + "/jit"] = np.asarray(jax.jit(fun)(x))
np.savez(path, **out)
"""
_IMPORTS = {
    "tracejit": "import tracejit as jax\nfrom tracejit import lax, nn\nimport tracejit.numpy as jnp",
    "jax": "import jax\nfrom jax import lax, nn\nimport jax.numpy as jnp",
}


def values_in(python: str, framework: str, size: int, folder: str) -> dict:
    path = os.path.join(folder, f"{framework}.npz")
    code = _RUNNER.format(imports=_IMPORTS[framework])
    subprocess.run([python, "-c", code, json.dumps(CASES), str(size), path], check=True)
    with np.load(path) as data:
        return dict(data)


def _ulps(x: np.ndarray) -> np.ndarray:
    """Each float32 as an integer that counts ulps from zero (negatives below it)."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def agreement(a: np.ndarray, b: np.ndarray) -> dict:
    """The share of elements (complex: parts) whose bits differ, and the most ulps apart."""
    if a.dtype.kind == "c":
        a, b = np.stack([a.real, a.imag]), np.stack([b.real, b.imag])
    both_nan = np.isnan(a) & np.isnan(b)
    differ = (a.view(np.int32) != b.view(np.int32)) & ~both_nan
    ulps = np.abs(_ulps(a) - _ulps(b))[differ]
    return {"differ": float(differ.mean()), "max_ulps": int(ulps.max()) if ulps.size else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "numerics.json")
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ours = values_in(sys.executable, "tracejit", args.size, folder)
        theirs = values_in(args.jax_python, "jax", args.size, folder) if args.jax_python else None
    columns = {"tracejit eager vs jit": lambda n: (ours[f"{n}/eager"], ours[f"{n}/jit"])}
    if theirs is not None:
        columns = {
            "eager vs JAX eager": lambda n: (ours[f"{n}/eager"], theirs[f"{n}/eager"]),
            "jit vs JAX jit": lambda n: (ours[f"{n}/jit"], theirs[f"{n}/jit"]),
            **columns,
        }
    results = {
        name: {column: agreement(*pair(name)) for column, pair in columns.items()} for name in CASES
    }
    print(f"{'case':<30}" + "".join(f"{column:>26}" for column in columns))
    for name, row in results.items():
        cells = (f"{r['differ'] * 100:>13.2f}% {r['max_ulps']:>5d} ulps" for r in row.values())
        print(f"{name:<30}" + "".join(f"{cell:>26}" for cell in cells))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"size": args.size, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
