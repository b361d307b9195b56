"""The autodiff API: jvp, linearize, vjp, grad and friends, custom rules, and their errors."""

import numpy as np
import pytest
from helpers import assert_close, jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dtypes
from tracejit._src.jaxpr import check_jaxpr
from tracejit.test_util import check_grads

# --- forward and reverse mode on pytrees ----------------------------------------------------


def test_jvp_of_a_pytree_function():
    def f(p):
        return {"y": p["a"] * jnp.sin(p["b"]), "z": p["a"]}

    primals = ({"a": jnp.float32(2.0), "b": jnp.float32(0.5)},)
    tangents = ({"a": jnp.float32(1.0), "b": jnp.float32(3.0)},)
    out, out_dot = jax.jvp(f, primals, tangents)
    assert_close(out["y"], 2.0 * np.sin(0.5), 1e-5)
    assert_close(out_dot["y"], np.sin(0.5) + 2.0 * np.cos(0.5) * 3.0, 1e-5)
    assert_close(out_dot["z"], 1.0, 1e-5)


def test_vjp_returns_one_cotangent_per_argument():
    _, f_vjp = jax.vjp(lambda x, w: jnp.sum(x * w), jnp.arange(3.0), jnp.ones(3))
    ct_x, ct_w = f_vjp(jnp.float32(2.0))
    assert_close(ct_x, [2.0, 2.0, 2.0], 1e-5)
    assert_close(ct_w, [0.0, 2.0, 4.0], 1e-5)


def test_linearize_reuses_the_forward_pass():
    y, f_jvp = jax.linearize(jnp.sin, 1.0)
    assert_close(y, np.sin(1.0), 1e-5)
    assert_close(f_jvp(2.0), 2.0 * np.cos(1.0), 1e-5)
    assert_close(f_jvp(3.0), 3.0 * np.cos(1.0), 1e-5)


def test_grad_argnums_has_aux_and_value_and_grad():
    def f(x, y):
        return jnp.sum(x * y**2), {"aux": x}

    g, aux = jax.grad(f, argnums=(0, 1), has_aux=True)(jnp.ones(2), jnp.arange(2.0))
    assert_close(g[0], [0.0, 1.0], 1e-5)
    assert_close(g[1], [0.0, 2.0], 1e-5)
    assert_close(aux["aux"], [1.0, 1.0], 1e-5)
    (value, _), g1 = jax.value_and_grad(f, argnums=1, has_aux=True)(jnp.ones(2), jnp.arange(2.0))
    assert_close(value, 1.0, 1e-5)
    assert_close(g1, [0.0, 2.0], 1e-5)


def test_grad_of_a_complex_holomorphic_function():
    assert_close(jax.grad(lambda z: z * z, holomorphic=True)(jnp.complex64(1 + 1j)), 2 + 2j, 1e-5)


def test_integer_inputs_raise_or_give_float0():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x * 2.0)(3)
    g = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert_close(g[0], 3.0, 1e-5)
    assert np.asarray(g[1]).dtype == dtypes.float0


def test_non_scalar_outputs_raise():
    with pytest.raises(TypeError, match="scalar-output functions. Output had shape: \\(3,\\)"):
        jax.grad(jnp.sin)(jnp.ones(3))


def test_jvp_rejects_mismatched_tangents():
    with pytest.raises(TypeError, match="do not match"):
        jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(4),))
    with pytest.raises(TypeError, match="same tree structure"):
        jax.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))


def test_vjp_rejects_mismatched_cotangents():
    _, f_vjp = jax.vjp(jnp.sin, jnp.ones(3))
    with pytest.raises(ValueError, match="expected f32\\[3\\]"):
        f_vjp(jnp.ones(4))


def test_stop_gradient():
    assert_close(jax.grad(lambda x: x * lax.stop_gradient(x))(3.0), 3.0, 1e-5)


