"""`jax.experimental.ode.odeint`: solutions against closed forms, gradients (the adjoint
solve) against closed forms and finite differences, under jit and vmap."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.experimental.ode import odeint


def decay(y, t, k):
    return -k * y


def test_exponential_decay_at_every_output_time():
    ts = jnp.linspace(0.0, 2.0, 9)
    ys = odeint(decay, jnp.array([1.0, 2.0]), ts, 0.7)
    want = np.exp(-0.7 * np.asarray(ts))[:, None] * np.array([1.0, 2.0])
    assert ys.shape == (9, 2) and ys.dtype == jnp.float32
    np.testing.assert_allclose(ys, want, rtol=2e-6)


def test_a_harmonic_oscillator_as_a_pytree_state_with_time_dependence():
    def oscillator(state, t, omega):
        return {"x": state["v"], "v": -(omega**2) * state["x"] + jnp.cos(t) * 0.0}

    ts = jnp.linspace(0.0, 3.0, 7)
    out = odeint(oscillator, {"x": jnp.float32(1.0), "v": jnp.float32(0.0)}, ts, 2.0)
    np.testing.assert_allclose(out["x"], np.cos(2.0 * np.asarray(ts)), atol=2e-6)
    np.testing.assert_allclose(out["v"], -2.0 * np.sin(2.0 * np.asarray(ts)), atol=4e-6)


def test_a_stiff_ish_logistic_equation_with_loose_tolerances():
    ts = jnp.array([0.0, 1.0, 5.0])
    ys = odeint(lambda y, t: 3.0 * y * (1 - y), jnp.float32(0.1), ts, rtol=1e-4, atol=1e-6)
    want = 1 / (1 + 9 * np.exp(-3.0 * np.asarray(ts)))
    np.testing.assert_allclose(ys, want, rtol=1e-3)


def test_gradients_by_the_adjoint_match_the_closed_form():
    ts = jnp.array([0.0, 0.5, 1.0])
    loss = lambda y0, k: jnp.sum(odeint(decay, y0, ts, k) ** 2)
    g_y0, g_k = jax.grad(loss, argnums=(0, 1))(jnp.float32(1.5), jnp.float32(0.7))
    t = np.asarray(ts)
    # sum_i (y0 e^{-k t_i})^2: d/dy0 = 2 y0 sum e^{-2 k t}, d/dk = -2 y0^2 sum t e^{-2 k t}
    np.testing.assert_allclose(g_y0, 2 * 1.5 * np.exp(-1.4 * t).sum(), rtol=1e-5)
    np.testing.assert_allclose(g_k, -2 * 1.5**2 * (t * np.exp(-1.4 * t)).sum(), rtol=1e-5)


def test_gradients_against_finite_differences_in_float64():
    def rhs(y, t, damping, matrix):
        return matrix @ jnp.tanh(y) - damping * y * jnp.sin(t + 1.0)

    with jax.enable_x64():
        ts = jnp.array([0.0, 0.3, 0.9])
        weights = jnp.array([[0.3, -1.2], [0.7, 0.4], [-0.5, 1.1]])
        args = [jnp.array([1.0, -0.5]), jnp.float64(0.8), jnp.array([[0.1, -1.0], [1.0, 0.2]])]

        def loss(y0, damping, matrix):
            ys = odeint(rhs, y0, ts, damping, matrix, rtol=1e-11, atol=1e-11)
            return jnp.sum(weights * ys)

        grads = jax.grad(loss, argnums=(0, 1, 2))(*args)
        for i, (arg, grad) in enumerate(zip(args, grads, strict=True)):
            flat = np.asarray(arg, np.float64).ravel()
            numeric = np.empty_like(flat)
            for j in range(flat.size):
                step = np.zeros_like(flat)
                step[j] = 1e-6
                shifted = [np.reshape(flat + s, np.shape(arg)) for s in (step, -step)]
                up, down = (float(loss(*args[:i], x, *args[i + 1 :])) for x in shifted)
                numeric[j] = (up - down) / 2e-6
            np.testing.assert_allclose(np.ravel(grad), numeric, rtol=1e-6, atol=1e-8)


def test_the_gradient_with_respect_to_the_output_times():
    with jax.enable_x64():
        ts = jnp.array([0.2, 0.7, 1.1])
        g = jax.grad(lambda ts: odeint(decay, jnp.float64(2.0), ts, 0.5)[-1])(ts)
        # y(t2) = y0 e^{-k (t2 - t0)}: d/dt0 = k y(t2), d/dt2 = -k y(t2), nothing through t1
        y_end = 2.0 * np.exp(-0.5 * 0.9)
        np.testing.assert_allclose(g, [0.5 * y_end, 0.0, -0.5 * y_end], rtol=1e-6, atol=1e-9)


def test_closed_over_values_are_differentiated_too():
    def final(k):
        return odeint(lambda y, t: -k * y, jnp.float32(1.0), jnp.array([0.0, 1.0]))[-1]

    np.testing.assert_allclose(jax.grad(final)(0.7), -np.exp(-0.7), rtol=1e-5)


def test_under_jit_and_vmap():
    ts = jnp.linspace(0.0, 1.0, 4)
    solve = jax.jit(lambda y0, k: odeint(decay, y0, ts, k))
    ks = jnp.array([0.1, 0.5, 2.0])
    batched = jax.vmap(solve, in_axes=(None, 0))(jnp.float32(1.0), ks)
    want = np.exp(-np.asarray(ks)[:, None] * np.asarray(ts))
    np.testing.assert_allclose(batched, want, rtol=2e-6)


def test_arguments_must_be_arrays():
    with pytest.raises(TypeError, match="must be arrays or scalars, but got"):
        odeint(lambda y, t, f: f(y), jnp.float32(1.0), jnp.array([0.0, 1.0]), jnp.sin)
