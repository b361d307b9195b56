"""The Krylov solvers, Slerp, RegularGridInterpolator and vq give JAX 0.10.2's results
(recorded by `make_jax_reference_sparse_spatial.py`): the solvers' iterates after a given
number of iterations or restarts (so the same algorithms, default `maxiter` and stopping
rules), Slerp outside its key times, and the results' dtypes and weak types."""

import pathlib

import pytest
from recorded_values import assert_matches, load_script, read_recorded

import tracejit
import tracejit.numpy
import tracejit.scipy

reference = load_script(pathlib.Path(__file__).parent / "make_jax_reference_sparse_spatial.py")
RECORDED = read_recorded(reference)


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_case(name):
    assert_matches(reference.CASES[name](tracejit), RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(reference.X64_CASES))
def test_case_x64(name, enable_x64):
    assert_matches(reference.X64_CASES[name](tracejit), RECORDED[name], name)
