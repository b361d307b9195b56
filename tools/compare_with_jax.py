"""Every public function of a module called on every kind of input, in tracejit and in real JAX
0.10.2, and the differences listed: the result's dtypes, weak types and shapes, or the class
of the exception raised. Run by hand, with an interpreter that has jax installed:

    python tools/compare_with_jax.py --jax-python PATH [--module jax.numpy] [--arity 1]

Each framework runs in its own process (this file with `--worker`; tracejit serving as `jax`
through `python -m tracejit.as_jax`). Stop 30 used it on `jax.numpy` (one and two arguments),
`jax.nn`, `jax.scipy.special` and `jax.lax`; the differences it found are tests now
(tests/numpy/test_jax_edge_cases.py, tests/nn/test_jax_edge_cases.py). What it lists is a
lead, not a verdict: some differences are JAX's internals showing (an IndexError where an
axis is out of range in one function and a ValueError in another).
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import subprocess
import sys
import tempfile
import warnings


def make_inputs(jax, jnp, np) -> dict:
    """One of each kind of input: weak and Python scalars, arrays of each dtype kind."""
    return {
        "weak_f": jax.jit(lambda: 2.5)(), "py_f": 0.5, "py_i": 2, "py_b": True,
        "f32": jnp.asarray(np.array([0.5, -1.5], np.float32)),
        "i8": jnp.asarray(np.array([1, 2], np.int8)),
        "u32": jnp.asarray(np.array([1, 3], np.uint32)),
        "bool": jnp.asarray(np.array([True, False])),
        "bf16": jnp.asarray(np.array([0.5, 1.5]), jnp.bfloat16),
        "c64": jnp.asarray(np.array([0.5 + 1j, 1.5], np.complex64)),
    }  # fmt: skip


# Functions whose arguments are not arrays (shapes, dtypes, files, callables).
SKIPPED = {
    "save", "load", "savez", "fromfile", "fromiter", "frombuffer", "fromfunction",
    "fromstring", "frompyfunc", "vectorize", "piecewise", "printoptions", "set_printoptions",
    "get_printoptions", "iinfo", "finfo", "dtype", "from_dlpack", "einsum_path",
}  # fmt: skip


def describe(jax, np, result) -> list:
    return [
        (str(leaf.dtype), bool(getattr(leaf, "weak_type", False)), list(np.shape(leaf)))
        if hasattr(leaf, "dtype")
        else type(leaf).__name__
        for leaf in jax.tree_util.tree_leaves(result)
    ]


def work(module_name: str, arity: int, out_path: str) -> None:
    """Run in a worker: every call's description into `out_path` (JSON)."""
    warnings.simplefilter("ignore")
    import jax
    import jax.numpy as jnp
    import numpy as np

    module = importlib.import_module(module_name)
    inputs = make_inputs(jax, jnp, np)
    results = {}
    for name in sorted(dir(module)):
        fun = getattr(module, name)
        if name.startswith("_") or name in SKIPPED or not callable(fun) or isinstance(fun, type):
            continue
        for keys in _combinations(list(inputs), arity):
            try:
                described = describe(jax, np, fun(*[inputs[k] for k in keys]))
            except Exception as error:  # noqa: BLE001 (its class is the result)
                described = f"raises {type(error).__name__}"
            results[f"{name}({', '.join(keys)})"] = described
    with open(out_path, "w") as f:
        json.dump(results, f)


def _combinations(keys: list, arity: int) -> list:
    combos = [[]]
    for _ in range(arity):
        combos = [c + [k] for c in combos for k in keys]
    return combos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", required=True, help="an interpreter with jax installed")
    parser.add_argument("--module", default="jax.numpy")
    parser.add_argument("--arity", type=int, default=1)
    parser.add_argument("--worker", nargs=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        work(args.module, args.arity, args.worker[0])
        return
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for framework, command in (
            ("jax", [args.jax_python, __file__]),
            ("tracejit", [sys.executable, "-m", "tracejit.as_jax", __file__]),
        ):
            out = f"{tmp}/{framework}.json"
            options = ["--jax-python", "-", "--module", args.module, "--arity", str(args.arity)]
            subprocess.run([*command, *options, "--worker", out], check=True, cwd=tmp)
            with open(out) as f:
                found[framework] = json.load(f)
    jax_results, ours = found["jax"], found["tracejit"]
    by_function = collections.defaultdict(list)
    for call, want in jax_results.items():
        got = ours.get(call, "missing")
        if got != want:
            by_function[call.split("(")[0]].append(f"  {call}: JAX {want}, tracejit {got}")
    for lines in by_function.values():
        print("\n".join(lines[:5] + ([f"  ... {len(lines) - 5} more"] if len(lines) > 5 else [])))
    print(f"{len(jax_results)} calls, {sum(map(len, by_function.values()))} differ")


if __name__ == "__main__":
    main()
