"""lax names against values recorded from JAX 0.10.2 (`make_jax_reference_lax_extras.py`):
`reduce_precision` bit for bit on every class of float (NaN payloads, subnormals, infinities),
`top_k`'s total order (NaN above inf, 0.0 above -0.0, negative NaNs last) and its ties in index
order, the exact `approx_max_k`/`approx_min_k` of the CPU, `mulhi` at 32 and 64 bits, and the
dtypes and weak types of filled arrays: eagerly and under `jit`."""

import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

_spec = importlib.util.spec_from_file_location(
    "lax_extras_reference", pathlib.Path(__file__).parent / "make_jax_reference_lax_extras.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))


def _bits(x: np.ndarray) -> np.ndarray:
    """The raw bits of floats (NaN payloads and signed zeros compared too), else the values."""
    if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
        return x.view(f"u{x.dtype.itemsize}")
    return x


def _check(name, result):
    leaves = list(result) if isinstance(result, (tuple, list)) else [result]
    assert f"{name}/{len(leaves)}" not in DATA, "fewer results than JAX"
    for i, leaf in enumerate(leaves):
        want = DATA[f"{name}/{i}"]
        dtype = str(DATA[f"{name}/{i}/dtype"])
        got = np.asarray(leaf)
        assert got.dtype.name == dtype, (name, i, got.dtype, dtype)
        if dtype == "bfloat16":
            want = want.view(ml_dtypes.bfloat16)
        assert got.shape == want.shape, (name, i, got.shape, want.shape)
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{name}/{i}")
        assert leaf.weak_type == bool(DATA[f"{name}/{i}/weak"]), (name, i)


def _run(fun, args, x64, jit):
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", x64)
    try:
        if jit:
            return tracejit.jit(lambda *xs: fun(lax, jnp, *xs))(*args)
        return fun(lax, jnp, *args)
    finally:
        tracejit.config.update("jax_enable_x64", previous)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(reference.CASES))
def test_matches_jax(name, jit):
    fun, args, x64 = reference.CASES[name]
    _check(name, _run(fun, args, x64, jit))
