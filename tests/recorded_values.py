"""Results of JAX 0.10.2 recorded as JSON, and the check made of them.

A recording script (`make_jax_reference_*.py`) defines `CASES` and `X64_CASES`, each case
`fun(jax_like)` written against `jax` or `tracejit`, and calls `record` in its `main(jax)`,
run by `tools/jax_reference.py` in JAX's virtualenv; its test loads the script with `load_script` (without running it) and compares
tracejit's result of each case with the recording (`assert_matches`): values, dtypes and weak
types. This module imports neither package at its top, so that both virtualenvs can load it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pathlib

import numpy as np


def describe(out):
    """A result (an array, or a tuple or dict of them) as JSON: values, dtypes, weak types."""
    if isinstance(out, dict):
        return {k: describe(v) for k, v in out.items()}
    if isinstance(out, tuple):
        return [describe(v) for v in out]
    return {
        "value": np.asarray(out, np.float64).tolist(),
        "dtype": str(out.dtype),
        "weak_type": bool(out.aval.weak_type),
    }


def record(jax, cases: dict, x64_cases: dict, data_path: pathlib.Path) -> None:
    """Writes the result by `jax` (real JAX 0.10.2, given by tools/jax_reference.py, with the
    submodules of the script's `JAX_MODULES`) of every case to `data_path`, `x64_cases` with
    `jax_enable_x64`."""
    recorded = {name: describe(case(jax)) for name, case in cases.items()}
    jax.config.update("jax_enable_x64", True)
    recorded.update({name: describe(case(jax)) for name, case in x64_cases.items()})
    data_path.parent.mkdir(exist_ok=True)
    data_path.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"wrote {data_path}")


def load_script(path: pathlib.Path):
    """The recording script at `path` as a module (its `CASES`, `X64_CASES`, `DATA`)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_recorded(script) -> dict:
    return json.loads(script.DATA.read_text())


def assert_matches(got, want, path: str) -> None:
    """`got` (arrays, in tuples or dicts) has the recorded values (to 1e-9 in float64, 2e-6
    otherwise), dtypes and weak types; `path` names the place in messages."""
    if isinstance(want, dict) and "dtype" not in want:
        assert set(got) == set(want), (path, sorted(got), sorted(want))
        for key in want:
            assert_matches(got[key], want[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_matches(g, w, f"{path}[{i}]")
    else:
        assert (str(got.dtype), got.weak_type) == (want["dtype"], want["weak_type"]), path
        expected = np.asarray(want["value"], np.float64)
        tol = 1e-9 if got.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(
            np.asarray(got, np.float64), expected, rtol=tol, atol=tol, equal_nan=True, err_msg=path
        )
