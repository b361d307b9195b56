"""The samplers' jaxprs print as JAX 0.10.2 prints them: each sampler a `jit` of JAX's name
(`_uniform`, `_normal`, ...) with JAX's equations inside, shared ones listed apart
(`data/sampler_jaxprs.json`, recorded by `make_jax_reference_jaxprs.py`)."""

from pathlib import Path

import pytest
from recorded_jaxprs import jaxpr_params, load_cases, read_recorded

import tracejit as jax

HERE = Path(__file__).parent
CASES = load_cases(HERE / "sampler_jaxpr_cases.py", jax)
RECORDED = read_recorded(HERE / "data" / "sampler_jaxprs.json")

# Not yet as JAX prints them: multivariate_normal and orthogonal are no jits of their own and
# stage cholesky, qr and diagonal otherwise; poisson, binomial and multinomial stage their
# while loops' bodies in another order.
DIFFERENT = {
    f"{sampler} {key}"
    for sampler in ("binomial", "multinomial", "multivariate_normal", "orthogonal", "poisson")
    for key in ("typed", "raw")
}


@pytest.mark.parametrize("fun, args, expected", jaxpr_params(CASES, RECORDED, DIFFERENT))
def test_sampler_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected
