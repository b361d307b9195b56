"""`lax.linalg.qr`, `eigh` and `svd`: their identities (Q R = A with Q unitary and R upper
triangular, A v = v diag(w), U S Vᴴ = A) against NumPy/SciPy in float64 and complex128 and
their dtypes in 32 bits, batched, jit against eager, vmap against a loop, derivatives to second
order by finite differences (well-separated spectra) and against JAX's recorded tangents where
the convention is JAX's, and JAX's NaNs for non-finite input."""

import importlib.util
import pathlib

import numpy as np
import pytest
import scipy.linalg
from helpers import check_vmap, jaxpr_text

import tracejit as jax
from tracejit._src.lax import linalg_spectral
from tracejit.lax import linalg
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
_SPEC = importlib.util.spec_from_file_location(
    "linalg_spectral_reference",
    pathlib.Path(__file__).parent / "make_jax_reference_linalg_spectral.py",
)
_RECORDER = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_RECORDER)
CASES = _RECORDER.CASES
REFERENCE = np.load(_RECORDER.DATA)


def _matrix(*shape, dtype=np.float64):
    a = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _hermitian(*batch, n=4, dtype=np.float64):
    a = _matrix(*batch, n, n, dtype=dtype)
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _tol(dtype):
    return 1e-4 if np.finfo(dtype).bits == 32 else 1e-11


def _adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


# --- qr -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)], ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_reassembles_with_unitary_q_and_upper_r(dtype, shape, full_matrices):
    a = _matrix(2, *shape, dtype=dtype)
    tol = _tol(dtype)
    for fun in (linalg.qr, jax.jit(linalg.qr, static_argnames="full_matrices")):
        q, r = map(np.asarray, fun(a, full_matrices=full_matrices))
        k = shape[0] if full_matrices else min(shape)
        assert q.shape == (2, shape[0], k) and r.shape == (2, k, shape[1])
        assert q.dtype == r.dtype == dtype
        np.testing.assert_allclose(q @ r, a, atol=tol * 10)
        np.testing.assert_allclose(_adjoint(q) @ q, np.broadcast_to(np.eye(k), (2, k, k)),
                                   atol=tol * 10)  # fmt: skip
        np.testing.assert_array_equal(np.tril(r, -1), 0)
        mode = "complete" if full_matrices else "reduced"
        np.testing.assert_allclose(r, np.linalg.qr(a, mode=mode)[1], atol=tol * 10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)], ids=str)
def test_pivoted_qr_matches_scipy(shape):
    a = _matrix(*shape)
    for fun in (linalg.qr, jax.jit(lambda a, **kw: linalg.qr(a, **kw), static_argnames="pivoting")):
        q, r, p = map(np.asarray, fun(a, pivoting=True))
        _want_q, want_r, want_p = scipy.linalg.qr(a, pivoting=True)
        assert p.dtype == np.int32
        np.testing.assert_array_equal(p, want_p)
        np.testing.assert_allclose(r, want_r, atol=1e-12)
        np.testing.assert_allclose(q @ r, a[:, p], atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 2), (3, 3), (2, 4), (4, 3)], ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_derivatives(shape, full_matrices):
    fun = lambda a: linalg.qr(a, full_matrices=full_matrices)
    check_grads(fun, (_matrix(*shape),), order=2, modes=["fwd", "rev"])
    check_grads(fun, (_matrix(*shape, dtype=np.complex128),), order=1, modes=["fwd", "rev"])


def test_pivoted_qr_derivative_is_that_of_the_permuted_matrix():
    check_grads(lambda a: linalg.qr(a, pivoting=True)[:2], (_matrix(3, 4),), order=1)


@pytest.mark.parametrize("case", ["qr_full_tall", "qr_wide"])
def test_qr_tangents_are_jaxs(case):
    _, (x, t) = CASES[case]
    primal, tangent = jax.jvp(lambda x: linalg.qr(x), (x,), (t,))
    for i, (p, dp) in enumerate(zip(primal, tangent, strict=True)):
        np.testing.assert_allclose(p, REFERENCE[f"{case}/primal/{i}"], atol=1e-12)
        np.testing.assert_allclose(dp, REFERENCE[f"{case}/tangent/{i}"], atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_householder_form_and_product_are_lapacks(dtype):
    a = _matrix(2, 4, 3, dtype=dtype)
    for geqrf, product in (
        (linalg_spectral.geqrf, linalg.householder_product),
        (jax.jit(linalg_spectral.geqrf), jax.jit(linalg.householder_product)),
    ):
        h, taus = map(np.asarray, geqrf(a))
        want_h, want_taus = np.linalg.qr(a, mode="raw")
        np.testing.assert_allclose(h, np.swapaxes(want_h, -1, -2), atol=_tol(dtype))
        np.testing.assert_allclose(taus, want_taus, atol=_tol(dtype))
        np.testing.assert_allclose(product(h, taus), np.linalg.qr(a)[0], atol=_tol(dtype) * 10)
    check_vmap(linalg.householder_product, (h, taus[0]), (0, None), tol=1e-5)
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        linalg.householder_product(np.ones((2, 3), dtype), taus[0, :2])
    with pytest.raises(NotImplementedError, match="'geqrf' not implemented"):
        jax.jvp(linalg_spectral.geqrf, (a,), (a,))


# --- eigh -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_diagonalizes_with_ascending_eigenvalues(dtype):
    a = _hermitian(2, 3, dtype=dtype)
    tol = _tol(dtype)
    for fun in (linalg.eigh, jax.jit(linalg.eigh)):
        v, w = map(np.asarray, fun(a))
        assert v.dtype == dtype and w.dtype == np.finfo(dtype).dtype
        np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10)
        np.testing.assert_allclose(_adjoint(v) @ v, np.broadcast_to(np.eye(4), a.shape),
                                   atol=tol * 10)  # fmt: skip
        np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=tol * 10)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_without_symmetrizing_reads_one_triangle(lower):
    a = _hermitian()
    noise = np.triu(_matrix(4, 4), 1) if lower else np.tril(_matrix(4, 4), -1)
    _v, w = linalg.eigh(a + noise, lower=lower, symmetrize_input=False)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=1e-12)


