"""rankdata, mode, sem, trapezoid, convolve, map_coordinates and minimize give JAX 0.10.2's
results (recorded by `make_jax_reference_scipy_misc.py`): values, dtypes and weak types, and
for BFGS the same iterations and function evaluations in float64."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import tracejit
import tracejit.numpy
import tracejit.scipy

_spec = importlib.util.spec_from_file_location(
    "jax_scipy_misc_reference", pathlib.Path(__file__).parent / "make_jax_reference_scipy_misc.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
RECORDED = json.loads(reference.DATA.read_text())


def _compare(got, want, path):
    if isinstance(want, dict) and "dtype" not in want:
        assert set(got) == set(want), (path, sorted(got), sorted(want))
        for key in want:
            _compare(got[key], want[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{path}[{i}]")
    else:
        assert (str(got.dtype), got.weak_type) == (want["dtype"], want["weak_type"]), path
        expected = np.asarray(want["value"], np.float64)
        tol = 1e-9 if got.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(
            np.asarray(got, np.float64), expected, rtol=tol, atol=tol, equal_nan=True, err_msg=path
        )


def _as_recorded(out):
    """`out` shaped as `describe` records it: NamedTuples of minimize as dicts."""
    if hasattr(out, "_fields"):
        return {f: getattr(out, f) for f in out._fields if getattr(out, f) is not None}
    return out


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_case(name):
    _compare(reference.CASES[name](tracejit), RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(reference.X64_CASES))
def test_case_x64(name, enable_x64):
    _compare(reference.X64_CASES[name](tracejit), RECORDED[name], name)
