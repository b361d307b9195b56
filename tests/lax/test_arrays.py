"""lax's helpers built from the primitives (`lax/arrays.py`) and the parameters JAX's signatures
add to existing lax functions: each against NumPy, with JAX's dtypes, weak types, jaxprs and
errors (the dtypes and weak types of filled arrays are also checked against recorded JAX values
in test_lax_extras_reference.py)."""

import inspect

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

# --- full, full_like, empty, broadcast_like --------------------------------------------------


def test_full_is_one_broadcast_of_a_literal():
    assert jaxpr_text(lambda: lax.full((2,), 3.0)) == (
        "{ lambda ; . let a:f32[2] = broadcast_in_dim 3.0:f32[] in (a,) }"
    )


@pytest.mark.parametrize(
    "fill, dtype, want_dtype, weak",
    [
        (3.0, None, np.float32, True),
        (3, None, np.int32, True),
        (True, None, np.bool_, False),
        (3.7, np.int32, np.int32, False),
        (np.float32(2.5), None, np.float32, False),
        (2, np.uint8, np.uint8, False),
    ],
)
def test_full_dtype_and_weak_type(fill, dtype, want_dtype, weak):
    out = lax.full((2, 3), fill, dtype)
    assert out.dtype == want_dtype and out.weak_type == weak
    assert_close(out, np.full((2, 3), fill, dtype=want_dtype))


def test_full_takes_an_int_shape_and_a_traced_fill():
    assert lax.full(3, 1).shape == (3,)
    check_eager_jit_numpy(
        lambda v: lax.full((2, 2), v), [np.float32(1.5)], np.full((2, 2), 1.5, np.float32)
    )


def test_full_rejects_a_fill_that_is_not_a_scalar():
    with pytest.raises(TypeError, match="scalar fill_value"):
        lax.full((2,), np.ones(2))
    with pytest.raises(TypeError, match="nonnegative"):
        lax.full((-1,), 1.0)


def test_full_like_keeps_shape_dtype_and_weak_type():
    ints = np.ones((2, 3), np.int32)
    out = lax.full_like(ints, 3.5)
    assert out.dtype == np.int32 and not out.weak_type
    assert_close(out, np.full((2, 3), 3, np.int32))
    weak = lax.full_like(2.0, 3)
    assert weak.dtype == np.float32 and weak.weak_type
    other = lax.full_like(ints, 7, np.uint8, (3, 1))
    assert other.dtype == np.uint8 and other.shape == (3, 1)
    assert jaxpr_text(lambda x: lax.full_like(x, 2), 1.0) == (
        "{ lambda ; a:f32[]. let  in (2.0:f32[],) }"
    )


def test_empty_is_zeros_of_its_dtype():
    out = lax.empty((2, 3), np.int8)
    assert out.dtype == np.int8 and not out.weak_type
    assert_close(out, np.zeros((2, 3), np.int8))


@pytest.mark.parametrize("name", ["full", "full_like", "empty"])
def test_shardings_other_than_none_are_not_supported(name):
    calls = {
        "full": lambda: lax.full((2,), 1.0, sharding="x"),
        "full_like": lambda: lax.full_like(np.ones(2), 1.0, sharding="x"),
        "empty": lambda: lax.empty((2,), np.float32, out_sharding="x"),
    }
    with pytest.raises(NotImplementedError, match="sharding"):
        calls[name]()


def test_broadcast_like_adds_leading_dimensions():
    like = np.ones((4, 2, 3), np.float32)
    x = np.arange(3.0, dtype=np.float32)
    check_eager_jit_numpy(
        lambda v: lax.broadcast_like(v, like), [x], np.broadcast_to(x, like.shape)
    )
    assert lax.broadcast_like(1.0, like).weak_type


# --- shapes and dtypes ------------------------------------------------------------------------


def test_broadcast_shapes_as_numpy():
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert lax.broadcast_shapes((5, 1, 4), (1, 3, 1), ()) == np.broadcast_shapes(
        (5, 1, 4), (1, 3, 1), ()
    )
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize(
    "start, stop, shape",
    [
        (0, None, (24,)),
        (1, None, (2, 12)),
        (0, 2, (6, 4)),
        (-2, None, (2, 12)),
        (1, 1, (2, 1, 3, 4)),
    ],
)
def test_collapse_merges_a_range_of_dimensions(start, stop, shape):
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    check_eager_jit_numpy(lambda v: lax.collapse(v, start, stop), [x], x.reshape(shape))


def test_collapse_rejects_a_reversed_range():
    with pytest.raises(ValueError, match="Invalid dimension range passed to collapse"):
        lax.collapse(np.ones((2, 3, 4)), 2, 1)


@pytest.mark.parametrize(
    "value, want",
    [
        (1.0, np.float32),
        (3, np.int32),
        (True, np.bool_),
        (np.float64(1), np.float32),
        (jnp.ones(2, jnp.bfloat16), jnp.bfloat16),
        (np.ones(2, np.uint8), np.uint8),
    ],
)
def test_dtype_is_the_canonical_dtype(value, want):
    assert lax.dtype(value) == np.dtype(want)


def test_shape_as_value():
    out = lax.shape_as_value((2, 3))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [2, 3])
    assert lax.shape_as_value(()).shape == (0,)


# --- index_take -------------------------------------------------------------------------------


