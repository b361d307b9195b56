"""Second derivatives of Gamma samples in their shape `a`, against JAX's (recorded by
`make_jax_reference_gamma_second_derivatives.py`): forward mode through the series of
`random_gamma_grad`, as JAX; reverse mode over them is JAX's error."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp

_spec = importlib.util.spec_from_file_location(
    "gamma_reference",
    pathlib.Path(__file__).parent / "make_jax_reference_gamma_second_derivatives.py",
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = json.loads(reference.DATA.read_text())
# float32: the series iterate in float32 from lgamma and digamma a few ulp from XLA's
RTOL = {"float32": 2e-4, "float64": 1e-10}


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("dtype", sorted(reference.CASES))
def test_second_derivatives_in_a_match_jax(dtype, mode, enable_x64):
    f = reference.sample_sum(tracejit, getattr(jnp, dtype))
    first, second = tracejit.grad(f), tracejit.jacfwd(tracejit.grad(f))
    both_forward = tracejit.jacfwd(tracejit.jacfwd(f))
    if mode == "jit":
        first, second, both_forward = map(tracejit.jit, (first, second, both_forward))
    for a, (want_first, want_second) in zip(reference.CASES[dtype], DATA[dtype], strict=True):
        a = jnp.asarray(a, dtype)
        assert second(a).dtype == np.dtype(dtype)
        np.testing.assert_allclose(first(a), want_first, rtol=RTOL[dtype] / 10)
        np.testing.assert_allclose(second(a), want_second, rtol=RTOL[dtype])
        np.testing.assert_allclose(both_forward(a), want_second, rtol=RTOL[dtype])


def test_reverse_mode_over_the_series_is_jaxs_error():
    f = reference.sample_sum(tracejit, jnp.float32)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        tracejit.grad(tracejit.grad(f))(1.0)
