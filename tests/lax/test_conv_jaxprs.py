"""Convolutions and dot products print in jaxprs as JAX 0.10.2 prints them
(`data/conv_jaxprs.json`, recorded by `make_jax_reference_conv_jaxprs.py`), every param
included; eagerly they give the values of the same call under `jit`."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "data" / "conv_jaxprs.json").read_text())
_spec = importlib.util.spec_from_file_location("conv_jaxpr_cases", HERE / "conv_jaxpr_cases.py")
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES = _cases.jaxpr_cases(jax)


@pytest.mark.parametrize("case", sorted(CASES))
def test_jaxpr_prints_as_jax(case):
    fun, args = CASES[case]
    assert str(jax.make_jaxpr(fun)(*args)) == RECORDED[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_jit(case):
    fun, args = CASES[case]
    eager, staged = fun(*args), jax.jit(fun)(*args)
    for e, s in zip(jax.tree.leaves(eager), jax.tree.leaves(staged), strict=True):
        assert e.dtype == s.dtype and e.shape == s.shape
        np.testing.assert_allclose(np.asarray(e), np.asarray(s), rtol=1e-5, atol=1e-5)