def test_linear_transpose():
    transposed = jax.linear_transpose(lambda x: (2.0 * x, jnp.sum(x)), jnp.ones(3))
    (ct,) = transposed((jnp.arange(3.0), jnp.float32(1.0)))
    assert_close(ct, [1.0, 3.0, 5.0], 1e-5)


# --- arbitrary order and mixed modes ---------------------------------------------------------


def test_grad_of_grad_of_grad():
    assert_close(jax.grad(jax.grad(jax.grad(jnp.sin)))(0.5), -np.cos(0.5), 1e-5)


def test_hessian_vector_products_forward_over_reverse_and_reverse_over_forward():
    def f(x):
        return jnp.sum(jnp.tanh(x) * x**2)

    x = jnp.linspace(-1.0, 1.0, 4)
    v = jnp.arange(4.0)
    hvp_fwd_rev = jax.jvp(jax.grad(f), (x,), (v,))[1]
    hvp_rev_fwd = jax.grad(lambda y: jax.jvp(f, (y,), (v,))[1])(x)
    full = jax.hessian(f)(x)
    assert_close(hvp_fwd_rev, np.asarray(full) @ np.asarray(v), 1e-4)
    assert_close(hvp_rev_fwd, hvp_fwd_rev, 1e-4)


def test_jacfwd_of_jacrev_equals_jacrev_of_jacfwd():
    def f(x):
        return jnp.sin(x) * jnp.sum(x**2)

    x = jnp.array([0.1, 0.7, -0.3])
    assert_close(jax.jacfwd(jax.jacrev(f))(x), jax.jacrev(jax.jacfwd(f))(x), 1e-4)
    assert_close(jax.jacfwd(f)(x), jax.jacrev(f)(x), 1e-5)


def test_check_grads_reports_the_largest_discrepancy():
    @jax.custom_jvp
    def wrong(x):
        return jnp.sin(x)

    wrong.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError, match="largest discrepancy"):
        check_grads(wrong, (jnp.array([0.3, 0.5]),), order=1, modes=("fwd",))


# --- Python control flow on values (the seed's slide) ----------------------------------------


def seed_f(x):
    if x > 0:
        return 2 * x**3.0
    else:
        return 3 * x


def test_python_control_flow_on_values_under_grad():
    assert_close(jax.grad(seed_f)(1.0), 6.0, 1e-5)
    assert_close(jax.grad(seed_f)(-1.0), 3.0, 1e-5)


def test_python_control_flow_on_values_cannot_be_staged():
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.make_jaxpr(seed_f)(1.0)


# --- staged autodiff -------------------------------------------------------------------------


def test_staged_grad_prints_as_jax():
    assert jaxpr_text(jax.grad(jnp.sin), 1.0) == (
        "{ lambda ; a:f32[]. let\n"
        "    _:f32[] = sin a\n"
        "    b:f32[] = cos a\n"
        "    c:f32[] = mul 1.0:f32[] b\n"
        "  in (c,) }"
    )


def test_staged_jvp_prints_as_jax():
    assert jaxpr_text(lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), 1.0, 1.0) == (
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    c:f32[] = sin a\n"
        "    d:f32[] = cos a\n"
        "    e:f32[] = mul b d\n"
        "  in (c, e) }"
    )


def test_staged_grad_materializes_no_zero_tangents():
    text = jaxpr_text(jax.grad(lambda x, y: jnp.sum(x * 2.0) + y), jnp.ones(3), 1.0)
    assert "0.0:f32[]" not in text


# --- custom_jvp --------------------------------------------------------------------------------


@jax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
    return ans, ans_dot


def test_custom_jvp_log1pexp_is_stable_where_autodiff_is_not():
    assert_close(jax.grad(log1pexp)(100.0), 1.0, 1e-5)
    assert_close(jax.grad(log1pexp)(0.0), 0.5, 1e-5)
    assert_close(jax.grad(jax.grad(log1pexp))(0.0), 0.25, 1e-5)
    assert np.isnan(float(jax.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(100.0)))


