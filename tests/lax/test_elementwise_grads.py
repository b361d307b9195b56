"""Derivatives of the unary elementwise primitives (and `polygamma`): JVP rules checked
numerically to second order in both modes, on real and (for holomorphic functions) complex
operands; values against hand-derived derivatives and at the special points where JAX 0.10.2
defines them; jaxpr printouts against JAX's; zero tangents of the piecewise-constant and
integer primitives; transposes of the linear ones (neg, real, imag, conj)."""

import math

import numpy as np
import pytest
import scipy.special
from helpers import check_traced_matches_eager

import tracejit
from tracejit import lax
from tracejit._src import dtypes
from tracejit._src.api import grad, jvp, make_jaxpr, vjp
from tracejit._src.core import get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.transpose import transpose_rules
from tracejit._src.test_util import check_grads

SHAPES = [(), (3,), (2, 3)]


# --- operand samplers -----------------------------------------------------------------------
def uniform(low, high):
    return lambda rng, shape: rng.uniform(low, high, shape)


def away_from_zero(low, high):
    """Magnitudes in [low, high], either sign (kinks and poles at 0 avoided)."""
    return lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(low, high, shape)


def box(re, im, both_halves=False):
    """Complex operands with parts in the given ranges; `both_halves` flips the imaginary part's
    sign at random (for ranges that keep off a branch cut on the real axis)."""

    def sample(rng, shape):
        imag = rng.uniform(*im, shape)
        if both_halves:
            imag = imag * rng.choice([-1.0, 1.0], shape)
        return rng.uniform(*re, shape) + 1j * imag

    return sample


def _pow(y):
    def f(x):
        return lax.integer_pow(x, y)

    f.__name__ = f"integer_pow_{y}"
    return f


