"""`custom_batching.custom_vmap`: the function everywhere but under vmap, where its rule is
used (with the batch dimension first and JAX's `in_batched`), and `sequential_vmap`."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.custom_batching import custom_vmap, sequential_vmap

calls = []


@custom_vmap
def sin_times(x, y):
    return jnp.sin(x) * y


@sin_times.def_vmap
def _sin_times_rule(axis_size, in_batched, x, y):
    calls.append((axis_size, list(in_batched), jnp.shape(x), jnp.shape(y)))
    return jnp.cos(x) * y, in_batched[0] or in_batched[1]  # visibly not sin: the rule ran


def test_the_function_outside_vmap():
    np.testing.assert_allclose(sin_times(1.0, 2.0), np.sin(1.0) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(sin_times)(1.0, 2.0), np.sin(1.0) * 2.0, rtol=1e-6)
    assert "custom_vmap_call" in str(jax.make_jaxpr(sin_times)(1.0, 2.0))
    np.testing.assert_allclose(jax.grad(sin_times)(1.0, 2.0), np.cos(1.0) * 2.0, rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_the_rule_under_vmap_sees_batch_dimensions_first(jit):
    calls.clear()
    batched = jax.vmap(sin_times, in_axes=(1, None))
    batched = jax.jit(batched) if jit else batched
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(batched(x, 2.0), np.cos(x.T) * 2.0, rtol=1e-6)
    assert calls == [(3, [True, False], (3, 2), ())]


def test_the_rule_under_grad_of_vmap():
    got = jax.grad(lambda x: jax.vmap(sin_times)(x, x).sum())(jnp.ones(3))
    np.testing.assert_allclose(got, np.full(3, np.cos(1.0) - np.sin(1.0)), rtol=1e-6)


def test_the_rule_must_return_the_functions_structure():
    @custom_vmap
    def f(x):
        return x

    f.def_vmap(lambda axis_size, in_batched, x: ((x, x), True))
    with pytest.raises(ValueError, match="structure"):
        jax.vmap(f)(jnp.ones(3))


def test_a_function_without_rule_is_refused():
    with pytest.raises(AttributeError, match="No batching rule"):
        custom_vmap(lambda x: x)(1.0)


def test_sequential_vmap_maps_one_member_at_a_time():
    shapes = []

    @sequential_vmap
    def total(x, scale):
        shapes.append(x.shape)
        return x.sum() * scale

    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(jax.vmap(total, in_axes=(0, None))(xs, 2.0), xs.sum(1) * 2.0)
    assert set(shapes) == {(2,)}
    assert "scan[" in str(jax.make_jaxpr(jax.vmap(total, in_axes=(0, None)))(xs, 2.0))
