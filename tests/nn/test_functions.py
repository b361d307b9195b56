"""tracejit.nn against float64 NumPy/SciPy references: values (eager, staged and jitted, at
random points and at +-inf, NaN, 0 and large magnitudes), dtypes and weak types as JAX 0.10.2
gives them, gradients against finite differences, and JAX's derivative conventions at kinks."""

import inspect

import numpy as np
import pytest
import scipy.special
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp
from tracejit import nn
from tracejit.test_util import check_grads

EDGES = np.array([-np.inf, -1e4, -30.0, -6.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 6.0, 30.0, 1e4, np.inf])
EDGES_NAN = np.append(EDGES, np.nan)


def _sigmoid(x):
    return scipy.special.expit(x)


def _softplus(x):
    return np.logaddexp(x, 0.0)


def _where_nan(f):
    """Reference `f`, with NaN in, NaN out (np.where would otherwise pick a branch)."""

    def ref(x, *args):
        with np.errstate(all="ignore"):
            out = np.asarray(f(np.asarray(x, np.float64), *args), np.float64)
        return np.where(np.isnan(x), np.nan, out)

    return ref


def _log1mexp(x):
    with np.errstate(all="ignore"):
        return np.where(x > np.log(2), np.log1p(-np.exp(-x)), np.log(-np.expm1(-x)))


# name: (function, float64 reference, domain for random samples (low, high), smooth there)
ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0), (-3, 3)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6), (-3, 9)),
    "sparse_sigmoid": (nn.sparse_sigmoid, lambda x: np.clip(x + 1, 0, 2) / 2, (-3, 3)),
    "sigmoid": (nn.sigmoid, _sigmoid, (-8, 8)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_softplus(-x), (-8, 8)),
    "softplus": (nn.softplus, _softplus, (-8, 8)),
    "sparse_plus": (
        nn.sparse_plus,
        lambda x: np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
        (-3, 3),
    ),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2, (-5, 5)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x), (-6, 6)),
    "swish": (nn.swish, lambda x: x * _sigmoid(x), (-6, 6)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, (-5, 5)),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6, (-5, 5)),
    "hard_swish": (nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6, (-5, 5)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1), (-3, 3)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1), (-5, 5)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), (-4, 4)),
    "celu": (nn.celu, lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)), (-4, 4)),
    "selu": (
        nn.selu,
        lambda x: (
            1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))
        ),
        (-4, 4),
    ),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x), (-3, 3)),
    "gelu": (
        nn.gelu,
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
        (-5, 5),
    ),
    "gelu_exact": (
        lambda x: nn.gelu(x, approximate=False),
        lambda x: x * scipy.special.ndtr(x),
        (-5, 5),
    ),
    "mish": (nn.mish, lambda x: x * np.tanh(_softplus(x)), (-5, 5)),
    "tanh": (nn.tanh, np.tanh, (-3, 3)),
    "identity": (nn.identity, lambda x: x, (-3, 3)),
    "log1mexp": (nn.log1mexp, _log1mexp, (0.01, 5)),
}

# Points where a piecewise function has a kink (finite differences straddling one are wrong).
KINKS = {
    "relu": [0.0],
    "relu6": [0.0, 6.0],
    "sparse_sigmoid": [-1.0, 1.0],
    "hard_sigmoid": [-3.0, 3.0],
    "hard_silu": [-3.0, 3.0],
    "hard_swish": [-3.0, 3.0],
    "hard_tanh": [-1.0, 1.0],
    "leaky_relu": [0.0],
    "elu": [0.0],
    "selu": [0.0],
    "soft_sign": [0.0],
}


