"""tracejit.scipy.special against SciPy in float64: values (eager, staged, jitted; random points
and +-inf, NaN, 0, far tails), dtypes and weak types as JAX 0.10.2 gives them, gradients
against finite differences, and JAX's derivatives at the special points (0 log 0, logit's
poles, the normal tails)."""

import inspect
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.special as ss
from helpers import assert_close, check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp
import tracejit.scipy.special as sp
from tracejit.test_util import check_grads

# name: (function, SciPy reference, domain of random samples)
UNARY = {
    "expit": (sp.expit, ss.expit, (-10, 10)),
    "logit": (sp.logit, ss.logit, (0.01, 0.99)),
    "erf": (sp.erf, ss.erf, (-3, 3)),
    "erfc": (sp.erfc, ss.erfc, (-3, 5)),
    "erfinv": (sp.erfinv, ss.erfinv, (-0.99, 0.99)),
    "gammaln": (sp.gammaln, ss.gammaln, (0.1, 10)),
    "digamma": (sp.digamma, ss.digamma, (0.1, 10)),
    "entr": (sp.entr, ss.entr, (0.01, 5)),
    "ndtr": (sp.ndtr, ss.ndtr, (-8, 8)),
    "log_ndtr": (sp.log_ndtr, ss.log_ndtr, (-30, 8)),
    "ndtri": (sp.ndtri, ss.ndtri, (0.001, 0.999)),
}

# Special inputs per function (on top of the random ones); SciPy is the reference.
EDGES = {
    "expit": [-np.inf, -100.0, 0.0, 100.0, np.inf, np.nan],
    "logit": [-1.0, 0.0, 1e-30, 0.5, 1.0, 2.0, np.nan],
    "erf": [-np.inf, -10.0, 0.0, 1e-20, 10.0, np.inf, np.nan],
    "erfc": [-np.inf, -10.0, 0.0, 10.0, 26.0, np.inf, np.nan],
    "erfinv": [-1.0, -0.999999, 0.0, 1e-20, 0.999999, 1.0, 2.0, np.nan],
    "gammaln": [0.5, 1.0, 2.0, 100.0, 1e10, np.inf, np.nan],
    "digamma": [1e-3, 1.0, 100.0, 1e10, np.inf, np.nan],
    "entr": [-1.0, 0.0, 1e-30, 0.5, 1.0, np.inf, np.nan],
    "ndtr": [-np.inf, -40.0, -10.0, -1.0, 0.0, 1.0, 8.0, 40.0, np.inf, np.nan],
    "log_ndtr": [-np.inf, -1e3, -40.0, -20.0, -10.0, -5.0, 0.0, 5.0, 8.0, 40.0, np.inf, np.nan],
    "ndtri": [-0.5, 0.0, 1e-300, 1e-30, 1e-10, 0.01, 0.5, 0.9, 1 - 1e-12, 1.0, 2.0, np.nan],
}


def _ref(name, x):
    with np.errstate(all="ignore"):
        return UNARY[name][1](np.asarray(x, np.float64))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_float32(name):
    fun, _, (low, high) = UNARY[name]
    x = np.random.default_rng(0).uniform(low, high, (3, 4)).astype(np.float32)
    out = check_traced_matches_eager(fun, jnp.asarray(x), rtol=1e-5, atol=1e-6)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out, np.float64), _ref(name, x), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_float64_with_edges(name, enable_x64):
    fun, _, (low, high) = UNARY[name]
    x = np.concatenate([np.random.default_rng(1).uniform(low, high, 10), EDGES[name]])
    out = fun(jnp.asarray(x))
    assert out.dtype == np.float64
    # log_ndtr's segments are JAX's (documented): log(ndtr(x)) up to 8 keeps only absolute
    # accuracy where ndtr is near 1, and the 3-term series is truncated at -20; the values
    # agree with JAX 0.10.2's to the last digit.
    rtol, atol = {"ndtri": (1e-9, 0), "log_ndtr": (1e-8, 1e-15)}.get(name, (1e-12, 0))
    np.testing.assert_allclose(np.asarray(out), _ref(name, x), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_jit(name):
    fun, _, (low, high) = UNARY[name]
    x = np.random.default_rng(2).uniform(low, high, 8).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(tracejit.jit(fun)(jnp.asarray(x))), _ref(name, x), rtol=2e-5, atol=1e-6
    )


