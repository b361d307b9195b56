"""`jnp.linalg`: norms and matrix powers against NumPy; the decompositions are not built yet and
say so."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.test_util import check_grads

_rng = np.random.default_rng(0)
M = _rng.normal(size=(3, 4)).astype(np.float32)
V = _rng.normal(size=5).astype(np.float32)
S = _rng.normal(size=(2, 3, 3)).astype(np.float32)
C = (_rng.normal(size=4) + 1j * _rng.normal(size=4)).astype(np.complex64)

NORMS = [
    (V, {}),
    (V, {"ord": 1}),
    (V, {"ord": 0}),
    (V, {"ord": np.inf}),
    (V, {"ord": -np.inf}),
    (V, {"ord": 3}),
    (V, {"ord": 0.5}),
    (C, {}),
    (C, {"ord": 1}),
    (M, {}),
    (M, {"ord": "fro"}),
    (M, {"ord": 1}),
    (M, {"ord": -1}),
    (M, {"ord": np.inf}),
    (M, {"ord": -np.inf}),
    (M, {"axis": 1}),
    (M, {"axis": 0, "ord": 3}),
    (M, {"axis": (1, 0)}),
    (M, {"axis": 1, "keepdims": True}),
    (M, {"ord": 1, "keepdims": True}),
    (S, {"axis": (-2, -1), "ord": np.inf}),
    (S, {"axis": -1}),
    (S, {}),
    (np.arange(6).reshape(2, 3), {}),  # integers: a float32 norm
]


@pytest.mark.parametrize("x, kwargs", NORMS, ids=[f"{x.shape}-{k}" for x, k in NORMS])
def test_norm_matches_numpy(x, kwargs):
    got = jnp.linalg.norm(x, **kwargs)
    want = np.linalg.norm(x.astype(np.float64 if x.dtype.kind != "c" else np.complex128), **kwargs)
    assert got.dtype == np.float32 and not got.weak_type
    np.testing.assert_allclose(got, want, rtol=1e-5)
    check_traced_matches_eager(lambda a: jnp.linalg.norm(a, **kwargs), x, rtol=1e-5)


def test_vector_and_matrix_norms():
    np.testing.assert_allclose(jnp.linalg.vector_norm(M), np.linalg.norm(M.ravel()), rtol=1e-6)
    np.testing.assert_allclose(
        jnp.linalg.vector_norm(M, axis=1, ord=np.inf), np.abs(M).max(1), rtol=1e-6
    )
    np.testing.assert_allclose(
        jnp.linalg.matrix_norm(S), np.linalg.norm(S, axis=(-2, -1)), rtol=1e-5
    )
    np.testing.assert_allclose(
        jnp.linalg.matrix_norm(S, ord=1), np.linalg.norm(S, ord=1, axis=(-2, -1)), rtol=1e-5
    )


def test_norm_gradients():
    x64 = V.astype(np.float64)
    for kwargs in ({}, {"ord": 1}, {"ord": 3}, {"ord": np.inf}):
        check_grads(lambda v, k=kwargs: jnp.linalg.norm(v, **k), (x64,), order=2)
    check_grads(lambda m: jnp.linalg.norm(m, ord="fro"), (M.astype(np.float64),), order=2)
    np.testing.assert_allclose(jax.grad(jnp.linalg.norm)(jnp.array([3.0, 4.0])), [0.6, 0.8])


def test_matrix_power_by_repeated_squaring():
    a = _rng.normal(size=(2, 3, 3)).astype(np.float32) * 0.5 + np.eye(3, dtype=np.float32)
    for n in (0, 1, 2, 5, 8, -1, -3):
        np.testing.assert_allclose(
            jnp.linalg.matrix_power(a, n), np.linalg.matrix_power(a, n), rtol=1e-4, atol=1e-5
        )
    with pytest.raises(TypeError, match="square"):
        jnp.linalg.matrix_power(M, 2)


def test_the_linalg_products_and_multi_dot():
    a, b, v = M, M.T, np.ones(3, np.float32)
    np.testing.assert_allclose(jnp.linalg.multi_dot([a, b, v]), a @ b @ v, rtol=1e-5)
    np.testing.assert_allclose(jnp.linalg.matmul(a, b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(jnp.linalg.matrix_transpose(S), np.swapaxes(S, -1, -2))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_spectral_norms_are_numpys(ord):
    x = np.random.default_rng(1).normal(size=(3, 4, 2))
    np.testing.assert_allclose(jnp.linalg.norm(M, ord=ord), np.linalg.norm(M, ord=ord), rtol=1e-5)
    for axis, keepdims in [((0, 2), False), ((2, 1), True)]:
        np.testing.assert_allclose(
            jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims),
            np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims),
            rtol=1e-5,
        )
    np.testing.assert_allclose(
        jnp.linalg.matrix_norm(x, ord=ord), np.linalg.matrix_norm(x, ord=ord), rtol=1e-5
    )


def test_array_api_products_work_over_the_last_axes():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(jnp.linalg.trace(x, offset=1), [18.0, 54.0])
    np.testing.assert_array_equal(jnp.linalg.diagonal(x, offset=1), np.diagonal(x, 1, -2, -1))
    assert jnp.linalg.trace(np.ones((2, 2), bool)).dtype == np.int32
    np.testing.assert_array_equal(
        jnp.linalg.cross(np.arange(3.0), np.ones(3)), np.cross(np.arange(3.0), np.ones(3))
    )
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        jnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.linalg.outer(np.ones((2, 2)), np.ones(2))
    np.testing.assert_array_equal(
        jnp.linalg.outer(np.arange(2.0), np.arange(3.0)), np.outer(np.arange(2.0), np.arange(3.0))
    )
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(jnp.linalg.tensordot(a, b, axes=1), a @ b)
    np.testing.assert_array_equal(jnp.linalg.matmul(a, b), a @ b)


@pytest.mark.parametrize("x64", [False, True])
def test_solve_and_inv_match_numpy(x64):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)
    with jax.enable_x64(x64):
        tol = 1e-10 if x64 else 1e-4
        for b in (rng.normal(size=4), rng.normal(size=(2, 4, 3)), rng.normal(size=(4, 3))):
            want = np.linalg.solve(a, b if b.ndim > 1 else b[:, None])
            want = want[..., 0] if b.ndim == 1 else want
            np.testing.assert_allclose(jnp.linalg.solve(a, b), want, rtol=tol, atol=tol)
            # (a temporary jitted function: its LU callback must be done when it returns)
            jitted = jax.jit(jnp.linalg.solve)(a, b)
            np.testing.assert_allclose(jitted, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(jnp.linalg.inv(a), np.linalg.inv(a), rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        jnp.linalg.solve(a, np.ones((2, 4)))
    with pytest.raises(ValueError, match="must have shape"):
        jnp.linalg.inv(np.ones((2, 3)))


def test_solve_and_inv_derivatives():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    check_grads(jnp.linalg.solve, (a, rng.normal(size=(3, 2))), order=2, modes=["fwd", "rev"])
    check_grads(jnp.linalg.inv, (a,), order=1)
