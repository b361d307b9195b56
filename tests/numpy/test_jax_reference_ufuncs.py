"""The elementwise functions and ufunc objects give what JAX 0.10.2 gives, eagerly and under
`jit`: dtypes, weak types, shapes, values, and the class of the error for bad input.

The cases and JAX's results are recorded by `make_jax_reference_ufuncs.py` (run with real JAX)
into `data/jax_reference_ufuncs.json`; each is an expression over `jnp`, `np` and named NumPy
inputs, evaluated here with `tracejit.numpy` as `jnp`.
"""

import json
import pathlib

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp

_DATA = json.loads(
    (pathlib.Path(__file__).parent / "data" / "jax_reference_ufuncs.json").read_text()
)
_INPUTS = {name: eval(source, {"np": np}) for name, source in _DATA["inputs"].items()}
_CASES = _DATA["cases"]

# Cases whose results are not arrays of numbers: not run under jit.
_NOT_JITTED = {"add.at in place"}
# Where JAX raises by accident and tracejit computes NumPy's answer (test_ufunc_objects.py
# checks it against NumPy): JAX's `ufunc.at` is a jitted function, which refuses slices.
_BEYOND_JAX = {"frompyfunc unary at", "subtract.at of a slice"}


def _evaluate(expression):
    return eval(expression, {"jnp": jnp, "np": np, **_INPUTS})


def _check(got, want, case):
    if isinstance(want, list):
        assert isinstance(got, tuple) and len(got) == len(want), (case, got)
        for g, w in zip(got, want, strict=True):
            _check(g, w, case)
        return
    array = np.asarray(got)
    assert str(array.dtype) == want["dtype"], (case, array.dtype, want["dtype"])
    assert list(array.shape) == want["shape"], (case, array.shape)
    assert bool(getattr(got, "weak_type", False)) == want["weak_type"], (case, got)
    wide = array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
    tol = {"float16": 1e-3, "bfloat16": 1e-2}.get(want["dtype"], 1e-6)
    np.testing.assert_allclose(np.real(wide), want["real"], rtol=tol, atol=tol, err_msg=case)
    if "imag" in want:
        np.testing.assert_allclose(np.imag(wide), want["imag"], rtol=tol, atol=tol, err_msg=case)


@pytest.mark.parametrize("case", sorted(set(_CASES) - _BEYOND_JAX))
def test_eager_matches_jax(case):
    record = _CASES[case]
    if "error" in record:
        with pytest.raises(Exception) as info:
            _evaluate(record["expression"])
        assert type(info.value).__name__ == record["error"], (case, repr(info.value))
        return
    _check(_evaluate(record["expression"]), record["value"], case)


@pytest.mark.parametrize(
    "case", sorted(c for c in _CASES if "value" in _CASES[c] and c not in _NOT_JITTED)
)
def test_jit_matches_jax(case):
    record = _CASES[case]
    _check(tracejit.jit(lambda: _evaluate(record["expression"]))(), record["value"], case)
