"""Every benchmark in bench/, each in quick mode, into one JSON: what a change is checked against.

    python bench/run_all.py [--jax-python /path/to/python] [--only jit eager ...]
                            [--out bench/results/all.json]

Each benchmark runs as its own process with the arguments below (fewer rounds or sizes than
its defaults, so that the whole run takes minutes), writes its JSON into a temporary folder,
and its table is echoed. The combined file maps each benchmark to its results, its wall-clock
seconds and, if it failed, the end of its error output. `--jax-python` is handed to the
benchmarks that compare with real JAX.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# benchmark -> its quick arguments; a benchmark that is not here fails the run, so none is
# forgotten
QUICK = {
    "autodiff": ["--rounds", "3"],
    "callbacks": [],
    "control_flow": ["--no-eager"],
    "distributed": [],
    "convnet": ["--rounds", "3"],
    "eager": [],
    "fft": [],
    "jit": ["--quick", "--rounds", "3"],
    "linalg": ["--sizes", "64", "256"],
    "numerics": ["--size", "20000"],
    "pmap": [],
    "prng": [],
    "runtime": [],
    "tracing": ["--sizes", "1000", "10000"],
    "training": ["--rounds", "3"],
    "vmap": [],
}
TAKES_JAX_PYTHON = {"callbacks", "convnet", "fft", "jit", "linalg", "numerics", "prng", "training"}


def benchmarks() -> list[str]:
    names = sorted(
        name[:-3] for name in os.listdir(HERE) if name.endswith(".py") and name != "run_all.py"
    )
    missing = [name for name in names if name not in QUICK]
    if missing:
        raise SystemExit(f"bench/run_all.py has no quick arguments for {missing}: add them")
    return names


def run(name: str, folder: str, jax_python: str | None) -> dict:
    out = os.path.join(folder, f"{name}.json")
    command = [sys.executable, os.path.join(HERE, f"{name}.py"), *QUICK[name], "--out", out]
    if jax_python and name in TAKES_JAX_PYTHON:
        command += ["--jax-python", jax_python]
    print(f"== {name}: {' '.join(command[1:])}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    print(done.stdout, end="", flush=True)
    row = {"seconds": seconds, "returncode": done.returncode}
    if done.returncode:
        row["error"] = done.stderr[-3000:]
        print(f"FAILED ({done.returncode}):\n{row['error']}", flush=True)
    else:
        with open(out) as f:
            row["results"] = json.load(f)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--only", nargs="+", help="these benchmarks only")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "all.json"))
    args = parser.parse_args()
    names = args.only or benchmarks()
    results = {}
    with tempfile.TemporaryDirectory(prefix="tracejit-bench-") as folder:
        for name in names:
            results[name] = run(name, folder, args.jax_python)
    print(f"\n{'benchmark':<14}{'seconds':>9}  status")
    for name, row in results.items():
        status = "ok" if row["returncode"] == 0 else f"failed ({row['returncode']})"
        print(f"{name:<14}{row['seconds']:>9.1f}  {status}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")
    if any(row["returncode"] for row in results.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
