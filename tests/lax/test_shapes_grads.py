"""Derivatives of the shape, conversion, selection and slicing primitives (lax/shapes.py and
lax/slicing.py), and of the jnp indexing built from them.

Every differentiable primitive is checked numerically to second order in both modes
(`check_grads`: finite differences for forward mode, the adjoint identity for reverse mode, so
each linear primitive's transpose rule is checked too); a few derivatives are compared with
hand-derived values, JAX's at special points (clamp at its bounds) and JAX's printed jaxprs.
"""

import warnings

import numpy as np
import pytest
from helpers import assert_close, jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dtypes
from tracejit.lax import copy_p
from tracejit.test_util import check_grads

_rng = np.random.default_rng(1234)


def r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def c(*shape):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(np.complex64)


def is_float0_zeros(x, shape):
    x = np.asarray(x)
    return x.dtype == dtypes.float0 and x.shape == shape


# --- numerical checks of every differentiable primitive, to second order --------------------

_CHOICE = np.array([[0, 1, 2, 1], [2, 2, 0, 1], [1, 0, 0, 2]], np.int32)
_MASK = np.array([True, False, False, True, True])
_XS = np.array([-1.3, -0.2, 0.35, 0.9, 1.7], np.float32)  # away from clamp's bounds

CASES = [
    # reshape
    ("reshape", lambda x: lax.reshape(x, (2, 6)), (r(3, 4),)),
    ("reshape_dimensions", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), (r(2, 3, 4),)),
    ("reshape_rank0_up", lambda x: lax.reshape(x, (1, 1)), (r(),)),
    ("reshape_rank0_down", lambda x: lax.reshape(x, ()), (r(1, 1),)),
    ("reshape_complex", lambda x: lax.reshape(x, (3, 2)), (c(2, 3),)),
    # transpose
    ("transpose", lambda x: lax.transpose(x, (1, 0)), (r(3, 4),)),
    ("transpose_3d", lambda x: lax.transpose(x, (2, 0, 1)), (r(2, 3, 4),)),
    # squeeze
    ("squeeze", lambda x: lax.squeeze(x, (0,)), (r(1, 3),)),
    ("squeeze_many", lambda x: lax.squeeze(x, (0, 2)), (r(1, 3, 1),)),
    ("squeeze_to_rank0", lambda x: lax.squeeze(x, (0, 1)), (r(1, 1),)),
    # rev
    ("rev", lambda x: lax.rev(x, (0,)), (r(3, 4),)),
    ("rev_all", lambda x: lax.rev(x, (0, 1)), (r(3, 4),)),
    ("rev_rank0", lambda x: lax.rev(x, ()), (r(),)),
    # pad: operand and padding value; negative low/high; interior
    ("pad", lambda x, p: lax.pad(x, p, ((1, 2, 0), (0, 1, 0))), (r(2, 3), r())),
    ("pad_interior", lambda x, p: lax.pad(x, p, ((1, -1, 1), (-2, 2, 0))), (r(3, 4), r())),
    (
        "pad_crop_into_interior",
        lambda x, p: lax.pad(x, p, ((-2, -1, 1), (-3, 1, 2))),
        (r(4, 3), r()),
    ),
    ("pad_empty_operand", lambda x, p: lax.pad(x, p, ((1, 2, 3), (0, 0, 2))), (r(0, 2), r())),
    ("pad_rank0", lambda x, p: lax.pad(x, p, ()), (r(), r())),
    ("pad_operand_only", lambda x: lax.pad(x, 2.0, ((1, 1, 1),)), (r(3),)),
    (
        "pad_value_only",
        lambda p: lax.pad(np.ones((2, 3), p.dtype), p, ((1, 0, 1), (0, -1, 0))),
        (r(),),
    ),
    ("pad_complex", lambda x, p: lax.pad(x, p, ((1, -1, 1),)), (c(3), c())),
    # concatenate
    ("concatenate", lambda x, y: lax.concatenate([x, y, x], 1), (r(2, 3), r(2, 1))),
    (
        "concatenate_with_constants",
        lambda x: lax.concatenate([np.ones((1, 2), x.dtype), x, np.zeros((2, 2), x.dtype)], 0),
        (r(3, 2),),
    ),
    ("concatenate_empty_piece", lambda x, y: lax.concatenate([x, y], 0), (r(0, 3), r(2, 3))),
    # convert_element_type between inexact dtypes
    (
        "convert_same_dtype_weak",
        lambda x: lax.convert_element_type_p.bind(
            x, new_dtype=np.dtype(np.float64), weak_type=True
        ),
        (r(3),),
    ),
    (
        "convert_through_complex",
        lambda x: lax.convert_element_type(
            lax.convert_element_type(x, np.complex128) * np.complex128(1 + 2j), np.float64
        ),
        (r(2, 2),),
    ),
    ("convert_complex_holomorphic", lambda x: lax.convert_element_type(x, np.complex128), (c(3),)),
    # select_n: the cases are differentiable, `which` is not
    ("select_n_bool", lambda x, y: lax.select_n(_MASK, x, y), (r(5), r(5))),
    ("select_n_int", lambda x, y, z: lax.select_n(_CHOICE, x, y, z), (r(3, 4), r(3, 4), r(3, 4))),
    ("select_n_scalar_which", lambda x, y: lax.select_n(np.int32(1), x, y), (r(2, 3), r(2, 3))),
    ("select_n_one_case", lambda x: lax.select_n(True, x), (r(2),)),
    ("select_n_rank0", lambda x, y: lax.select_n(False, x, y), (r(), r())),
    ("select_n_traced_which", lambda x, y: lax.select_n(x > y, x, y), (r(6), r(6))),
    ("select_n_complex", lambda x, y: lax.select_n(_MASK, x, y), (c(5), c(5))),
    # clamp: each operand where it is the result (ties avoided); scalar bounds broadcast
    (
        "clamp_scalar_bounds",
        lambda lo, x, hi: lax.clamp(lo, x, hi),
        (np.float32(-0.5), _XS, np.float32(1.2)),
    ),
    (
        "clamp_array_bounds",
        lambda lo, x, hi: lax.clamp(lo, x, hi),
        (_XS * 0 - 0.5, _XS, _XS * 0 + 1.2),
    ),
    (
        "clamp_rank0",
        lambda lo, x, hi: lax.clamp(lo, x, hi),
        (np.float32(-0.3), np.float32(0.1), np.float32(0.4)),
    ),
    ("clamp_operand_only", lambda x: lax.clamp(-0.5, x, 1.2), (_XS,)),
    # copy
    ("copy", lambda x: copy_p.bind(x), (r(2, 3),)),
    ("copy_complex", lambda x: copy_p.bind(x), (c(2),)),
    # slice
    ("slice", lambda x: lax.slice(x, (1, 0), (3, 4)), (r(3, 4),)),
    ("slice_strided", lambda x: lax.slice(x, (1, 1), (6, 4), (3, 2)), (r(6, 4),)),
    ("slice_empty", lambda x: lax.slice(x, (1, 0), (1, 3), (2, 2)), (r(3, 4),)),
    ("slice_rank0", lambda x: lax.slice(x, (), ()), (r(),)),
    # dynamic_slice: indices (wrapped and clamped) are not differentiable
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 0), (2, 2)), (r(3, 4),)),
    ("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, (-1, 5), (2, 2)), (r(3, 4),)),
    (
        "dynamic_slice_index_operand",
        lambda x, i: lax.dynamic_slice(x, (i, i + 1), (2, 2)),
        (r(3, 4), np.int32(1)),
    ),
    ("dynamic_slice_rank0", lambda x: lax.dynamic_slice(x, (), ()), (r(),)),
    # dynamic_update_slice: operand and update jointly
    (
        "dynamic_update_slice",
        lambda x, u: lax.dynamic_update_slice(x, u, (1, 1)),
        (r(3, 4), r(2, 2)),
    ),
    (
        "dynamic_update_slice_clamped",
        lambda x, u: lax.dynamic_update_slice(x, u, (-1, 9)),
        (r(3, 4), r(2, 2)),
    ),
    (
        "dynamic_update_slice_update_only",
        lambda u: lax.dynamic_update_slice(np.ones((3, 4), u.dtype), u, (2, 1)),
        (r(2, 2),),
    ),
    (
        "dynamic_update_slice_operand_only",
        lambda x: lax.dynamic_update_slice(x, np.ones((2, 2), x.dtype), (0, 1)),
        (r(3, 4),),
    ),
    (
        "dynamic_update_slice_index_operand",
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
        (r(4), r(2), np.int32(3)),
    ),
    ("dynamic_update_slice_rank0", lambda x, u: lax.dynamic_update_slice(x, u, ()), (r(), r())),
    (
        "dynamic_update_slice_complex",
        lambda x, u: lax.dynamic_update_slice(x, u, (1,)),
        (c(3), c(1)),
    ),
    # nonlinear surroundings: the backward pass depends on the primal (second order matters)
    ("pad_squared", lambda x, p: lax.pad(x, p, ((1, -1, 1),)) ** 2, (r(3), r())),
    (
        "dynamic_update_slice_times_operand",
        lambda x, u: lax.dynamic_update_slice(x, u, (1,)) * x,
        (r(4), r(2)),
    ),
    ("select_n_product", lambda x, y: lax.select_n(_MASK, x * y, y * y), (r(5), r(5))),
]


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name,fun,args", CASES, ids=[case[0] for case in CASES])
def test_check_grads(name, fun, args):
    check_grads(fun, args, order=2, modes=("fwd", "rev"))


