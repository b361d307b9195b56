"""`lax.linalg`'s general-matrix primitives: `lu_pivots_to_permutation`, `eig`, `schur`,
`hessenberg`, `tridiagonal`, `tridiagonal_solve`. Checked by their identities (A V = V Λ,
A = Z T Zᴴ, Qᴴ A Q Hessenberg or tridiagonal, A x = b) against NumPy/SciPy in float64 and
complex128, eagerly, staged and compiled, under vmap against a loop, with JAX's derivatives,
jaxprs, NaNs and errors."""

import numpy as np
import pytest
import scipy.linalg
from helpers import check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit as jax
from tracejit.lax import linalg
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _matrix(*shape, dtype=np.float64):
    a = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


# --- lu_pivots_to_permutation ---------------------------------------------------------------


def test_lu_pivots_to_permutation_applies_the_swaps_in_order():
    pivots = np.array([[2, 2, 3], [0, 2, 2]], np.int32)
    want = np.array([[2, 0, 3, 1, 4], [0, 2, 1, 3, 4]], np.int32)
    fun = lambda p: linalg.lu_pivots_to_permutation(p, 5)
    check_eager_jit_numpy(fun, (pivots,), want)
    check_vmap(fun, (pivots,), (0,))
    assert jaxpr_text(fun, pivots[0]) == (
        "{ lambda ; a:i32[3]. let\n"
        "    b:i32[5] = lu_pivots_to_permutation[permutation_size=5] a\n"
        "  in (b,) }"
    )


def test_lu_pivots_to_permutation_matches_lus_permutation():
    _, pivots, permutation = linalg.lu(_matrix(3, 5, 5))
    np.testing.assert_array_equal(linalg.lu_pivots_to_permutation(pivots, 5), permutation)


def test_lu_pivots_to_permutation_bad_input():
    with pytest.raises(TypeError, match="int32"):
        linalg.lu_pivots_to_permutation(np.array([1, 2], np.int64), 3)
    with pytest.raises(TypeError, match="rank at least 1"):
        linalg.lu_pivots_to_permutation(np.array(1, np.int32), 3)
    with pytest.raises(ValueError, match="has to exceed"):
        linalg.lu_pivots_to_permutation(np.array([1, 2, 2], np.int32), 2)


# --- eig --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_satisfies_its_eigen_equations(dtype):
    a = _matrix(2, 4, 4, dtype=dtype)
    tol = _tol(dtype)
    for fun in (linalg.eig, jax.jit(linalg.eig)):
        w, left, right = map(np.asarray, fun(a))
        assert w.dtype == left.dtype == right.dtype == np.result_type(dtype, np.complex64)
        np.testing.assert_allclose(a @ right, right * w[..., None, :], atol=tol * 10)
        adjoint = lambda m: np.conj(np.swapaxes(m, -1, -2))
        np.testing.assert_allclose(adjoint(left) @ a, w[..., :, None] * adjoint(left),
                                   atol=tol * 10)  # fmt: skip
        np.testing.assert_allclose(np.linalg.norm(right, axis=-2), 1, rtol=tol)
        np.testing.assert_allclose(w, np.linalg.eigvals(a.astype(np.complex128)), rtol=tol * 10)


def test_eig_outputs_follow_the_flags_and_print_as_jax():
    a = _matrix(3, 3)
    assert len(linalg.eig(a, compute_left_eigenvectors=False)) == 2
    only = linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(only) == 1
    assert jaxpr_text(lambda a: linalg.eig(a, compute_left_eigenvectors=False), a) == (
        "{ lambda ; a:f64[3,3]. let\n"
        "    b:c128[3] c:c128[3,3] = eig[\n"
        "      compute_left_eigenvectors=False\n"
        "      compute_right_eigenvectors=True\n"
        "      enable_eigvec_derivs=False\n"
        "      implementation=None\n"
        "    ] a\n"
        "  in (b, c) }"
    )


def test_eig_of_nonfinite_and_empty_matrices():
    w, _, right = linalg.eig(np.stack([np.full((2, 2), np.nan), np.eye(2)]))
    assert np.isnan(np.asarray(w)[0]).all() and np.isnan(np.asarray(right)[0]).all()
    np.testing.assert_allclose(w[1], [1, 1])
    assert [x.shape for x in jax.jit(linalg.eig)(np.zeros((0, 0)))] == [(0,), (0, 0), (0, 0)]


def test_eig_batching_against_a_loop():
    check_vmap(linalg.eig, (_matrix(3, 4, 4),), (0,), tol=1e-10, jit=True)


def test_eigenvalue_derivatives():
    eigvals = lambda a: linalg.eig(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=False
    )[0]
    check_grads(eigvals, (_matrix(3, 3),), order=2, modes=["fwd", "rev"])
    check_grads(eigvals, (_matrix(3, 3, dtype=np.complex128),), order=1)