def test_custom_jvp_call_is_staged_with_its_rule():
    assert jaxpr_text(log1pexp, 1.0) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = custom_jvp_call[\n"
        "      name=log1pexp\n"
        "      call_jaxpr={ lambda ; c:f32[]. let\n"
        "          d:f32[] = exp c\n"
        "          e:f32[] = add 1.0:f32[] d\n"
        "          f:f32[] = log e\n"
        "        in (f,) }\n"
        "      jvp=log1pexp_jvp\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "  in (b,) }"
    )
    staged = jax.make_jaxpr(log1pexp)(1.0)
    (g,) = (
        jax.grad(lambda x: jax._src.jaxpr.eval_jaxpr(staged.jaxpr, staged.consts, x)[0])(100.0),
    )
    assert_close(g, 1.0, 1e-5)


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
    assert_close(jax.grad(f, argnums=(0, 1))(0.5, 2.0), (np.cos(0.5) * 2.0, np.sin(0.5)), 1e-5)

    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(g, x):
        return g(x)

    @app.defjvp
    def app_jvp(g, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(g, x), 2.0 * t  # deliberately not g's derivative

    assert_close(jax.grad(lambda x: app(jnp.sin, x))(0.3), 2.0, 1e-5)


# --- custom_vjp --------------------------------------------------------------------------------


@jax.custom_vjp
def clip_gradient(x):
    return x


def clip_gradient_fwd(x):
    return x, None


def clip_gradient_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def test_custom_vjp_gradient_clipping():
    assert_close(jax.grad(lambda x: clip_gradient(x) * 10.0)(2.0), 1.0, 1e-5)
    assert_close(jax.grad(lambda x: clip_gradient(x) * 0.5)(2.0), 0.5, 1e-5)
    assert_close(clip_gradient(3.0), 3.0, 1e-5)


def test_custom_vjp_with_residuals_and_grad_of_grad():
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_fwd(x):
        return jnp.sin(x), jnp.cos(x)

    def f_bwd(cos_x, g):
        return (cos_x * g,)

    f.defvjp(f_fwd, f_bwd)
    assert_close(jax.grad(f)(0.5), np.cos(0.5), 1e-5)
    assert_close(jax.grad(jax.grad(f))(0.5), -np.sin(0.5), 1e-5)


def test_custom_vjp_refuses_forward_mode():
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(clip_gradient, (1.0,), (1.0,))


def test_custom_vjp_inside_make_jaxpr():
    staged = jax.make_jaxpr(jax.grad(lambda x: clip_gradient(x) * 10.0))(2.0)
    check_jaxpr(staged.jaxpr)
    (g,) = jax._src.jaxpr.eval_jaxpr(staged.jaxpr, staged.consts, 2.0)
    assert_close(g, 1.0, 1e-5)
    text = jaxpr_text(lambda x: clip_gradient(x) * 10.0, 2.0)
    assert "custom_vjp_call[" in text and "bwd=clip_gradient_bwd" in text


# (function of the inputs, inputs, whether each result is weakly typed), as JAX 0.10.2 gives
# them: a gradient is weak when its cotangent seed (the output's weak type) and every
# conversion on the way back (restoring each input's weak type) leave it so.
WEAK_TYPE_CASES = [
    (lambda x: jax.grad(lambda a: a * 2.0)(x), (1.0,), True),
    (lambda x: jax.grad(lambda a: a * jnp.float32(2.0))(x), (1.0,), True),
    (lambda x: jax.grad(lambda a: a * 2.0)(x), (np.float32(1.0),), False),
    (lambda x: jax.grad(jnp.sin)(x), (1.0,), True),
    (lambda x: jax.grad(lambda a: a)(x), (1.0,), True),
    (lambda x: jax.vjp(lambda a: a * 2.0, x)[1](1.0)[0], (1.0,), True),
    (lambda x: jax.vjp(lambda a: a * 2.0, x)[1](np.float32(1.0))[0], (1.0,), False),
    (lambda x: jax.jacfwd(lambda a: a * 2.0)(x), (1.0,), True),
    (lambda x: jax.jacrev(lambda a: a * 2.0)(x), (1.0,), True),
    (lambda x: jax.hessian(lambda a: a**3)(x), (1.0,), True),
    (lambda x: jax.grad(lambda a: jnp.sum(a * 2.0))(x), (np.ones(2, np.float32),), False),
]


@pytest.mark.parametrize("fun, args, weak", WEAK_TYPE_CASES)
def test_derivatives_have_jax_weak_types(fun, args, weak):
    out = fun(*args)
    assert out.dtype == np.float32
    assert out.weak_type == weak
    assert jax.jit(fun)(*args).weak_type == weak


def test_custom_rules_see_python_scalar_arguments_as_arrays():
    """grad(f)(1.0): the primal a custom JVP rule gets is a weakly typed Array, as in JAX."""

    @jax.custom_jvp
    def f(x):
        return x * x.dtype.itemsize

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0] * primals[0].dtype.itemsize))
    assert jax.grad(f)(1.0) == 4.0
    primal_out, _ = jax.jvp(lambda x: x * 2, (3.0,), (1.0,))
    assert primal_out.weak_type


