"""`tracejit.scipy.linalg`'s LU family, `solve`, `inv`, `det`, `schur`, `rsf2csf`, `hessenberg`
and `eigh_tridiagonal` against SciPy in float64/complex128: values, identities, batches, jit,
derivatives, JAX's errors."""

import numpy as np
import pytest
import scipy.linalg
from helpers import check_eager_jit_numpy, check_vmap

import tracejit as jax
import tracejit.scipy.linalg as jsl
from tracejit.test_util import check_grads

RNG = np.random.default_rng(2)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _matrix(*shape, dtype=np.float64):
    a = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_lu_matches_scipy(dtype):
    a = _matrix(4, 4, dtype=dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    check_eager_jit_numpy(jsl.lu, (a,), scipy.linalg.lu(a), tol=tol)
    p_l, u = jsl.lu(a, permute_l=True)
    np.testing.assert_allclose(np.asarray(p_l) @ u, a, rtol=tol * 10, atol=tol * 10)
    factors, pivots = jsl.lu_factor(a)
    want_factors, want_pivots = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(factors, want_factors, rtol=tol)
    np.testing.assert_array_equal(pivots, want_pivots)
    assert pivots.dtype == np.int32
    assert jsl.lu(np.eye(3, dtype=np.int32))[0].dtype == np.float32  # JAX's
    assert jsl.lu(a)[0].dtype == np.finfo(dtype).dtype  # (a real permutation, as JAX's)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lu_solve_matches_scipy(trans, dtype):
    a, b = _matrix(4, 4, dtype=dtype), _matrix(4, 3, dtype=dtype)
    factors = jsl.lu_factor(a)
    want = scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans)
    solve = lambda f, p, b: jsl.lu_solve((f, p), b, trans=trans)
    check_eager_jit_numpy(solve, (*factors, b), want, tol=1e-10)
    np.testing.assert_allclose(solve(*factors, b[:, 0]), want[:, 0], rtol=1e-10)
    with pytest.raises(ValueError, match="'trans' value must be 0, 1, or 2"):
        jsl.lu_solve(factors, b, trans=3)


def test_lu_solve_batches_and_differentiates():
    a = _matrix(3, 4, 4) + 4 * np.eye(4)
    b = _matrix(3, 4, 2)
    factors = jsl.lu_factor(a)
    np.testing.assert_allclose(jsl.lu_solve(factors, b), np.linalg.solve(a, b), rtol=1e-10)
    check_vmap(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), (a, b), (0, 0), tol=1e-10)
    check_grads(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=1), (a[0], b[0]), order=2,
                modes=["fwd", "rev"])  # fmt: skip


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
def test_solve_matches_scipy(assume_a):
    a = _matrix(4, 4)
    a = a @ a.T + 4 * np.eye(4)
    b = _matrix(4, 2)
    want = scipy.linalg.solve(a, b, assume_a=assume_a)
    check_eager_jit_numpy(lambda a, b: jsl.solve(a, b, assume_a=assume_a), (a, b), want, 1e-10)
    # (symmetric perturbations: 'pos' reads one triangle, its derivative is Cholesky's)
    symmetric = lambda m, b: jsl.solve(m + m.T, b, assume_a=assume_a)
    check_grads(symmetric, (a / 2, b), order=1)


@pytest.mark.parametrize("lower", [False, True])
def test_solve_pos_reads_one_triangle(lower):
    a = _matrix(4, 4)
    a = a @ a.T + 4 * np.eye(4)
    b = _matrix(4)
    triangle = np.tril(a) if lower else np.triu(a)
    np.testing.assert_allclose(jsl.solve(triangle, b, assume_a="pos", lower=lower),
                               np.linalg.solve(a, b), rtol=1e-10)  # fmt: skip
    with pytest.raises(ValueError, match="Expected assume_a to be one of"):
        jsl.solve(a, b, assume_a="xyz")


