"""scipy functions give JAX 0.10.2's results, recorded by two scripts: values, dtypes and weak
types.
- `make_jax_reference_scipy_misc.py`: rankdata, mode, sem, trapezoid, convolve,
  map_coordinates and minimize (for BFGS the same iterations and function evaluations in
  float64);
- `make_jax_reference_sparse_spatial.py`: the Krylov solvers, Slerp, RegularGridInterpolator
  and vq (the solvers' iterates after a given number of iterations or restarts, so the same
  algorithms, default `maxiter` and stopping rules; Slerp outside its key times)."""

import pathlib

import pytest
from recorded_values import assert_matches, load_script, read_recorded

import tracejit
import tracejit.numpy
import tracejit.scipy

HERE = pathlib.Path(__file__).parent
SCRIPTS = [
    load_script(HERE / name)
    for name in ("make_jax_reference_scipy_misc.py", "make_jax_reference_sparse_spatial.py")
]


def _cases(attribute: str) -> list:
    return [
        pytest.param(case, recorded[name], id=name)
        for script, recorded in ((s, read_recorded(s)) for s in SCRIPTS)
        for name, case in sorted(getattr(script, attribute).items())
    ]


@pytest.mark.parametrize("case, recorded", _cases("CASES"))
def test_case(case, recorded, request):
    assert_matches(case(tracejit), recorded, request.node.callspec.id)


@pytest.mark.parametrize("case, recorded", _cases("X64_CASES"))
def test_case_x64(case, recorded, request, enable_x64):
    assert_matches(case(tracejit), recorded, request.node.callspec.id)