def _sample(name, rng, shape):
    low, high = ACTIVATIONS[name][2]
    x = rng.uniform(low, high, shape)
    for k in KINKS.get(name, ()):
        x = np.where(np.abs(x - k) < 0.05, x + 0.1, x)
    return x


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values(name, dtype, enable_x64):
    fun, ref, _ = ACTIVATIONS[name]
    rng = np.random.default_rng(0)
    x = _sample(name, rng, (4, 5)).astype(dtype)
    out = check_traced_matches_eager(fun, jnp.asarray(x), rtol=1e-5, atol=1e-6)
    assert out.dtype == dtype and out.shape == x.shape
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(np.asarray(out, np.float64), ref(x.astype(np.float64)), tol, tol)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_edge_values(name):
    """+-inf, NaN, 0, tiny and huge magnitudes: no overflow to NaN, no spurious inf."""
    fun, ref, _ = ACTIVATIONS[name]
    x = EDGES_NAN.astype(np.float32)
    out = np.asarray(fun(jnp.asarray(x)), np.float64)
    expected = _where_nan(ref)(x.astype(np.float64))
    if name in ("silu", "swish", "gelu", "gelu_exact", "mish", "hard_silu", "hard_swish"):
        expected[0] = np.nan  # -inf * 0 (JAX gives NaN too)
    if name == "squareplus":
        expected[0] = np.nan  # -inf + inf
        expected[1] = 0.0  # x + sqrt(x^2 + b) cancels in float32 (JAX's formula does the same)
    if name == "soft_sign":
        expected[[0, -2]] = np.nan  # inf / inf
    # atol: the tanh form of gelu rounds 1 + tanh(...) to 0 below about -5 in float32, as JAX's.
    rtol = 1e-5 if name == "squareplus" else 2e-6  # the same cancellation, milder at -30
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_jit(name):
    fun = ACTIVATIONS[name][0]
    x = jnp.asarray(np.concatenate([_sample(name, np.random.default_rng(1), (6,)), EDGES]))
    x = x.astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(tracejit.jit(fun)(x)), np.asarray(fun(x)), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_grads(name, enable_x64):
    fun, _, _ = ACTIVATIONS[name]
    x = jnp.asarray(_sample(name, np.random.default_rng(2), (5,)))
    check_grads(fun, (x,), order=2, modes=("fwd", "rev"))


def _grad_at(fun, points):
    return np.asarray(tracejit.vmap(tracejit.grad(fun))(jnp.asarray(points, np.float32)))


# Derivatives at special points, as JAX 0.10.2 gives them (kinks, +-inf, 0, NaN).
SPECIAL_GRADS = [
    (nn.relu, [-1.0, 0.0, 1.0, np.inf, np.nan], [0, 0, 1, 1, 0]),
    (nn.relu6, [0.0, 3.0, 6.0, 7.0, np.inf, np.nan], [0, 1, 0, 0, 0, 0]),
    (nn.hard_sigmoid, [-3.0, 0.0, 3.0], [0, 1 / 6, 0]),
    (nn.hard_silu, [-3.0, 0.0, 3.0, np.inf], [0, 0.5, 1, 1]),
    (nn.hard_tanh, [-1.0, 0.0, 1.0, 2.0, np.nan], [1, 1, 1, 0, 1]),
    (nn.leaky_relu, [-1.0, 0.0, 1.0, -np.inf, np.nan], [0.01, 1, 1, 0.01, 0.01]),
    (nn.elu, [-np.inf, 0.0, 1.0, np.inf], [0, 1, 1, 1]),
    (nn.celu, [-np.inf, 0.0, 1.0, np.inf], [0, 1, 1, 1]),
    (nn.selu, [0.0, 1.0], [1.7580993408473766, 1.0507009873554805]),
    (nn.softplus, [-np.inf, 0.0, np.inf, np.nan], [0, 0.5, 1, np.nan]),
    (nn.log_sigmoid, [-np.inf, 0.0, np.inf], [1, 0.5, 0]),
    (nn.sigmoid, [-np.inf, 0.0, np.inf], [0, 0.25, 0]),
    (nn.log1mexp, [0.0, 1.0, 30.0, np.inf], [np.inf, 0.5819767068693263, 9.357623e-14, 0]),
    (nn.sparse_plus, [-1.0, 0.0, 1.0], [0, 0.5, 1]),
    (nn.sparse_sigmoid, [-2.0, -1.0, 0.0, 1.0, np.nan], [0, 0.25, 0.5, 0.25, 0]),
    (nn.gelu, [0.0], [0.5]),
    (lambda x: nn.gelu(x, approximate=False), [0.0], [0.5]),
    (nn.mish, [0.0], [0.6]),
    (nn.soft_sign, [0.0], [1.0]),
]


