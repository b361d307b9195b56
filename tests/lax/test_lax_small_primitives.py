"""complex, mulhi, reduce_precision, optimization_barrier and scatter_sub: the jaxprs JAX 0.10.2
prints, their derivatives' conventions, and JAX's errors. Values, vmap and finite-difference
derivatives on every dtype come from their rows in tests/op_specs/; bits against recorded JAX
values from test_lax_extras_reference.py."""

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import lax


def test_jaxprs_as_jax_prints_them():
    assert jaxpr_text(lambda x: lax.complex(x, x), 1.0) == (
        "{ lambda ; a:f32[]. let b:c64[] = complex a a in (b,) }"
    )
    assert jaxpr_text(lambda x: lax.mulhi(x, x), 1) == (
        "{ lambda ; a:i32[]. let b:i32[] = mulhi a a in (b,) }"
    )
    assert jaxpr_text(lambda x: lax.reduce_precision(x, 5, 10), np.ones(2, np.float32)) == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[2] = reduce_precision[exponent_bits=5 mantissa_bits=10] a\n  in (b,) }"
    )
    assert jaxpr_text(lambda x: lax.optimization_barrier((x, 2 * x)), 1.0) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = mul 2.0:f32[] a\n"
        "    c:f32[] d:f32[] = optimization_barrier a b\n  in (c, d) }"
    )


# --- complex ----------------------------------------------------------------------------------


def test_complex_weak_types_and_promotion_of_python_scalars():
    assert lax.complex(1.0, 2.0).weak_type
    out = lax.complex(np.float32(1), 2.0)
    assert out.dtype == np.complex64 and not out.weak_type


def test_complex_keeps_infinite_real_parts():
    out = lax.complex(np.float32(np.inf), np.float32(0))
    assert out.real == np.inf and out.imag == 0


def test_complex_cotangents_are_real_part_and_minus_imaginary_part():
    """JAX's convention: the cotangent of x + iy is (Re ct, -Im ct)."""
    f = lambda x, y: (lax.complex(x, y) * (3 - 5j)).real
    assert_close(tracejit.grad(f, (0, 1))(1.0, 2.0), (3.0, 5.0))
    g = lambda x, y: jnp.abs(lax.complex(x, y)) ** 2
    assert_close(tracejit.grad(g, (0, 1))(1.0, 2.0), (2.0, 4.0))


@pytest.mark.parametrize(
    "x, y, message",
    [
        (np.ones(2, np.int32), np.ones(2, np.int32), "does not accept dtype int32 at position 0"),
        (np.ones(2, np.float32), np.ones(2, np.float16), "float16 at position 1"),
        (np.ones(2, np.float32), np.ones(3, np.float32), "incompatible shapes"),
    ],
)
def test_complex_bad_input(x, y, message):
    with pytest.raises(TypeError, match=message):
        lax.complex(x, y)


# --- mulhi ------------------------------------------------------------------------------------


def test_mulhi_high_halves_and_errors():
    x = np.array([2**31 - 1, -5, 7], np.int32)
    y = np.array([3, 7, -9], np.int32)
    check_eager_jit_numpy(lax.mulhi, [x, y], np.array([1, -1, -1], np.int32))
    assert lax.mulhi(3, 4).weak_type
    with pytest.raises(TypeError, match="same dtypes"):
        lax.mulhi(x, y.astype(np.int8))
    with pytest.raises(TypeError, match="integer"):
        lax.mulhi(np.float32(1), np.float32(1))


def test_mulhi_64_bits_compiled(enable_x64):
    x = np.array([2**63 - 1, -5, -(2**63), 123456789123], np.int64)
    y = np.array([3, 7, -(2**63), -987654321987], np.int64)
    want = np.array([(int(a) * int(b)) >> 64 for a, b in zip(x, y, strict=True)], np.int64)
    check_eager_jit_numpy(lax.mulhi, [x, y], want)


# --- reduce_precision -------------------------------------------------------------------------


def test_reduce_precision_rounds_its_tangent_and_cotangent():
    """JAX's rule: linear, the tangent rounded as the primal is."""
    out, tangent = tracejit.jvp(lambda x: lax.reduce_precision(x, 5, 10), (1.1,), (1 / 3,))
    assert_close(out, np.float32(np.float16(1.1)))
    assert_close(tangent, np.float32(np.float16(1 / 3)))
    assert_close(tracejit.grad(lambda x: lax.reduce_precision(x, 5, 10))(1.1), 1.0)


