"""`jnp.linalg`'s QR, eigh and SVD names and what singular values give (pinv, lstsq,
matrix_rank, cond) and `jnp.polyfit`, against NumPy in float64: values, result tuples, dtypes,
jit against eager, vmap against a loop, derivatives, JAX's errors."""

import importlib.util
import pathlib

import numpy as np
import pytest
from helpers import check_vmap

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.errors import TracerBoolConversionError
from tracejit.test_util import check_grads

RNG = np.random.default_rng(3)
A = RNG.normal(size=(4, 3))
H = np.array([[2.0, 1.0, 0.0], [1.0, -3.0, 0.0], [0.0, 0.0, 1.0]])


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _recorded():
    path = pathlib.Path(__file__).parents[1] / "lax" / "make_jax_reference_linalg_spectral.py"
    spec = importlib.util.spec_from_file_location("linalg_spectral_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES, np.load(module.DATA)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes_are_numpys(mode):
    got, want = jnp.linalg.qr(A, mode=mode), np.linalg.qr(A, mode=mode)
    if mode == "r":
        np.testing.assert_allclose(got, want, atol=1e-12)
        return
    assert got._fields == ("Q", "R")
    np.testing.assert_allclose(got.Q, want.Q, atol=1e-12)
    np.testing.assert_allclose(got.R, want.R, atol=1e-12)


def test_qr_errors_and_dtypes():
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'x'"):
        jnp.linalg.qr(A, mode="x")
    h, tau = jnp.linalg.qr(A, mode="raw")
    want_h, want_tau = np.linalg.qr(A, mode="raw")
    np.testing.assert_allclose(h, want_h, atol=1e-12)
    np.testing.assert_allclose(tau, want_tau, atol=1e-12)
    with jax.enable_x64(False):
        assert jnp.linalg.qr(np.eye(2, dtype=np.int32)).Q.dtype == np.float32
        assert jnp.linalg.svd(np.eye(2, dtype=np.int32)).S.dtype == np.float32


@pytest.mark.parametrize("UPLO", [None, "L", "U"])
def test_eigh_and_eigvalsh(UPLO):
    skewed = np.array([[2.0, 7.0], [1.0, -3.0]])
    got = jnp.linalg.eigh(skewed, UPLO=UPLO, symmetrize_input=False)
    assert got._fields == ("eigenvalues", "eigenvectors")
    want = np.linalg.eigh(skewed, UPLO=UPLO or "L")
    np.testing.assert_allclose(got.eigenvalues, want.eigenvalues, atol=1e-12)
    np.testing.assert_allclose(np.abs(got.eigenvectors), np.abs(want.eigenvectors), atol=1e-12)
    np.testing.assert_allclose(
        jnp.linalg.eigvalsh(skewed, UPLO or "L", symmetrize_input=False), want.eigenvalues
    )
    np.testing.assert_allclose(jnp.linalg.eigvalsh(H), np.linalg.eigvalsh(H), atol=1e-12)
    with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U', got X"):
        jnp.linalg.eigh(H, UPLO="X")


@pytest.mark.parametrize("hermitian", [False, True])
def test_svd_is_numpys(hermitian):
    x = H if hermitian else A
    got, want = jnp.linalg.svd(x, hermitian=hermitian), np.linalg.svd(x, hermitian=hermitian)
    assert got._fields == ("U", "S", "Vh")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)
    np.testing.assert_allclose(
        jnp.linalg.svd(x, compute_uv=False, hermitian=hermitian), want.S, atol=1e-12
    )
    np.testing.assert_allclose(jnp.linalg.svdvals(x), np.linalg.svdvals(x), atol=1e-12)
    np.testing.assert_allclose(
        jnp.linalg.svd(x, full_matrices=False, subset_by_index=(1, 3), hermitian=hermitian).S,
        want.S[1:3],
    )
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(
        jnp.linalg.svd(batch, False, False, hermitian=hermitian, subset_by_index=(0, 2)),
        np.linalg.svd(batch, compute_uv=False)[:, :2],
    )


def test_hermitian_svd_of_a_complex_matrix_reassembles():
    z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    z = z + z.conj().T
    u, s, vh = map(np.asarray, jnp.linalg.svd(z, hermitian=True))
    np.testing.assert_allclose((u * s) @ vh, z, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(z, compute_uv=False), atol=1e-12)


def test_pinv_is_numpys():
    deficient = np.outer(np.arange(1.0, 5.0), [1.0, 2.0, 3.0])
    for x in (A, A.T, deficient, H):
        np.testing.assert_allclose(jnp.linalg.pinv(x), np.linalg.pinv(x), atol=1e-12)
        np.testing.assert_allclose(jax.jit(jnp.linalg.pinv)(x), np.linalg.pinv(x), atol=1e-12)
    np.testing.assert_allclose(jnp.linalg.pinv(H, hermitian=True), np.linalg.pinv(H), atol=1e-12)
    m = np.diag([1.0, 1e-3, 1e-9])
    np.testing.assert_allclose(jnp.linalg.pinv(m, rcond=1e-2), np.diag([1.0, 0.0, 0.0]))
    batch = jnp.linalg.pinv(np.stack([m, m]), rtol=np.array([1e-2, 1e-12]))
    np.testing.assert_allclose(batch[1], np.diag([1.0, 1e3, 1e9]), rtol=1e-9)
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        jnp.linalg.pinv(m, rtol=1e-2, rcond=1e-2)


