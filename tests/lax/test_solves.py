"""custom_linear_solve and custom_root (`lax/control_flow/solves.py`): the user's solver runs
forwards; derivatives come from the equation solved (implicit differentiation), in forward and
reverse mode, against NumPy's linear algebra and closed forms; under jit and vmap; JAX's
errors. The solvers here are fixed-point iterations whose own derivatives would be wrong
(they stop after a fixed number of steps), so correct derivatives show the implicit rule."""

import numpy as np
import pytest
from helpers import assert_close, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.test_util import check_grads

A = np.array([[4.0, 1.0], [2.0, 3.0]])
B = np.array([1.0, 2.0])


def jacobi(matvec, b, diagonal, steps=60):
    x = jnp.zeros_like(b)
    for _ in range(steps):
        x = x + (b - matvec(x)) / diagonal
    return x


def linear_solve(a, b):
    return lax.custom_linear_solve(
        lambda x: a @ x,
        b,
        lambda matvec, rhs: jacobi(matvec, rhs, jnp.diag(a)),
        lambda vecmat, rhs: jacobi(vecmat, rhs, jnp.diag(a)),
    )


def test_linear_solve_values_eager_and_jit():
    want = np.linalg.solve(A, B)
    assert_close(linear_solve(A, B), want, 1e-6)
    assert_close(tracejit.jit(linear_solve)(A, B), want, 1e-6)
    assert "linear_solve[" in str(tracejit.make_jaxpr(linear_solve)(A, B))


def test_linear_solve_derivatives_in_the_matrix_and_the_right_hand_side(enable_x64):
    check_grads(linear_solve, [A, B], 1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    inverse = np.linalg.inv(A)
    assert_close(tracejit.jacfwd(linear_solve, 1)(A, B), inverse, 1e-6)
    assert_close(tracejit.jacrev(linear_solve, 1)(A, B), inverse, 1e-6)


def test_symmetric_needs_no_transpose_solve_and_has_aux_returns_the_solvers_extra():
    s = A + A.T

    def solve(b):
        return lax.custom_linear_solve(
            lambda x: s @ x,
            b,
            lambda matvec, rhs: (jacobi(matvec, rhs, jnp.diag(s)), jnp.float32(7)),
            symmetric=True,
            has_aux=True,
        )

    x, aux = solve(B.astype(np.float32))
    assert_close(x, np.linalg.solve(s, B), 1e-5)
    assert_close(aux, 7.0)
    assert_close(
        tracejit.jacrev(lambda b: solve(b)[0])(B.astype(np.float32)), np.linalg.inv(s), 1e-5
    )


def test_reverse_mode_without_transpose_solve_raises():
    def solve(b):
        return lax.custom_linear_solve(
            lambda x: A @ x, b, lambda matvec, rhs: jacobi(matvec, rhs, jnp.diag(A))
        )

    assert_close(tracejit.jacfwd(solve)(B), np.linalg.inv(A), 1e-5)
    with pytest.raises(TypeError, match="transpose_solve required"):
        tracejit.grad(lambda b: solve(b).sum())(B)


def test_linear_solve_vmap_matches_a_loop():
    batch_a = np.stack([A, A + np.eye(2)]).astype(np.float32)
    batch_b = np.stack([B, 2 * B]).astype(np.float32)
    check_vmap(linear_solve, [batch_a, batch_b], [0, 0], tol=1e-5)
    check_vmap(linear_solve, [A.astype(np.float32), batch_b], [None, 0], tol=1e-5, jit=True)


def test_linear_solve_bad_solvers():
    with pytest.raises(ValueError, match="solve\\(\\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: A @ x, B, lambda matvec, b: b[:1])
    with pytest.raises(TypeError, match="pytree structure must match b"):
        lax.custom_linear_solve(lambda x: x, (B,), lambda matvec, b: [b[0]])


# --- custom_root ------------------------------------------------------------------------------


def newton(f, x0):
    x = x0
    for _ in range(30):
        x = x - f(x) / tracejit.grad(f)(x)
    return x


def sqrt_by_root(a):
    return lax.custom_root(lambda x: x**2 - a, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root_value_and_implicit_derivative():
    assert_close(sqrt_by_root(2.0), np.sqrt(2.0), 1e-6)
    assert_close(tracejit.grad(sqrt_by_root)(2.0), 0.5 / np.sqrt(2.0), 1e-6)
    assert_close(tracejit.jit(tracejit.grad(sqrt_by_root))(9.0), 1 / 6, 1e-6)
    check_vmap(sqrt_by_root, [np.array([4.0, 9.0], np.float32)], [0], tol=1e-6)


def test_custom_root_of_a_vector_function_with_aux():
    def root(theta):
        def f(x):
            return jnp.array([x[0] + x[1] - theta[0], x[0] - x[1] - theta[1]])

        def solve(f, x0):
            return jnp.array([(theta[0] + theta[1]) / 2, (theta[0] - theta[1]) / 2]), 3

        def tangent_solve(g, y):
            return jnp.array([(y[0] + y[1]) / 2, (y[0] - y[1]) / 2])

        return lax.custom_root(f, jnp.zeros(2), solve, tangent_solve, has_aux=True)

    theta = np.array([3.0, 1.0], np.float32)
    x, aux = root(theta)
    assert_close(x, [2.0, 1.0])
    assert aux == 3
    assert_close(tracejit.jacfwd(lambda t: root(t)[0])(theta), [[0.5, 0.5], [0.5, -0.5]])
    assert_close(tracejit.jacrev(lambda t: root(t)[0])(theta), [[0.5, 0.5], [0.5, -0.5]])


def test_custom_root_bad_functions():
    with pytest.raises(TypeError, match="f"):
        lax.custom_root(lambda x: (x, x), 1.0, newton, lambda g, y: y)
    with pytest.raises(TypeError, match="solve"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x0: (x0, x0), lambda g, y: y)
