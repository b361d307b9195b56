"""`ravel_pytree` (`jax.flatten_util`): a pytree as one vector and back, with JAX's dtypes
and errors."""

import numpy as np
import pytest
from helpers import f16, f32, i8, i32

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.flatten_util import ravel_pytree


def test_ravel_and_unravel_a_pytree():
    tree = {"a": jnp.ones((2, 2)), "b": jnp.arange(3), "c": 1.0}
    flat, unravel = ravel_pytree(tree)
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 0, 1, 2, 1])
    assert flat.dtype == f32 and not flat.weak_type
    back = unravel(flat)
    assert jax.tree.structure(back) == jax.tree.structure(tree)
    assert back["b"].dtype == i32 and back["a"].shape == (2, 2) and back["c"].shape == ()
    np.testing.assert_array_equal(back["b"], [0, 1, 2])


def test_leaves_promote_to_one_dtype_and_come_back_as_theirs():
    flat, unravel = ravel_pytree({"a": jnp.ones(2, jnp.float16), "b": np.int8(3)})
    assert flat.dtype == f16
    np.testing.assert_array_equal(flat, [1, 1, 3])
    assert [leaf.dtype for leaf in jax.tree.leaves(unravel(flat))] == [f16, i8]


def test_an_empty_pytree():
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and flat.dtype == f32 and unravel(flat) == []


def test_under_grad_and_jit():
    grad = jax.grad(lambda p: jnp.sum(ravel_pytree(p)[0] ** 2))({"a": jnp.arange(2.0), "b": 3.0})
    np.testing.assert_array_equal(grad["a"], [0.0, 2.0])
    np.testing.assert_array_equal(grad["b"], 6.0)
    flat, unravel = ravel_pytree([1.0, jnp.ones(2)])
    np.testing.assert_array_equal(jax.jit(lambda v: ravel_pytree(unravel(v))[0])(flat), flat)


def test_unravel_refuses_another_dtype_or_size():
    _, unravel = ravel_pytree({"a": jnp.ones(2, jnp.float16)})
    with pytest.raises(TypeError, match="given array of dtype float32, but expected dtype float16"):
        unravel(jnp.ones(2))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        unravel(jnp.ones(3, jnp.float16))