def test_eigh_subset_by_index_keeps_those_eigenvalues():
    a = _hermitian(n=5)
    v, w = linalg.eigh(a, subset_by_index=(1, 3))
    full_w, full_v = np.linalg.eigh(a)
    np.testing.assert_allclose(w, full_w[1:3], atol=1e-12)
    np.testing.assert_allclose(np.abs(_adjoint(full_v[:, 1:3]) @ np.asarray(v)), np.eye(2),
                               atol=1e-10)  # fmt: skip
    with pytest.raises(ValueError, match="subset_by_index"):
        linalg.eigh(a, subset_by_index=(3, 6))


def test_eigh_derivatives():
    check_grads(linalg.eigh, (_hermitian(),), order=2, modes=["fwd", "rev"])

    # complex eigenvectors are unique up to a phase: differentiate what does not depend on it
    def projector(a):
        v, w = linalg.eigh(a)
        return w, v[:, :1] @ jax.numpy.conj(v[:, :1]).T

    check_grads(projector, (_hermitian(n=3, dtype=np.complex128),), order=1)


def test_eigh_tangents_at_repeated_eigenvalues_are_jaxs_infinities():
    _primal, tangent = jax.jvp(linalg.eigh, (np.eye(2),), (np.array([[0.0, 1.0], [1.0, 0.0]]),))
    for i in range(2):
        np.testing.assert_array_equal(tangent[i], REFERENCE[f"eigh_repeated/tangent/{i}"])


# --- svd ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)], ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reassembles(dtype, shape, full_matrices):
    a = _matrix(2, *shape, dtype=dtype)
    tol = _tol(dtype)
    for fun in (linalg.svd, jax.jit(linalg.svd, static_argnames="full_matrices")):
        u, s, vh = map(np.asarray, fun(a, full_matrices=full_matrices))
        k = min(shape)
        assert s.dtype == np.finfo(dtype).dtype and u.dtype == vh.dtype == dtype
        assert u.shape[-1] == (shape[0] if full_matrices else k)
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=tol * 10)
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                                   atol=tol * 10)  # fmt: skip
        np.testing.assert_allclose(_adjoint(u) @ u, np.broadcast_to(np.eye(u.shape[-1]),
                                   u.shape[:-2] + (u.shape[-1],) * 2), atol=tol * 10)  # fmt: skip
    np.testing.assert_allclose(
        linalg.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), atol=tol * 10
    )


def test_svd_subset_by_index():
    a = _matrix(5, 4)
    u, s, vh = linalg.svd(a, full_matrices=False, subset_by_index=(1, 3))
    want = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(s, want[1:3], atol=1e-12)
    np.testing.assert_allclose(np.asarray(u).T @ a @ np.asarray(vh).T, np.diag(want[1:3]),
                               atol=1e-12)  # fmt: skip
    with pytest.raises(ValueError, match="cannot both be set"):
        linalg.svd(a, subset_by_index=(0, 2))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)], ids=str)
