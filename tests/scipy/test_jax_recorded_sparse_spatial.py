"""The Krylov solvers, Slerp, RegularGridInterpolator and vq give JAX 0.10.2's results
(recorded by `make_jax_reference_sparse_spatial.py`): the solvers' iterates after a given
number of iterations or restarts (so the same algorithms, default `maxiter` and stopping
rules), Slerp outside its key times, and the results' dtypes and weak types."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import tracejit
import tracejit.numpy
import tracejit.scipy

_spec = importlib.util.spec_from_file_location(
    "jax_sparse_spatial_reference",
    pathlib.Path(__file__).parent / "make_jax_reference_sparse_spatial.py",
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
RECORDED = json.loads(reference.DATA.read_text())


def _compare(got, want, path):
    if isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{path}[{i}]")
        return
    assert (str(got.dtype), got.weak_type) == (want["dtype"], want["weak_type"]), path
    tol = 1e-9 if got.dtype == np.float64 else 2e-6
    np.testing.assert_allclose(
        np.asarray(got, np.float64), want["value"], rtol=tol, atol=tol, equal_nan=True,
        err_msg=path,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_case(name):
    _compare(reference.CASES[name](tracejit), RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(reference.X64_CASES))
def test_case_x64(name, enable_x64):
    _compare(reference.X64_CASES[name](tracejit), RECORDED[name], name)