def test_eigenvector_derivatives_need_the_opt_in():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jax.jvp(linalg.eig, (_matrix(3, 3),), (_matrix(3, 3),))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigenvector_derivatives_satisfy_the_differentiated_equations(dtype):
    """A dv + dA v = dw v + w dv for the right vectors, the same for Aᴴ and the left ones, and
    the vectors stay of unit norm; for a real matrix with real eigenvalues, finite differences
    too."""
    a, da = _matrix(4, 4, dtype=dtype), _matrix(4, 4, dtype=dtype)
    fun = lambda a: linalg.eig(a, enable_eigvec_derivs=True)
    (w, u, v), (dw, du, dv) = (list(map(np.asarray, x)) for x in jax.jvp(fun, (a,), (da,)))
    np.testing.assert_allclose(a @ dv + da @ v, dv * w + v * dw, atol=1e-10)
    ah, dah = np.conj(a.T), np.conj(da.T)
    np.testing.assert_allclose(ah @ du + dah @ u, du * np.conj(w) + u * np.conj(dw), atol=1e-10)
    np.testing.assert_allclose(np.real(np.sum(np.conj(v) * dv, axis=0)), 0, atol=1e-12)


def test_eigenvector_derivatives_against_finite_differences():
    a = np.diag([1.0, 2.0, 4.0]) + 0.2 * _matrix(3, 3)
    fun = lambda a: [jax.numpy.real(x) for x in linalg.eig(a, enable_eigvec_derivs=True)]
    check_grads(fun, (a,), order=1, modes=["fwd", "rev"])


def test_eig_bad_input():
    with pytest.raises(TypeError, match="eig does not accept dtype int32"):
        linalg.eig(np.eye(2, dtype=np.int32))
    with pytest.raises(ValueError, match=r"must be a square matrix. Got shape \(2, 3\)"):
        linalg.eig(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="LAPACK"):
        linalg.eig(np.eye(2), use_magma=True)


# --- schur ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_schur_reconstructs_and_matches_scipy(dtype):
    a = _matrix(2, 4, 4, dtype=dtype)
    tol = _tol(dtype)
    output = "complex" if np.issubdtype(dtype, np.complexfloating) else "real"
    for fun in (linalg.schur, jax.jit(linalg.schur)):
        t, z = map(np.asarray, fun(a))
        assert t.dtype == z.dtype == dtype
        np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=tol * 10)
        for m, got in zip(a, t, strict=True):
            want, _ = scipy.linalg.schur(m, output=output)
            np.testing.assert_allclose(got, want, atol=tol * 10)
    assert np.allclose(np.tril(t, -2 if output == "real" else -1), 0)


def test_schur_options_as_jax():
    a = _matrix(3, 3)
    (t,) = linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_allclose(t, linalg.schur(a)[0])
    with pytest.raises(NotImplementedError, match="sort feature"):
        linalg.schur(a, sort_eig_vals=True)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.jvp(linalg.schur, (a,), (a,))
    with pytest.raises(ValueError, match="square"):
        linalg.schur(np.ones((2, 3)))
    t, z = linalg.schur(np.full((2, 2), np.nan))
    assert np.isnan(np.asarray(z)).all() and np.isnan(np.asarray(t)[0]).all()
    check_vmap(linalg.schur, (_matrix(3, 3, 3),), (0,), tol=1e-10)


# --- hessenberg, tridiagonal ------------------------------------------------------------------


def _householder_product(reflectors, taus, first_row):
    """Q = H₁ ⋯ Hₖ from LAPACK's reflectors stored below row `first_row` + column (one matrix)."""
    n = reflectors.shape[0]
    q = np.eye(n, dtype=reflectors.dtype)
    for j, tau in enumerate(taus):
        v = np.zeros(n, reflectors.dtype)
        v[j + first_row] = 1
        v[j + first_row + 1 :] = reflectors[j + first_row + 1 :, j]
        q = q @ (np.eye(n) - tau * np.outer(v, np.conj(v)))
    return q


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_reduces_and_matches_lapack(dtype):
    a = _matrix(2, 5, 5, dtype=dtype)
    for fun in (linalg.hessenberg, jax.jit(linalg.hessenberg)):
        packed, taus = map(np.asarray, fun(a))
        assert packed.dtype == taus.dtype == dtype and taus.shape == (2, 4)
        for m, p, tau in zip(a, packed, taus, strict=True):
            q = _householder_product(p, tau, 1)
            h = np.triu(p, -1)
            np.testing.assert_allclose(q @ h @ np.conj(q.T), m, atol=_tol(dtype) * 10)
            np.testing.assert_allclose(h, scipy.linalg.hessenberg(m), atol=_tol(dtype) * 10)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'hessenberg'"):
        jax.jvp(linalg.hessenberg, (a,), (a,))
    check_vmap(linalg.hessenberg, (a,), (0,), tol=1e-5)


