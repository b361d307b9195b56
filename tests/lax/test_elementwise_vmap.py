"""vmap of the unary and binary elementwise primitives: over each argument axis, several
arguments at once and with some arguments unbatched, the result equals stacking per-example
results; the vectorized jaxpr does not grow with the batch size; per-example gradients of a
small MLP equal separate `grad` calls."""

import itertools

import numpy as np
import pytest
from helpers import c64, check_vmap, f32, i32

import tracejit
from tracejit import lax
from tracejit._src.api import make_jaxpr, vmap

B = 3  # batch size
rng = np.random.default_rng(0)


def _sample(shape, dtype, lo, hi):
    if dtype == c64:
        re = rng.uniform(lo, hi, shape)
        im = rng.uniform(lo, hi, shape)
        return (re + 1j * im).astype(c64)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(lo, hi, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(dtype)


def _equation_count(fun, make_args, in_axes):
    counts = [len(make_jaxpr(vmap(fun, in_axes))(*make_args(n)).jaxpr.eqns) for n in (2, 7)]
    assert counts[0] == counts[1], counts
    return counts[0]


# --- unary ------------------------------------------------------------------------------------

# (id, function, dtype, sampling range)
UNARY = [
    ("neg", lax.neg, f32, (-3, 3)),
    ("sign", lax.sign, f32, (-3, 3)),
    ("floor", lax.floor, f32, (-3, 3)),
    ("ceil", lax.ceil, f32, (-3, 3)),
    ("round_afz", lax.round, f32, (-3, 3)),
    ("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), f32, (-3, 3)),
    ("is_finite", lax.is_finite, f32, (-3, 3)),
    ("exp", lax.exp, f32, (-3, 3)),
    ("exp2", lax.exp2, f32, (-3, 3)),
    ("log", lax.log, f32, (0.1, 3)),
    ("log1p", lax.log1p, f32, (-0.5, 3)),
    ("expm1", lax.expm1, f32, (-3, 3)),
    ("tanh", lax.tanh, f32, (-3, 3)),
    ("logistic", lax.logistic, f32, (-3, 3)),
    ("sin", lax.sin, f32, (-3, 3)),
    ("cos", lax.cos, f32, (-3, 3)),
    ("tan", lax.tan, f32, (-1, 1)),
    ("asin", lax.asin, f32, (-0.9, 0.9)),
    ("acos", lax.acos, f32, (-0.9, 0.9)),
    ("atan", lax.atan, f32, (-3, 3)),
    ("sinh", lax.sinh, f32, (-3, 3)),
    ("cosh", lax.cosh, f32, (-3, 3)),
    ("asinh", lax.asinh, f32, (-3, 3)),
    ("acosh", lax.acosh, f32, (1.1, 4)),
    ("atanh", lax.atanh, f32, (-0.9, 0.9)),
    ("sqrt", lax.sqrt, f32, (0.1, 4)),
    ("rsqrt", lax.rsqrt, f32, (0.1, 4)),
    ("cbrt", lax.cbrt, f32, (-4, 4)),
    ("abs", lax.abs, f32, (-3, 3)),
    ("abs_complex", lax.abs, c64, (-3, 3)),
    ("not_int", lax.bitwise_not, i32, (-50, 50)),
    ("not_bool", lax.bitwise_not, np.dtype(bool), (0, 2)),
    ("integer_pow_3", lambda x: lax.integer_pow(x, 3), f32, (-3, 3)),
    ("integer_pow_neg2", lambda x: lax.integer_pow(x, -2), f32, (0.5, 3)),
    ("integer_pow_int", lambda x: lax.integer_pow(x, 2), i32, (-9, 9)),
    ("square", lax.square, f32, (-3, 3)),
    ("erf", lax.erf, f32, (-3, 3)),
    ("erfc", lax.erfc, f32, (-3, 3)),
    ("erf_inv", lax.erf_inv, f32, (-0.9, 0.9)),
    ("lgamma", lax.lgamma, f32, (0.2, 5)),
    ("digamma", lax.digamma, f32, (0.2, 5)),
    ("real", lax.real, c64, (-3, 3)),
    ("imag", lax.imag, c64, (-3, 3)),
    ("conj", lax.conj, c64, (-3, 3)),
    ("population_count", lax.population_count, i32, (-1000, 1000)),
    ("clz", lax.clz, i32, (-1000, 1000)),
]


@pytest.mark.parametrize("name,fn,dtype,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_vmap_axes(name, fn, dtype, domain):
    for in_axis, out_axis in [(0, 0), (1, 0), (-1, 0), (0, 1), (2, -1)]:
        shape = [2, 4]
        shape.insert(in_axis % 3, B)
        x = _sample(tuple(shape), dtype, *domain)
        check_vmap(fn, (x,), (in_axis,), out_axis, tol=2e-6, atol=1e-6)
    # a rank-0 example (batch of scalars)
    check_vmap(fn, (_sample((B,), dtype, *domain),), (0,))


@pytest.mark.parametrize("name,fn,dtype,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_vmap_no_unrolling(name, fn, dtype, domain):
    _equation_count(fn, lambda n: (_sample((2, n), dtype, *domain),), (1,))
    count = _equation_count(fn, lambda n: (_sample((n, 2), dtype, *domain),), (0,))
    assert count == 1  # one primitive applied to the whole batch, no moves needed


def test_unary_keeps_params():
    x = _sample((B, 5), f32, -3, 3)
    x[:, 0] = 0.5
    x[:, 1] = 2.5
    jaxpr = make_jaxpr(vmap(lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)))(x)
    assert "rounding_method=1" in str(jaxpr)
    jaxpr = make_jaxpr(vmap(lambda v: lax.integer_pow(v, 5)))(x)
    assert "y=5" in str(jaxpr)


def test_unary_nested_vmap_and_jit():
    x = _sample((B, 4, 2), f32, -3, 3)
    f = vmap(vmap(lax.sin, 1, 0), 0, 1)  # inner over the example's axis 1
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x).transpose(2, 0, 1), rtol=1e-6)
    g = tracejit.jit(vmap(lax.exp, 2))
    np.testing.assert_allclose(np.asarray(g(x)), np.moveaxis(np.exp(x), 2, 0), rtol=1e-6)


# --- binary -----------------------------------------------------------------------------------

# (id, function, dtype, x range, y range)
BINARY = [
    ("add", lax.add, f32, (-3, 3), (-3, 3)),
    ("add_int", lax.add, i32, (-50, 50), (-50, 50)),
    ("sub", lax.sub, f32, (-3, 3), (-3, 3)),
    ("mul", lax.mul, f32, (-3, 3), (-3, 3)),
    ("mul_complex", lax.mul, c64, (-3, 3), (-3, 3)),
    ("div", lax.div, f32, (-3, 3), (0.5, 3)),
    ("div_int", lax.div, i32, (-50, 50), (1, 7)),
    ("rem", lax.rem, f32, (-3, 3), (0.5, 3)),
    ("rem_int", lax.rem, i32, (-50, 50), (1, 7)),
    ("pow", lax.pow, f32, (0.1, 3), (-2, 2)),
    ("max", lax.max, f32, (-3, 3), (-3, 3)),
    ("min", lax.min, f32, (-3, 3), (-3, 3)),
    ("atan2", lax.atan2, f32, (-3, 3), (-3, 3)),
    ("and", lax.bitwise_and, i32, (-50, 50), (-50, 50)),
    ("or", lax.bitwise_or, i32, (-50, 50), (-50, 50)),
    ("xor", lax.bitwise_xor, i32, (-50, 50), (-50, 50)),
    ("and_bool", lax.bitwise_and, np.dtype(bool), (0, 2), (0, 2)),
    ("shift_left", lax.shift_left, i32, (-50, 50), (0, 40)),
    ("shift_right_logical", lax.shift_right_logical, i32, (-50, 50), (0, 40)),
    ("shift_right_arithmetic", lax.shift_right_arithmetic, i32, (-50, 50), (0, 40)),
    ("eq", lax.eq, i32, (0, 3), (0, 3)),
    ("ne", lax.ne, i32, (0, 3), (0, 3)),
    ("lt", lax.lt, f32, (-3, 3), (-3, 3)),
    ("le", lax.le, i32, (0, 3), (0, 3)),
    ("gt", lax.gt, f32, (-3, 3), (-3, 3)),
    ("ge", lax.ge, i32, (0, 3), (0, 3)),
    ("nextafter", lax.nextafter, f32, (-3, 3), (-3, 3)),
    ("polygamma", lax.polygamma, f32, (0, 3), (0.2, 4)),
]


def _binary_args(dtype, x_range, y_range, x_shape, y_shape, polygamma=False):
    x = _sample(x_shape, dtype, *x_range)
    if polygamma:  # m: non-negative integers of the float dtype
        x = np.floor(x).astype(dtype)
    return x, _sample(y_shape, dtype, *y_range)


def _insert(shape, axis):
    if axis is None:
        return tuple(shape)
    shape = list(shape)
    shape.insert(axis % (len(shape) + 1), B)
    return tuple(shape)


# (per-example x shape, per-example y shape, in_axes): both batched at various axes, one
# unbatched, rank-0 operands among arrays, size-1 dimensions.
BINARY_CASES = [
    ((2, 3), (2, 3), (0, 0)),
    ((2, 3), (2, 3), (1, 0)),
    ((2, 3), (2, 3), (-1, 1)),
    ((2, 3), (2, 3), (0, None)),
    ((2, 3), (2, 3), (None, -1)),
    ((2, 3), (), (1, 0)),
    ((2, 3), (), (None, 0)),
    ((2, 3), (), (2, None)),
    ((), (2, 3), (0, 2)),
    ((), (2, 3), (0, None)),
    ((2, 3), (1, 3), (0, 1)),
    ((2, 3), (1, 3), (1, None)),
    ((1, 3), (2, 3), (None, 2)),
    ((), (), (0, 0)),
    ((), (), (0, None)),
]


@pytest.mark.parametrize("name,fn,dtype,x_range,y_range", BINARY, ids=[b[0] for b in BINARY])
def test_binary_vmap(name, fn, dtype, x_range, y_range):
    for x_shape, y_shape, in_axes in BINARY_CASES:
        x, y = _binary_args(
            dtype,
            x_range,
            y_range,
            _insert(x_shape, in_axes[0]),
            _insert(y_shape, in_axes[1]),
            polygamma=name == "polygamma",
        )
        check_vmap(fn, (x, y), in_axes, tol=2e-6, atol=1e-6)
    x, y = _binary_args(dtype, x_range, y_range, (2, B), (B, 2), polygamma=name == "polygamma")
    check_vmap(fn, (x, y), (1, 0), out_axes=1, tol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name,fn,dtype,x_range,y_range", BINARY, ids=[b[0] for b in BINARY])
def test_binary_vmap_no_unrolling(name, fn, dtype, x_range, y_range):
    def make(n):
        return (_sample((2, n), dtype, *x_range), _sample((n, 2), dtype, *y_range))

    _equation_count(fn, make, (1, 0))
    _equation_count(fn, lambda n: (make(n)[0], make(n)[1][0]), (1, None))


def test_binary_unbatched_operand_stays_small():
    x = np.ones((B, 4, 5), np.float32)
    w = np.ones((4, 5), np.float32)
    jaxpr = make_jaxpr(vmap(lax.mul, (0, None)))(x, w)
    eqn_shapes = [tuple(v.aval.shape) for e in jaxpr.jaxpr.eqns for v in e.outvars]
    assert (B, 4, 5) in eqn_shapes
    assert all(s in {(1, 4, 5), (B, 4, 5)} for s in eqn_shapes), eqn_shapes
    jaxpr = make_jaxpr(vmap(lax.mul, (0, None)))(x, np.float32(2))
    assert len(jaxpr.jaxpr.eqns) == 1  # a rank-0 operand is used as it is


def test_polygamma_batched_order():
    m = np.array([0.0, 1.0, 2.0], np.float32)
    x = _sample((4,), f32, 0.5, 3)
    check_vmap(lax.polygamma, (m, x), (0, None), tol=1e-5, atol=1e-6)


# --- per-example gradients --------------------------------------------------------------------


def test_per_example_gradients_mlp():
    import tracejit.numpy as jnp

    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, batch):
        inputs, targets = batch
        return jnp.sum((predict(params, inputs) - targets) ** 2)

    sizes = [3, 5, 2]
    params = [
        (
            rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
            rng.normal(size=(n,)).astype(np.float32),
        )
        for m, n in itertools.pairwise(sizes)
    ]
    inputs = rng.normal(size=(8, 3)).astype(np.float32)
    targets = rng.normal(size=(8, 2)).astype(np.float32)

    grads = tracejit.vmap(tracejit.grad(loss), (None, 0))(params, (inputs, targets))
    for i in range(8):
        single = tracejit.grad(loss)(params, (inputs[i], targets[i]))
        for (gW, gb), (sW, sb) in zip(grads, single, strict=True):
            np.testing.assert_allclose(np.asarray(gW)[i], np.asarray(sW), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(np.asarray(gb)[i], np.asarray(sb), rtol=1e-5, atol=1e-6)
