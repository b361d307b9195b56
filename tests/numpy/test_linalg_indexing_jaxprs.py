"""`jnp.linalg` functions and the common indexing forms print in jaxprs as JAX 0.10.2 prints
them (`data/linalg_indexing_jaxprs.json`, recorded by
`make_jax_reference_linalg_indexing_jaxprs.py`); eagerly they give the values of the same call
under `jit`."""

from pathlib import Path

import pytest
from recorded_jaxprs import assert_eager_equals_jit, jaxpr_params, load_cases, read_recorded

import tracejit as jax

HERE = Path(__file__).parent
CASES = load_cases(HERE / "linalg_indexing_jaxpr_cases.py", jax)
RECORDED = read_recorded(HERE / "data" / "linalg_indexing_jaxprs.json")

# Not yet JAX's: inv, solve (JAX: custom_linear_solve around shared `_lu_solve` jaxprs),
# slogdet, cholesky (JAX masks the factor with tril), pinv, lstsq; two index arrays (JAX
# shares one constant), `.at[].apply` (JAX: a `scatter` whose update_jaxpr applies the
# function) and take_along_axis (JAX: a jit of its own).
DIFFERENT = {"inv", "solve", "slogdet", "cholesky", "pinv", "lstsq"} | {
    "two_index_arrays",
    "apply",
    "take_along_axis",
}


@pytest.mark.parametrize("fun, args, expected", jaxpr_params(CASES, RECORDED, DIFFERENT))
def test_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_jit(case):
    fun, args = CASES[case]
    args = tuple(jax.numpy.asarray(a) for a in args)  # (for `.at`, which NumPy's arrays lack)
    assert_eager_equals_jit(jax, fun, args, rtol=1e-4, atol=1e-5)