# --- jnp indexing, indexed updates and manipulation built on these primitives ---------------

JNP_CASES = [
    ("getitem_slice", lambda x: x[1:3], (r(4, 2),)),
    ("getitem_strided_2d", lambda x: x[1:3, ::2], (r(3, 4),)),
    ("getitem_negative_step", lambda x: x[::-2, 1], (r(5, 3),)),
    ("getitem_int_and_newaxis", lambda x: x[None, 2, ..., 1:], (r(4, 3),)),
    ("getitem_traced_int", lambda x, i: x[i], (r(4, 2), np.int32(-1))),
    ("at_set_row", lambda x, y: jnp.asarray(x).at[1].set(y), (r(3, 4), r())),
    ("at_set_strided", lambda x, y: jnp.asarray(x).at[::2, 1:].set(y), (r(3, 4), r(2, 3))),
    ("at_add_reversed", lambda x, y: jnp.asarray(x).at[1, ::-2].add(y), (r(3, 4), r(2))),
    ("at_multiply", lambda x, y: jnp.asarray(x).at[1:3].multiply(y), (r(4), r(2))),
    (
        "concatenate_reshape_transpose",
        lambda x: jnp.concatenate([x[::-1], x[1:]]).reshape(-1, 1).T[:, ::2],
        (r(4),),
    ),
    ("where", lambda x, y: jnp.where(x > 0, x, y), (r(5), r(5))),
    ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))), (r(2, 3),)),
    ("stack_split", lambda x, y: jnp.split(jnp.stack([x, y], 1), 2, axis=0)[1], (r(4), r(4))),
]