@pytest.mark.parametrize("case", range(len(SPECIAL_GRADS)))
def test_special_point_grads(case):
    fun, points, expected = SPECIAL_GRADS[case]
    np.testing.assert_allclose(
        _grad_at(fun, points), np.asarray(expected, np.float64), rtol=1e-5, equal_nan=True
    )


def test_relu_kink_convention_under_jit_and_forward_mode():
    """relu'(0) = 0 in every mode, also after staging (the rule travels with the jaxpr)."""
    assert float(tracejit.jit(tracejit.grad(nn.relu))(0.0)) == 0.0
    assert float(tracejit.jvp(nn.relu, (0.0,), (1.0,))[1]) == 0.0
    assert float(tracejit.grad(lambda x: nn.relu(x) - nn.relu(-x))(0.0)) == 0.0
    assert "custom_jvp_call" in str(tracejit.make_jaxpr(nn.relu)(1.0))


# (function, argument, dtype, weak type) as JAX 0.10.2 gives them.
DTYPES = [
    (nn.relu, 3.0, "float32", True),
    (nn.relu, 2, "int32", True),
    (nn.relu6, np.int32(3), "float32", True),
    (nn.sigmoid, 2.0, "float32", True),
    (nn.softplus, 2.0, "float32", True),
    (nn.softplus, 1, "float32", True),
    (nn.gelu, 2.0, "float32", False),
    (nn.gelu, 1, "float32", False),
    (nn.gelu, np.float16(1), "float16", False),
    (nn.elu, 2.0, "float32", True),
    (nn.silu, 1.0, "float32", True),
    (nn.leaky_relu, -1, "float32", True),
    (nn.hard_tanh, 2, "int32", True),
    (nn.log1mexp, 1.0, "float32", True),
    (nn.identity, 3.0, "float32", True),
    (nn.identity, 3, "int32", True),
    (nn.soft_sign, 2, "float32", True),
    (nn.squareplus, 2, "float32", True),
    (nn.mish, 2.0, "float32", True),
    (nn.logsumexp, 3.0, "float32", False),
    (nn.logmeanexp, np.ones(3, np.float32), "float32", False),
    (nn.softmax, np.arange(3), "float32", False),
    (nn.log_softmax, np.arange(3), "float32", False),
    (nn.standardize, np.arange(4), "float32", False),
    (lambda x: nn.one_hot(x, 3), 1.0, "float32", False),
]


@pytest.mark.parametrize("case", range(len(DTYPES)))
def test_dtypes_and_weak_types(case):
    fun, arg, dtype, weak = DTYPES[case]
    out = fun(arg)
    assert (str(out.dtype), out.weak_type) == (dtype, weak)
    staged = tracejit.make_jaxpr(fun)(arg).out_avals[0]
    assert (str(staged.dtype), staged.weak_type) == (dtype, weak)


def test_sigmoid_refuses_integers():
    with pytest.raises(TypeError):
        nn.sigmoid(np.int32(2))


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
@pytest.mark.parametrize("name", ["relu", "sigmoid", "softplus", "silu", "gelu", "elu", "mish"])
def test_low_precision(name, dtype):
    fun, ref, _ = ACTIVATIONS[name]
    x = np.linspace(-4, 4, 17)
    out = fun(jnp.asarray(x).astype(dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out, np.float64), ref(x), rtol=2e-2, atol=2e-2)


def test_parameterized_activations():
    x = np.array([-3.0, -0.5, 0.0, 2.0])
    np.testing.assert_allclose(nn.elu(jnp.asarray(x), 0.5), np.where(x > 0, x, 0.5 * np.expm1(x)))
    np.testing.assert_allclose(
        nn.celu(jnp.asarray(x), 0.5),
        np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5),
        rtol=1e-6,
    )
    np.testing.assert_allclose(nn.leaky_relu(jnp.asarray(x), 0.2), np.where(x >= 0, x, 0.2 * x))
    np.testing.assert_allclose(
        nn.squareplus(jnp.asarray(x), 1.0), (x + np.sqrt(x * x + 1)) / 2, rtol=1e-6
    )


