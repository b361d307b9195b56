"""Arithmetic whose last bits XLA sets, against JAX 0.10.2's values
(`make_jax_reference_xla_arithmetic.py`), bit for bit, eagerly and under `jit`: a floating
division by a broadcast divisor is a product with the divisor's reciprocal (as XLA rewrites
it), and complex products, quotients and integer powers round as XLA's fused multiply-adds
do, in JAX's order of products."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

_spec = importlib.util.spec_from_file_location(
    "xla_arithmetic_reference",
    pathlib.Path(__file__).parent / "make_jax_reference_xla_arithmetic.py",
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))


def _bits(x: np.ndarray) -> np.ndarray:
    """Floats as their bits (signed zeros told apart); complex as the bits of both parts; NaNs
    as one NaN whatever their payloads."""
    if x.dtype.kind == "c":
        x = np.stack([x.real, x.imag])
    x = np.where(np.isnan(x), np.nan, x).astype(x.dtype)
    return x.view(f"u{x.dtype.itemsize}")


def _run(name, jitted):
    fun, args, x64 = reference.CASES[name]
    with tracejit.enable_x64(x64):
        call = lambda *a: fun(jnp, lax, *a)
        return np.asarray((tracejit.jit(call) if jitted else call)(*map(jnp.asarray, args)))


# complex128's fused steps are emulated in the x87 extended type, which rounds twice: about one
# part in a thousand is off by a unit in the last place
_NEARLY_EXACT = {"mul_c128", "div_c128"}


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_last_bits_as_jax(name, jitted):
    got, want = _run(name, jitted), DATA[name]
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = _bits(got) != _bits(want)
    if name in _NEARLY_EXACT and not jitted:
        np.testing.assert_array_max_ulp(got.view(got.real.dtype), want.view(want.real.dtype), 1)
        assert differ.mean() < 0.005, f"{differ.sum()} of {differ.size} parts differ"
    else:
        assert not differ.any(), f"{differ.sum()} of {differ.size} values differ from JAX's"


def test_a_divisor_of_the_full_shape_is_divided_exactly():
    """Only a divisor that is broadcast becomes a reciprocal: dividing equal shapes is IEEE
    division, as in NumPy and JAX."""
    x, y = reference.CASES["div_by_array_f32"][1]
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x) / jnp.asarray(y)), x / y)


def test_complex_division_by_zero_follows_annex_g():
    x = jnp.asarray(np.array([0.5 + 0.5j, -1 + 2j], np.complex64))
    for zero, inf in [(0.0, np.inf), (-0.0, -np.inf)]:
        got = np.asarray(x / jnp.asarray(np.complex64(complex(zero, 0.0))))
        np.testing.assert_array_equal(got.real, inf * np.array([0.5, -1.0]))
        np.testing.assert_array_equal(got.imag, inf * np.array([0.5, 2.0]))