def test_custom_vjp_with_symbolic_zeros():
    """fwd sees `CustomVJPPrimal`s saying which inputs are differentiated; bwd sees a
    `SymbolicZero` for each output whose cotangent is zero, and may return one or None (the
    calls and values recorded from JAX 0.10.2)."""
    from tracejit.custom_derivatives import CustomVJPPrimal, SymbolicZero

    calls = []

    @jax.custom_vjp
    def f(x, y):
        return x * y, jnp.sin(x)

    def f_fwd(x, y):
        assert type(x) is CustomVJPPrimal and type(y) is CustomVJPPrimal
        calls.append(("fwd", x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def f_bwd(res, cts):
        (x, y), (a, b) = res, cts
        calls.append(("bwd", isinstance(a, SymbolicZero), isinstance(b, SymbolicZero)))
        if isinstance(a, SymbolicZero):
            assert a.shape == () and a.dtype == np.float32
            return jnp.cos(x) * b, None
        db = 0.0 if isinstance(b, SymbolicZero) else jnp.cos(x) * b
        return a * y + db, SymbolicZero(jax.typeof(y).to_tangent_aval())

    f.defvjp(f_fwd, f_bwd, symbolic_zeros=True)
    x, y = np.float32(0.5), np.float32(2.0)
    assert_close(jax.grad(lambda x: f(x, y)[0])(x), 2.0, 0)
    assert calls == [("fwd", True, False), ("bwd", False, True)]
    assert_close(jax.grad(lambda x: f(x, y)[1])(x), np.cos(0.5), 1e-6)
    assert calls[-1] == ("bwd", True, False)
    grads = jax.grad(lambda x, y: f(x, y)[0] + f(x, y)[1], argnums=(0, 1))(x, y)
    assert_close(grads, (2.0 + np.cos(0.5), 0.0), 1e-6)
    assert_close(jax.jit(jax.grad(lambda x: f(x, y)[0]))(x), 2.0, 0)
    assert_close(jax.vmap(jax.grad(lambda x: f(x, y)[0]))(jnp.arange(3.0)), [2.0] * 3, 0)


def test_custom_jvp_with_symbolic_zeros():
    from tracejit.custom_derivatives import SymbolicZero

    seen = []

    @jax.custom_jvp
    def g(x, y):
        return x * y

    def g_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        if isinstance(tx, SymbolicZero) and isinstance(ty, SymbolicZero):
            return x * y, SymbolicZero(jax.typeof(x * y).to_tangent_aval())
        dx = 0.0 if isinstance(tx, SymbolicZero) else tx * y
        return x * y, dx + (0.0 if isinstance(ty, SymbolicZero) else ty * x)

    g.defjvp(g_jvp, symbolic_zeros=True)
    assert_close(jax.grad(g)(np.float32(0.5), np.float32(2.0)), 2.0, 0)
    assert seen == [(False, True)]
    assert_close(jax.jvp(lambda y: g(3.0, y), (2.0,), (1.0,))[1], 3.0, 0)
    assert seen[-1] == (True, False)


def test_jacfwd_traces_the_function_once_for_all_inputs():
    """As JAX: one vectorized JVP over the basis of every input's tangents, which also gives the
    primal outputs and aux (a function with side effects, such as a print, runs once)."""
    calls = []

    def f(x, y):
        calls.append(1)
        return jnp.sin(x) * y[0], {"aux": x * 2}

    x, y = jnp.array([0.5, 1.0]), jnp.array([3.0, 4.0])
    (jx, jy), aux = jax.jacfwd(f, argnums=(0, 1), has_aux=True)(x, y)
    assert len(calls) == 1
    np.testing.assert_allclose(jx, np.diag(np.cos([0.5, 1.0]) * 3.0), rtol=1e-6)
    np.testing.assert_allclose(jy, np.stack([np.sin([0.5, 1.0]), [0.0, 0.0]], axis=1), rtol=1e-6)
    np.testing.assert_allclose(aux["aux"], [1.0, 2.0])
    calls.clear()
    jax.hessian(lambda x: jnp.sum(f(x, y)[0] ** 2))(x)
    assert len(calls) == 1


def test_jacrev_takes_what_grad_takes():
    """Reverse mode allows complex inputs of real functions (the gradient convention of `grad`:
    d|z|^2 is 2 conj(z)) and, with allow_int, integer inputs (zero rows of their dtype, as
    JAX); it refuses complex outputs unless holomorphic, as JAX does."""
    z = jnp.array([1 + 1j, 2 - 1j], jnp.complex64)
    jac = jax.jacrev(lambda z: jnp.abs(z) ** 2)(z)
    assert jac.dtype == jnp.complex64
    np.testing.assert_allclose(jac, np.diag(2 * np.conj(np.asarray(z))), rtol=1e-6)
    zeros, dy = jax.jacrev(lambda x, y: x * y, argnums=(0, 1), allow_int=True)(
        jnp.arange(2), jnp.ones(2)
    )
    assert zeros.dtype == jnp.int32 and not np.asarray(zeros).any()
    np.testing.assert_array_equal(dy, np.diag([0.0, 1.0]))
    with pytest.raises(TypeError, match="jacrev requires real- or complex-valued inputs"):
        jax.jacrev(lambda x: x * 2.0)(jnp.arange(2))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        jax.jacrev(lambda x: x * 1j)(jnp.ones(2))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        jax.jacfwd(jnp.abs)(z)


def test_derivatives_at_python_floats_are_weakly_typed():
    """As JAX 0.10.2 (recorded): a (co)tangent has the weak type of its primal, eagerly as when
    traced, whichever rules computed it; so the gradient at 3.0 meets bfloat16 as 3.0 does."""
    assert jax.grad(lambda v: v**2)(3.0).weak_type
    assert jax.grad(lambda v: v * jnp.float32(2))(3.0).weak_type
    assert jax.vjp(lambda v: v**2, 3.0)[1](1.0)[0].weak_type
    assert jax.jacfwd(lambda v: v**2)(3.0).weak_type and jax.hessian(lambda v: v**3)(3.0).weak_type
    assert jax.jvp(lambda v: v * 2, (3.0,), (jnp.float32(1.0),))[1].weak_type
    assert not jax.grad(lambda v: v**2)(jnp.float32(3.0)).weak_type
    assert (jax.grad(lambda v: v**2)(3.0) * jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16
