"""The incomplete gamma and beta functions (`gammainc`, `gammaincc`, `betainc` and lax's
`igamma`, `igammac`, `igamma_grad_a`, `betainc`): SciPy's values in float32 and float64 where
both series and continued fractions run, JAX's at the edges of the domain, eager = staged =
compiled, vmap = a loop, JAX's derivatives (and its refusals), dtypes and weak types."""

import importlib.util
import pathlib

import numpy as np
import pytest
import scipy.special as ss
from helpers import assert_close, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.scipy.special as sp
from tracejit import lax
from tracejit.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "special_reference", pathlib.Path(__file__).parent / "special_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

FUNCTIONS = {
    "gammainc": (sp.gammainc, ss.gammainc),
    "gammaincc": (sp.gammaincc, ss.gammaincc),
    "betainc": (sp.betainc, ss.betainc),
}

# Relative tolerance against SciPy: the prefactor x^a e^-x / Gamma(a) is computed from logs,
# whose rounding grows with a and x, as in JAX.
RTOL = {np.float32: 5e-5, np.float64: 1e-12}


def operands(name, dtype, n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.01, 30.0, n)
    if name == "betainc":
        columns = a, rng.uniform(0.01, 30.0, n), rng.uniform(0.0, 1.0, n)
    else:
        columns = a, rng.uniform(0.0, 40.0, n)
    return [c.astype(dtype) for c in columns]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_scipy(name, dtype, enable_x64):
    fun, ref = FUNCTIONS[name]
    args = operands(name, dtype)
    out = check_traced_matches_eager(fun, *args, rtol=RTOL[dtype], atol=0)
    want = ref(*[a.astype(np.float64) for a in args])
    assert out.dtype == dtype
    compared = want > np.finfo(dtype).tiny * 1e3  # relative accuracy above underflow
    assert_close(np.asarray(out)[compared], want[compared], RTOL[dtype], atol=0)
    # XLA flushes subnormal results to zero
    assert_close(tracejit.jit(fun)(*args), out, RTOL[dtype], atol=np.finfo(dtype).tiny)


@pytest.mark.parametrize(
    "name, fun",
    [
        ("gammainc", sp.gammainc),
        ("gammaincc", sp.gammaincc),
        ("igamma_grad_a", lax.igamma_grad_a),
        ("betainc", sp.betainc),
    ],
)
def test_edges_match_jax(name, fun, enable_x64):
    args, want = reference.edges(name)
    assert_close(fun(*args), want, 1e-12)
    assert_close(tracejit.jit(fun)(*args), want, 1e-12)


def test_lax_names_are_the_primitives():
    a, x = np.float32(2.5), np.float32(1.5)
    assert_close(lax.igamma(a, x), ss.gammainc(2.5, 1.5), 1e-6)
    assert_close(lax.igammac(a, x), ss.gammaincc(2.5, 1.5), 1e-6)
    assert_close(lax.betainc(a, x, np.float32(0.25)), ss.betainc(2.5, 1.5, 0.25), 1e-6)
    assert "igamma " in str(tracejit.make_jaxpr(lax.igamma)(a, x))
    assert "regularized_incomplete_beta" in str(tracejit.make_jaxpr(lax.betainc)(a, x, x))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_precision_computes_in_float32(dtype):
    a, x = np.array([0.5, 2.0, 7.0]), np.array([0.3, 2.0, 11.0])
    out = sp.gammainc(tracejit.numpy.asarray(a, dtype), tracejit.numpy.asarray(x, dtype))
    assert out.dtype == np.dtype(tracejit.numpy.dtype(dtype))
    assert_close(np.asarray(out, np.float64), ss.gammainc(a, x), 1e-2)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_a_loop(name):
    fun, _ = FUNCTIONS[name]
    args = [a.reshape(4, 5) for a in operands(name, np.float32, n=20)]
    check_vmap(fun, args, (0,) * len(args), tol=RTOL[np.float32], jit=True)
    check_vmap(
        fun, [args[0], *[a[:, 0] for a in args[1:]]], (1,) + (None,) * (len(args) - 1), tol=1e-6
    )


def test_grads_match_finite_differences(enable_x64):
    a, x = np.array([0.7, 2.5, 6.0]), np.array([0.4, 3.5, 2.0])
    check_grads(sp.gammainc, (a, x), order=1, atol=1e-6, rtol=1e-6)
    check_grads(sp.gammaincc, (a, x), order=1, atol=1e-6, rtol=1e-6)
    # second derivatives in x (and across x and a) are closed forms
    check_grads(lambda x: sp.gammainc(a, x), (x,), order=2, atol=1e-6, rtol=1e-6)
    b, t = np.array([1.5, 0.8, 4.0]), np.array([0.2, 0.5, 0.9])
    check_grads(lambda t: sp.betainc(a, b, t), (t,), order=2, atol=1e-6, rtol=1e-6)


def test_derivative_in_a_is_igamma_grad_a(enable_x64):
    a, x = np.array([0.7, 2.5, 6.0]), np.array([0.4, 3.5, 2.0])
    grad_a = tracejit.vmap(tracejit.grad(sp.gammainc))(a, x)
    assert_close(grad_a, lax.igamma_grad_a(a, x), 1e-14)
    h = 1e-6
    assert_close(grad_a, (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h), 1e-7)


def test_jax_refuses_the_same_derivatives():
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        tracejit.grad(sp.betainc)(1.0, 2.0, 0.5)
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        tracejit.grad(sp.betainc, 1)(1.0, 2.0, 0.5)
    second_in_a = tracejit.grad(tracejit.grad(sp.gammainc))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'igamma_grad_a'"):
        second_in_a(1.0, 2.0)


def test_complex_operands_are_refused():
    with pytest.raises(ValueError, match="betainc does not support complex-valued inputs"):
        sp.betainc(1j, 2.0, 0.5)
    with pytest.raises(TypeError, match="igamma"):
        sp.gammainc(1j, 2.0)
    with pytest.raises(TypeError, match="igammac"):
        sp.gammaincc(1.0, 2j)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_dtypes_and_weak_types_match_jax(name):
    fun, _ = FUNCTIONS[name]
    for args, dtype, weak in reference.dtype_cases(name):
        out = fun(*args)
        assert (str(out.dtype), out.weak_type) == (dtype, weak), args
