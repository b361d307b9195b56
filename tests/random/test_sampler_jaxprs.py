"""The samplers' jaxprs print as JAX 0.10.2 prints them: each sampler a `jit` of JAX's name
(`_uniform`, `_normal`, ...) with JAX's equations inside, shared ones listed apart
(`data/sampler_jaxprs.json`, recorded by `make_jax_reference_jaxprs.py`)."""

import importlib.util
import json
from pathlib import Path

import pytest

import tracejit as jax

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "data" / "sampler_jaxprs.json").read_text())
# (loaded by path: `tests/` is on sys.path, and `random` there would be the standard library's)
_spec = importlib.util.spec_from_file_location("cases", HERE / "sampler_jaxpr_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

# Not yet as JAX prints them: multivariate_normal and orthogonal are no jits of their own and
# stage cholesky, qr and diagonal otherwise; poisson, binomial and multinomial stage their
# while loops' bodies in another order.
DIFFERENT = {
    "binomial",
    "multinomial",
    "multivariate_normal",
    "orthogonal",
    "poisson",
}


def _params():
    for case, (call, make_key) in cases.sampler_calls(jax).items():
        different = case in DIFFERENT or case.rsplit(" ", 1)[0] in DIFFERENT
        marks = [pytest.mark.xfail(strict=True, reason="not yet JAX's jaxpr")] if different else []
        yield pytest.param(call, make_key, RECORDED[case], id=case, marks=marks)


@pytest.mark.parametrize("call, make_key, expected", list(_params()))
def test_sampler_jaxpr_prints_as_jax(call, make_key, expected):
    assert str(jax.make_jaxpr(call)(make_key())) == expected