def test_svd_derivatives(shape):
    a = _matrix(*shape)
    check_grads(lambda a: linalg.svd(a, full_matrices=False), (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda a: linalg.svd(a, compute_uv=False), (a,), order=2, modes=["fwd", "rev"])

    def phase_free(a):  # complex singular vectors are unique up to a common phase per pair
        u, s, vh = linalg.svd(a, full_matrices=False)
        return s, u @ vh

    check_grads(phase_free, (_matrix(*shape, dtype=np.complex128),), order=1)


@pytest.mark.parametrize("case", ["svd_repeated", "svd_tall"])
def test_svd_tangents_are_jaxs(case):
    _, (x, t) = CASES[case]
    full = case == "svd_repeated"
    _, tangent = jax.jvp(lambda x: linalg.svd(x, full_matrices=full), (x,), (t,))
    for i, dt in enumerate(tangent):
        np.testing.assert_allclose(dt, REFERENCE[f"{case}/tangent/{i}"], atol=1e-10)


def test_full_svd_of_a_non_square_matrix_has_no_derivative_as_in_jax():
    with pytest.raises(NotImplementedError, match="full matrices"):
        jax.jvp(linalg.svd, (np.ones((3, 2)),), (np.ones((3, 2)),))


# --- all three ------------------------------------------------------------------------------


def test_vmap_against_a_loop():
    check_vmap(linalg.qr, (_matrix(3, 4, 2),), (0,), tol=1e-12, jit=True)
    check_vmap(linalg.eigh, (_hermitian(3),), (0,), tol=1e-12, jit=True)
    check_vmap(lambda a: linalg.svd(a, full_matrices=False), (_matrix(2, 3, 4),), (2,),
               tol=1e-12, jit=True)  # fmt: skip


def test_jaxprs_print_as_jaxs():
    assert jaxpr_text(linalg.svd, np.ones((4, 3))) == (
        "{ lambda ; a:f64[4,3]. let\n"
        "    b:f64[3] c:f64[4,4] d:f64[3,3] = svd[\n"
        "      algorithm=None\n"
        "      compute_uv=True\n"
        "      full_matrices=True\n"
        "      subset_by_index=None\n"
        "    ] a\n"
        "  in (c, b, d) }"
    )
    assert jaxpr_text(linalg.qr, np.ones((4, 3))) == (
        "{ lambda ; a:f64[4,3]. let\n"
        "    b:f64[4,4] c:f64[4,3] = qr[full_matrices=True pivoting=False use_magma=None] a\n"
        "  in (b, c) }"
    )
    assert jaxpr_text(linalg.eigh, np.ones((3, 3))) == (
        "{ lambda ; a:f64[3,3]. let\n"
        "    b:f64[3,3] = transpose[permutation=(1, 0)] a\n"
        "    c:f64[3,3] = add a b\n"
        "    d:f64[3,3] = div c 2.0:f64[]\n"
        "    e:f64[3,3] f:f64[3] = eigh[\n"
        "      algorithm=None\n"
        "      lower=True\n"
        "      sort_eigenvalues=True\n"
        "      subset_by_index=None\n"
        "    ] d\n"
        "  in (e, f) }"
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_matrices_give_nans_and_leave_the_rest_of_the_batch(bad):
    a = _hermitian(2, n=3)
    a[0, 1, 1] = bad
    for eigh, svd in ((linalg.eigh, linalg.svd), (jax.jit(linalg.eigh), jax.jit(linalg.svd))):
        v, w = map(np.asarray, eigh(a))
        assert np.isnan(v[0]).all() and np.isnan(w[0]).all()
        np.testing.assert_allclose(w[1], np.linalg.eigvalsh(a[1]), atol=1e-12)
        u, s, vh = map(np.asarray, svd(a))
        assert np.isnan(u[0]).all() and np.isnan(s[0]).all() and np.isnan(vh[0]).all()
        np.testing.assert_allclose(s[1], np.linalg.svd(a[1], compute_uv=False), atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (0, 2, 2)], ids=str)
def test_empty_matrices(shape):
    a = np.zeros(shape)
    for fun in (lambda f: f, jax.jit):
        q, r = fun(linalg.qr)(a)
        assert q.shape == (*shape[:-2], shape[-2], shape[-2]) and r.shape == shape
        _u, s, _vh = fun(linalg.svd)(a)
        assert s.shape == (*shape[:-2], min(shape[-2:]))
        if shape[-1] == shape[-2]:
            v, w = fun(linalg.eigh)(a)
            assert v.shape == shape and w.shape == shape[:-1]


def test_bad_operands():
    for fun in (linalg.qr, linalg.eigh, linalg.svd):
        with pytest.raises(TypeError, match="rank at least 2"):
            fun(np.ones(3))
        with pytest.raises(TypeError, match="does not accept dtype int32"):
            fun(np.eye(2, dtype=np.int32))
    with pytest.raises(TypeError, match="square"):
        linalg.eigh(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape \[..., n, n\]"):
        linalg.eigh(np.ones((2, 3)), symmetrize_input=False)


def test_jaxs_algorithm_enums_name_what_there_is():
    """`SvdAlgorithm.DEFAULT` is LAPACK's SVD, the one tracejit has (as JAX's choice on CPU);
    the other algorithms and eigh implementations refuse with NotImplementedError."""
    x = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    s = linalg.svd(x, algorithm=linalg.SvdAlgorithm.DEFAULT, compute_uv=False)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=1e-6)
    assert [a.value for a in linalg.SvdAlgorithm] == [
        "default",
        "QR",
        "Jacobi",
        "polar",
        "divide_and_conquer",
    ]
    with pytest.raises(NotImplementedError, match="LAPACK's only"):
        linalg.svd(x, algorithm=linalg.SvdAlgorithm.JACOBI)
    with pytest.raises(NotImplementedError, match="LAPACK's only"):
        linalg.eigh(x, implementation=linalg.EighImplementation.QDWH)