@pytest.mark.parametrize("name", sorted(UNARY))
def test_grads(name, enable_x64):
    fun, _, (low, high) = UNARY[name]
    x = jnp.asarray(np.random.default_rng(3).uniform(low, high, 5))
    check_grads(fun, (x,), order=2 if name not in ("ndtri", "log_ndtr") else 1)


def test_normal_tails_float32():
    """float32 keeps relative accuracy where ndtr underflows or rounds to 1 (JAX's segments)."""
    # (Up to 5, log(ndtr(x)) has only absolute accuracy near 1: at 5.0 JAX's is 4% off too.)
    x = np.array([-40.0, -20.0, -10.0, -5.0, 0.0, 5.5, 6.0, 10.0], np.float32)
    np.testing.assert_allclose(
        np.asarray(sp.log_ndtr(jnp.asarray(x)), np.float64),
        ss.log_ndtr(x.astype(np.float64)),
        rtol=1e-5,
    )
    p = np.array([1e-30, 1e-10, 1e-3, 0.3, 0.5, 0.9, 1 - 1e-7], np.float32)
    np.testing.assert_allclose(
        np.asarray(sp.ndtri(jnp.asarray(p)), np.float64),
        ss.ndtri(p.astype(np.float64)),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        float(sp.log_ndtr(jnp.asarray(-40.0), series_order=0)), -804.6078, rtol=1e-6
    )


def _grads(fun, points):
    return np.asarray(tracejit.vmap(tracejit.grad(fun))(jnp.asarray(points, np.float32)))


# (function, points, derivatives as JAX 0.10.2 gives them)
SPECIAL_GRADS = [
    (
        sp.logit,
        [-np.inf, -1.0, 0.0, 0.5, 1.0, np.inf, np.nan],
        [0, -0.5, np.inf, 4, np.inf, 0, np.nan],
    ),
    (sp.entr, [-1.0, 0.0, 0.5, 1.0, np.inf], [np.nan, np.inf, -0.30685282, -1, -np.inf]),
    (sp.expit, [-np.inf, 0.0, np.inf], [0, 0.25, 0]),
    (sp.log_ndtr, [-40.0, -20.0, 0.0, 10.0, np.inf], [40.025, 20.0497, 0.7978846, 7.6946e-23, 0]),
    (sp.ndtr, [-np.inf, 0.0, 10.0, np.inf], [0, 0.39894229, 7.6946e-23, 0]),
    (sp.ndtri, [0.0, 0.5, 0.9, 1.0], [0, 2.5066283, 5.698060, 0]),
    (sp.erfinv, [0.0, 0.5], np.sqrt(np.pi) / 2 * np.exp(ss.erfinv([0.0, 0.5]) ** 2)),
]


@pytest.mark.parametrize("case", range(len(SPECIAL_GRADS)))
def test_special_point_grads(case):
    fun, points, expected = SPECIAL_GRADS[case]
    np.testing.assert_allclose(_grads(fun, points), expected, rtol=1e-4, equal_nan=True)


# --------------------------------------------------------------------------------------------
# x log y


XLOGY_POINTS = [(0.0, 0.0), (0.0, -1.0), (0.0, np.nan), (np.nan, 0.0), (2.0, 3.0), (-1.5, 0.5)]


@pytest.mark.parametrize("x, y", XLOGY_POINTS)
def test_xlogy_xlog1py_values(x, y):
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(float(sp.xlogy(x, y)), ss.xlogy(x, y), rtol=1e-6)
        np.testing.assert_allclose(float(sp.xlog1py(x, y - 1)), ss.xlog1py(x, y - 1), rtol=1e-6)


