"""Eager-mode dispatch cost: tracejit.numpy next to plain NumPy, measured in the same run.

    python bench/eager.py [--all] [--only NAME ...] [--out bench/results/eager.json]

For each operation and size, the time per call, for NumPy and for tracejit, and the
difference. Goals (issue 2): at most 2 µs per op above NumPy on
4-element arrays, within 10% of NumPy on 1,000,000 elements, `jnp.asarray` of a small NumPy
array at most 3 µs, `import tracejit` at most 150 ms. Goals (issue 21): `jnp.add` on f32[10] at
most 0.5 µs above `np.add`, `jnp.sum` at most 1 µs above `np.sum`, and every element-wise and
reduction function that NumPy also has (the second table, `--all`) at most 1.1x NumPy's time on
1,000,000 float32 elements. `--only` limits that table to the functions named (and skips the
first table and the import times), to rerun a few rows.

The machine may be shared: NumPy's and tracejit's timing rounds alternate, so that a burst of
load slows both sides of a row, and each side's best round is reported, which load can only
make slower (medians of a loaded machine moved single-pass functions by 2-4x between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit
from functools import partial

import numpy as np


def affine(x):
    return x * 2 + 1


def paired_per_call_seconds(fn_a, fn_b, *, rounds: int = 15, target_seconds: float = 0.01):
    """The best over `rounds` of the mean time of one call of `fn_a` and of `fn_b`, their
    rounds alternating."""
    numbers = []
    for fn in (fn_a, fn_b):
        number = 1
        while timeit.timeit(fn, number=number) < target_seconds / 4:
            number *= 4
        numbers.append(number)
    times_a, times_b = [], []
    for _ in range(rounds):
        times_a.append(timeit.timeit(fn_a, number=numbers[0]) / numbers[0])
        times_b.append(timeit.timeit(fn_b, number=numbers[1]) / numbers[1])
    return min(times_a), min(times_b)


def import_seconds(module: str, runs: int = 7) -> float:
    """Median time of `import module` in a fresh interpreter, bytecode caches warm (as after
    `pip install`, which compiles them)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(runs + 1):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        times.append(float(out.stdout))
    return statistics.median(times[1:])  # the first run may write the bytecode caches


# Element-wise and reduction functions that NumPy has under the same name, by operand kind:
# "x" a float32 array in (0, 1), "xy" two of them, "b" a boolean array.
UNARY = [
    "abs",
    "absolute",
    "negative",
    "positive",
    "sqrt",
    "cbrt",
    "square",
    "reciprocal",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arctanh",
    "deg2rad",
    "rad2deg",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "sign",
    "signbit",
    "isnan",
    "isinf",
    "isfinite",
    "fabs",
    "spacing",
]
BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "floor_divide",
    "power",
    "float_power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "arctan2",
    "hypot",
    "fmod",
    "mod",
    "remainder",
    "copysign",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "heaviside",
]
REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "ptp",
    "std",
    "var",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
    "nansum",
    "nanmean",
    "nanmax",
    "nanmin",
    "median",
]
LOGICAL = ["logical_not", "any", "all", "count_nonzero"]


def all_functions_table(jnp, size: int, only=None) -> list[dict]:
    """Each function of the lists above (or those of them in `only`), jnp next to NumPy, on
    `size` float32 elements."""
    x_np = np.linspace(0.01, 0.99, size, dtype=np.float32)
    y_np = np.linspace(0.5, 1.5, size, dtype=np.float32)
    b_np = x_np > 0.5
    x, y, b = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(b_np)
    operands = {"x": ((x_np,), (x,)), "xy": ((x_np, y_np), (x, y)), "b": ((b_np,), (b,))}
    kinds = [(UNARY, "x"), (BINARY, "xy"), (REDUCTIONS, "x"), (LOGICAL, "b")]
    rows = []
    for names, kind in kinds:
        numpy_args, tracejit_args = operands[kind]
        for name in names:
            if only and name not in only:
                continue
            numpy_fn = partial(getattr(np, name), *numpy_args)
            tracejit_fn = partial(getattr(jnp, name), *tracejit_args)
            t_numpy, t_tracejit = paired_per_call_seconds(numpy_fn, tracejit_fn)
            rows.append({"op": name, "size": size, "numpy_us": t_numpy * 1e6,
                         "tracejit_us": t_tracejit * 1e6, "ratio": t_tracejit / t_numpy})  # fmt: skip
    return rows


