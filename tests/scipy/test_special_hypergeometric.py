"""The Faddeeva function `wofz` (and the complex `erfcx` made of it), the confluent and Gauss
hypergeometric functions `hyp1f1` and `hyp2f1`, and the spherical harmonics `sph_harm_y`:
SciPy's values in float32 and float64, JAX's dtypes, weak types and derivatives, eager =
compiled, vmap = a loop."""

import numpy as np
import pytest
import scipy.special as ss
from helpers import assert_close, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.numpy as jnp
import tracejit.scipy.special as sp
from tracejit.test_util import check_grads


def complex_points(dtype, n=200, seed=0, scale=6.0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-scale, scale, n) + 1j * rng.uniform(-scale, scale, n)).astype(dtype)


# --- wofz -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tol", [(np.complex64, 2e-5), (np.complex128, 1e-12)])
def test_wofz_matches_scipy_in_both_half_planes(dtype, tol, enable_x64):
    z = complex_points(dtype)
    out = check_traced_matches_eager(sp.wofz, z, rtol=tol, atol=0)
    assert out.dtype == dtype
    assert_close(out, ss.wofz(z.astype(np.complex128)), tol, atol=0)


@pytest.mark.parametrize("dtype, tol", [(np.complex64, 2e-5), (np.complex128, 1e-12)])
def test_complex_erfcx_is_wofz_of_iz(dtype, tol, enable_x64):
    z = complex_points(dtype, scale=3.0)
    out = sp.erfcx(z)
    assert out.dtype == dtype
    assert_close(out, ss.erfcx(z.astype(np.complex128)), tol, atol=0)


def test_wofz_of_real_input_is_complex_and_strongly_typed(enable_x64):
    # as JAX: half precision and float32 give complex64, float64 complex128, never weak
    for arg, dtype in [
        (np.float16(1), np.complex64),
        (np.float32(1), np.complex64),
        (1, np.complex128),
        (1.0, np.complex128),
        (1j, np.complex128),
        (np.complex64(1j), np.complex64),
    ]:
        out = sp.wofz(arg)
        assert (out.dtype, out.weak_type) == (dtype, False), arg
    assert_close(sp.wofz(np.array([0.5, 2.0, -3.0])), ss.wofz([0.5, 2.0, -3.0]), 1e-13)


def test_wofz_default_dtype_without_x64():
    assert sp.wofz(1.0).dtype == np.complex64
    assert sp.erfcx(1 + 1j).dtype == np.complex64


def test_wofz_edges_match_jax():
    # JAX's rational approximation: NaN at infinities (no special casing), exact 1 at 0
    z = np.array([np.inf, -np.inf, np.nan, 0.0, 30j], np.complex64)
    out = np.asarray(sp.wofz(z))
    assert np.isnan(out[:3]).all()
    assert_close(out[3:], np.array([1.0, ss.wofz(30j)], np.complex64), 1e-6)


def test_wofz_derivative_is_minus_2z_w_plus_2i_over_sqrt_pi(enable_x64):
    z = np.array([0.5 + 0.3j, -1.2 + 2.0j, 2.0 - 1.5j])
    check_grads(sp.wofz, (z,), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    _, tangent = tracejit.jvp(sp.wofz, (z,), (np.ones_like(z),))
    assert_close(tangent, -2 * z * ss.wofz(z) + 2j / np.sqrt(np.pi), 1e-12)
    # the gradient of the real part at a real point is a real number, as JAX's
    grad = tracejit.grad(lambda x: jnp.real(sp.wofz(x)))(1.0)
    assert_close(grad, -2 * ss.wofz(1.0).real, 1e-12)
    check_grads(lambda z: sp.erfcx(z), (z,), order=1, atol=1e-6, rtol=1e-6)


def test_wofz_vmap_matches_a_loop():
    z = complex_points(np.complex64, n=12).reshape(3, 4)
    check_vmap(sp.wofz, [z], (0,), tol=2e-5, jit=True)
    check_vmap(sp.erfcx, [z], (1,), tol=2e-5)