@pytest.mark.parametrize("name,fun,args", JNP_CASES, ids=[case[0] for case in JNP_CASES])
def test_check_grads_through_jnp(name, fun, args):
    check_grads(fun, args, order=2, modes=("fwd", "rev"))


def test_grad_of_getitem_and_at_set_by_hand():
    x = jnp.arange(4.0)
    assert_close(jax.grad(lambda x: jnp.sum(x[1:3] * 2.0))(x), [0.0, 2.0, 2.0, 0.0], 1e-6)
    assert_close(jax.grad(lambda x: x[-1] * x[0])(x), [3.0, 0.0, 0.0, 0.0], 1e-6)
    # x.at[1:3].set(5) * x: the overwritten elements only see the second factor
    assert_close(jax.grad(lambda x: jnp.sum(x.at[1:3].set(5.0) * x))(x), [0.0, 5.0, 5.0, 6.0], 1e-6)
    g_x, g_y = jax.grad(lambda x, y: jnp.sum(x.at[::2].set(y) ** 2), argnums=(0, 1))(x, 3.0)
    assert_close(g_x, [0.0, 2.0, 0.0, 6.0], 1e-6)
    assert_close(g_y, 12.0, 1e-6)  # y lands in two places: 2 * 3 each


# --- values by hand, and JAX's values at special points -------------------------------------