def test_xlogy_grads_convention():
    """JAX's rule: d/dx = log y, d/dy = x / y; at (0, 0) that is (-inf, NaN)."""
    gx, gy = tracejit.grad(sp.xlogy, argnums=(0, 1))(0.0, 0.0)
    assert float(gx) == -np.inf and np.isnan(float(gy))
    gx, gy = tracejit.grad(sp.xlogy, argnums=(0, 1))(0.0, 2.0)
    np.testing.assert_allclose([float(gx), float(gy)], [np.log(2), 0.0], rtol=1e-6)
    gx, gy = tracejit.grad(sp.xlog1py, argnums=(0, 1))(2.0, 3.0)
    np.testing.assert_allclose([float(gx), float(gy)], [np.log(4), 0.5], rtol=1e-6)
    gx, gy = tracejit.grad(sp.xlog1py, argnums=(0, 1))(0.0, -1.0)
    assert float(gx) == -np.inf and np.isnan(float(gy))


def test_xlogy_finite_differences(enable_x64):
    rng = np.random.default_rng(4)
    x, y = jnp.asarray(rng.uniform(-2, 2, 4)), jnp.asarray(rng.uniform(0.5, 3, 4))
    check_grads(sp.xlogy, (x, y), order=2)
    check_grads(sp.xlog1py, (x, y), order=2)
    np.testing.assert_allclose(np.asarray(tracejit.jit(sp.xlogy)(x, y)), ss.xlogy(x, y))


# --------------------------------------------------------------------------------------------
# polygamma, logsumexp, softmax


def test_polygamma():
    n = np.array([0, 1, 2, 3], np.int32)
    out = sp.polygamma(jnp.asarray(n), 2.5)
    np.testing.assert_allclose(np.asarray(out), ss.polygamma(n, 2.5), rtol=1e-5)
    assert (out.dtype, out.weak_type) == (np.float32, True)  # int32 with a Python float, as in JAX
    out = sp.polygamma(1, 2.0)
    assert (out.dtype, out.weak_type) == (np.float32, True)
    np.testing.assert_allclose(float(out), ss.polygamma(1, 2.0), rtol=1e-6)
    np.testing.assert_allclose(
        float(tracejit.grad(sp.polygamma, argnums=1)(1, 2.0)), ss.polygamma(2, 2.0), rtol=1e-5
    )
    with pytest.raises(ValueError, match="integer type"):
        sp.polygamma(1.5, 2.0)
    with pytest.raises(ValueError, match="integer type. Got dtype bool"):
        sp.polygamma(True, 2.0)
    with pytest.raises(ValueError, match="polygamma does not support complex-valued inputs"):
        sp.polygamma(1, 1j)


@pytest.mark.parametrize("n", [4, 5, 8, 12])
def test_polygamma_of_every_order(n):
    x = np.array([0.3, 0.7, 1.5, 4.0, 9.0])
    assert_close(sp.polygamma(n, jnp.asarray(x, jnp.float32)), ss.polygamma(n, x), 2e-5)
    assert_close(tracejit.jit(sp.polygamma)(n, x.astype(np.float32)), ss.polygamma(n, x), 2e-5)


def test_logsumexp_is_shared_with_nn():
    assert sp.logsumexp is tracejit.nn.logsumexp
    a = np.array([[1.0, 2.0], [1000.0, -np.inf]])
    np.testing.assert_allclose(
        np.asarray(sp.logsumexp(jnp.asarray(a), axis=1)), ss.logsumexp(a, axis=1), rtol=1e-6
    )


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_scipy_softmax_defaults_to_all_axes(axis):
    a = np.random.default_rng(5).normal(size=(2, 3))
    kwargs = {} if axis is None else {"axis": axis}
    np.testing.assert_allclose(
        np.asarray(sp.softmax(jnp.asarray(a), **kwargs)), ss.softmax(a, axis=axis), rtol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(sp.log_softmax(jnp.asarray(a), **kwargs)),
        ss.log_softmax(a, axis=axis),
        rtol=1e-5,
    )


