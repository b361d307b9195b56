"""The error-function relatives (`erfcx`, `dawsn`, `owens_t`), the exponential integrals
(`expi`, `exp1`, `expn`), the sine, cosine and Fresnel integrals, Spence's function, `comb` and
`loggamma`: SciPy's values in float32 and float64, JAX's
at the edges (and where JAX's formulas differ from SciPy's: expn(n, 0) is 1/n there), eager =
staged = compiled, vmap = a loop, JAX's derivatives, dtypes and weak types."""

import importlib.util
import pathlib

import numpy as np
import pytest
import scipy.special as ss
from helpers import assert_close, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.scipy.special as sp
from tracejit.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "special_reference", pathlib.Path(__file__).parent / "special_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)

# name: (function, SciPy reference, sampled domain of each operand, float32 tolerance)
FUNCTIONS = {
    "erfcx": (sp.erfcx, ss.erfcx, [(-4, 9)], 1e-5),
    "dawsn": (sp.dawsn, ss.dawsn, [(-12, 12)], 1e-5),
    "expi": (sp.expi, ss.expi, [(-60, 80)], 1e-5),
    "exp1": (sp.exp1, ss.exp1, [(0.01, 60)], 1e-5),
    "expn": (sp.expn, ss.expn, [(0, 6), (0.05, 8)], 2e-5),
    "spence": (sp.spence, ss.spence, [(0, 8)], 1e-5),
    "comb": (sp.comb, ss.comb, [(0, 30), (0, 12)], 3e-5),
    "loggamma": (sp.loggamma, ss.loggamma, [(0.01, 30)], 1e-5),
    "owens_t": (sp.owens_t, ss.owens_t, [(-5, 5), (-5, 5)], 1e-5),
    "sici.si": (lambda x: sp.sici(x)[0], lambda x: ss.sici(x)[0], [(-40, 40)], 1e-5),
    "sici.ci": (lambda x: sp.sici(x)[1], lambda x: ss.sici(x)[1], [(0.05, 3)], 1e-5),
    "fresnel.s": (lambda x: sp.fresnel(x)[0], lambda x: ss.fresnel(x)[0], [(-10, 10)], 5e-5),
    "fresnel.c": (lambda x: sp.fresnel(x)[1], lambda x: ss.fresnel(x)[1], [(-10, 10)], 5e-5),
}


def operands(name, dtype, n=120, seed=0):
    rng = np.random.default_rng(seed)
    args = [rng.uniform(low, high, n) for low, high in FUNCTIONS[name][2]]
    if name in ("expn", "comb"):  # integer orders and counts
        args[0] = np.floor(args[0])
    return [a.astype(dtype) for a in args]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_match_scipy(name, dtype, enable_x64):
    fun, ref, _, tol32 = FUNCTIONS[name]
    tol = tol32 if dtype == np.float32 else 1e-13
    args = operands(name, dtype)
    out = check_traced_matches_eager(fun, *args, rtol=tol, atol=0)
    # owens_t's float64 quadrature rule promotes, in JAX too
    assert out.dtype == (np.float64 if name == "owens_t" else dtype)
    assert_close(out, ref(*[a.astype(np.float64) for a in args]), tol, atol=0)
    assert_close(tracejit.jit(fun)(*args), out, tol)  # XLA's lgamma, erfc, ... round otherwise


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_edges_match_jax(name, enable_x64):
    fun = FUNCTIONS[name][0]
    args, want = reference.edges(name)
    assert_close(fun(*args), want, 1e-13)
    assert_close(tracejit.jit(fun)(*args), want, 1e-13)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vmap_matches_a_loop(name):
    fun, _, _, tol32 = FUNCTIONS[name]
    args = [a.reshape(3, 4) for a in operands(name, np.float32, n=12)]
    check_vmap(fun, args, (0,) * len(args), tol=tol32, jit=True)


@pytest.mark.parametrize(
    "name, fun, args",
    [
        ("erfcx", sp.erfcx, ([-2.0, 0.5, 3.0, 30.0],)),
        ("dawsn", sp.dawsn, ([-4.0, 0.5, 3.0, 7.0],)),
        ("expi", sp.expi, ([-3.0, 0.5, 3.0, 20.0],)),
        ("exp1", sp.exp1, ([0.3, 1.5, 3.0, 20.0],)),
        ("spence", sp.spence, ([0.3, 1.2, 1.7, 3.0],)),
        ("loggamma", sp.loggamma, ([0.3, 1.2, 7.0],)),
        ("comb", sp.comb, ([7.5, 9.0], [2.5, 3.0])),
        ("owens_t", sp.owens_t, ([-1.5, 0.3, 2.0], [0.4, -2.0, 1.5])),
        ("sici", sp.sici, ([-6.0, 0.5, 3.0, 12.0],)),
        ("fresnel", sp.fresnel, ([-3.0, 0.5, 1.7, 4.0],)),
    ],
)
def test_grads_match_finite_differences(name, fun, args, enable_x64):
    check_grads(fun, [np.array(a) for a in args], order=1, atol=1e-6, rtol=1e-6)


def test_expn_derivative_is_minus_the_lower_order(enable_x64):
    n, x = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5, 4.0])
    check_grads(lambda x: sp.expn(n, x), (x,), order=1, atol=1e-6, rtol=1e-6)
    grad = tracejit.vmap(tracejit.grad(sp.expn, 1))(n, x)
    assert_close(grad, -ss.expn(n - 1, x), 1e-12)


def test_complex_operands_are_refused():
    with pytest.raises(ValueError, match="sici must be real-valued"):
        sp.sici(1j)
    for fun in (sp.dawsn, sp.expi, sp.exp1):
        with pytest.raises(ValueError, match="does not support complex-valued inputs"):
            fun(1j)
    with pytest.raises(NotImplementedError, match="complex-valued inputs is not implemented"):
        sp.fresnel(1j)


@pytest.mark.parametrize("arg", [1, np.float16(0.5)])
def test_spence_refuses_other_dtypes(arg):
    with pytest.raises(TypeError, match="is not supported"):
        sp.spence(arg)


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - {"sici.ci", "fresnel.c"}))
def test_dtypes_and_weak_types_match_jax(name):
    fun = FUNCTIONS[name][0]
    for args, dtype, weak in reference.dtype_cases(name):
        out = fun(*args)
        assert (str(out.dtype), out.weak_type) == (dtype, weak), args