def test_pad_gradients_by_hand():
    x = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    config = ((1, -1, 1), (-1, 2, 0))  # rows: 5 = 1 + 3 + 2 - 1; cols: 3 = 2 - 1 + 2

    def f(x, p):
        return jnp.sum(lax.pad(x, p, config) * jnp.arange(15.0).reshape(5, 3))

    g_x, g_p = jax.grad(f, argnums=(0, 1))(x, 0.5)
    weights = np.arange(15.0).reshape(5, 3)
    # row k of x lands on row 1 + 2k (the last one is cropped); column 0 is cropped
    expected = np.zeros((3, 2))
    expected[0, 1], expected[1, 1] = weights[1, 0], weights[3, 0]
    assert_close(g_x, expected, 1e-6)
    assert_close(g_p, weights.sum() - expected.sum(), 1e-6)  # every other element is padding


def test_slice_and_dynamic_slice_gradients_by_hand():
    x = jnp.arange(12.0).reshape(3, 4)
    g = jax.grad(lambda x: jnp.sum(lax.slice(x, (1, 0), (3, 4), (1, 3))))(x)
    assert_close(g, [[0, 0, 0, 0], [1, 0, 0, 1], [1, 0, 0, 1]], 1e-6)
    # the start index 2 is clamped to 1 so that the slice fits: the gradient lands there
    g = jax.grad(lambda x: jnp.sum(lax.dynamic_slice(x, (2, 1), (2, 2))))(x)
    assert_close(g, [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0]], 1e-6)


def test_dynamic_update_slice_gradients_by_hand():
    x, u = jnp.ones((3, 4)), jnp.ones((2, 2))
    weights = jnp.arange(12.0).reshape(3, 4)

    def f(x, u, i):
        return jnp.sum(lax.dynamic_update_slice(x, u, (i, 1)) * weights)

    g_x, g_u = jax.grad(f, argnums=(0, 1))(x, u, 1)
    assert_close(g_x, [[0, 1, 2, 3], [4, 0, 0, 7], [8, 0, 0, 11]], 1e-6)
    assert_close(g_u, [[5, 6], [9, 10]], 1e-6)
    g_x, g_u, g_i = jax.grad(f, argnums=(0, 1, 2), allow_int=True)(x, u, 1)
    assert is_float0_zeros(g_i, ())


def test_select_n_gradients_by_hand():
    which = np.array([0, 2, 1, 2], np.int32)
    grads = jax.grad(
        lambda x, y, z: jnp.sum(lax.select_n(which, x, y, z) * jnp.arange(1.0, 5.0)),
        argnums=(0, 1, 2),
    )(jnp.ones(4), jnp.ones(4), jnp.ones(4))
    assert_close(grads[0], [1, 0, 0, 0], 1e-6)
    assert_close(grads[1], [0, 0, 3, 0], 1e-6)
    assert_close(grads[2], [0, 2, 0, 4], 1e-6)


def test_clamp_derivatives_match_jax_at_and_beyond_the_bounds():
    grad3 = jax.grad(lambda lo, x, hi: lax.clamp(lo, x, hi), argnums=(0, 1, 2))
    # (x, expected (d/dmin, d/dx, d/dmax)) for clamp(0, x, 2), as JAX gives them
    for x, expected in [
        (-1.0, (1, 0, 0)),
        (0.0, (0, 0, 0)),  # a tie with min: nobody gets the derivative
        (0.5, (0, 1, 0)),
        (2.0, (0, 0, 0)),  # a tie with max
        (3.0, (0, 0, 1)),
    ]:
        assert_close(grad3(0.0, x, 2.0), expected, 1e-6)
    assert_close(grad3(1.0, 1.0, 1.0), (0, 0, 0), 1e-6)
    assert_close(grad3(2.0, 1.0, 0.0), (0, 0, 1), 1e-6)  # min > max: the result is max
    g = jax.grad(lambda x: jnp.sum(lax.clamp(0.5, x, 1.5)))(jnp.array([0.0, 0.5, 1.0, 1.5, 2.0]))
    assert_close(g, [0, 0, 1, 0, 0], 1e-6)


