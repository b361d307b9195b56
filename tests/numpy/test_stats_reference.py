"""The statistics, NaN-aware reductions, histograms, set operations, polynomials and windows
against JAX 0.10.2's own results (recorded by `make_jax_reference_stats.py`): values, dtypes,
weak types and error classes, eagerly and under jit (the named inputs traced)."""

import json
import pathlib

import numpy as np
import pytest
from helpers import assert_close

import tracejit
import tracejit.numpy as jnp

_DATA = json.loads(
    (pathlib.Path(__file__).parent / "data" / "jax_reference_stats.json").read_text()
)


def _decode(encoded):
    if "sequence" in encoded:
        return [_decode(v) for v in encoded["sequence"]]
    dtype = jnp.dtype(encoded["dtype"])
    data = np.asarray(encoded["data"], np.float64 if dtype.kind in "fc" else None)
    if dtype.kind == "c":
        data = data[..., 0] + 1j * data[..., 1]
    return np.asarray(data, dtype).reshape(encoded["shape"]), encoded["weak_type"]


INPUTS = {name: _decode(v)[0] for name, v in _DATA["inputs"].items()}
NAMES = sorted(INPUTS)


def _tolerance(dtype):
    return {"float16": 4e-3, "bfloat16": 2e-2}.get(np.dtype(dtype).name, 2e-5)


def _check(got, want):
    if isinstance(want, list):
        assert isinstance(got, (tuple, list)), type(got)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _check(g, w)
        return
    value, weak = want
    assert np.asarray(got).dtype == value.dtype, (np.asarray(got).dtype, value.dtype)
    assert getattr(got, "weak_type", False) == weak
    assert_close(np.asarray(got), value, _tolerance(value.dtype), atol=1e-5)


def _evaluate(expr, arrays):
    return eval(expr, {"jnp": jnp, "np": np, **arrays})


CASES = [pytest.param(case, id=case["expr"]) for case in _DATA["cases"]]


@pytest.mark.parametrize("case", CASES)
def test_eager(case):
    arrays = {k: jnp.asarray(v) for k, v in INPUTS.items()}
    if "error" in case:
        with pytest.raises(Exception) as info:
            _evaluate(case["expr"], arrays)
        assert type(info.value).__name__ == case["error"], info.value
        return
    _check(_evaluate(case["expr"], arrays), _decode(case["value"]))


@pytest.mark.parametrize("case", [c for c in CASES if not c.values[0]["eager_only"]])
def test_jit(case):
    def fun(*values):
        return _evaluate(case["expr"], dict(zip(NAMES, values, strict=True)))

    args = [INPUTS[k] for k in NAMES]
    if "error" in case:
        with pytest.raises(Exception) as info:
            tracejit.jit(fun)(*args)
        assert type(info.value).__name__ == case["error"], info.value
        return
    _check(tracejit.jit(fun)(*args), _decode(case["value"]))
