"""`jnp` functions that JAX stages as a `jit` of their own print as JAX 0.10.2 prints them
(`data/jitted_jaxprs.json`, recorded by `make_jax_reference_jitted_jaxprs.py`); eagerly they
give the values of the same call under `jit`."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "data" / "jitted_jaxprs.json").read_text())
_spec = importlib.util.spec_from_file_location("cases", HERE / "jitted_jaxpr_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
OPERAND, jitted_calls = cases.OPERAND, cases.jitted_calls

# Not yet JAX's jaxprs: another composition of primitives, or not yet staged as JAX's jit.
DIFFERENT = {
    "arccosh",
    "convolve",
    "corrcoef",
    "correlate",
    "cov",
    "cumulative_sum",
    "diag",
    "frexp",
    "gradient",
    "i0",
    "interp",
    "isin",
    "matvec",
    "median",
    "median_axis",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "pad",
    "percentile",
    "polyadd",
    "polyval",
    "quantile",
    "searchsorted",
    "take",
    "unwrap",
    "vecmat",
}


def _params():
    for case, call in jitted_calls(jax).items():
        marks = (
            [pytest.mark.xfail(strict=True, reason="not yet JAX's jaxpr")]
            if case in DIFFERENT
            else []
        )
        yield pytest.param(call, RECORDED[case], id=case, marks=marks)


@pytest.mark.parametrize("call, expected", list(_params()))
def test_jaxpr_prints_as_jax(call, expected):
    assert str(jax.make_jaxpr(call)(OPERAND)) == expected


@pytest.mark.parametrize("case", sorted(jitted_calls(jax)))
def test_eager_equals_jit(case):
    call = jitted_calls(jax)[case]
    eager, staged = call(OPERAND), jax.jit(call)(OPERAND)
    for e, s in zip(jax.tree.leaves(eager), jax.tree.leaves(staged), strict=True):
        assert e.dtype == s.dtype and e.shape == s.shape
        np.testing.assert_allclose(np.asarray(e), np.asarray(s), rtol=1e-6)