def test_glu():
    x = np.arange(8.0).reshape(2, 4)
    np.testing.assert_allclose(nn.glu(jnp.asarray(x)), x[:, :2] * _sigmoid(x[:, 2:]), rtol=1e-6)
    np.testing.assert_allclose(nn.glu(jnp.asarray(x), axis=0), x[:1] * _sigmoid(x[1:]), rtol=1e-6)
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(jnp.ones((2, 3)))


# --------------------------------------------------------------------------------------------
# softmax, log_softmax, logsumexp, logmeanexp

X = np.array(
    [[1.0, 2.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf, -np.inf], [1000.0, 1.0, 2.0, -1000.0]],
    np.float32,
)
MASK = np.array([True, False, True, True])


def _ref_lse(x, axis=None, keepdims=False, b=None):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        return scipy.special.logsumexp(x, axis=axis, keepdims=keepdims, b=b)


def _ref_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        return np.exp(x - _ref_lse(x, axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [-1, 0, 1, None, (0, 1)])
def test_softmax_log_softmax(axis):
    x = X[[0, 2]]  # rows with a finite maximum
    ref = _ref_softmax(x, axis)
    np.testing.assert_allclose(np.asarray(nn.softmax(jnp.asarray(x), axis=axis)), ref, atol=1e-7)
    with np.errstate(all="ignore"):
        log_ref = np.asarray(x, np.float64) - _ref_lse(x, axis=axis, keepdims=True)
    out = check_traced_matches_eager(lambda v: nn.log_softmax(v, axis=axis), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), log_ref, rtol=1e-6)
    jitted = tracejit.jit(lambda v: nn.softmax(v, axis=axis))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(jitted), ref, atol=1e-7)


def test_softmax_special_rows():
    """All -inf has no distribution (NaN, as in JAX); +inf too; huge values do not overflow."""
    out = np.asarray(nn.softmax(jnp.asarray(X)))
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[2], [1, 0, 0, 0])
    assert np.isnan(np.asarray(nn.softmax(jnp.asarray([np.inf, 1.0])))).all()
    log_out = np.asarray(nn.log_softmax(jnp.asarray(X)))
    np.testing.assert_allclose(log_out[2], [0, -999, -998, -2000])
    assert log_out[0, 2] == -np.inf


def test_softmax_where():
    x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
    ref = np.where(MASK, _ref_softmax(np.where(MASK, [1.0, 2.0, 3.0, 4.0], -np.inf)), 0)
    np.testing.assert_allclose(np.asarray(nn.softmax(x, where=MASK)), ref, rtol=1e-6)
    log_out = np.asarray(nn.log_softmax(x, where=MASK))
    assert log_out[1] == -np.inf
    np.testing.assert_allclose(log_out[MASK], np.log(ref[MASK]), rtol=1e-6)
    g = tracejit.grad(lambda v: nn.softmax(v, where=MASK)[0])(x)
    assert float(g[1]) == 0.0
    g = tracejit.grad(lambda v: nn.log_softmax(v, where=MASK)[0])(x)
    assert float(g[1]) == 0.0


def test_log_softmax_of_a_slice_masked_whole_has_zero_gradient():
    """As JAX (optax's masked cross-entropy relies on it): no NaN from the masked row."""
    x = jnp.asarray([[10.0, 1.0, -2.0], [1.0, 4.0, 0.2]])
    rows = np.array([[True], [False]])

    def loss(x):
        return jnp.sum(nn.log_softmax(x, where=rows)[:1])

    g = np.asarray(tracejit.grad(loss)(x))
    np.testing.assert_array_equal(g[1], 0.0)
    np.testing.assert_allclose(g[0], 1 - 3 * np.asarray(nn.softmax(x[0])), rtol=1e-5)


def test_softmax_grads(enable_x64):
    x = jnp.asarray(np.random.default_rng(3).normal(size=(2, 3)))
    check_grads(nn.softmax, (x,), order=2)
    check_grads(lambda v: nn.log_softmax(v, axis=0), (x,), order=2)
    check_grads(lambda v: nn.logsumexp(v, axis=1), (x,), order=2)
    check_grads(lambda v: nn.logmeanexp(v, axis=0), (x,), order=1)
    check_grads(lambda v: nn.softmax(v, where=np.array([True, False, True])), (x,), order=1)


