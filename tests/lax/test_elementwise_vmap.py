"""vmap of the unary and binary elementwise primitives: over each argument axis, several
arguments at once and with some arguments unbatched, the result equals stacking per-example
results; the vectorized jaxpr does not grow with the batch size; per-example gradients of a
small MLP equal separate `grad` calls."""

import itertools

import numpy as np
import pytest
from helpers import c64, check_vmap, f32
from op_specs.binary import BINARY
from op_specs.elementwise import ELEMENTWISE

import tracejit
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.vmap import vmap

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

UNARY = [(spec, dtype) for spec in ELEMENTWISE for dtype in spec.dtypes_per_kind()]


@pytest.mark.parametrize("spec,dtype", UNARY, ids=[f"{s}-{d.name}" for s, d in UNARY])
def test_unary_vmap_axes(spec, dtype):
    for in_axis, out_axis in [(0, 0), (1, 0), (-1, 0), (0, 1), (2, -1)]:
        shape = [2, 4]
        shape.insert(in_axis % 3, B)
        check_vmap(
            spec.fun, spec.operands(dtype, tuple(shape)), (in_axis,), out_axis, tol=2e-6, atol=1e-6
        )
    # a rank-0 example (batch of scalars)
    check_vmap(spec.fun, spec.operands(dtype, (B,)), (0,))


@pytest.mark.parametrize("spec,dtype", UNARY, ids=[f"{s}-{d.name}" for s, d in UNARY])
def test_unary_vmap_no_unrolling(spec, dtype):
    _equation_count(spec.fun, lambda n: spec.operands(dtype, (2, n)), (1,))
    count = _equation_count(spec.fun, lambda n: spec.operands(dtype, (n, 2)), (0,))
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

# add_any (AD's, no broadcasting) is checked with the rest of the table in test_op_specs.py.
BINARY_ROWS = [
    (spec, dtype) for spec in BINARY if spec.name != "add_any" for dtype in spec.dtypes_per_kind()
]


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


@pytest.mark.parametrize("spec,dtype", BINARY_ROWS, ids=[f"{s}-{d.name}" for s, d in BINARY_ROWS])
def test_binary_vmap(spec, dtype):
    for x_shape, y_shape, in_axes in BINARY_CASES:
        shapes = (_insert(x_shape, in_axes[0]), _insert(y_shape, in_axes[1]))
        check_vmap(spec.fun, spec.operands(dtype, shapes), in_axes, tol=2e-6, atol=1e-6)
    x, y = spec.operands(dtype, ((2, B), (B, 2)))
    check_vmap(spec.fun, (x, y), (1, 0), out_axes=1, tol=2e-6, atol=1e-6)


@pytest.mark.parametrize("spec,dtype", BINARY_ROWS, ids=[f"{s}-{d.name}" for s, d in BINARY_ROWS])
def test_binary_vmap_no_unrolling(spec, dtype):
    def make(n):
        return spec.operands(dtype, ((2, n), (n, 2)))

    _equation_count(spec.fun, make, (1, 0))
    _equation_count(spec.fun, lambda n: (make(n)[0], make(n)[1][0]), (1, None))


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
