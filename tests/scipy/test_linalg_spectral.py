"""`tracejit.scipy.linalg`'s qr, qr_multiply, svd, eigh and polar against SciPy in float64
(and their dtypes in float32 and complex128): values, tuple results, jit, JAX's errors."""

import numpy as np
import pytest
import scipy.linalg

import tracejit as jax
import tracejit.scipy.linalg as jsl
from tracejit.test_util import check_grads

RNG = np.random.default_rng(5)
A = RNG.normal(size=(4, 3))


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("mode", ["full", "r", "economic"])
@pytest.mark.parametrize("pivoting", [False, True])
def test_qr_is_scipys(mode, pivoting):
    got = jsl.qr(A, mode=mode, pivoting=pivoting)
    want = scipy.linalg.qr(A, mode=mode, pivoting=pivoting)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'raw'"):
        jsl.qr(A, mode="raw")


@pytest.mark.parametrize(
    ("mode", "c_shape"), [("right", (2, 4)), ("right", (4,)), ("left", (3,)), ("left", (3, 2))]
)
@pytest.mark.parametrize("conjugate", [False, True])
def test_qr_multiply_is_scipys(mode, c_shape, conjugate):
    a = A + 1j * RNG.normal(size=A.shape)
    c = RNG.normal(size=c_shape)
    got = jsl.qr_multiply(a, c, mode=mode, conjugate=conjugate)
    want = scipy.linalg.qr_multiply(a, c, mode=mode, conjugate=conjugate)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)


def test_qr_multiply_shape_errors():
    with pytest.raises(ValueError, match="c @ Q operation"):
        jsl.qr_multiply(A, np.ones((4, 2)), mode="right")
    with pytest.raises(ValueError, match="Q @ c operation"):
        jsl.qr_multiply(A, np.ones(4), mode="left")


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_is_scipys(full_matrices):
    got = jsl.svd(A, full_matrices=full_matrices)
    want = scipy.linalg.svd(A, full_matrices=full_matrices)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)
    np.testing.assert_allclose(jsl.svd(A, compute_uv=False), want[1], atol=1e-12)
    np.testing.assert_allclose(jsl.svd(A, lapack_driver="gesvd")[1], want[1], atol=1e-12)


def test_eigh_is_scipys():
    h = A.T @ A
    w, v = jsl.eigh(h)
    want_w, want_v = scipy.linalg.eigh(h)
    np.testing.assert_allclose(w, want_w, atol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-12)
    np.testing.assert_allclose(jsl.eigh(h, eigvals_only=True), want_w, atol=1e-12)
    for kwargs, message in [
        ({"b": np.eye(3)}, "b=None"),
        ({"type": 2}, "type=1"),
        ({"eigvals": (0, 1)}, "eigvals=None"),
    ]:
        with pytest.raises(NotImplementedError, match=message):
            jsl.eigh(h, **kwargs)


@pytest.mark.parametrize("method", ["svd", "qdwh"])
@pytest.mark.parametrize(("shape", "side"), [((4, 3), "right"), ((3, 3), "right"),
                                             ((3, 5), "left")], ids=str)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_polar_is_scipys(method, shape, side, dtype):
    a = RNG.normal(size=shape)
    if dtype == np.complex128:
        a = a + 1j * RNG.normal(size=shape)
    a = a.astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want_u, want_p = scipy.linalg.polar(a, side=side)
    for fun in (jsl.polar, jax.jit(jsl.polar, static_argnames=("side", "method"))):
        u, p = fun(a, side=side, method=method)
        assert u.dtype == p.dtype == dtype
        np.testing.assert_allclose(u, want_u, atol=tol)
        np.testing.assert_allclose(p, want_p, atol=tol * 10)


def test_polar_of_an_ill_conditioned_matrix_by_qdwh():
    a = RNG.normal(size=(5, 5)) @ np.diag(np.logspace(0, -12, 5)) @ RNG.normal(size=(5, 5))
    u, p = map(np.asarray, jsl.polar(a))
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(u @ p, a, atol=1e-12)
    np.testing.assert_allclose(p, p.T, atol=1e-14)
    assert np.linalg.eigvalsh(p).min() > -1e-12


def test_polar_by_svd_is_differentiable():
    check_grads(lambda a: jsl.polar(a, method="svd"), (A,), order=1, modes=["fwd", "rev"])


def test_polar_errors():
    with pytest.raises(ValueError, match="Unknown polar decomposition method x"):
        jsl.polar(A, method="x")
    with pytest.raises(ValueError, match="`side` must be either 'right' or 'left'"):
        jsl.polar(A, side="x")
    with pytest.raises(NotImplementedError, match="method='qdwh' only supports"):
        jsl.polar(A.T, method="qdwh")
