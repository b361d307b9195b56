"""The Faddeeva function `wofz` (and the complex `erfcx` made of it), the complex `loggamma`
and `gamma`, the confluent and Gauss hypergeometric functions `hyp1f1` and `hyp2f1`, and the
spherical harmonics `sph_harm_y`: SciPy's values in float32 and float64, JAX's dtypes, weak
types and derivatives, eager = compiled, vmap = a loop."""

import json
import pathlib

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


# --- complex loggamma ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tol", [(np.complex64, 2e-5), (np.complex128, 1e-13)])
def test_complex_loggamma_matches_scipy_with_its_branch_cut(dtype, tol, enable_x64):
    # SciPy's principal branch: one cut along the negative real axis, far into Re z < 0
    z = complex_points(dtype, scale=20.0)
    out = check_traced_matches_eager(sp.loggamma, z, rtol=tol, atol=0)
    assert (out.dtype, out.weak_type) == (dtype, False)
    assert_close(out, ss.loggamma(z.astype(np.complex128)), tol, atol=tol)


def test_complex_loggamma_is_nan_at_poles_and_nan():
    z = np.array([0j, -3 + 0j, complex(np.nan, 1.0), 1e-3j, -2.5 + 0.5j], np.complex64)
    out = np.asarray(sp.loggamma(z))
    assert np.isnan(out[:3].real).all() and np.isnan(out[:3].imag).all()
    assert_close(out[3:], ss.loggamma(z[3:].astype(np.complex128)), 2e-5)
    assert sp.loggamma(1 + 1j).dtype == np.complex64


def test_complex_loggamma_derivative_is_digamma_forward_only(enable_x64):
    # JAX's shift is a while loop of data-dependent length: forward mode only
    z = np.array([1.0 + 1.0j, -2.5 + 1.0j, 4.0 - 3.0j])
    _, tangent = tracejit.jvp(sp.loggamma, (z,), (np.ones_like(z),))
    assert_close(tangent, ss.digamma(z), 1e-12)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        tracejit.grad(lambda z: jnp.real(sp.loggamma(z)))(1.0 + 1.0j)


