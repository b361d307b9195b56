"""The seed's make_jaxpr examples print exactly as JAX prints them."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.jaxpr import check_jaxpr


def jaxpr_text(fun, *args, **kwargs):
    closed = jax.make_jaxpr(fun, **kwargs)(*args)
    check_jaxpr(closed.jaxpr)
    return str(closed)


FUNC1_JAXPR = """\
{ lambda ; a:f32[8] b:f32[8]. let
    c:f32[8] = sin b
    d:f32[8] = mul c 3.0:f32[]
    e:f32[8] = add a d
    f:f32[] = reduce_sum[axes=(0,)] e
  in (f,) }"""


def func1(first, second):
    temp = first + jnp.sin(second) * 3.0
    return jnp.sum(temp)


def func2(inner, first, second):
    temp = first + inner(second) * 3.0
    return jnp.sum(temp)


def inner(second):
    if second.shape[0] > 4:
        return jnp.sin(second)
    else:
        assert False


def func3(first, second):
    return func2(inner, first, second)


def test_func1():
    assert jaxpr_text(func1, jnp.zeros(8), jnp.ones(8)) == FUNC1_JAXPR


def test_func3_python_control_flow_on_shapes_leaves_only_the_branch_taken():
    assert jaxpr_text(func3, jnp.zeros(8), jnp.ones(8)) == FUNC1_JAXPR


def test_log2_stages_the_constant_work_too():
    def log2(x):
        ln_x = lax.log(x)
        ln_2 = lax.log(2.0)
        return ln_x / ln_2

    assert jaxpr_text(log2, jnp.ones(3)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = log a\n"
        "    c:f32[] = log 2.0:f32[]\n"
        "    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
        "    e:f32[3] = div b d\n"
        "  in (e,) }"
    )


def test_seed_slide_f_depends_on_rank_not_value():
    def f(x):
        if x.ndim == 0:
            return 2 * x**3.0
        else:
            return 3 * x

    assert jaxpr_text(f, 0.0) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = pow a 3.0:f32[]\n"
        "    c:f32[] = mul 2.0:f32[] b\n"
        "  in (c,) }"
    )
    assert jaxpr_text(f, jnp.ones(4)) == (
        "{ lambda ; a:f32[4]. let b:f32[4] = mul 3.0:f32[] a in (b,) }"
    )


def test_seed_slide_f_on_values_raises_bool_conversion():
    def f(x):
        if x > 0:
            return 2 * x**3.0
        else:
            return 3 * x

    with pytest.raises(jax.errors.TracerBoolConversionError, match="if x > 0"):
        jax.make_jaxpr(f)(1.0)


def test_mlp_loss_jaxpr_is_typed_and_replays():
    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return jnp.sum((preds - targets) ** 2)

    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(5, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 3)), rng.normal(size=3)),
    ]
    batch = (rng.normal(size=(7, 5)), rng.normal(size=(7, 3)))
    text = jaxpr_text(loss, params, batch)
    assert text.count("dot_general") == 2 and text.count("tanh") == 2
    expected = loss([(W.astype(np.float32), b.astype(np.float32)) for W, b in params], batch)
    np.testing.assert_allclose(float(loss(params, batch)), float(expected), rtol=1e-5)