def per_op_rows(jnp) -> list[dict]:
    """The first table: a few operations at 4, 10 and 1,000,000 elements, and `jnp.asarray`."""
    rows = []
    for size in (4, 10, 1_000_000):
        x_np = np.linspace(0.0, 1.0, size, dtype=np.float32)
        y_np = np.linspace(1.0, 2.0, size, dtype=np.float32)
        x, y = jnp.asarray(x_np), jnp.asarray(y_np)
        cases = {
            "add": (partial(np.add, x_np, y_np), partial(jnp.add, x, y)),
            "sum": (partial(np.sum, x_np), partial(jnp.sum, x)),
            "sin": (partial(np.sin, x_np), partial(jnp.sin, x)),
            "x * 2 + 1": (partial(affine, x_np), partial(affine, x)),
            "jnp.asarray(numpy)": (partial(np.array, x_np), partial(jnp.asarray, x_np)),
        }
        for numpy_fn, tracejit_fn in cases.values():  # warm up caches and the CPU clock
            paired_per_call_seconds(numpy_fn, tracejit_fn, rounds=3)
        for name, (numpy_fn, tracejit_fn) in cases.items():
            ops = 2 if name == "x * 2 + 1" else 1
            t_numpy, t_tracejit = paired_per_call_seconds(numpy_fn, tracejit_fn)
            rows.append(
                {
                    "op": name,
                    "size": size,
                    "numpy_us": t_numpy * 1e6,
                    "tracejit_us": t_tracejit * 1e6,
                    "overhead_per_op_us": (t_tracejit - t_numpy) * 1e6 / ops,
                    "ratio": t_tracejit / t_numpy,
                }
            )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "eager.json")
    )
    parser.add_argument("--all", action="store_true", help="also the table of every function")
    parser.add_argument("--only", nargs="+", help="only these functions of that table")
    parser.add_argument("--size", type=int, default=1_000_000, help="elements in that table")
    args = parser.parse_args()

    import tracejit.numpy as jnp

    rows, import_ms, numpy_import_ms = [], None, None
    if not args.only:
        rows = per_op_rows(jnp)
        import_ms = import_seconds("tracejit") * 1e3
        numpy_import_ms = import_seconds("numpy") * 1e3
        print(f"{'op':<20} {'size':>9} {'numpy µs':>10} {'tracejit µs':>12} {'+µs/op':>8} "
              f"{'ratio':>7}")  # fmt: skip
        for r in rows:
            print(
                f"{r['op']:<20} {r['size']:>9} {r['numpy_us']:>10.2f} {r['tracejit_us']:>12.2f} "
                f"{r['overhead_per_op_us']:>8.2f} {r['ratio']:>7.2f}"
            )
        print("(jnp.asarray is compared with np.array(x), a copy)")
    table = all_functions_table(jnp, args.size, args.only) if args.all or args.only else []
    if table:
        print(f"\nevery function NumPy also has, {args.size:,} float32 elements (slowest first)")
        print(f"{'function':<16} {'numpy µs':>10} {'tracejit µs':>12} {'ratio':>7}")
        for r in sorted(table, key=lambda r: -r["ratio"]):
            flag = "  > 1.1x" if r["ratio"] > 1.1 else ""
            print(f"{r['op']:<16} {r['numpy_us']:>10.1f} {r['tracejit_us']:>12.1f} "
                  f"{r['ratio']:>7.2f}{flag}")  # fmt: skip
    if import_ms is not None:
        print(f"import tracejit: {import_ms:.0f} ms (import numpy alone: {numpy_import_ms:.0f} ms)")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(
            {
                "rows": rows,
                "all_functions": table,
                "import_tracejit_ms": import_ms,
                "import_numpy_ms": numpy_import_ms,
            },
            f,
            indent=2,
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