# --------------------------------------------------------------------------------------------
# dtypes


# (function, argument, dtype, weak type) as JAX 0.10.2 gives them.
DTYPES = [
    (sp.expit, 2, "float32", True),
    (sp.logit, 0.5, "float32", True),
    (sp.erf, 1, "float32", True),
    (sp.erfinv, np.float16(0.5), "float16", False),
    (sp.gammaln, 3, "float32", True),
    (sp.digamma, 2, "float32", True),
    (sp.entr, 1, "float32", True),
    (sp.entr, np.int32(1), "float32", False),
    (lambda x: sp.xlogy(x, 2), 1, "float32", True),
    (lambda x: sp.xlogy(x, 2.0), np.float16(1), "float16", False),
    (sp.ndtr, 1.0, "float32", False),
    (sp.log_ndtr, -40.0, "float32", False),
    (sp.ndtri, 0.3, "float32", False),
    (sp.logsumexp, 3.0, "float32", False),
    (sp.erf, jnp.bfloat16(0.5), "bfloat16", False),
]


@pytest.mark.parametrize("case", range(len(DTYPES)))
def test_dtypes_and_weak_types(case):
    fun, arg, dtype, weak = DTYPES[case]
    out = fun(arg)
    assert (str(out.dtype), out.weak_type) == (dtype, weak)


@pytest.mark.parametrize("fun", [sp.ndtr, sp.log_ndtr, sp.ndtri])
@pytest.mark.parametrize("arg", [1, np.float16(0.5), jnp.bfloat16(0.5)])
def test_normal_functions_refuse_other_dtypes(fun, arg):
    with pytest.raises(TypeError, match="not supported"):
        fun(arg)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
@pytest.mark.parametrize("name", ["expit", "erf", "erfc", "gammaln", "entr"])
def test_low_precision(name, dtype):
    fun, _, (low, high) = UNARY[name]
    x = np.linspace(low, high, 9)
    out = fun(jnp.asarray(x).astype(dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out, np.float64), _ref(name, x), rtol=3e-2, atol=3e-2)


def test_log_ndtr_series_order_checked():
    with pytest.raises(ValueError, match="<= 30"):
        sp.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError):
        sp.log_ndtr(1.0, series_order=-1)


def test_module_surface():
    import tracejit.scipy

    assert tracejit.scipy.special is sp
    params = inspect.signature(sp.softmax).parameters
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params["axis"].kind is inspect.Parameter.KEYWORD_ONLY and params["axis"].default is None
    assert list(inspect.signature(sp.log_ndtr).parameters) == ["x", "series_order"]
    assert list(inspect.signature(sp.polygamma).parameters) == ["n", "x"]


