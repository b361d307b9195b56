"""`lax.linalg.cholesky` and `triangular_solve`: their identities (L Lᴴ = A, op(a) x = b)
against NumPy/SciPy in float64 and complex128, batched, jit against eager, vmap against a loop,
derivatives to second order by finite differences, and JAX's NaNs where A is not positive
definite."""

import numpy as np
import pytest
import scipy.linalg

import tracejit as jax
from tracejit.lax import linalg
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)


def _positive_definite(*batch, n=4, dtype=np.float64):
    a = RNG.normal(size=(*batch, n, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=(*batch, n, n))
    a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return a.astype(dtype)


def _lower_triangular(n=4, dtype=np.float64):
    return (np.tril(RNG.normal(size=(n, n))) + n * np.eye(n)).astype(dtype)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cholesky_factors_and_matches_numpy(dtype):
    a = _positive_definite(2, 3, dtype=dtype)
    factor = np.asarray(linalg.cholesky(a))
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(factor, np.linalg.cholesky(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(factor @ np.conj(np.swapaxes(factor, -1, -2)), a, rtol=tol * 10)
    assert factor.dtype == dtype
    np.testing.assert_allclose(jax.jit(linalg.cholesky)(a), factor, rtol=tol * 10, atol=tol)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nans():
    a = np.stack([-np.eye(3), np.eye(3)])
    for fun in (linalg.cholesky, jax.jit(linalg.cholesky)):
        factor = np.asarray(fun(a))
        assert np.isnan(factor[0]).all()
        np.testing.assert_array_equal(factor[1], np.eye(3))


def test_cholesky_reads_the_lower_triangle_without_symmetrizing():
    a = _positive_definite()
    skewed = np.tril(a) + np.triu(RNG.normal(size=a.shape), 1)
    np.testing.assert_allclose(
        linalg.cholesky(skewed, symmetrize_input=False), np.linalg.cholesky(a), rtol=1e-12
    )


SOLVES = [
    {"left_side": True, "lower": True},
    {"left_side": True, "lower": False},
    {"left_side": True, "lower": True, "transpose_a": True},
    {"left_side": False, "lower": True},
    {"left_side": False, "lower": False, "transpose_a": True},
    {"left_side": True, "lower": True, "unit_diagonal": True},
]


@pytest.mark.parametrize("params", SOLVES, ids=str)
def test_triangular_solve_matches_scipy(params):
    a = _lower_triangular() + np.triu(RNG.normal(size=(4, 4)), 1) * 0.1
    b = RNG.normal(size=(4, 3)) if params["left_side"] else RNG.normal(size=(3, 4))
    x = np.asarray(linalg.triangular_solve(a, b, **params))
    read = np.tril(a) if params["lower"] else np.triu(a)
    if params.get("unit_diagonal"):
        np.fill_diagonal(read, 1.0)
    op = read.T if params.get("transpose_a") else read
    if params["left_side"]:
        np.testing.assert_allclose(op @ x, b, rtol=1e-10, atol=1e-12)
        want = scipy.linalg.solve_triangular(
            a, b, lower=params["lower"], trans=int(params.get("transpose_a", False)),
            unit_diagonal=params.get("unit_diagonal", False),
        )  # fmt: skip
        np.testing.assert_allclose(x, want, rtol=1e-10)
    else:
        np.testing.assert_allclose(x @ op, b, rtol=1e-10, atol=1e-12)
    jitted = jax.jit(lambda a, b: linalg.triangular_solve(a, b, **params))(a, b)
    np.testing.assert_allclose(jitted, x, rtol=1e-10)


@pytest.mark.parametrize(
    "params",
    [
        {"left_side": True, "lower": True, "transpose_a": True, "conjugate_a": True},
        {"left_side": True, "lower": True, "conjugate_a": True},
    ],
    ids=["adjoint", "conjugate"],
)
def test_complex_triangular_solves(params):
    a = _lower_triangular().astype(np.complex128) + 1j * np.tril(RNG.normal(size=(4, 4)))
    b = RNG.normal(size=(4, 2)) + 1j * RNG.normal(size=(4, 2))
    op = np.conj(a)
    op = op.T if params.get("transpose_a") else op
    for fun in (
        linalg.triangular_solve,
        jax.jit(linalg.triangular_solve, static_argnames=list(params)),
    ):
        x = np.asarray(fun(a, b, **params))
        np.testing.assert_allclose(op @ x, b, rtol=1e-10, atol=1e-12)


def test_a_singular_triangular_system_gives_infinities_not_an_error():
    a = np.diag([1.0, 0.0])
    x = np.asarray(linalg.triangular_solve(a, np.ones((2, 1)), left_side=True, lower=True))
    assert np.isinf(x[1, 0])


def test_batching_against_a_loop():
    a = _positive_definite(3)
    np.testing.assert_allclose(
        jax.vmap(linalg.cholesky)(a), np.stack([linalg.cholesky(m) for m in a]), rtol=1e-12
    )
    t, bs = _lower_triangular(), RNG.normal(size=(3, 4, 2))
    solve = lambda t, b: linalg.triangular_solve(t, b, left_side=True, lower=True)
    np.testing.assert_allclose(
        jax.vmap(solve, (None, 0))(t, bs), np.stack([solve(t, b) for b in bs]), rtol=1e-12
    )
    ts = np.stack([_lower_triangular() for _ in range(3)])
    np.testing.assert_allclose(
        jax.vmap(solve, (0, None))(ts, bs[0]), np.stack([solve(m, bs[0]) for m in ts]), rtol=1e-12
    )


def test_cholesky_derivatives():
    check_grads(linalg.cholesky, (_positive_definite(n=3),), order=2, modes=["fwd", "rev"])
    check_grads(linalg.cholesky, (_positive_definite(n=3, dtype=np.complex128),), order=1)


@pytest.mark.parametrize("params", SOLVES, ids=str)
def test_triangular_solve_derivatives(params):
    a = _lower_triangular(3) + np.triu(np.ones((3, 3)), 1) * 0.2
    b = RNG.normal(size=(3, 2)) if params["left_side"] else RNG.normal(size=(2, 3))
    solve = lambda a, b: linalg.triangular_solve(a, b, **params)
    check_grads(solve, (a, b), order=2, modes=["fwd", "rev"])


def test_bad_operands():
    with pytest.raises(ValueError, match="square"):
        linalg.cholesky(np.ones((2, 3)))
    with pytest.raises(TypeError, match="floating point or complex"):
        linalg.cholesky(np.eye(2, dtype=np.int32))
    with pytest.raises(TypeError, match="rows"):
        linalg.triangular_solve(np.eye(3), np.ones((2, 1)), left_side=True)


# --- lu -------------------------------------------------------------------------------------


def _reassembled(factors, permutation):
    """(P a, L U) from lu's outputs."""
    n = factors.shape[-1]
    lower = np.tril(factors, -1) + np.eye(n)
    upper = np.triu(factors)
    return permutation, lower @ upper


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_lu_reassembles_and_matches_scipy(dtype):
    a = RNG.normal(size=(2, 4, 4)).astype(dtype)
    for fun in (linalg.lu, jax.jit(linalg.lu)):
        factors, pivots, permutation = map(np.asarray, fun(a))
        assert pivots.dtype == permutation.dtype == np.int32
        for m, f, p, perm in zip(a, factors, pivots, permutation, strict=True):
            want, want_pivots = scipy.linalg.lu_factor(m)
            np.testing.assert_allclose(f, want, rtol=1e-4, atol=1e-5)
            np.testing.assert_array_equal(p, want_pivots)
            rows, product = _reassembled(f, perm)
            np.testing.assert_allclose(product, m[rows], rtol=1e-4, atol=1e-5)


def test_lu_of_a_singular_matrix_factors_without_error():
    factors, _, permutation = linalg.lu(np.zeros((3, 3)))
    np.testing.assert_array_equal(factors, np.zeros((3, 3)))
    np.testing.assert_array_equal(permutation, [0, 1, 2])


def test_lu_derivatives_and_batching():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    check_grads(lambda a: linalg.lu(a)[0], (a,), order=2, modes=["fwd", "rev"])
    batch = RNG.normal(size=(2, 3, 3))
    got = jax.vmap(linalg.lu)(batch)
    for i, m in enumerate(batch):
        for out, want in zip(got, linalg.lu(m), strict=True):
            np.testing.assert_array_equal(np.asarray(out)[i], want)
