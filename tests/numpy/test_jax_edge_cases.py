"""Edge cases where JAX 0.10.2 is not NumPy, found by calling every `jnp` function on Python
scalars, weak and strong, bool, integer, half-precision and complex arrays next to JAX: what JAX
returns there, or the class of what it raises."""

import ml_dtypes
import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp

C64 = np.array([0.5 + 1j, 1.5], np.complex64)


def weak(value):
    """A weakly typed zero-dimensional Array, as a jitted function returning a Python scalar
    gives."""
    return jax.jit(lambda: value)()


@pytest.mark.parametrize(
    "call",
    [
        lambda: jnp.clip(C64),
        lambda: jnp.clip(C64, 0, 1),
        lambda: jnp.clip(np.ones(2, np.float32), 0j, 1),
    ],
)
def test_clip_refuses_complex_values(call):
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        call()


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_isposinf_and_isneginf(name):
    with pytest.raises(ValueError, match="not well defined for complex types"):
        getattr(jnp, name)(C64)
    out = getattr(jnp, name)(weak(float("inf")))
    assert out.dtype == np.bool_ and not out.weak_type  # compared with a strong infinity
    assert bool(out) == (name == "isposinf")


def test_bincount_counts_booleans_as_zero_and_one():
    np.testing.assert_array_equal(jnp.bincount(jnp.array([True, False, True])), [1, 2])
    np.testing.assert_array_equal(jnp.bincount(jnp.array([True, True]), length=4), [0, 2, 0, 0])
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.bincount(True)
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(2.5)


def test_roots_of_a_constant_are_none():
    for p in (2.5, 3, weak(2.5)):
        out = jnp.roots(p)
        assert out.shape == (0,) and out.dtype == np.complex64
    assert jnp.roots(2.5, strip_zeros=False).shape == (0,)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_roots_in_half_precision_are_not_computed(dtype):
    with pytest.raises(NotImplementedError, match="Unsupported dtype"):
        jnp.roots(jnp.array([1.0, 2.0], dtype))


def test_unwrap_needs_an_axis():
    with pytest.raises(IndexError):
        jnp.unwrap(2.5)


@pytest.mark.parametrize("name", ["concatenate", "hstack", "vstack", "dstack", "column_stack"])
def test_joining_a_zero_dimensional_array_is_a_value_error(name):
    with pytest.raises(ValueError):
        getattr(jnp, name)(weak(2.5))


def test_concat_iterates_its_argument():
    with pytest.raises(TypeError, match="0-d array"):
        jnp.concat(weak(2.5))
    np.testing.assert_array_equal(jnp.concat(jnp.ones((2, 2))), np.ones(4))


def test_arange_takes_scalars_only():
    with pytest.raises(ValueError, match="arguments must be scalars; got stop="):
        jnp.arange(jnp.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="got step="):
        jnp.arange(0, 5, np.ones(2))


def test_an_array_of_axes_is_a_sequence_of_axes():
    x = jnp.ones((2, 3, 4))
    assert jnp.sum(x, np.array([0, 2])).shape == (3,)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        jnp.sum(x, jnp.array([0, 3], jnp.int8))
    with pytest.raises(TypeError):
        jnp.sum(x, np.array([0.5, 1.5]))


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
def test_argmax_of_an_axis_out_of_range_is_an_index_error(name):
    with pytest.raises(IndexError):
        getattr(jnp, name)(jnp.ones(2), 2)


@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_quantiles_take_real_q_only(name):
    with pytest.raises(TypeError, match="q must be real"):
        getattr(jnp, name)(jnp.ones(3), 0.5 + 0j)


def test_isclose_compares_integers_as_floats():
    # as JAX does: 10**8 and 10**8 + 1 are the same float32
    assert bool(jnp.isclose(100000000, 100000001))
    assert bool(jnp.isclose(np.array([100000000], np.int32), 100000001)[0])
    assert not jnp.isclose(2, 3).weak_type


def test_logical_functions_are_weak_for_weak_scalars_only():
    w, ints = weak(2.5), jnp.array([1, 2], jnp.int8)
    assert jnp.logical_and(w, weak(2.0)).weak_type
    assert jnp.logical_not(w).weak_type
    assert not jnp.logical_and(w, ints).weak_type
    assert not jnp.logical_or(2, jnp.array([True, False])).weak_type
    assert not jnp.logical_xor(ints + 0.0, ints + 0.0).weak_type  # weak arrays


@pytest.mark.parametrize("name", ["heaviside", "hypot"])
def test_heaviside_and_hypot_keep_weak_types(name):
    assert getattr(jnp, name)(weak(2.5), 0.5).weak_type
    assert not getattr(jnp, name)(jnp.float32(2.5), 0.5).weak_type


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
def test_set_operations_keep_weak_types(name):
    w = weak(2.5)
    assert getattr(jnp, name)(w, w).weak_type
    assert not getattr(jnp, name)(jnp.float32(2.5), w).weak_type