def test_inv_and_det():
    a = _matrix(2, 4, 4)
    np.testing.assert_allclose(jsl.inv(a), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(jsl.det(a), np.linalg.det(a), rtol=1e-10)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_matches_scipy(output):
    a = _matrix(5, 5)
    t, z = map(np.asarray, jsl.schur(a, output=output))
    want_t, want_z = scipy.linalg.schur(a, output=output)
    np.testing.assert_allclose(t, want_t, atol=1e-10)
    np.testing.assert_allclose(z, want_z, atol=1e-10)
    assert t.dtype == (np.complex128 if output == "complex" else np.float64)
    with pytest.raises(ValueError, match="Expected 'output' to be either"):
        jsl.schur(a, output="x")
    with pytest.raises(TypeError, match="rank at least 2"):
        jsl.schur(np.ones(3))


def test_rsf2csf_matches_scipy():
    t, z = scipy.linalg.schur(_matrix(6, 6))
    want = scipy.linalg.rsf2csf(t, z)
    check_eager_jit_numpy(jsl.rsf2csf, (t, z), want, tol=1e-10)
    got_t, got_z = map(np.asarray, jsl.rsf2csf(t, z))
    np.testing.assert_allclose(np.tril(got_t, -1), 0, atol=1e-12)
    np.testing.assert_allclose(got_z @ got_t @ np.conj(got_z.T), z @ t @ z.T, atol=1e-10)
    batch = np.stack([t, t])
    check_vmap(jsl.rsf2csf, (batch, np.stack([z, z])), (0, 0), tol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_hessenberg_matches_scipy(dtype):
    a = _matrix(5, 5, dtype=dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    want = scipy.linalg.hessenberg(a, calc_q=True)
    check_eager_jit_numpy(lambda a: jsl.hessenberg(a, calc_q=True), (a,), want, tol=tol)
    np.testing.assert_allclose(jsl.hessenberg(a), want[0], atol=tol)
    assert jsl.hessenberg(np.stack([a, a])).shape == (2, 5, 5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_tridiagonal_eigenvalues_match_scipy(dtype):
    d, e = _matrix(7, dtype=dtype), _matrix(6, dtype=dtype)
    want = scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    fun = lambda d, e: jsl.eigh_tridiagonal(d, e, eigvals_only=True)
    check_eager_jit_numpy(fun, (d, e), want.astype(dtype), tol=tol)
    picked = jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4))
    np.testing.assert_allclose(picked, want[2:5], rtol=tol, atol=tol)


def test_eigh_tridiagonal_edges_and_errors():
    # Repeated eigenvalues (a diagonal matrix) and a complex Hermitian off-diagonal.
    np.testing.assert_allclose(
        jsl.eigh_tridiagonal(np.array([2.0, 1, 2]), np.zeros(2), eigvals_only=True), [1, 2, 2]
    )
    e = np.array([1 + 1j, 2j])
    dense = np.diag([1.0, 2, 3]) + np.diag(e, -1) + np.diag(np.conj(e), 1)
    got = jsl.eigh_tridiagonal(np.array([1.0, 2, 3]) + 0j, e, eigvals_only=True)
    np.testing.assert_allclose(got, np.linalg.eigvalsh(dense), rtol=1e-12)
    np.testing.assert_allclose(jsl.eigh_tridiagonal(np.ones(1), np.ones(0), eigvals_only=True), [1])
    with pytest.raises(NotImplementedError, match="select='v'"):
        jsl.eigh_tridiagonal(np.ones(3), np.ones(2), eigvals_only=True, select="v")
    with pytest.raises(TypeError, match="Only float32 and float64"):
        jsl.eigh_tridiagonal(np.ones(3, np.int32), np.ones(2, np.int32), eigvals_only=True)


@pytest.mark.parametrize(
    "d, e",
    [
        (RNG.normal(size=8), RNG.normal(size=7)),
        (np.array([2.0, 1, 2]), np.zeros(2)),  # a repeated eigenvalue
        (np.ones(6), np.full(5, 1e-9)),  # a tight cluster
        (np.array([1.0, 2, 3]) + 0j, np.array([1 + 1j, 2j])),  # Hermitian: conj(e) below
    ],
    ids=["random", "repeated", "cluster", "complex"],
)
def test_eigh_tridiagonal_eigenvectors_are_orthonormal_and_solve_the_problem(d, e):
    w, v = map(np.asarray, jax.jit(jsl.eigh_tridiagonal)(d, e))
    t = np.diag(d.real) + np.diag(np.conj(e), -1) + np.diag(e, 1)
    np.testing.assert_allclose(t @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(np.conj(v.T) @ v, np.eye(len(d)), atol=1e-12)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(t), atol=1e-12)
    _, some = jsl.eigh_tridiagonal(d, e, select="i", select_range=(1, 2))
    assert some.shape == (len(d), 2)