def test_reduce_precision_bad_input():
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        lax.reduce_precision(np.int32(1), 5, 10)
    with pytest.raises(TypeError, match="does not accept dtype complex64"):
        lax.reduce_precision(np.complex64(1), 5, 10)
    with pytest.raises(ValueError, match="exponent_bits must be positive"):
        lax.reduce_precision(1.0, 0, 10)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative"):
        lax.reduce_precision(1.0, 5, -1)


# --- optimization_barrier ---------------------------------------------------------------------


def test_optimization_barrier_keeps_pytrees_and_weak_types():
    out = lax.optimization_barrier({"a": 1.0, "b": [np.ones(2, np.float32)]})
    assert out["a"].weak_type and not out["b"][0].weak_type
    check_eager_jit_numpy(
        lambda x: lax.optimization_barrier((x, 2 * x)), [np.ones(3, np.float32)],
        (np.ones(3, np.float32), np.full(3, 2, np.float32)),
    )  # fmt: skip


def test_optimization_barrier_derivatives_go_through_barriers():
    fun = tracejit.grad(lambda x: lax.optimization_barrier((x, 2 * x))[1].sum())
    assert str(tracejit.make_jaxpr(fun)(np.ones(3, np.float32))).count("optimization_barrier") == 2
    assert_close(fun(np.ones(3, np.float32)), np.full(3, 2, np.float32))


# --- scatter_sub ------------------------------------------------------------------------------

DNUMS = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def test_scatter_sub_subtracts_every_repeated_update():
    x, updates = np.arange(4.0, dtype=np.float32), np.array([1.0, 2.0, 3.0], np.float32)
    indices = np.array([[0], [2], [0]], np.int32)
    fun = lambda x, u: lax.scatter_sub(x, indices, u, DNUMS)
    check_eager_jit_numpy(fun, [x, updates], np.array([-4.0, 1.0, 0.0, 3.0], np.float32))
    assert "scatter-sub[" in jaxpr_text(fun, x, updates)
    grad_x, grad_u = tracejit.grad(lambda x, u: (fun(x, u) ** 2).sum(), (0, 1))(x, updates)
    assert_close(grad_x, [-8.0, 2.0, 0.0, 6.0])
    assert_close(grad_u, [8.0, 0.0, 8.0])
    with pytest.raises(TypeError):
        lax.scatter_sub(x, indices, updates.astype(np.int32), DNUMS)


# --- dce_sink ---------------------------------------------------------------------------------


def test_dce_sink_is_an_equation_without_outputs_kept_on_primals():
    assert lax.dce_sink({"a": np.ones(2)}) is None
    text = jaxpr_text(tracejit.grad(lambda x: (lax.dce_sink(x), x.sum())[1]), np.ones(2, "f4"))
    assert text.splitlines()[1] == "    dce_sink[prevent_mlir_dce=False] a"
    assert "dce_sink" in jaxpr_text(
        tracejit.vmap(lambda x: (lax.dce_sink(x), x)[1]), np.ones((2, 2))
    )
    out = tracejit.jit(lambda x: (lax.dce_sink(x), x + 1)[1])(np.ones(2, np.float32))
    np.testing.assert_array_equal(out, [2.0, 2.0])


# --- scatter_apply ----------------------------------------------------------------------------


def test_scatter_apply_applies_once_per_window_as_xla():
    """JAX 0.10.2 on CPU gives [3, 1, 5, 3]: element 0 is in two windows, 0 -> 1 -> 3."""
    x, indices = np.arange(4.0, dtype=np.float32), np.array([[0], [0], [2]], np.int32)
    fun = lambda v: lax.scatter_apply(v, indices, lambda e: e * 2 + 1, DNUMS, update_shape=(3,))
    check_eager_jit_numpy(fun, [x], np.array([3.0, 1.0, 5.0, 3.0], np.float32))
    assert "scatter_apply[" in jaxpr_text(fun, x)
    with pytest.raises(NotImplementedError, match="scatter_apply"):
        tracejit.grad(lambda v: fun(v).sum())(x)


def test_scatter_apply_windows_and_vmap():
    rows = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    indices = np.array([[2], [0]], np.int32)
    fun = lambda v, i: lax.scatter_apply(v, i, jnp.negative, rows, update_shape=(2, 2))
    check_eager_jit_numpy(fun, [x, indices], np.array([[0, -1], [2, 3], [-4, -5]], np.float32))
    check_vmap(fun, [np.stack([x, x + 1]), np.stack([indices, indices + 1])], [0, 0], jit=True)
    check_vmap(fun, [x, np.stack([indices, indices - 1])], [None, 0])