def test_pinv_derivatives_are_jaxs_custom_rule():
    check_grads(jnp.linalg.pinv, (A,), order=2, modes=["fwd", "rev"])
    check_grads(jnp.linalg.pinv, (A.T,), order=1, modes=["fwd", "rev"])
    cases, reference = _recorded()
    _, (x, t) = cases["pinv"]
    _, tangent = jax.jvp(jnp.linalg.pinv, (x,), (t,))
    np.testing.assert_allclose(tangent, reference["pinv/tangent/0"], atol=1e-10)


def test_pinv_vmap_against_a_loop():
    check_vmap(jnp.linalg.pinv, (RNG.normal(size=(3, 4, 2)),), (0,), tol=1e-10, jit=True)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (A, np.ones(4)),
        (A, RNG.normal(size=(4, 2))),
        (A.T, np.ones(3)),
        (np.ones((3, 2)), np.arange(3.0)),
    ],
    ids=["tall", "tall-2d", "wide", "rank-deficient"],
)
def test_lstsq_is_numpys(a, b):
    x, resid, rank, s = jnp.linalg.lstsq(a, b, numpy_resid=True)
    want = np.linalg.lstsq(a, b)
    for got, w in zip((x, resid, rank, s), want, strict=True):
        np.testing.assert_allclose(got, w, atol=1e-12)
    assert np.asarray(rank).dtype == np.int64
    x_jit, resid_jit, *_ = jax.jit(jnp.linalg.lstsq)(a, b)
    np.testing.assert_allclose(x_jit, want[0], atol=1e-12)
    b2 = b if b.ndim == 2 else b[:, None]
    np.testing.assert_allclose(resid_jit, np.sum((a @ want[0].reshape(-1, b2.shape[1]) - b2) ** 2,
                                                  axis=0), atol=1e-12)  # fmt: skip


def test_lstsq_errors():
    with pytest.raises(TypeError, match="3-dimensional array given"):
        jnp.linalg.lstsq(np.ones((2, 3, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Leading dimensions of input arrays must match"):
        jnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(TracerBoolConversionError):
        jax.jit(lambda a, b: jnp.linalg.lstsq(a, b, numpy_resid=True))(A, np.ones(4))


def test_matrix_rank_is_numpys():
    m = np.diag([1.0, 1e-3, 1e-9])
    assert jnp.linalg.matrix_rank(m) == np.linalg.matrix_rank(m) == 3
    assert jnp.linalg.matrix_rank(m, rtol=1e-2) == np.linalg.matrix_rank(m, rtol=1e-2) == 1
    assert jnp.linalg.matrix_rank(m, tol=1e-5) == np.linalg.matrix_rank(m, tol=1e-5) == 2
    assert jnp.linalg.matrix_rank(H, hermitian=True) == 3
    np.testing.assert_array_equal(jnp.linalg.matrix_rank(np.stack([m, np.zeros((3, 3))])), [3, 0])
    assert jnp.linalg.matrix_rank(np.ones(3)) == 1 and jnp.linalg.matrix_rank(np.zeros(3)) == 0
    with pytest.raises(ValueError, match="only one of tol or rtol"):
        jnp.linalg.matrix_rank(m, rtol=1e-2, tol=1e-5)


@pytest.mark.parametrize("p", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
def test_cond_is_numpys(p):
    np.testing.assert_allclose(jnp.linalg.cond(H, p), np.linalg.cond(H, p), rtol=1e-12)
    assert jnp.linalg.cond(np.ones((2, 2)), p) == (0.0 if p == -2 else np.inf)


X = np.linspace(0.0, 1.0, 7)
Y = X**2 + 0.1 * np.sin(7 * X)


@pytest.mark.parametrize(
    "kwargs", [{}, {"w": np.arange(1.0, 8.0)}, {"rcond": 1e-3}], ids=["plain", "weights", "rcond"]
)
def test_polyfit_is_numpys(kwargs):
    np.testing.assert_allclose(jnp.polyfit(X, Y, 2, **kwargs), np.polyfit(X, Y, 2, **kwargs),
                               rtol=1e-10)  # fmt: skip
    two = np.stack([Y, 2 * Y], 1)
    np.testing.assert_allclose(jnp.polyfit(X, two, 1, **kwargs), np.polyfit(X, two, 1, **kwargs),
                               rtol=1e-10)  # fmt: skip
    fit = jax.jit(lambda x, y: jnp.polyfit(x, y, 2, **kwargs))
    np.testing.assert_allclose(fit(X, Y), np.polyfit(X, Y, 2, **kwargs), rtol=1e-10)


@pytest.mark.parametrize("cov", [True, "unscaled"])
def test_polyfit_covariance_and_full_output(cov):
    for got, want in zip(jnp.polyfit(X, Y, 2, cov=cov), np.polyfit(X, Y, 2, cov=cov), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    got = jnp.polyfit(X, Y, 2, full=True)
    want = np.polyfit(X, Y, 2, full=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def test_polyfit_errors():
    with pytest.raises(ValueError, match="deg >= 0"):
        jnp.polyfit(X, Y, -1)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(X, Y[:3], 1)
    with pytest.raises(ValueError, match="must exceed order"):
        jnp.polyfit(X[:3], Y[:3], 2, cov=True)