def test_clamp_scalar_bound_gets_the_summed_gradient():
    # JAX fails here ("select cases must have the same shapes"); the scalar bound's tangent is
    # broadcast to x's shape, so its gradient sums over the elements it bounds.
    g_lo, g_x = jax.grad(lambda lo, x: jnp.sum(lax.clamp(lo, x, 2.0)), argnums=(0, 1))(
        0.0, jnp.array([-1.0, 1.0, -3.0, 3.0])
    )
    assert_close(g_lo, 2.0, 1e-6)
    assert_close(g_x, [0, 1, 0, 0], 1e-6)


def test_convert_element_type_between_real_and_complex_matches_jax():
    z = jnp.array([1 + 2j, 3 - 1j])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _, f_vjp = jax.vjp(lambda z: lax.convert_element_type(z, jnp.float32), z)
        (ct,) = f_vjp(jnp.array([1.0, 2.0]))
        _, t = jax.jvp(lambda z: lax.convert_element_type(z, jnp.float32), (z,), (z * 1j,))
    assert ct.dtype == np.complex64
    assert_close(ct, [1.0, 2.0], 1e-6)  # the real cotangent, as a complex one
    assert_close(t, [-2.0, 1.0], 1e-6)  # the real part of the tangent
    _, f_vjp = jax.vjp(lambda x: lax.convert_element_type(x, jnp.complex64), jnp.array([1.0, 2.0]))
    (ct,) = f_vjp(jnp.array([1 + 2j, 3 - 1j], jnp.complex64))
    assert ct.dtype == np.float32
    assert_close(ct, [1.0, 3.0], 1e-6)  # the real part of the cotangent


def test_convert_element_type_keeps_the_operand_dtype_and_weak_type():
    g = jax.grad(lambda x: lax.convert_element_type(x, jnp.float16).astype(jnp.float32) * 3.0)(
        jnp.float32(2.0)
    )
    assert g.dtype == np.float32
    assert_close(g, 3.0, 1e-6)
    g = jax.grad(lambda x: jnp.sum(jnp.ones(3).at[1].set(x)))(2.0)
    assert g.dtype == np.float32 and g.weak_type  # the Python scalar's weak type comes back
    assert_close(g, 1.0, 1e-6)


def test_gradient_of_reshape_with_dimensions_by_hand():
    x = jnp.arange(6.0).reshape(2, 3)
    weights = jnp.arange(6.0).reshape(3, 2)
    g = jax.grad(lambda x: jnp.sum(lax.reshape(x, (3, 2), (1, 0)) * weights))(x)
    # reshape(x, s, (1, 0)) = reshape(x.T, s): x[i, j] lands at flat position 2 * j + i
    assert_close(g, np.arange(6.0).reshape(3, 2).reshape(6)[[0, 2, 4, 1, 3, 5]].reshape(2, 3), 1e-6)


# --- non-differentiable primitives and operands: zero tangents ------------------------------