def test_hessenberg_of_small_matrices():
    packed, taus = linalg.hessenberg(np.ones((1, 1)))
    assert packed.shape == (1, 1) and taus.shape == (0,)
    packed, taus = jax.jit(linalg.hessenberg)(np.zeros((0, 0)))
    assert packed.shape == (0, 0) and taus.shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reduces_a_hermitian_matrix(dtype, lower):
    a = _matrix(5, 5, dtype=dtype)
    a = a + np.conj(a.T)
    for fun in (linalg.tridiagonal, jax.jit(linalg.tridiagonal, static_argnames="lower")):
        packed, d, e, taus = map(np.asarray, fun(a, lower=lower))
        real = np.finfo(dtype).dtype
        assert d.dtype == e.dtype == real and taus.dtype == packed.dtype == dtype
        t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
        want = scipy.linalg.eigvalsh(a)
        np.testing.assert_allclose(np.linalg.eigvalsh(t), want, rtol=_tol(dtype) * 10,
                                   atol=_tol(dtype) * 10)  # fmt: skip
        if lower:
            q = _householder_product(packed, taus, 1)
            np.testing.assert_allclose(np.conj(q.T) @ a @ q, t, atol=_tol(dtype) * 10)


def test_tridiagonal_edges_and_errors():
    _, d, e, taus = linalg.tridiagonal(np.ones((1, 1)))
    assert d.shape == (1,) and e.shape == taus.shape == (0,)
    with pytest.raises(ValueError, match="square"):
        linalg.tridiagonal(np.zeros((0, 0)))
    with pytest.raises(TypeError, match="tridiagonal does not accept dtype int32"):
        linalg.tridiagonal(np.eye(2, dtype=np.int32))
    a = _matrix(3, 4, 4)
    check_vmap(linalg.tridiagonal, (a + np.swapaxes(a, 1, 2),), (0,), tol=1e-10)


# --- tridiagonal_solve ------------------------------------------------------------------------


def _diagonals(*batch, n=5, dtype=np.float64):
    dl, d, du = (_matrix(*batch, n, dtype=dtype) for _ in range(3))
    return dl, d + 4, du


def _dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve_matches_a_dense_solve(dtype):
    dl, d, du = _diagonals(dtype=dtype)
    b = _matrix(5, 3, dtype=dtype)
    want = np.linalg.solve(_dense(dl, d, du), b)
    check_eager_jit_numpy(linalg.tridiagonal_solve, (dl, d, du, b), want, tol=_tol(dtype))


def test_tridiagonal_solve_pivots_singular_and_perturbed():
    # d[0] = 0 needs a row swap (gtsv pivots).
    x = linalg.tridiagonal_solve(np.array([0, 1.0]), np.array([0, 0.0]), np.array([1, 0.0]),
                                 np.ones((2, 1)))  # fmt: skip
    np.testing.assert_allclose(x, [[1], [1]])
    zeros = np.zeros(2)
    assert np.isnan(
        np.asarray(linalg.tridiagonal_solve(zeros, zeros, zeros, np.ones((2, 1))))
    ).all()
    perturbed = linalg.tridiagonal_solve(
        zeros, zeros, zeros, np.ones((2, 1)), perturb_singular=True
    )
    np.testing.assert_allclose(perturbed, 1 / np.finfo(np.float64).tiny)  # JAX's value


def test_tridiagonal_solve_batching_and_derivatives():
    dl, d, du = _diagonals(3)
    b = _matrix(3, 5, 2)
    check_vmap(linalg.tridiagonal_solve, (dl, d, du, b), (0, 0, 0, 0), tol=1e-10, jit=True)
    check_vmap(linalg.tridiagonal_solve, (dl[0], d, du[0], b), (None, 0, None, 0), tol=1e-10)
    check_grads(linalg.tridiagonal_solve, (dl[0], d[0], du[0], b[0]), order=2,
                modes=["fwd", "rev"])  # fmt: skip
    check_grads(linalg.tridiagonal_solve, _diagonals(dtype=np.complex128) + (b[0] + 1j,),
                order=1)  # fmt: skip


def test_tridiagonal_solve_bad_input():
    dl, d, du = _diagonals()
    with pytest.raises(TypeError, match="rank at least 2"):
        linalg.tridiagonal_solve(dl, d, du, np.ones(5))
    with pytest.raises(TypeError, match="same dtypes"):
        linalg.tridiagonal_solve(dl.astype(np.float32), d, du, np.ones((5, 1)))
    with pytest.raises(TypeError, match="same shape"):
        linalg.tridiagonal_solve(dl[:4], d, du, np.ones((5, 1)))
    with pytest.raises(TypeError, match="leading ndim-1 dimensions"):
        linalg.tridiagonal_solve(dl, d, du, np.ones((4, 1)))
    with pytest.raises(TypeError, match="batch dimensions"):
        linalg.tridiagonal_solve(dl, d, du, np.ones((2, 5, 1)))
    with pytest.raises(TypeError, match="does not accept dtype int64"):
        linalg.tridiagonal_solve(*(np.ones(2, np.int64),) * 3, np.ones((2, 1), np.int64))