def test_index_take_wraps_indices_and_keeps_the_other_axes():
    src = np.arange(24.0, dtype=np.float32).reshape(3, 4, 2)
    rows, cols = np.array([0, -1, 5], np.int32), np.array([1, 2, -3], np.int32)
    want = src[rows % 3, cols % 4]
    check_eager_jit_numpy(lambda s: lax.index_take(s, (rows, cols), (0, 1)), [src], want)
    check_eager_jit_numpy(
        lambda s: lax.index_take(s, (rows,), (1,)), [src], np.moveaxis(src[:, rows % 4], 1, 0)
    )


def test_index_take_derivative_gathers_and_vmap_matches_a_loop():
    src = np.arange(12.0).reshape(3, 4)
    idx = (np.array([0, 2, 2], np.int32),)
    grad = tracejit.grad(lambda s: lax.index_take(s, idx, (0,)).sum())(src)
    assert_close(grad, np.array([[1.0] * 4, [0.0] * 4, [2.0] * 4]))
    check_vmap(lambda s: lax.index_take(s, idx, (0,)), [np.stack([src, 2 * src])], [0])


# --- reciprocal -------------------------------------------------------------------------------


def test_reciprocal_is_integer_pow_minus_one():
    x = np.array([1.0, 2.0, -4.0], np.float32)
    assert "integer_pow[y=-1]" in jaxpr_text(lax.reciprocal, x)
    check_eager_jit_numpy(lax.reciprocal, [x], 1 / x)
    assert lax.reciprocal(2.0).weak_type
    assert_close(tracejit.grad(lax.reciprocal)(2.0), -0.25)
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        lax.reciprocal(np.arange(1, 3, dtype=np.int32))


# --- parameters from JAX's signatures ---------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["exp", "exp2", "log", "log1p", "expm1", "logistic", "sqrt", "rsqrt", "cbrt"]
    + ["sin", "cos", "tan", "tanh"],
)
def test_accuracy_none_is_the_default_and_others_are_not_supported(name):
    fun = getattr(lax, name)
    assert inspect.signature(fun).parameters["accuracy"].default is None
    x = np.float32(0.5)
    assert_close(fun(x, accuracy=None), fun(x))
    assert_close(fun(x, accuracy=lax.AccuracyMode.DEFAULT), fun(x))
    for accuracy in (lax.AccuracyMode.HIGHEST, lax.Tolerance(atol=1e-3)):
        with pytest.raises(NotImplementedError, match="accuracy"):
            fun(x, accuracy=accuracy)


@pytest.mark.parametrize(
    "call",
    [
        lambda s: lax.broadcast(np.ones(2), (3,), out_sharding=s),
        lambda s: lax.broadcast_in_dim(np.ones(2), (3, 2), (1,), out_sharding=s),
        lambda s: lax.broadcasted_iota(np.int32, (2,), 0, out_sharding=s),
        lambda s: lax.reshape(np.ones(4), (2, 2), out_sharding=s),
        lambda s: lax.reduce_sum(np.ones(4), (0,), out_sharding=s),
        lambda s: lax.dot(np.ones(2), np.ones(2), out_sharding=s),
        lambda s: lax.dot_general(np.ones(2), np.ones(2), (((0,), (0,)), ((), ())), out_sharding=s),
        lambda s: lax.reduce(np.ones(4), 0.0, lambda a, b: a + b, (0,), out_sharding=s),
    ],
)
def test_out_sharding_none_is_accepted_and_others_are_not(call):
    call(None)
    with pytest.raises(NotImplementedError, match="sharding"):
        call("x")


def test_tolerance_checks_its_values():
    with pytest.raises(ValueError, match="non-negative"):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(ValueError, match="At least one"):
        lax.Tolerance()


def test_platform_dependent_runs_the_cpu_branch_or_the_default():
    assert lax.platform_dependent(1.0, 2.0, cpu=lambda a, b: a + b) == 3.0
    assert_close(lax.platform_dependent(1.0, tpu=jnp.sin, default=jnp.cos), np.cos(1.0), 1e-6)
    assert_close(
        tracejit.grad(lambda x: lax.platform_dependent(x, cpu=jnp.sin))(1.0), np.cos(1.0), 1e-6
    )
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
        lax.platform_dependent(1.0, gpu=jnp.sin, default=jnp.cos)
    with pytest.raises(NotImplementedError, match="no branch"):
        lax.platform_dependent(1.0, tpu=jnp.sin)


def test_mul_out_dtype_multiplies_in_the_wider_dtype():
    x, y = np.array([100, -100], np.int8), np.array([100, 3], np.int8)
    out = lax.mul(x, y, out_dtype=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [10000, -300])
    assert tracejit.jit(lambda a, b: lax.mul(a, b, out_dtype=np.int32))(x, y).dtype == np.int32
    with pytest.raises(NotImplementedError, match="narrower"):
        lax.mul(np.float32(1), np.float32(2), out_dtype=np.float16)


# --- stage ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, dtype, weak",
    [(np.ones(2), np.float32, False), (1.0, np.float32, True), (3, np.int32, True),
     (np.float64(2), np.float32, False), (True, np.bool_, False)],
)  # fmt: skip
def test_stage_makes_arrays_of_canonical_dtype(value, dtype, weak):
    out = lax.stage(value)
    assert isinstance(out, tracejit.Array) and out.dtype == dtype and out.weak_type == weak
    np.testing.assert_array_equal(out, value)


def test_stage_keeps_arrays_and_tracers_and_rejects_lists():
    x = jnp.ones(2)
    assert lax.stage(x) is x
    assert_close(tracejit.grad(lambda v: lax.stage(v) * 2)(1.0), 2.0)
    with pytest.raises(TypeError, match="Error interpreting argument to stage"):
        lax.stage([1, 2])