def test_integer_and_bitcast_results_have_zero_tangents():
    x = jnp.array([1.5, -2.5])
    _, t = jax.jvp(lambda x: lax.convert_element_type(x, jnp.int32), (x,), (jnp.ones(2),))
    assert is_float0_zeros(t, (2,))
    _, t = jax.jvp(lambda x: lax.bitcast_convert_type(x, jnp.int32), (x,), (jnp.ones(2),))
    assert is_float0_zeros(t, (2,))
    _, t = jax.jvp(lambda x: lax.bitcast_convert_type(x, jnp.uint16), (x,), (jnp.ones(2),))
    assert is_float0_zeros(t, (2, 2))
    float0 = np.zeros(2, dtypes.float0)
    n = jnp.array([1, 2], jnp.int32)
    _, t = jax.jvp(lambda n: lax.convert_element_type(n, jnp.float32), (n,), (float0,))
    assert t.dtype == np.float32
    assert_close(t, [0.0, 0.0], 1e-6)
    _, t = jax.jvp(lambda n: lax.bitcast_convert_type(n, jnp.float32), (n,), (float0,))
    assert_close(t, [0.0, 0.0], 1e-6)
    assert_close(
        jax.grad(lambda x: jnp.sum(lax.convert_element_type(x, jnp.int32) * 1.0))(x), [0, 0], 1e-6
    )
    assert_close(
        jax.grad(lambda x: jnp.sum(lax.bitcast_convert_type(x, jnp.int32) * 1.0))(x), [0, 0], 1e-6
    )


def test_iota_has_a_zero_tangent():
    _, t = jax.jvp(lambda x: lax.iota(jnp.float32, 3) * 1.0 + x * 0.0, (1.0,), (1.0,))
    assert_close(t, [0.0, 0.0, 0.0], 1e-6)
    assert_close(
        jax.grad(lambda x: jnp.sum(lax.broadcasted_iota(jnp.float32, (2, 3), 1) * x))(2.0),
        6.0,
        1e-6,
    )


def test_index_operands_get_float0_cotangents():
    grads = jax.grad(lambda x, i: jnp.sum(lax.dynamic_slice(x, (i,), (2,))), (0, 1), allow_int=True)
    g_x, g_i = grads(jnp.arange(4.0), 1)
    assert_close(g_x, [0, 1, 1, 0], 1e-6)
    assert is_float0_zeros(g_i, ())
    which = jnp.array([True, False])
    grads = jax.grad(lambda p, x: jnp.sum(lax.select_n(p, x, 2 * x)), (0, 1), allow_int=True)
    g_p, g_x = grads(which, jnp.ones(2))
    assert is_float0_zeros(g_p, (2,))
    assert_close(g_x, [2.0, 1.0], 1e-6)


# --- linear transposes ----------------------------------------------------------------------


def test_linear_transpose_of_each_linear_primitive():
    x = r(3, 4)
    for fun in [
        lambda x: lax.reshape(x, (4, 3), (1, 0)),
        lambda x: lax.transpose(x, (1, 0)),
        lambda x: lax.rev(x, (1,)),
        lambda x: lax.pad(x, np.float32(0), ((1, -1, 1), (0, 2, 2))),
        lambda x: lax.concatenate([x, x[:, :1] * 2.0], 1),
        lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)),
        lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)),
        lambda x: lax.dynamic_update_slice(x, x[:1, :2] * 3.0, (2, 1)),
        lambda x: lax.select_n(_CHOICE, x, 2.0 * x, -x),
        lambda x: copy_p.bind(x),
        lambda x: lax.convert_element_type(x, jnp.float16),
    ]:
        y = fun(x)
        ct = r(*y.shape).astype(y.dtype)
        (ct_x,) = jax.linear_transpose(fun, x)(ct)
        assert ct_x.shape == x.shape and ct_x.dtype == x.dtype
        v = r(*x.shape)
        lhs = np.sum(np.asarray(ct_x, np.float64) * v)
        rhs = np.sum(np.asarray(ct, np.float64) * np.asarray(fun(v), np.float64))
        assert_close(lhs, rhs, tol=1e-2)


# --- staged derivatives print as JAX's ------------------------------------------------------


def test_grad_of_pad_prints_as_jax():
    fun = jax.grad(lambda x, p: jnp.sum(lax.pad(x, p, ((1, -1, 1), (-2, 2, 0)))), argnums=(0, 1))
    assert jaxpr_text(fun, jnp.ones((3, 4)), 0.5) == (
        "{ lambda ; a:f32[3,4] b:f32[]. let\n"
        "    c:f32[5,4] = pad[padding_config=((1, -1, 1), (-2, 2, 0))] a b\n"
        "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n"
        "    d:f32[5,4] = broadcast_in_dim 1.0:f32[]\n"
        "    e:f32[5,4] = pad[padding_config=((-1, 1, 0), (2, -2, 0))] d 0.0:f32[]\n"
        "    f:f32[3,4] = slice[limit_indices=(5, 4) start_indices=(0, 0) strides=(2, 1)] e\n"
        "    g:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d\n"
        "    h:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] f\n"
        "    i:f32[] = sub g h\n"
        "  in (f, i) }"
    )