VMAPPED = {
    "xlogy": lambda v: sp.xlogy(v, jnp.abs(v)),
    "log_ndtr": sp.log_ndtr,
    "ndtri": lambda v: sp.ndtri(sp.ndtr(v)),
    "ndtri_grad": tracejit.grad(lambda v: sp.ndtri(sp.ndtr(v))),
    "entr_grad": tracejit.grad(lambda v: sp.entr(jnp.abs(v))),
    "softmax": sp.softmax,
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_matches_loop(name):
    fun = VMAPPED[name]
    x = np.random.default_rng(8).normal(size=(5,) if name.endswith("grad") else (3, 4)) * 3
    x = x.astype(np.float32)
    batched = np.asarray(tracejit.vmap(fun)(jnp.asarray(x)))
    looped = np.stack([np.asarray(fun(jnp.asarray(row))) for row in x])
    np.testing.assert_allclose(batched, looped, rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------------------------
# gamma family, relative entropy, Box-Cox

GAMMA_POINTS = [-np.inf, -2.5, -2.0, -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 40.0, np.inf, np.nan]


def test_gamma_and_gammasgn(enable_x64):
    x = np.array(GAMMA_POINTS)
    np.testing.assert_allclose(np.asarray(sp.gamma(jnp.asarray(x))), ss.gamma(x), rtol=1e-13)
    # SciPy's gammasgn gives 0 at 0 and the poles; JAX's (the spec) gives +-1 at +-0 and NaN.
    expected = [np.nan, -1, np.nan, 1, -1, -1, 1, 1, 1, 1, 1, 1, np.nan]
    np.testing.assert_array_equal(np.asarray(sp.gammasgn(jnp.asarray(x))), expected)
    xs = jnp.asarray([-2.5, -0.5, 0.5, 1.0, 3.3])
    check_grads(sp.gamma, (xs,), order=2)
    np.testing.assert_allclose(float(tracejit.grad(sp.gamma)(1.0)), -np.euler_gamma, rtol=1e-12)


def test_factorial_and_multigammaln(enable_x64):
    n = np.array([0.0, 3.0, 3.5, -1.0, 20.0, 171.0])
    np.testing.assert_allclose(
        np.asarray(sp.factorial(jnp.asarray(n))), ss.factorial(n, exact=False), rtol=1e-13
    )
    with pytest.raises(NotImplementedError, match="exact=True"):
        sp.factorial(3, exact=True)
    a = np.array([2.5, 3.0, 10.0])
    np.testing.assert_allclose(
        np.asarray(sp.multigammaln(jnp.asarray(a), 3)), ss.multigammaln(a, 3), rtol=1e-13
    )
    check_grads(lambda v: sp.multigammaln(v, 2), (jnp.asarray(a),), order=1)


REL_ENTR_P = [0.0, 0.0, 1.0, 2.0, -1.0, np.inf, 1.0, 0.5]
REL_ENTR_Q = [0.0, 1.0, 0.0, 3.0, 1.0, np.inf, -1.0, 1e-30]


def test_rel_entr_kl_div(enable_x64):
    p, q = np.array(REL_ENTR_P), np.array(REL_ENTR_Q)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(sp.rel_entr(p, q)), ss.rel_entr(p, q), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(sp.kl_div(p, q)), ss.kl_div(p, q), rtol=1e-13)
    # Masked entries get zero gradient (kl_div: -1 in p, +1 in q), as in JAX.
    gp, gq = tracejit.vmap(tracejit.grad(sp.rel_entr, argnums=(0, 1)))(p[:5], q[:5])
    np.testing.assert_allclose(np.asarray(gp), [0, 0, 0, np.log(2 / 3) + 1, 0])
    np.testing.assert_allclose(np.asarray(gq), [0, 0, 0, -2 / 3, 0])
    gp, gq = tracejit.vmap(tracejit.grad(sp.kl_div, argnums=(0, 1)))(p[:5], q[:5])
    np.testing.assert_allclose(np.asarray(gp), [-1, -1, -1, np.log(2 / 3), -1])
    np.testing.assert_allclose(np.asarray(gq), [1, 1, 1, 1 / 3, 1])
    rng = np.random.default_rng(9)
    args = (jnp.asarray(rng.uniform(0.1, 2, 4)), jnp.asarray(rng.uniform(0.1, 2, 4)))
    check_grads(sp.kl_div, args, order=2)


@pytest.mark.parametrize("lmbda", [0.0, 0.5, 2.0, -1.0, 1e-12])
def test_boxcox(lmbda, enable_x64):
    x = np.array([0.0, 1e-3, 1.0, 2.0, 10.0, -1.0])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            np.asarray(sp.boxcox(jnp.asarray(x), lmbda)), ss.boxcox(x, lmbda), rtol=1e-12
        )
        np.testing.assert_allclose(
            np.asarray(sp.boxcox1p(jnp.asarray(x - 1), lmbda)),
            ss.boxcox1p(x - 1, lmbda),
            rtol=1e-12,
        )
    check_grads(lambda v: sp.boxcox(v, lmbda), (jnp.asarray([0.5, 2.0]),), order=2)


