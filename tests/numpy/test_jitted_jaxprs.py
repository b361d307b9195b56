"""`jnp` functions that JAX stages as a `jit` of their own print as JAX 0.10.2 prints them
(`data/jitted_jaxprs.json`, recorded by `make_jax_reference_jitted_jaxprs.py`); eagerly they
give the values of the same call under `jit`."""

from pathlib import Path

import pytest
from recorded_jaxprs import assert_eager_equals_jit, jaxpr_params, load_cases, read_recorded

import tracejit as jax

HERE = Path(__file__).parent
CASES = load_cases(HERE / "jitted_jaxpr_cases.py", jax)
RECORDED = read_recorded(HERE / "data" / "jitted_jaxprs.json")

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


@pytest.mark.parametrize("fun, args, expected", jaxpr_params(CASES, RECORDED, DIFFERENT))
def test_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_jit(case):
    assert_eager_equals_jit(jax, *CASES[case], rtol=1e-6, atol=0)