def test_grad_of_strided_getitem_prints_as_jax():
    text = jaxpr_text(
        jax.grad(lambda x: jnp.sum(lax.slice(x, (1, 0), (3, 4), (1, 2)))), jnp.ones((3, 4))
    )
    assert text == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[2,2] = slice[limit_indices=(3, 4) start_indices=(1, 0) strides=(1, 2)] a\n"
        "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
        "    c:f32[2,2] = broadcast_in_dim 1.0:f32[]\n"
        "    d:f32[3,4] = pad[padding_config=((1, 0, 0), (0, 1, 1))] c 0.0:f32[]\n"
        "  in (d,) }"
    )


def test_grad_of_dynamic_update_slice_prints_as_jax():
    fun = jax.grad(lambda x, u: jnp.sum(lax.dynamic_update_slice(x, u, (1, 1))), argnums=(0, 1))
    assert jaxpr_text(fun, jnp.ones((3, 4)), jnp.ones((2, 2))) == (
        "{ lambda ; a:f32[3,4] b:f32[2,2]. let\n"
        "    c:f32[3,4] = dynamic_update_slice a b 1:i32[] 1:i32[]\n"
        "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n"
        "    d:f32[3,4] = broadcast_in_dim 1.0:f32[]\n"
        "    e:f32[2,2] = broadcast_in_dim 0.0:f32[]\n"
        "    f:f32[3,4] = dynamic_update_slice d e 1:i32[] 1:i32[]\n"
        "    g:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] d 1:i32[] 1:i32[]\n"
        "  in (f, g) }"
    )


def test_grad_of_dynamic_slice_and_reshape_with_dimensions_print_as_jax():
    fun = jax.grad(lambda x: jnp.sum(lax.dynamic_slice(x, (1,), (2,))))
    assert jaxpr_text(fun, jnp.ones(3)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[2] = dynamic_slice[slice_sizes=(2,)] a 1:i32[]\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "    c:f32[2] = broadcast_in_dim 1.0:f32[]\n"
        "    d:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    e:f32[3] = dynamic_update_slice d c 1:i32[]\n"
        "  in (e,) }"
    )
    fun = jax.grad(lambda x: jnp.sum(lax.reshape(x, (2, 6), (1, 0))))
    assert jaxpr_text(fun, jnp.ones((3, 4))) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[2,6] = reshape[dimensions=(1, 0) new_sizes=(2, 6) sharding=None] a\n"
        "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
        "    c:f32[2,6] = broadcast_in_dim 1.0:f32[]\n"
        "    d:f32[4,3] = reshape[dimensions=None new_sizes=(4, 3) sharding=None] c\n"
        "    e:f32[3,4] = transpose[permutation=(1, 0)] d\n"
        "  in (e,) }"
    )


def test_grad_of_select_n_and_squeeze_print_as_jax():
    # JAX also stages a dead `_:f32[3] = broadcast_in_dim 0.0:f32[]` in the forward pass here
    # (zeros for the case tangents, unused when every case has one); tracejit builds none.
    fun = jax.grad(lambda x, y, p: jnp.sum(lax.select_n(p, x, y)), argnums=(0, 1))
    x = jnp.ones((3,))
    assert jaxpr_text(fun, x, x, x > 0) == (
        "{ lambda ; a:f32[3] b:f32[3] c:bool[3]. let\n"
        "    d:f32[3] = select_n c a b\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d\n"
        "    e:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    f:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    g:f32[3] = select_n c e f\n"
        "    h:f32[3] = select_n c f e\n"
        "  in (g, h) }"
    )
    assert jaxpr_text(jax.grad(lambda x: jnp.sum(lax.squeeze(x, (0,)))), jnp.ones((1, 3))) == (
        "{ lambda ; a:f32[1,3]. let\n"
        "    b:f32[3] = squeeze[dimensions=(0,)] a\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "    c:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n"
        "  in (d,) }"
    )