def test_softmax_grads_at_infinities():
    """-inf logits get zero gradient (JAX: softmax'[-inf] = -0, log_softmax' = 0)."""
    x = jnp.asarray([1.0, 2.0, -np.inf])
    g = np.asarray(tracejit.grad(lambda v: nn.softmax(v)[0])(x))
    np.testing.assert_allclose(g, [0.19661193, -0.19661197, 0.0], rtol=1e-5)
    g = np.asarray(tracejit.grad(lambda v: nn.log_softmax(v)[0])(x))
    np.testing.assert_allclose(g, [0.73105854, -0.7310586, 0.0], rtol=1e-5)
    g = np.asarray(tracejit.grad(nn.logsumexp)(x))
    np.testing.assert_allclose(g, [0.26894143, 0.7310586, 0.0], rtol=1e-5)
    assert np.isnan(np.asarray(tracejit.grad(nn.logsumexp)(jnp.asarray([-np.inf, -np.inf])))).all()


@pytest.mark.parametrize(
    "kwargs", [{}, {"axis": 1}, {"axis": 1, "keepdims": True}, {"axis": (0, 1)}, {"axis": -2}]
)
def test_logsumexp(kwargs):
    out = check_traced_matches_eager(lambda v: nn.logsumexp(v, **kwargs), jnp.asarray(X))
    ref = _ref_lse(X, **kwargs)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(tracejit.jit(lambda v: nn.logsumexp(v, **kwargs))(jnp.asarray(X))), ref
    )


def test_logsumexp_all_neg_inf_is_neg_inf():
    assert float(nn.logsumexp(jnp.asarray([-np.inf, -np.inf]))) == -np.inf
    assert float(nn.logsumexp(jnp.asarray([np.inf, 1.0]))) == np.inf


def test_logsumexp_where():
    x = X[0]
    out = nn.logsumexp(jnp.asarray(x), where=MASK)
    np.testing.assert_allclose(float(out), _ref_lse(x[MASK]), rtol=1e-6)
    out = nn.logsumexp(jnp.asarray(X), axis=1, where=np.broadcast_to(MASK, X.shape))
    np.testing.assert_allclose(np.asarray(out), _ref_lse(X[:, MASK], axis=1), rtol=1e-6)


def test_logsumexp_b_and_sign():
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, -2.0, 0.5])
    ref = np.log(np.abs(np.sum(b * np.exp(a))))
    out, sign = nn.logsumexp(jnp.asarray(a), b=jnp.asarray(b), return_sign=True)
    np.testing.assert_allclose(float(out), ref, rtol=1e-6)
    assert float(sign) == -1.0
    assert np.isnan(float(nn.logsumexp(jnp.asarray(a), b=jnp.asarray(b))))
    out, sign = nn.logsumexp(jnp.asarray(a), b=jnp.asarray(-b), return_sign=True)
    np.testing.assert_allclose(float(out), ref, rtol=1e-6)
    assert float(sign) == 1.0
    np.testing.assert_allclose(
        float(nn.logsumexp(jnp.asarray(a), b=jnp.asarray(-b))), _ref_lse(a, b=-b), rtol=1e-6
    )


def test_logsumexp_b_grads(enable_x64):
    a = jnp.asarray([1.0, 2.0, 3.0])
    b = jnp.asarray([1.0, 2.0, 0.5])
    check_grads(lambda a, b: nn.logsumexp(a, b=b), (a, b), order=2)


