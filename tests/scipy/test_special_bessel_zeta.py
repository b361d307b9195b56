"""The Bessel functions (`i0`, `i0e`, `i1`, `i1e`, `bessel_jn`, `jnp.i0`), the Hurwitz zeta
function, `bernoulli` and `poch`: SciPy's values in float32 and float64, JAX's at the edges (zeta's
poles, signed zeros), eager = staged = compiled, vmap = a loop, JAX's derivatives (jnp.i0's at
0, zeta's through its series), dtypes and weak types."""

import importlib.util
import pathlib

import numpy as np
import pytest
import scipy.special as ss
from helpers import assert_close, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.numpy as jnp
import tracejit.scipy.special as sp
from tracejit import lax
from tracejit.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "special_reference", pathlib.Path(__file__).parent / "special_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

# name: (function, SciPy reference, sampled domain of each operand)
FUNCTIONS = {
    "i0": (sp.i0, ss.i0, [(-20, 20)]),
    "i0e": (sp.i0e, ss.i0e, [(-50, 50)]),
    "i1": (sp.i1, ss.i1, [(-20, 20)]),
    "i1e": (sp.i1e, ss.i1e, [(-50, 50)]),
    "numpy.i0": (jnp.i0, np.i0, [(-20, 20)]),
    "zeta": (sp.zeta, ss.zeta, [(1.1, 20), (0.05, 10)]),
    "poch": (sp.poch, ss.poch, [(0.1, 5), (-0.9, 4)]),
}
RTOL = {np.float32: 1e-5, np.float64: 1e-13}


def operands(name, dtype, n=300, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, n).astype(dtype) for low, high in FUNCTIONS[name][2]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_scipy(name, dtype, enable_x64):
    fun, ref, _ = FUNCTIONS[name]
    args = operands(name, dtype)
    out = check_traced_matches_eager(fun, *args, rtol=RTOL[dtype], atol=0)
    assert out.dtype == dtype
    want = ref(*[a.astype(np.float64) for a in args])
    assert_close(out, want, RTOL[dtype] * (10 if name == "poch" else 1), atol=0)
    assert_close(tracejit.jit(fun)(*args), out, RTOL[dtype], atol=0)


@pytest.mark.parametrize("name", ["zeta", "i0e", "i1e"])
def test_edges_match_jax(name, enable_x64):
    fun = FUNCTIONS[name][0]
    args, want = reference.edges(name)
    for got in (fun(*args), tracejit.jit(fun)(*args)):
        assert_close(got, want, 1e-13, signed_zeros=True)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_a_loop(name):
    fun = FUNCTIONS[name][0]
    args = [a.reshape(3, 4) for a in operands(name, np.float32, n=12)]
    check_vmap(fun, args, (0,) * len(args), tol=1e-6, jit=True)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "numpy.i0", "poch"])
def test_grads_match_finite_differences(name, enable_x64):
    fun = FUNCTIONS[name][0]
    args = operands(name, np.float64, n=5, seed=1)
    check_grads(fun, args, order=2, atol=1e-6, rtol=1e-6)


def test_zeta_derivatives_come_from_its_series(enable_x64):
    x, q = np.array([1.5, 2.0, 4.5]), np.array([0.3, 1.5, 7.0])
    check_grads(sp.zeta, (x, q), order=1, atol=1e-7, rtol=1e-7)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'zeta'"):
        tracejit.grad(lax.zeta)(2.0, 1.0)


def test_derivatives_at_zero():
    assert float(tracejit.grad(jnp.i0)(0.0)) == 0.0  # JAX's custom rule
    assert_close(tracejit.grad(sp.i0)(0.0), 1.0, 2e-7)  # the kink of e^|x|, as JAX has it
    assert float(tracejit.grad(sp.i1e)(0.0)) == 0.5
    assert float(tracejit.grad(sp.i0e)(0.0)) == 0.0


def test_riemann_zeta_is_not_implemented():
    with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
        sp.zeta(2.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bessel_jn_matches_scipy(dtype, enable_x64):
    z = np.random.default_rng(0).uniform(5.0, 25.0, (2, 3)).astype(dtype)
    out = sp.bessel_jn(z, v=4)
    assert out.shape == (5, 2, 3) and out.dtype == dtype
    want = np.stack([ss.jv(k, z.astype(np.float64)) for k in range(5)])
    assert_close(out, want, 1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    assert_close(tracejit.jit(lambda z: sp.bessel_jn(z, v=4))(z), out, 1e-5)


def test_bessel_jn_overflows_as_jax_does_for_small_z():
    # JAX's recurrence starts at 1e-16 from order 50 and overflows float32 for small |z|
    out = sp.bessel_jn(np.float32(0.5), v=1)
    assert np.isnan(np.asarray(out)).all()


def test_bessel_jn_refuses_bad_arguments():
    with pytest.raises(TypeError):
        sp.bessel_jn(1.0, v=1.5)
    with pytest.raises(TypeError):
        sp.bessel_jn(1j, v=1)
    with pytest.raises(TypeError):
        sp.bessel_jn(1.0)  # v is keyword-only and required


def test_numpy_i0_refuses_complex():
    with pytest.raises(ValueError, match="Unsupported input type to jax.numpy.i0"):
        jnp.i0(1j)


def test_bernoulli_numbers():
    assert_close(sp.bernoulli(0), [1.0])
    assert_close(sp.bernoulli(2), ss.bernoulli(2), 1e-7)
    assert_close(sp.bernoulli(20), ss.bernoulli(20), 1e-5)
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        sp.bernoulli(-1)


def test_poch_is_one_at_m_zero_and_refuses_complex():
    assert float(sp.poch(0.0, 0.0)) == 1.0
    with pytest.raises(ValueError, match="poch does not support complex-valued inputs"):
        sp.poch(1j, 2.0)


@pytest.mark.parametrize("name", ["zeta", "poch", "i0", "i0e", "i1", "i1e", "numpy.i0"])
def test_dtypes_and_weak_types_match_jax(name):
    fun = FUNCTIONS[name][0]
    for args, dtype, weak in reference.dtype_cases(name):
        out = fun(*args)
        assert (str(out.dtype), out.weak_type) == (dtype, weak), args