def test_jvps_of_pad_select_n_and_convert_print_as_jax():
    x = jnp.ones((3,))
    fun = lambda x, t: jax.jvp(lambda x: lax.pad(x, 1.0, ((1, 0, 1),)), (x,), (t,))
    assert jaxpr_text(fun, x, x) == (
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[6] = pad[padding_config=((1, 0, 1),)] a 1.0:f32[]\n"
        "    d:f32[6] = pad[padding_config=((1, 0, 1),)] b 0.0:f32[]\n"
        "  in (c, d) }"
    )

    def select(x):
        return lax.select_n(x > 1.0, x, jnp.ones(3))

    assert jaxpr_text(lambda x, t: jax.jvp(select, (x,), (t,)), x, x) == (
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:bool[3] = gt a 1.0:f32[]\n"
        "    d:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    e:f32[3] = select_n c a d\n"
        "    f:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    g:f32[3] = select_n c b f\n"
        "  in (e, g) }"
    )
    fun = lambda x, t: jax.jvp(lambda x: lax.convert_element_type(x, jnp.float16), (x,), (t,))
    assert jaxpr_text(fun, x, x) == (
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] a\n"
        "    d:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] b\n"
        "  in (c, d) }"
    )


def test_jvp_and_grad_of_clamp_print_as_jax():
    fun = lambda lo, x, hi, t: jax.jvp(lax.clamp, (lo, x, hi), (t, t, t))
    assert jaxpr_text(fun, 0.0, 1.0, 2.0, 1.0) == (
        "{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let\n"
        "    e:f32[] = clamp a b c\n"
        "    f:bool[] = gt a b\n"
        "    g:bool[] = lt a c\n"
        "    h:bool[] = and f g\n"
        "    i:f32[] = select_n h 0.0:f32[] d\n"
        "    j:bool[] = gt b a\n"
        "    k:bool[] = lt b c\n"
        "    l:bool[] = and j k\n"
        "    m:f32[] = select_n l 0.0:f32[] d\n"
        "    n:bool[] = lt c b\n"
        "    o:f32[] = select_n n 0.0:f32[] d\n"
        "    p:f32[] = add_any i m\n"
        "    q:f32[] = add_any p o\n"
        "  in (e, q) }"
    )
    fun = jax.grad(lambda x: jnp.sum(lax.clamp(0.0, x, 2.0)))
    assert jaxpr_text(fun, jnp.ones(3)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = clamp 0.0:f32[] a 2.0:f32[]\n"
        "    c:bool[3] = gt a 0.0:f32[]\n"
        "    d:bool[3] = lt a 2.0:f32[]\n"
        "    e:bool[3] = and c d\n"
        "    _:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "    f:f32[3] = broadcast_in_dim 1.0:f32[]\n"
        "    g:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    h:f32[3] = select_n e g f\n"
        "  in (h,) }"
    )


def test_grad_of_concatenate_slices_the_cotangent():
    # JAX transposes concatenate with `split`, which tracejit does not have: one slice each.
    fun = jax.grad(lambda x, y: jnp.sum(lax.concatenate([x, y], 1)), argnums=(0, 1))
    assert jaxpr_text(fun, jnp.ones((2, 3)), jnp.ones((2, 1))) == (
        "{ lambda ; a:f32[2,3] b:f32[2,1]. let\n"
        "    c:f32[2,4] = concatenate[dimension=1] a b\n"
        "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n"
        "    d:f32[2,4] = broadcast_in_dim 1.0:f32[]\n"
        "    e:f32[2,3] = slice[limit_indices=(2, 3) start_indices=(0, 0) strides=None] d\n"
        "    f:f32[2,1] = slice[limit_indices=(2, 4) start_indices=(0, 3) strides=None] d\n"
        "  in (e, f) }"
    )