def test_logmeanexp():
    x = X[0]
    np.testing.assert_allclose(
        float(nn.logmeanexp(jnp.asarray(x))), _ref_lse(x) - np.log(4), rtol=1e-6
    )
    np.testing.assert_allclose(
        float(nn.logmeanexp(jnp.asarray(x), where=MASK)), _ref_lse(x[MASK]) - np.log(3), rtol=1e-6
    )
    # A mask that broadcasts against x counts per row.
    out = nn.logmeanexp(jnp.asarray(X[[0, 2]]), axis=1, where=MASK)
    np.testing.assert_allclose(
        np.asarray(out), _ref_lse(X[[0, 2]][:, MASK], axis=1) - np.log(3), rtol=1e-6
    )
    out = nn.logmeanexp(jnp.asarray(X[[0, 2]]), axis=1, keepdims=True)
    np.testing.assert_allclose(
        np.asarray(out), _ref_lse(X[[0, 2]], axis=1, keepdims=True) - np.log(4), rtol=1e-6
    )


# --------------------------------------------------------------------------------------------
# one_hot, standardize


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
def test_one_hot(axis):
    labels = np.array([[0, 5, -1], [1, 2, 3]])
    ref = np.moveaxis((labels[..., None] == np.arange(3)).astype(np.float32), -1, axis)
    out = check_traced_matches_eager(
        lambda v: nn.one_hot(v, 3, axis=axis), jnp.asarray(labels, np.int32)
    )
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), ref)


def test_one_hot_dtypes():
    out = nn.one_hot(jnp.asarray([0, 2]), 3, dtype=jnp.int32)
    assert out.dtype == np.int32 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [[1, 0, 0], [0, 0, 1]])
    assert nn.one_hot(jnp.asarray([1]), 2, dtype=jnp.bool_).dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(nn.one_hot(1.0, 3)), [0, 1, 0])
    np.testing.assert_array_equal(
        np.asarray(tracejit.jit(lambda v: nn.one_hot(v, 4))(jnp.asarray([3, 0]))),
        np.eye(4)[[3, 0]],
    )


def test_one_hot_needs_concrete_num_classes():
    with pytest.raises(TypeError, match="num_classes"):
        tracejit.jit(lambda v, n: nn.one_hot(v, n))(jnp.asarray([1]), 3)


def _ref_standardize(x, axis, eps=1e-5):
    x = np.asarray(x, np.float64)
    mean = x.mean(axis, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis, keepdims=True) + eps)


@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(axis, algorithm):
    x = np.random.default_rng(4).normal(size=(3, 4)).astype(np.float32)
    out = check_traced_matches_eager(
        lambda v: nn.standardize(v, axis=axis, algorithm=algorithm), jnp.asarray(x)
    )
    np.testing.assert_allclose(np.asarray(out), _ref_standardize(x, axis), rtol=1e-4, atol=1e-5)


def test_standardize_fast_variance_is_clipped():
    """E[x^2] - E[x]^2 rounds to -1 here in float32; clipped at 0 (as in JAX), not NaN."""
    x = [3000.000732421875] * 2 + [3000.000244140625, 3000.0009765625, 3000.0]
    x = jnp.asarray(np.array(x + [3000.000244140625] * 2, np.float32))
    assert float(jnp.mean(x * x) - jnp.mean(x) ** 2) < 0
    out = np.asarray(nn.standardize(x))
    assert np.isfinite(out).all() and np.abs(out).max() < 1


def test_standardize_options(enable_x64):
    x = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 7.0]])
    np.testing.assert_allclose(
        np.asarray(nn.standardize(jnp.asarray(x), mean=1.0, variance=4.0)),
        (x - 1) / np.sqrt(4 + 1e-5),
    )
    np.testing.assert_allclose(
        np.asarray(nn.standardize(jnp.asarray(x), epsilon=0.5)), _ref_standardize(x, -1, 0.5)
    )
    mask = np.array([True, False, True])
    xm = x[:, mask]
    mean = xm.mean(-1, keepdims=True)
    ref = (x - mean) / np.sqrt(xm.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(jnp.asarray(x), where=mask)), ref)
    # The "stable" algorithm keeps its accuracy when the mean dominates the spread.
    big = np.array([1e8, 1e8 + 1, 1e8 + 2])
    np.testing.assert_allclose(
        np.asarray(nn.standardize(jnp.asarray(big), algorithm="stable")),
        _ref_standardize(big, -1),
        rtol=1e-6,
    )
    check_grads(lambda v: nn.standardize(v), (jnp.asarray(x),), order=2)
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(jnp.asarray(x), algorithm="exact")