ADDED_DTYPES = [
    (sp.gamma, 2, "float32", False),
    (sp.gammasgn, 2, "float32", False),
    (sp.gamma, np.float16(2), "float16", False),
    (sp.factorial, 3, "float32", True),
    (lambda v: sp.multigammaln(v, 2), 2.5, "float32", False),
    (lambda v: sp.rel_entr(v, 2), 1, "float32", True),
    (lambda v: sp.kl_div(v, 2.0), 1, "float32", True),
    (lambda v: sp.boxcox(v, 0.5), 2.0, "float32", True),
]


@pytest.mark.parametrize("case", range(len(ADDED_DTYPES)))
def test_added_dtypes(case):
    fun, arg, dtype, weak = ADDED_DTYPES[case]
    out = fun(arg)
    assert (str(out.dtype), out.weak_type) == (dtype, weak)


def _exact_betaln(m, n):
    """log B(m, n) for integers, from exact factorials: (m-1)! (n-1)! / (m+n-1)!."""
    ratio = Fraction(math.factorial(m - 1) * math.factorial(n - 1), math.factorial(m + n - 1))
    return math.log(ratio.numerator) - math.log(ratio.denominator)


# (a, b): both small (the lgamma sum), one large, both large (Stirling's series).
BETA_INTEGERS = [(2, 3), (7, 9), (9, 10), (10, 10), (11, 12), (1, 10), (3, 10000), (8, 100000)]
BETA_INTEGERS += [(50, 60), (100, 2000), (1, 1000000)]


@pytest.mark.parametrize("m, n", BETA_INTEGERS)
def test_betaln_against_exact_factorials(m, n, enable_x64):
    """Exact references: SciPy's own betaln is off by 1e-12 at (8, 1e5)."""
    expected = _exact_betaln(m, n)
    for a, b in ((m, n), (n, m)):
        out = float(sp.betaln(jnp.asarray(float(a)), jnp.asarray(float(b))))
        np.testing.assert_allclose(out, expected, rtol=1e-14)


def test_beta_and_betaln_values(enable_x64):
    a = np.array([1.0, 0.5, -0.5, 0.0, 2.5, 30.0, 0.5, 1e-3])
    b = np.array([1.0, 0.5, 2.0, 1.0, 3.5, 40.0, 1e8, 7.0])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            np.asarray(sp.betaln(jnp.asarray(a), jnp.asarray(b))), ss.betaln(a, b), rtol=1e-12
        )
        np.testing.assert_allclose(
            np.asarray(sp.beta(jnp.asarray(a), jnp.asarray(b))), ss.beta(a, b), rtol=1e-11
        )
    assert float(sp.beta(-0.5, 2.0)) == pytest.approx(-4.0)  # the sign comes from gammasgn


def test_betaln_grads(enable_x64):
    rng = np.random.default_rng(10)
    for low, high in ((0.5, 5), (12, 50), (0.5, 3)):
        a = jnp.asarray(rng.uniform(low, high, 3))
        b = jnp.asarray(rng.uniform(low if low > 1 else 12, high if low > 1 else 80, 3))
        check_grads(sp.betaln, (a, b), order=2)
    ga, gb = tracejit.grad(sp.betaln, argnums=(0, 1))(3.0, 20.0)
    np.testing.assert_allclose(float(ga), ss.digamma(3.0) - ss.digamma(23.0), rtol=1e-12)
    np.testing.assert_allclose(float(gb), ss.digamma(20.0) - ss.digamma(23.0), rtol=1e-12)


def test_beta_dtypes():
    out = sp.betaln(1, 2.0)
    assert (out.dtype, out.weak_type) == (np.float32, True)
    out = sp.beta(1, 2)
    assert (out.dtype, out.weak_type) == (np.float32, False)
    np.testing.assert_allclose(np.asarray(tracejit.jit(sp.beta)(2.0, 3.0)), 1 / 12, rtol=1e-6)
