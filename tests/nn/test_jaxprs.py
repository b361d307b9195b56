"""`tracejit.nn` functions print in jaxprs as JAX 0.10.2 prints them (`data/jaxprs.json`,
recorded by `make_jax_reference_jaxprs.py`), `jit`s and `custom_jvp_call`s included; eagerly they
give the values of the same call under `jit`."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "data" / "jaxprs.json").read_text())
_spec = importlib.util.spec_from_file_location("nn_jaxpr_cases", HERE / "jaxpr_cases.py")
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES = _cases.jaxpr_cases(jax)

# Not yet JAX's: softplus and log_sigmoid (the body of `jnp.logaddexp`), glu (`jnp.split` as
# slices, not JAX's `split`), dot_product_attention (another einsum order and an unused
# logsumexp).
DIFFERENT = {"softplus", "log_sigmoid", "glu", "dot_product_attention"}


def _params():
    for case, (fun, args) in CASES.items():
        marks = (
            [pytest.mark.xfail(strict=True, reason="not yet JAX's jaxpr")]
            if case in DIFFERENT
            else []
        )
        yield pytest.param(fun, args, RECORDED[case], id=case, marks=marks)


@pytest.mark.parametrize("fun, args, expected", list(_params()))
def test_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_jit(case):
    fun, args = CASES[case]
    eager, staged = fun(*args), jax.jit(fun)(*args)
    for e, s in zip(jax.tree.leaves(eager), jax.tree.leaves(staged), strict=True):
        assert e.dtype == s.dtype and e.shape == s.shape
        np.testing.assert_allclose(np.asarray(e), np.asarray(s), rtol=1e-5, atol=1e-6)