# name: (function, real sampler, complex sampler or None when only real operands apply).
# Complex samplers keep off branch cuts and poles; acosh's box straddles Re(x) < 0 on purpose.
DIFFERENTIABLE = {
    "neg": (lax.neg, uniform(-3, 3), box((-2, 2), (-2, 2))),
    "exp": (lax.exp, uniform(-2, 2), box((-1, 1), (-2, 2))),
    "exp2": (lax.exp2, uniform(-2, 2), box((-1, 1), (-2, 2))),
    "log": (lax.log, uniform(0.2, 3), box((0.2, 2), (-1, 1))),
    "log1p": (lax.log1p, uniform(-0.5, 2), box((-0.5, 2), (-1, 1))),
    "expm1": (lax.expm1, uniform(-2, 2), box((-1, 1), (-2, 2))),
    "tanh": (lax.tanh, uniform(-2, 2), box((-1, 1), (-0.7, 0.7))),
    "logistic": (lax.logistic, uniform(-3, 3), box((-1, 1), (-1, 1))),
    "sin": (lax.sin, uniform(-3, 3), box((-2, 2), (-1, 1))),
    "cos": (lax.cos, uniform(-3, 3), box((-2, 2), (-1, 1))),
    "tan": (lax.tan, uniform(-1.2, 1.2), box((-1, 1), (-1, 1))),
    "asin": (lax.asin, uniform(-0.8, 0.8), box((-0.8, 0.8), (-1, 1))),
    "acos": (lax.acos, uniform(-0.8, 0.8), box((-0.8, 0.8), (-1, 1))),
    "atan": (lax.atan, uniform(-3, 3), box((-1, 1), (-0.7, 0.7))),
    "sinh": (lax.sinh, uniform(-2, 2), box((-1, 1), (-2, 2))),
    "cosh": (lax.cosh, uniform(-2, 2), box((-1, 1), (-2, 2))),
    "asinh": (lax.asinh, uniform(-3, 3), box((-1, 1), (-0.7, 0.7))),
    "acosh": (lax.acosh, uniform(1.2, 3), box((-2, 2), (0.3, 1.5), both_halves=True)),
    "atanh": (lax.atanh, uniform(-0.8, 0.8), box((-0.8, 0.8), (-1, 1))),
    "sqrt": (lax.sqrt, uniform(0.2, 3), box((-2, 2), (0.3, 1.5), both_halves=True)),
    "rsqrt": (lax.rsqrt, uniform(0.2, 3), box((-2, 2), (0.3, 1.5), both_halves=True)),
    "cbrt": (lax.cbrt, away_from_zero(0.3, 3), None),
    "abs": (lax.abs, away_from_zero(0.3, 3), None),  # complex: test_abs_of_complex
    "square": (lax.square, uniform(-3, 3), box((-2, 2), (-2, 2))),
    "erf": (lax.erf, uniform(-1.5, 1.5), None),
    "erfc": (lax.erfc, uniform(-1.5, 1.5), None),
    "erf_inv": (lax.erf_inv, uniform(-0.8, 0.8), None),
    "lgamma": (lax.lgamma, uniform(0.3, 4), None),
    "lgamma_negative": (lax.lgamma, uniform(-2.8, -2.2), None),
    "digamma": (lax.digamma, uniform(0.3, 4), None),
    "digamma_negative": (lax.digamma, uniform(-1.8, -1.2), None),
    **{
        f"integer_pow_{y}": (_pow(y), away_from_zero(0.3, 2), box((0.3, 1.5), (-1, 1)))
        for y in (0, 1, 2, 3, 5, -1, -2, -3)
    },
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_check_grads_real(name, shape):
    fn, sample, _ = DIFFERENTIABLE[name]
    x = sample(np.random.default_rng(0), shape)
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"))


HOLOMORPHIC = [name for name, (_, _, c) in DIFFERENTIABLE.items() if c is not None]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_check_grads_complex(name, shape):
    """Holomorphic: the JVP is the complex derivative, and reverse mode its (unconjugated)
    transpose, so the adjoint identity holds for complex inner products."""
    fn, _, sample = DIFFERENTIABLE[name]
    x = sample(np.random.default_rng(1), shape)
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("x64", [False, True])
def test_rules_keep_the_operand_dtype(x64):
    """The rules' constants take the operand's dtype: float32 tangents stay float32."""
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", x64)
    try:
        for name, (fn, real_sample, complex_sample) in DIFFERENTIABLE.items():
            samples = [(real_sample, np.float64 if x64 else np.float32)]
            if complex_sample is not None:
                samples.append((complex_sample, np.complex128 if x64 else np.complex64))
            for sample, dtype in samples:
                x = sample(np.random.default_rng(5), (2,)).astype(dtype)
                t = jvp(fn, (x,), (np.ones_like(x),))[1]
                assert t.dtype == dtype, name
                (ct,) = vjp(fn, x)[1](np.ones_like(x))
                assert ct.dtype == dtype, name
                np.testing.assert_allclose(np.asarray(ct), np.asarray(t), rtol=1e-5, err_msg=name)
    finally:
        tracejit.config.update("jax_enable_x64", previous)


# --- values: hand-derived, and at special points --------------------------------------------
EULER_GAMMA = 0.5772156649015329
ZETA_3 = 1.2020569031595942


def _d(fn, x):
    """fn'(x) for a scalar float64 x, by forward and by reverse mode (they must agree)."""
    x = np.float64(x)
    forward = float(jvp(fn, (x,), (np.float64(1.0),))[1])
    reverse = float(grad(fn)(x))
    np.testing.assert_equal(reverse, forward)
    return forward


HAND_DERIVED = [
    (lax.neg, 2.0, -1.0),
    (lax.exp, 1.0, math.e),
    (lax.exp2, 3.0, 8 * math.log(2)),
    (lax.log, 4.0, 0.25),
    (lax.log1p, 1.0, 0.5),
    (lax.expm1, 0.0, 1.0),
    (lax.tanh, 0.0, 1.0),
    (lax.tanh, 1.0, 1 - math.tanh(1) ** 2),
    (lax.logistic, 0.0, 0.25),
    (lax.sin, 0.0, 1.0),
    (lax.cos, math.pi / 2, -1.0),
    (lax.tan, 0.0, 1.0),
    (lax.tan, math.pi / 4, 2.0),
    (lax.asin, 0.5, 1 / math.sqrt(0.75)),
    (lax.acos, 0.5, -1 / math.sqrt(0.75)),
    (lax.atan, 1.0, 0.5),
    (lax.sinh, 0.0, 1.0),
    (lax.cosh, 0.0, 0.0),
    (lax.asinh, 1.0, 1 / math.sqrt(2)),
    (lax.acosh, 2.0, 1 / math.sqrt(3)),
    (lax.atanh, 0.5, 1 / 0.75),
    (lax.sqrt, 4.0, 0.25),
    (lax.rsqrt, 4.0, -1 / 16),
    (lax.cbrt, 8.0, 1 / 12),
    (lax.cbrt, -8.0, 1 / 12),
    (lax.abs, -2.0, -1.0),
    (lax.abs, 2.0, 1.0),
    (lax.square, 3.0, 6.0),
    (_pow(3), 2.0, 12.0),
    (_pow(-1), 2.0, -0.25),
    (_pow(-2), 2.0, -0.25),
    (_pow(1), 5.0, 1.0),
    (_pow(0), 5.0, 0.0),
    (lax.erf, 0.0, 2 / math.sqrt(math.pi)),
    (lax.erf, 1.0, 2 / math.sqrt(math.pi) * math.exp(-1)),
    (lax.erfc, 0.0, -2 / math.sqrt(math.pi)),
    (lax.erf_inv, 0.0, math.sqrt(math.pi) / 2),
    (lax.erf_inv, 0.5, math.sqrt(math.pi) / 2 * math.exp(scipy.special.erfinv(0.5) ** 2)),
    (lax.lgamma, 1.0, -EULER_GAMMA),
    (lax.lgamma, 2.0, 1 - EULER_GAMMA),
    (lax.digamma, 1.0, math.pi**2 / 6),
    (lax.digamma, 0.5, math.pi**2 / 2),
]


@pytest.mark.parametrize("fn, x, expected", HAND_DERIVED)
def test_hand_derived_first_derivatives(enable_x64, fn, x, expected):
    np.testing.assert_allclose(_d(fn, x), expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(
    "fn, x, expected",
    [
        (lax.sin, 0.7, -math.sin(0.7)),
        (lax.exp, 0.7, math.exp(0.7)),
        (lax.log, 2.0, -0.25),
        (lax.sqrt, 4.0, -1 / 32),
        (lax.tanh, 0.5, -2 * math.tanh(0.5) * (1 - math.tanh(0.5) ** 2)),
        (lax.logistic, 1.0, scipy.special.expit(1) * (1 - scipy.special.expit(1)) ** 2
         - scipy.special.expit(1) ** 2 * (1 - scipy.special.expit(1))),
        (_pow(3), 2.0, 12.0),
        (lax.lgamma, 1.0, math.pi**2 / 6),
        (lax.digamma, 1.0, -2 * ZETA_3),
        (lax.erf, 1.0, -4 / math.sqrt(math.pi) * math.exp(-1)),
    ],
)  # fmt: skip
def test_hand_derived_second_derivatives(enable_x64, fn, x, expected):
    np.testing.assert_allclose(grad(grad(fn))(np.float64(x)), expected, rtol=1e-12)


# At the edges of the domains the derivatives follow their formulas, as in JAX 0.10.2.
SPECIAL_POINTS = [
    (lax.abs, 0.0, 1.0),  # the slope at the kink is 1 (select on x >= 0)
    (lax.abs, -0.0, 1.0),
    (lax.sqrt, 0.0, np.inf),
    (lax.rsqrt, 0.0, -np.inf),  # -0.5 * inf / 0
    (lax.cbrt, 0.0, np.inf),
    (lax.log, 0.0, np.inf),
    (lax.log1p, -1.0, np.inf),
    (lax.asin, 1.0, np.inf),
    (lax.acos, 1.0, -np.inf),
    (lax.acosh, 1.0, np.inf),
    (lax.atanh, 1.0, np.inf),
    (lax.atanh, -1.0, np.inf),
    (lax.erf_inv, 1.0, np.inf),
    (lax.erf_inv, -1.0, np.inf),
    (lax.digamma, 0.0, np.inf),  # polygamma(1, 0), though digamma(0) is nan
    (lax.lgamma, 0.0, np.nan),  # digamma(0)
    (lax.tanh, np.inf, 0.0),
    (lax.logistic, -np.inf, 0.0),
    (lax.logistic, 800.0, 0.0),
    (lax.exp, -np.inf, 0.0),
    (_pow(0), 0.0, 0.0),  # constant 1, 0^0 included
    (_pow(1), 0.0, 1.0),
    (_pow(2), 0.0, 0.0),
    (_pow(-1), 0.0, -np.inf),
    (_pow(-2), 0.0, -np.inf),  # -2 * 0.^-3
    (_pow(-2), -0.0, np.inf),
]


@pytest.mark.parametrize("fn, x, expected", SPECIAL_POINTS)
def test_derivatives_at_special_points(enable_x64, fn, x, expected):
    np.testing.assert_equal(_d(fn, x), expected)


def test_special_points_in_float32():
    x = np.array([0.0, 1.0], np.float32)
    t = jvp(lax.sqrt, (x,), (np.ones_like(x),))[1]
    np.testing.assert_equal(np.asarray(t), np.array([np.inf, 0.5], np.float32))
    t = jvp(lax.abs, (x - 1,), (np.ones_like(x),))[1]
    np.testing.assert_equal(np.asarray(t), np.array([-1.0, 1.0], np.float32))


def test_complex_derivatives_against_formulas(enable_x64):
    """Holomorphic derivatives at points off the real axis, including acosh where Re(z) < 0:
    there 1/sqrt(z^2 - 1) has the wrong sign (JAX 0.10.2 uses it for complex z too);
    1/(sqrt(z - 1) sqrt(z + 1)) is the derivative of NumPy's (and XLA's) branch."""
    z = np.array([-2 + 0.1j, -0.5 - 2j, 0.5 + 0.5j, 2 + 1j])
    one = np.ones_like(z)
    cases = [
        (lax.exp, np.exp(z)),
        (lax.log, 1 / z),
        (lax.sin, np.cos(z)),
        (lax.tan, 1 / np.cos(z) ** 2),
        (lax.sqrt, 0.5 / np.sqrt(z)),
        (lax.acosh, 1 / (np.sqrt(z - 1) * np.sqrt(z + 1))),
        (lax.asinh, 1 / np.sqrt(z * z + 1)),
        (lax.atanh, 1 / (1 - z * z)),
        (lax.logistic, np.exp(-z) / (1 + np.exp(-z)) ** 2),
        (_pow(-2), -2 / z**3),
    ]
    for fn, expected in cases:
        t = jvp(fn, (z,), (one,))[1]
        np.testing.assert_allclose(np.asarray(t), expected, rtol=1e-12, err_msg=fn.__name__)
        (ct,) = vjp(fn, z)[1](one)  # the transpose, not conjugated
        np.testing.assert_allclose(np.asarray(ct), expected, rtol=1e-12, err_msg=fn.__name__)


# --- non-differentiable primitives: zero tangents -------------------------------------------
PIECEWISE_CONSTANT = [
    lax.sign,
    lax.floor,
    lax.ceil,
    lax.round,
    lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
]


@pytest.mark.parametrize("fn", PIECEWISE_CONSTANT)
@pytest.mark.parametrize("shape", [(), (2, 3)], ids=str)
def test_piecewise_constant_primitives_have_zero_tangents(fn, shape):
    x = np.random.default_rng(0).uniform(-3, 3, shape).astype(np.float32)
    _out, t = jvp(fn, (x,), (np.ones_like(x),))
    assert t.shape == shape and t.dtype == np.float32
    np.testing.assert_equal(np.asarray(t), np.zeros(shape, np.float32))
    (ct,) = vjp(fn, x)[1](np.ones_like(x))
    np.testing.assert_equal(np.asarray(ct), np.zeros(shape, np.float32))
    check_grads(fn, (x,), order=2)


def test_sign_of_complex_has_zero_tangent():
    z = np.array([1 + 1j, -2j], np.complex64)
    _, t = jvp(lax.sign, (z,), (np.ones_like(z),))
    assert t.dtype == np.complex64
    np.testing.assert_equal(np.asarray(t), np.zeros(2, np.complex64))


def test_is_finite_has_float0_tangent():
    x = np.array([1.0, np.inf, np.nan], np.float32)
    out, t = jvp(lax.is_finite, (x,), (np.ones_like(x),))
    np.testing.assert_equal(np.asarray(out), [True, False, False])
    assert t.dtype == dtypes.float0 and t.shape == (3,)


@pytest.mark.parametrize("fn", [lax.bitwise_not, lax.population_count, lax.clz])
def test_integer_primitives_have_float0_tangents(fn):
    x = np.array([1, -2, 7], np.int32)
    out, t = jvp(fn, (x,), (np.zeros(3, dtypes.float0),))
    np.testing.assert_equal(np.asarray(out), np.asarray(fn(x)))
    assert t.dtype == dtypes.float0 and t.shape == (3,)
    # their rules give symbolic zeros when called with a tangent
    primitive = {lax.bitwise_not: lax.not_p, lax.population_count: lax.population_count_p,
                 lax.clz: lax.clz_p}[fn]  # fmt: skip
    zero = ad.Zero(ad.tangent_aval(get_aval(x)))
    _, t = ad.jvp_rules[primitive]((x,), (zero,))
    assert type(t) is ad.Zero and t.aval.dtype == dtypes.float0


# --- linear primitives: transposes ----------------------------------------------------------
def test_neg_transposes_to_neg():
    check_grads(lax.neg, (np.array([1.0, -2.0]),), order=2)
    (ct,) = vjp(lax.neg, np.float32(3.0))[1](np.float32(2.0))
    assert float(ct) == -2.0


def _check_cotangent_type(fn, x):
    out, f_vjp = vjp(fn, x)
    (ct,) = f_vjp(np.ones_like(np.asarray(out)))
    assert ct.dtype == np.asarray(x).dtype and ct.shape == np.shape(x)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn", [lax.real, lax.imag, lax.conj, lax.abs])
def test_complex_to_real_linear_maps(enable_x64, fn, shape):
    """Only real-linear: check_grads compares the real parts of <vjp(c), v> and <c, jvp(v)>."""
    z = box((-2, 2), (-2, 2))(np.random.default_rng(2), shape)
    _check_cotangent_type(fn, z)
    check_grads(fn, (z,), order=2)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_conj_of_real_operands(enable_x64, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    _check_cotangent_type(lax.conj, x)
    check_grads(lax.conj, (x,), order=2)

    def f(x):  # real -> real, through complex values: x^2 as Re(conj(x) conj(x))
        y = lax.conj(x)
        return lax.real(lax.mul(y, y))

    check_grads(f, (x,), order=2)
    axes = tuple(range(len(shape)))
    np.testing.assert_allclose(np.asarray(grad(lambda x: lax.reduce_sum(f(x), axes))(x)), 2 * x)


def test_transposes_of_complex_parts(enable_x64):
    """As JAX transposes them: real -> ct + 0j, imag -> -1j ct, conj -> conj (complex operand)
    or real part (real operand)."""
    z = np.array([1 + 2j, -3 - 0.5j])
    ct = np.array([2.0, -1.5])
    np.testing.assert_equal(np.asarray(vjp(lax.real, z)[1](ct)[0]), ct + 0j)
    np.testing.assert_equal(np.asarray(vjp(lax.imag, z)[1](ct)[0]), -1j * ct)
    np.testing.assert_equal(np.asarray(vjp(lax.conj, z)[1](z)[0]), np.conj(z))
    np.testing.assert_equal(np.asarray(vjp(lax.conj, ct)[1](z)[0]), z.real)
    assert vjp(lax.real, z)[1](ct)[0].dtype == np.complex128
    assert vjp(lax.conj, ct)[1](z)[0].dtype == np.float64
    # the rules directly
    from tracejit._src.interpreters.transpose import UndefinedPrimal

    undefined = UndefinedPrimal(get_aval(z))
    (out,) = transpose_rules[lax.real_p](ct, undefined)
    assert np.asarray(out).dtype == np.complex128


def test_abs_of_complex(enable_x64):
    z = np.array([3 + 4j, 0j, -1j])
    out, t = jvp(lax.abs, (z,), (np.array([1.0, 1.0 + 1j, 1j]),))
    np.testing.assert_allclose(np.asarray(out), [5.0, 0.0, 1.0])
    np.testing.assert_allclose(np.asarray(t), [0.6, 0.0, -1.0])  # Re(t conj(z) / |z|); 0 at 0
    (ct,) = vjp(lax.abs, z)[1](np.ones(3))
    np.testing.assert_allclose(np.asarray(ct), [0.6 - 0.8j, 0, 1j])  # JAX: ct conj(z) / |z|


# --- polygamma --------------------------------------------------------------------------------
def test_polygamma_values(enable_x64):
    m = np.array([0, 1, 2, 3, 1.5, -1, np.inf, np.nan, 1, 2, 0, 1, -0.0])
    x = np.array([1.5, 0.5, 2.0, 3.0, 1.0, 1.0, 0.5, 1.0, 0.0, -2.0, np.inf, np.inf, -7.25])
    with np.errstate(all="ignore"):
        expected = scipy.special.polygamma(m, x)
    # JAX (XLA): nan for orders that are not non-negative integers; at the poles inf for odd
    # orders and nan for even ones; at inf digamma is inf and higher orders nan
    expected[4:8] = np.nan
    expected[8:10] = [np.inf, np.nan]
    expected[10:12] = [np.inf, np.nan]
    out = check_traced_matches_eager(lax.polygamma, m, x)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12)


def test_polygamma_in_float32():
    out32 = lax.polygamma(np.float32(1), np.array([0.5, 2.0], np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out32), [np.pi**2 / 2, np.pi**2 / 6 - 1], rtol=1e-6)


def test_polygamma_shapes_dtypes_and_weak_types():
    out = lax.polygamma(np.ones((3, 1), np.float32), np.ones((1, 4), np.float32))
    assert out.shape == (3, 4)
    assert lax.polygamma(1.0, 2.0).weak_type
    assert not lax.polygamma(np.float32(1), 2.0).weak_type
    with pytest.raises(TypeError, match="polygamma does not accept dtype int32"):
        lax.polygamma(np.int32(1), np.int32(2))
    with pytest.raises(TypeError, match="polygamma requires arguments to have the same dtypes"):
        lax.polygamma(np.float32(1), np.float16(2))
    jaxpr = make_jaxpr(lax.polygamma)(np.float32(1), np.ones(3, np.float32))
    assert str(jaxpr) == "{ lambda ; a:f32[] b:f32[3]. let c:f32[3] = polygamma a b in (c,) }"


@pytest.mark.parametrize(
    "m_shape, x_shape", [((), ()), ((), (3,)), ((3,), ()), ((2, 1), (1, 3)), ((2, 3), (2, 3))]
)
@pytest.mark.parametrize("order", [0.0, 1.0, 2.0])
def test_polygamma_grads_in_x(order, m_shape, x_shape):
    m = np.full(m_shape, order)
    x = np.random.default_rng(4).uniform(0.5, 3, x_shape)
    check_grads(lambda x: lax.polygamma(m, x), (x,), order=2)


def test_polygamma_is_not_differentiable_in_m():
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        grad(lambda m: lax.polygamma(m, np.float32(2.0)))(np.float32(1.0))


# --- jaxprs, as JAX 0.10.2 prints them (sharding params aside) ------------------------------
X3 = np.ones(3, np.float32)
Z3 = np.ones(3, np.complex64)

# JVPs: make_jaxpr(lambda x, t: jvp(f, (x,), (t,)))(x, x)
JVP_JAXPRS = {
    "exp": (
        lax.exp,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = exp a
    d:f32[3] = mul b c
  in (c, d) }""",
    ),
    "tanh": (
        lax.tanh,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = tanh a
    d:f32[3] = mul b c
    e:f32[3] = add b d
    f:f32[3] = sub 1.0:f32[] c
    g:f32[3] = mul e f
  in (c, g) }""",
    ),
    "cbrt": (
        lax.cbrt,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = cbrt a
    d:f32[3] = integer_pow[y=-2] c
    e:f32[3] = mul 0.3333333432674408:f32[] d
    f:f32[3] = mul b e
  in (c, f) }""",
    ),
    "atanh": (
        lax.atanh,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = atanh a
    d:f32[3] = add 1.0:f32[] a
    e:f32[3] = integer_pow[y=-1] d
    f:f32[3] = sub 1.0:f32[] a
    g:f32[3] = div b f
    h:f32[3] = mul e g
  in (c, h) }""",
    ),
    "erf": (
        lax.erf,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = erf a
    d:f32[3] = square a
    e:f32[3] = neg d
    f:f32[3] = exp e
    g:f32[3] = mul b f
    h:f32[3] = mul 1.128379225730896:f32[] g
  in (c, h) }""",
    ),
    "exp2": (
        lax.exp2,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = exp2 a
    d:f32[] = log 2.0:f32[]
    e:f32[3] = mul b c
    f:f32[3] = mul d e
  in (c, f) }""",
    ),
    "digamma": (
        lax.digamma,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = digamma a
    d:f32[3] = polygamma 1.0:f32[] a
    e:f32[3] = mul b d
  in (c, e) }""",
    ),
    "integer_pow_3": (
        _pow(3),
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = integer_pow[y=3] a
    d:f32[3] = integer_pow[y=2] a
    e:f32[3] = mul 3.0:f32[] d
    f:f32[3] = mul b e
  in (c, f) }""",
    ),
    "integer_pow_2": (
        _pow(2),
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = integer_pow[y=2] a
    d:f32[3] = mul 2.0:f32[] a
    e:f32[3] = mul b d
  in (c, e) }""",
    ),
    "integer_pow_1": (
        _pow(1),
        X3,
        """\
{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = integer_pow[y=1] a in (c, b) }""",
    ),
    "integer_pow_0": (
        _pow(0),
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = integer_pow[y=0] a
    d:f32[3] = broadcast_in_dim 0.0:f32[]
  in (c, d) }""",
    ),
    "abs": (
        lax.abs,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = abs a
    d:bool[3] = ge a 0.0:f32[]
    e:f32[3] = neg b
    f:f32[3] = select_n d e b
  in (c, f) }""",
    ),
    "abs_complex": (
        lax.abs,
        Z3,
        """{ lambda ; a:c64[3] b:c64[3]. let
    c:f32[3] = abs a
    d:c64[3] = conj[input_dtype=complex64] a
    e:c64[3] = convert_element_type[new_dtype=complex64 weak_type=False] c
    f:bool[3] = eq e 0j:c64[]
    g:c64[3] = broadcast_in_dim (1+0j):c64[]
    h:c64[3] = select_n f e g
    i:c64[3] = div d h
    j:c64[3] = mul b i
    k:f32[3] = real j
  in (c, k) }""",
    ),
    "sqrt_complex": (
        lax.sqrt,
        Z3,
        """{ lambda ; a:c64[3] b:c64[3]. let
    c:c64[3] = sqrt a
    d:c64[3] = div (0.5+0j):c64[] c
    e:c64[3] = mul b d
  in (c, e) }""",
    ),
    "sign": (
        lax.sign,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sign a
    d:f32[3] = broadcast_in_dim 0.0:f32[]
  in (c, d) }""",
    ),
    "conj": (
        lax.conj,
        X3,
        """{ lambda ; a:f32[3] b:f32[3]. let
    c:c64[3] = conj[input_dtype=float32] a
    d:c64[3] = conj[input_dtype=float32] b
  in (c, d) }""",
    ),
}


