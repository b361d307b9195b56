"""rankdata, mode, sem, trapezoid, convolve, map_coordinates and minimize give JAX 0.10.2's
results (recorded by `make_jax_reference_scipy_misc.py`): values, dtypes and weak types, and
for BFGS the same iterations and function evaluations in float64."""

import pathlib

import pytest
from recorded_values import assert_matches, load_script, read_recorded

import tracejit
import tracejit.numpy
import tracejit.scipy

reference = load_script(pathlib.Path(__file__).parent / "make_jax_reference_scipy_misc.py")
RECORDED = read_recorded(reference)


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_case(name):
    assert_matches(reference.CASES[name](tracejit), RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(reference.X64_CASES))
def test_case_x64(name, enable_x64):
    assert_matches(reference.X64_CASES[name](tracejit), RECORDED[name], name)
