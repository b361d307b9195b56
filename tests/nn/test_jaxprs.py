"""`tracejit.nn` functions print in jaxprs as JAX 0.10.2 prints them (`data/jaxprs.json`,
recorded by `make_jax_reference_jaxprs.py`), `jit`s and `custom_jvp_call`s included; eagerly they
give the values of the same call under `jit`."""

from pathlib import Path

import pytest
from recorded_jaxprs import assert_eager_equals_jit, jaxpr_params, load_cases, read_recorded

import tracejit as jax

HERE = Path(__file__).parent
CASES = load_cases(HERE / "jaxpr_cases.py", jax)
RECORDED = read_recorded(HERE / "data" / "jaxprs.json")

# Not yet JAX's: glu (`jnp.split` as slices, not JAX's `split`), dot_product_attention
# (another einsum order and an unused logsumexp).
DIFFERENT = {"glu", "dot_product_attention"}


@pytest.mark.parametrize("fun, args, expected", jaxpr_params(CASES, RECORDED, DIFFERENT))
def test_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_jit(case):
    assert_eager_equals_jit(jax, *CASES[case], rtol=1e-5, atol=1e-6)