@pytest.mark.parametrize("name", list(JVP_JAXPRS))
def test_jaxpr_of_jvp(name):
    fn, x, expected = JVP_JAXPRS[name]
    assert str(make_jaxpr(lambda x, t: jvp(fn, (x,), (t,)))(x, x)) == expected


# Gradients: make_jaxpr(grad(lambda x: reduce_sum(f(x), (0,))))(x)
GRAD_JAXPRS = {
    "tanh": (
        lax.tanh,
        """{ lambda ; a:f32[3]. let
    b:f32[3] = tanh a
    c:f32[3] = sub 1.0:f32[] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d c
    f:f32[3] = mul e b
    g:f32[3] = add_any e f
  in (g,) }""",
    ),
    "abs": (
        lax.abs,
        """{ lambda ; a:f32[3]. let
    b:f32[3] = abs a
    c:bool[3] = ge a 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:f32[3] = select_n c d e
    g:f32[3] = select_n c e d
    h:f32[3] = neg f
    i:f32[3] = add_any g h
  in (i,) }""",
    ),
    "neg": (
        lax.neg,
        """{ lambda ; a:f32[3]. let
    b:f32[3] = neg a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = neg c
  in (d,) }""",
    ),
    "floor": (
        lax.floor,
        """{ lambda ; a:f32[3]. let
    b:f32[3] = floor a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 0.0:f32[]
  in (c,) }""",
    ),
    "erf_inv": (
        lax.erf_inv,
        """{ lambda ; a:f32[3]. let
    b:f32[3] = erf_inv a
    c:f32[3] = square b
    d:f32[3] = exp c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul 0.8862269520759583:f32[] e
    g:f32[3] = mul f d
  in (g,) }""",
    ),
}


