"""stax layers against hand-written NumPy: output shapes from `init_fun` equal the shapes
`apply_fun` gives, values as the layer's definition says, and errors that name the layer."""

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import random
from tracejit.example_libraries import stax

KEY = random.PRNGKey(0)


def init_and_apply(layer, x, **kwargs):
    init_fun, apply_fun = layer
    shape, params = init_fun(KEY, x.shape)
    out = apply_fun(params, jnp.asarray(x), **kwargs)
    assert tuple(np.shape(out)) == tuple(shape)
    return params, np.asarray(out)


def inputs(*shape):
    return np.cos(np.arange(np.prod(shape), dtype=np.float32)).reshape(shape)


def test_dense_is_an_affine_map_of_the_last_axis():
    x = inputs(2, 3, 4)
    (W, b), out = init_and_apply(stax.Dense(5), x)
    assert W.shape == (4, 5) and b.shape == (5,)
    np.testing.assert_allclose(out, x @ np.asarray(W) + np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize(
    "layer, reference",
    [
        (stax.Relu, lambda x: np.maximum(x, 0)),
        (stax.Tanh, np.tanh),
        (stax.Exp, np.exp),
        (stax.Sigmoid, lambda x: 1 / (1 + np.exp(-x))),
        (stax.Softplus, lambda x: np.log1p(np.exp(x))),
        (stax.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
        (stax.LeakyRelu, lambda x: np.where(x > 0, x, 0.01 * x)),
        (stax.Softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
        (stax.LogSoftmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
        (stax.Identity, lambda x: x),
    ],
)
def test_elementwise_layers(layer, reference):
    x = inputs(3, 4) * 2
    params, out = init_and_apply(layer, x)
    assert params == ()
    np.testing.assert_allclose(out, reference(x), rtol=2e-6, atol=1e-7)


def test_batchnorm_standardizes_over_its_axes_then_scales_and_shifts():
    x = inputs(4, 3, 2) * 3 + 1
    init_fun, apply_fun = stax.BatchNorm(axis=(0, 1))
    _, (beta, gamma) = init_fun(KEY, x.shape)
    beta, gamma = beta + 0.5, gamma * 2
    out = np.asarray(apply_fun((beta, gamma), jnp.asarray(x)))
    mean, var = x.mean((0, 1)), x.var((0, 1))
    expected = (x - mean) / np.sqrt(var + 1e-5) * np.asarray(gamma) + np.asarray(beta)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_flatten_and_fan_in_concat_shapes_and_values():
    x = inputs(2, 3, 4)
    _, flat = init_and_apply(stax.Flatten, x)
    np.testing.assert_array_equal(flat, x.reshape(2, 12))
    layer = stax.serial(
        stax.FanOut(2), stax.parallel(stax.Identity, stax.Relu), stax.FanInConcat(axis=1)
    )
    _, out = init_and_apply(layer, x)
    np.testing.assert_array_equal(out, np.concatenate([x, np.maximum(x, 0)], axis=1))


def test_fan_in_sum_adds_the_branches():
    x = inputs(2, 3)
    layer = stax.serial(
        stax.FanOut(3), stax.parallel(stax.Identity, stax.Exp, stax.Tanh), stax.FanInSum
    )
    _, out = init_and_apply(layer, x)
    np.testing.assert_allclose(out, x + np.exp(x) + np.tanh(x), rtol=1e-6)


def test_serial_gives_each_layer_its_own_key():
    """serial's parameters are those of its layers initialized with the keys split from
    the one given, in turn."""
    _, params = stax.serial(stax.Dense(3), stax.Dense(2))[0](KEY, (1, 4))
    key, first = random.split(KEY)
    _, second = random.split(key)
    np.testing.assert_array_equal(params[0][0], stax.Dense(3)[0](first, (1, 4))[1][0])
    np.testing.assert_array_equal(params[1][0], stax.Dense(2)[0](second, (1, 3))[1][0])


def test_dropout_keeps_with_probability_rate_and_rescales():
    x = np.ones((200, 50), np.float32)
    _, out = init_and_apply(stax.Dropout(0.8), x, rng=random.PRNGKey(3))
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.8, rtol=1e-6)
    assert abs(kept.mean() - 0.8) < 0.02
    _, same = init_and_apply(stax.Dropout(0.8, mode="test"), x, rng=random.PRNGKey(3))
    np.testing.assert_array_equal(same, x)


def test_dropout_needs_a_key():
    with pytest.raises(ValueError, match="Dropout.*rng"):
        stax.Dropout(0.5)[1]((), jnp.ones(3))


def test_shape_dependent_builds_the_layer_from_the_input_shape():
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] + 1))
    (W, _), out = init_and_apply(layer, inputs(2, 3))
    assert W.shape == (3, 4) and out.shape == (2, 4)


def test_a_network_trains_under_jit_and_grad():
    init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Tanh, stax.Dense(1))
    _, params = init_fun(KEY, (-1, 2))
    x = inputs(32, 2)
    y = np.sin(x.sum(1, keepdims=True))

    def loss(params):
        return jnp.mean((apply_fun(params, x) - y) ** 2)

    @tracejit.jit
    def step(params):
        grads = tracejit.grad(loss)(params)
        return tracejit.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    before = loss(params)
    for _ in range(50):
        params = step(params)
    assert loss(params) < 0.5 * before


def test_dense_names_itself_and_the_shapes_on_mismatched_inputs():
    init_fun, apply_fun = stax.Dense(3)
    _, params = init_fun(KEY, (2, 4))
    with pytest.raises(ValueError, match=r"Dense.*\(2, 5\).*\(4, 3\)"):
        apply_fun(params, jnp.ones((2, 5)))