def test_complex_loggamma_vmap_matches_a_loop():
    z = complex_points(np.complex64, n=12, scale=10.0).reshape(3, 4)
    check_vmap(sp.loggamma, [z], (0,), tol=2e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, tol", [(np.complex64, 5e-5), (np.complex128, 1e-12)])
def test_complex_gamma_matches_scipy(dtype, tol, enable_x64):
    z = complex_points(dtype, scale=5.0)
    out = check_traced_matches_eager(sp.gamma, z, rtol=tol, atol=0)
    assert (out.dtype, out.weak_type) == (dtype, False)
    assert_close(out, ss.gamma(z.astype(np.complex128)), tol, atol=tol)
    poles = sp.gamma(np.array([0j, -2 + 0j, complex(np.nan, 0)], dtype))
    assert np.isnan(np.asarray(poles)).all()


def test_complex_gamma_derivative_is_gamma_times_digamma(enable_x64):
    z = np.array([1.0 + 1.0j, -2.5 + 0.1j, 3.0 - 2.0j])
    check_grads(sp.gamma, (z,), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    _, tangent = tracejit.jvp(sp.gamma, (z,), (np.ones_like(z),))
    assert_close(tangent, ss.gamma(z) * ss.digamma(z), 1e-11)


# --- hyp1f1 and hyp2f1 ------------------------------------------------------------------------

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_special2.json").read_text())
HYPERGEOMETRIC = {"hyp1f1": sp.hyp1f1, "hyp2f1": sp.hyp2f1}


def recorded(name, dtype):
    case = RECORDED[name][np.dtype(dtype).name]
    args = [np.array(a, dtype) for a in case["args"]]
    grads = [np.array(g, dtype) for g in case["grad"]]
    return args, np.array(case["value"], dtype), grads


def scipy_operands(name, n=60, seed=3):
    # where the series are well conditioned: SciPy's values to float64 precision
    rng = np.random.default_rng(seed)
    if name == "hyp1f1":
        return [rng.uniform(0.1, 5, n), rng.uniform(0.1, 5, n), rng.uniform(-3, 20, n)]
    return [rng.uniform(0.1, 3, n), rng.uniform(0.1, 3, n), rng.uniform(0.5, 5, n),
            rng.uniform(-0.8, 0.85, n)]  # fmt: skip


@pytest.mark.parametrize("name", sorted(HYPERGEOMETRIC))
def test_hypergeometric_matches_scipy(name, enable_x64):
    args = scipy_operands(name)
    out = check_traced_matches_eager(HYPERGEOMETRIC[name], *args, rtol=1e-12, atol=0)
    assert_close(out, getattr(ss, name)(*args), 1e-11, atol=0)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("name", sorted(HYPERGEOMETRIC))
def test_hypergeometric_matches_jax_with_its_edges(name, dtype, tol, enable_x64):
    # the samples reach x = -30 for 1F1 and x -> 1 for 2F1; the edges: 1F1(0; 0; x) = 1,
    # 1F1(a; 0; x) = inf, e^x at a = b; 2F1's poles, x > 1, Gauss's sum at x = 1, terminating
    # series, Euler's and the digamma transformations
    args, want, _ = recorded(name, dtype)
    out = HYPERGEOMETRIC[name](*args)
    assert out.dtype == dtype
    assert_close(out, want, tol, atol=0)
    assert_close(tracejit.jit(HYPERGEOMETRIC[name])(*args), want, tol, atol=0)


@pytest.mark.parametrize("name", sorted(HYPERGEOMETRIC))
def test_hypergeometric_derivatives_match_jax(name, enable_x64):
    args, _, want = recorded(name, np.float64)
    # 1F1's parameter series cancel catastrophically for x << 0 (in JAX as here): rounding
    # noise, not compared
    keep = args[-1] > -3
    args = [a[keep] for a in args]
    argnums = tuple(range(len(args)))
    grads = tracejit.vmap(tracejit.grad(HYPERGEOMETRIC[name], argnums))(*args)
    for got, expected in zip(grads, want, strict=True):
        assert_close(got, expected[keep], 1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "name, args",
    [
        ("hyp1f1", ([0.5, 1.5, 3.0], [1.5, 2.5, 0.7], [-1.5, 0.5, 4.0])),
        ("hyp2f1", ([0.5, 1.5, 2.0], [1.2, 0.6, 0.4], [2.5, 3.5, 4.5], [-0.5, 0.3, 0.6])),
    ],
)
def test_hypergeometric_grads_match_finite_differences(name, args, enable_x64):
    check_grads(HYPERGEOMETRIC[name], [np.array(a) for a in args], order=1, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(HYPERGEOMETRIC))
def test_hypergeometric_vmap_matches_a_loop(name):
    args = [a[:12].astype(np.float32).reshape(3, 4) for a in scipy_operands(name)]
    check_vmap(HYPERGEOMETRIC[name], args, (0,) * len(args), tol=1e-5, jit=True)
    check_vmap(HYPERGEOMETRIC[name], [args[0][:, 0], *args[1:]], (None,) + (1,) * (len(args) - 1))


def test_hypergeometric_dtypes_and_weak_types():
    # as JAX: integers give the default float, half precision stays, never weak
    for name, fun in HYPERGEOMETRIC.items():
        arity = 3 if name == "hyp1f1" else 4
        for args, dtype in [
            ((1.0,) * (arity - 1) + (0.5,), np.float32),
            ((1,) * (arity - 1) + (0,), np.float32),
            ((np.float16(1),) + (2.0,) * (arity - 2) + (0.5,), np.float16),
        ]:
            out = fun(*args)
            assert (out.dtype, out.weak_type) == (dtype, False), (name, args)


def test_hypergeometric_refuse_complex_operands():
    with pytest.raises(ValueError, match="hyp1f1 does not support complex-valued inputs"):
        sp.hyp1f1(1j, 2.0, 0.5)
    with pytest.raises(TypeError):  # JAX's rem refuses it
        sp.hyp2f1(1j, 2.0, 3.0, 0.5)


# --- sph_harm_y -------------------------------------------------------------------------------

DEGREES = np.array([0, 1, 1, 2, 2, 3, 4, 5, 6, 6, 8, 8])
ORDERS = np.array([0, -1, 1, 2, -2, 0, -3, 5, 1, -6, 7, -4])


def angles(dtype, size=DEGREES.size, seed=5):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, np.pi, size).astype(dtype), rng.uniform(0, 2 * np.pi, size).astype(dtype)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_sph_harm_y_matches_scipy(dtype, tol, enable_x64):
    theta, phi = angles(dtype)
    out = sp.sph_harm_y(DEGREES, ORDERS, theta, phi)
    # the sign (-1.0)**|m| of 64-bit orders is float64: complex128 also for float32 angles,
    # as in JAX
    assert (out.dtype, out.weak_type) == (np.complex128, False)
    want = ss.sph_harm_y(DEGREES, ORDERS, theta.astype(np.float64), phi.astype(np.float64))
    assert_close(out, want, tol, atol=tol)
    compiled = tracejit.jit(sp.sph_harm_y, static_argnames="n_max")
    assert_close(compiled(DEGREES, ORDERS, theta, phi, n_max=8), out, tol, atol=tol)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_sph_harm_y_and_its_derivatives_match_jax(dtype, tol, enable_x64):
    case = RECORDED["sph_harm_y"][np.dtype(dtype).name]
    n, m = np.array(RECORDED["sph_harm_y"]["n"]), np.array(RECORDED["sph_harm_y"]["m"])
    theta, phi = (np.array(a, dtype) for a in case["args"])
    real, imag = (np.array(v, dtype) for v in case["value"])
    assert_close(sp.sph_harm_y(n, m, theta, phi), real + 1j * imag, tol, atol=tol)

    def loss(theta, phi):
        y = sp.sph_harm_y(n, m, theta, phi)
        return jnp.sum(jnp.abs(y) ** 2 + jnp.real(y))

    for got, want in zip(tracejit.grad(loss, (0, 1))(theta, phi), case["grad"], strict=True):
        assert_close(got, np.array(want, dtype), 100 * tol, atol=100 * tol)


def test_sph_harm_y_grads_match_finite_differences(enable_x64):
    theta, phi = angles(np.float64)
    check_grads(
        lambda t, p: sp.sph_harm_y(DEGREES, ORDERS, t, p),
        (theta, phi),
        order=1,
        atol=1e-6,
        rtol=1e-6,
    )


def test_sph_harm_y_clips_to_n_max_and_reuses_the_last_colatitude():
    n, m = np.array([0, 1, 2, 3]), np.array([0, -1, 1, 2])
    theta, phi = angles(np.float32, 4)
    # degrees past n_max read degree n_max, as JAX
    clipped = sp.sph_harm_y(n, m, theta, phi, n_max=2)
    assert_close(clipped, ss.sph_harm_y(np.minimum(n, 2), m, theta, phi), 1e-5, atol=1e-6)
    # a scalar colatitude, or too few, serve the remaining degrees with the last one
    assert_close(sp.sph_harm_y(n, m, 0.7, phi), ss.sph_harm_y(n, m, 0.7, phi), 1e-5, atol=1e-6)
    short = sp.sph_harm_y(n, m, theta[:2], phi)
    want = ss.sph_harm_y(n, m, np.concatenate([theta[:2], [theta[1]] * 2]), phi)
    assert_close(short, want, 1e-5, atol=1e-6)


def test_sph_harm_y_vmap_matches_a_loop():
    theta, phi = angles(np.float32, 3 * DEGREES.size)
    args = [DEGREES, ORDERS, theta.reshape(3, -1), phi.reshape(3, -1)]
    check_vmap(sp.sph_harm_y, args, (None, None, 0, 0), tol=1e-5, atol=1e-6)


def test_sph_harm_y_is_complex64_without_x64():
    theta, phi = angles(np.float32)
    out = sp.sph_harm_y(DEGREES, ORDERS, theta, phi)
    assert (out.dtype, out.weak_type) == (np.complex64, False)
    assert sp.sph_harm_y(DEGREES, ORDERS, theta.astype(np.float16), phi).dtype == np.complex64


def test_sph_harm_y_refusals_match_jax():
    theta, phi = angles(np.float32)
    with pytest.raises(tracejit.errors.ConcretizationTypeError, match="n_max"):
        tracejit.jit(sp.sph_harm_y)(DEGREES, ORDERS, theta, phi)
    with pytest.raises(NotImplementedError, match="diff_n"):
        sp.sph_harm_y(DEGREES, ORDERS, theta, phi, diff_n=1)
    with pytest.raises(TypeError, match="integer or boolean type"):
        sp.sph_harm_y(DEGREES.astype(float), ORDERS.astype(float), theta, phi)
    with pytest.raises(TypeError):  # the degrees must be an array (JAX takes len(n))
        sp.sph_harm_y(2, 1, 0.5, 0.3)
