"""`jnp.linalg` functions and the common indexing forms print in jaxprs as JAX 0.10.2 prints
them (`data/linalg_indexing_jaxprs.json`, recorded by
`make_jax_reference_linalg_indexing_jaxprs.py`); eagerly they give the values of the same call
under `jit`."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "data" / "linalg_indexing_jaxprs.json").read_text())
_spec = importlib.util.spec_from_file_location(
    "linalg_indexing_jaxpr_cases", HERE / "linalg_indexing_jaxpr_cases.py"
)
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES = {"linalg": _cases.linalg_cases(jax), "indexing": _cases.indexing_cases(jax)}

# Not yet JAX's: inv, solve (JAX: custom_linear_solve around shared `_lu_solve` jaxprs),
# slogdet, cholesky (JAX masks the factor with tril), pinv, lstsq; two index arrays (JAX
# shares one constant), `.at[].apply` (JAX: a `scatter` whose update_jaxpr applies the
# function) and take_along_axis (JAX: a jit of its own).
DIFFERENT = {
    "linalg": {"inv", "solve", "slogdet", "cholesky", "pinv", "lstsq"},
    "indexing": {"two_index_arrays", "apply", "take_along_axis"},
}


def _params():
    for topic, cases in CASES.items():
        for case, (fun, args) in cases.items():
            marks = (
                [pytest.mark.xfail(strict=True, reason="not yet JAX's jaxpr")]
                if case in DIFFERENT[topic]
                else []
            )
            yield pytest.param(fun, args, RECORDED[topic][case], id=f"{topic}-{case}", marks=marks)


@pytest.mark.parametrize("fun, args, expected", list(_params()))
def test_jaxpr_prints_as_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


@pytest.mark.parametrize(
    "topic, case", [(topic, case) for topic, cases in CASES.items() for case in sorted(cases)]
)
def test_eager_equals_jit(topic, case):
    fun, args = CASES[topic][case]
    args = tuple(jax.numpy.asarray(a) for a in args)
    eager, staged = fun(*args), jax.jit(fun)(*args)
    for e, s in zip(jax.tree.leaves(eager), jax.tree.leaves(staged), strict=True):
        assert e.dtype == s.dtype and e.shape == s.shape
        np.testing.assert_allclose(np.asarray(e), np.asarray(s), rtol=1e-4, atol=1e-5)