# --------------------------------------------------------------------------------------------
# API surface

SIGNATURES = {
    "relu": "(x)",
    "squareplus": "(x, b=4)",
    "elu": "(x, alpha=1.0)",
    "celu": "(x, alpha=1.0)",
    "leaky_relu": "(x, negative_slope=0.01)",
    "gelu": "(x, approximate=True)",
    "glu": "(x, axis=-1)",
    "softmax": "(x, axis=-1, where=None)",
    "log_softmax": "(x, axis=-1, where=None)",
    "logsumexp": "(a, axis=None, b=None, keepdims=False, return_sign=False, where=None)",
    "logmeanexp": "(x, axis=None, where=None, keepdims=False)",
    "one_hot": "(x, num_classes, *, dtype=None, axis=-1)",
    "standardize": (
        "(x, axis=-1, mean=None, variance=None, epsilon=1e-05, where=None, *, algorithm='fast')"
    ),
}


def _unannotated(fun):
    sig = inspect.signature(fun)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures(name):
    assert _unannotated(getattr(nn, name)) == SIGNATURES[name]


def test_aliases_and_module():
    assert nn.swish is nn.silu and nn.hard_swish is nn.hard_silu
    assert nn.tanh is jnp.tanh
    assert tracejit.nn is nn and "nn" in tracejit.__all__


def test_names_not_built_yet_are_absent():
    assert not hasattr(nn, "scaled_matmul")  # block-scaled matmuls: GPU only, in JAX too
    with pytest.raises(AttributeError):
        nn.not_a_function  # noqa: B018


# --------------------------------------------------------------------------------------------
# vmap against a loop, traced masks

VMAPPED = {
    "relu_grad": tracejit.grad(lambda v: nn.relu(v)),
    "softmax": nn.softmax,
    "log_softmax_where": lambda v: nn.log_softmax(v, where=v > 0),
    "logsumexp_b": lambda v: nn.logsumexp(v, b=jnp.abs(v)),
    "standardize": nn.standardize,
    "one_hot": lambda v: nn.one_hot(jnp.round(jnp.abs(v)).astype(jnp.int32), 3),
    "glu": nn.glu,
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_matches_loop(name):
    fun = VMAPPED[name]
    x = np.random.default_rng(6).normal(size=(3, 4)).astype(np.float32)
    if name == "relu_grad":
        x = np.array([-1.0, 0.0, 2.0], np.float32)
    batched = np.asarray(tracejit.vmap(fun)(jnp.asarray(x)))
    looped = np.stack([np.asarray(fun(jnp.asarray(row))) for row in x])
    np.testing.assert_allclose(batched, looped, rtol=1e-6, atol=1e-7)


def test_traced_masks_under_jit():
    x = jnp.asarray(np.random.default_rng(7).normal(size=(3, 4)).astype(np.float32))
    mask = jnp.asarray(np.array([[True, False, True, True]] * 3))
    for fun in (nn.softmax, nn.log_softmax, lambda v, where: nn.logsumexp(v, 1, where=where)):
        np.testing.assert_allclose(
            np.asarray(tracejit.jit(lambda v, m, f=fun: f(v, where=m))(x, mask)),
            np.asarray(fun(x, where=mask)),
            rtol=1e-6,
        )


def test_logsumexp_entries_with_zero_weight_count_as_minus_infinity():
    """JAX 0.10.2's values: b == 0 masks its entry (no precision lost to it, no NaN)."""
    lse = tracejit.scipy.special.logsumexp
    assert float(lse(jnp.array([0.0, -100.0]), b=jnp.array([0.0, 1.0]))) == -100.0
    assert float(lse(jnp.array([np.inf, 1.0]), b=jnp.array([0.0, 1.0]))) == 1.0
    assert float(lse(jnp.array([np.nan, 1.0]), b=jnp.array([0.0, 1.0]))) == 1.0
    assert float(lse(jnp.array([1.0, 2.0]), b=jnp.array([0.0, 0.0]))) == -np.inf
    g = tracejit.grad(lambda a: lse(a, b=jnp.array([0.0, 1.0])))(jnp.array([0.0, -100.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0])
