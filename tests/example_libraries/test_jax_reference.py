"""`example_libraries` against JAX 0.10.2's (`make_jax_reference.py`): optimizers' trajectories
(parameters and every state leaf after 12 jitted steps) and schedules, and stax layers' output
shapes, initial parameters for the same key (tracejit.random is JAX's bit for bit) and
outputs, to float32 rounding."""

import importlib.util
import pathlib
import types

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit.example_libraries import optimizers, stax

_spec = importlib.util.spec_from_file_location(
    "example_libraries_reference", pathlib.Path(__file__).parent / "make_jax_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))
M = types.SimpleNamespace(jax=tracejit, jnp=jnp, optimizers=optimizers, stax=stax)


def recorded(name: str) -> list[np.ndarray]:
    count = sum(1 for key in DATA if key.startswith(name + "/"))
    return [DATA[f"{name}/{i}"] for i in range(count)]


@pytest.mark.parametrize("name", sorted({**reference.OPTIMIZER_CASES, **reference.STAX_CASES}))
def test_same_values_as_jax(name):
    case = {**reference.OPTIMIZER_CASES, **reference.STAX_CASES}[name]
    ours, theirs = reference.leaves_of(M, case(M)), recorded(name)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs, strict=True):
        assert got.shape == want.shape
        # atol: a convolution's sums of ~30 products of O(1) terms round differently in
        # NumPy's einsum (eager) and XLA's convolution (JAX's eager ops), a few 1e-7 apart
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