@pytest.mark.parametrize("name", list(GRAD_JAXPRS))
def test_jaxpr_of_grad(name):
    fn, expected = GRAD_JAXPRS[name]
    assert str(make_jaxpr(grad(lambda x: lax.reduce_sum(fn(x), (0,))))(X3)) == expected


# JAX transposes real and imag with its `complex` primitive (`complex ct 0.0` and
# `complex 0.0 (neg ct)`); tracejit has none and converts to complex instead.
VJP_JAXPRS = {
    "real": (
        lax.real,
        Z3,
        X3,
        """{ lambda ; a:c64[3] b:f32[3]. let
    _:f32[3] = real a
    c:c64[3] = convert_element_type[new_dtype=complex64 weak_type=False] b
  in (c,) }""",
    ),
    "imag": (
        lax.imag,
        Z3,
        X3,
        """{ lambda ; a:c64[3] b:f32[3]. let
    _:f32[3] = imag a
    c:f32[3] = neg b
    d:c64[3] = convert_element_type[new_dtype=complex64 weak_type=False] c
    e:c64[3] = mul d 1j:c64[]
  in (e,) }""",
    ),
    "conj": (
        lax.conj,
        Z3,
        Z3,
        """{ lambda ; a:c64[3] b:c64[3]. let
    _:c64[3] = conj[input_dtype=complex64] a
    c:c64[3] = conj[input_dtype=complex64] b
  in (c,) }""",
    ),
    "conj_of_real": (
        lax.conj,
        X3,
        Z3,
        """{ lambda ; a:f32[3] b:c64[3]. let
    _:c64[3] = conj[input_dtype=float32] a
    c:f32[3] = real b
  in (c,) }""",
    ),
}


@pytest.mark.parametrize("name", list(VJP_JAXPRS))
def test_jaxpr_of_transposes(name):
    fn, x, ct, expected = VJP_JAXPRS[name]
    assert str(make_jaxpr(lambda x, t: vjp(fn, x)[1](t))(x, ct)) == expected
