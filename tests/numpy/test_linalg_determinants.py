"""`jnp.linalg.det`, `slogdet`, `eig`, `eigvals`, `tensorinv`, `tensorsolve` and `jnp.roots`
against NumPy in float64/complex128: values, JAX's dtypes, batches, jit, vmap, derivatives
(det's gradient at singular matrices is the adjugate, finite, as JAX's), and JAX's errors."""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.errors import ConcretizationTypeError
from tracejit.test_util import check_grads

RNG = np.random.default_rng(1)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _matrix(*shape, dtype=np.float64):
    a = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _adjugate(a):
    """adj(a) by cofactors: adj(a)[j, i] = (-1)^(i+j) det(a without row i and column j)."""
    n = a.shape[0]
    cofactors = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            cofactors[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return cofactors.T


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_det_matches_numpy(n, dtype):
    a = _matrix(2, n, n, dtype=dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    check_eager_jit_numpy(jnp.linalg.det, (a,), np.linalg.det(a).astype(dtype), tol=tol)


def test_det_edges_and_dtypes():
    assert jnp.linalg.det(np.zeros((0, 0), np.float32)) == 1
    assert jnp.linalg.det(np.zeros((0, 0), np.float32)).dtype == np.float32
    assert jnp.linalg.det(np.eye(5, dtype=np.int32)).dtype == np.float32  # (JAX's, under x64 too)
    assert jnp.linalg.det(np.eye(5, dtype=np.int64)).dtype == np.float64
    singular = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 0, 3]])
    assert jnp.linalg.det(singular) == 0
    assert np.isnan(jnp.linalg.det(np.full((4, 4), np.nan)))
    with pytest.raises(ValueError, match=r"must have shape \[..., n, n\], got \(2, 3\)"):
        jnp.linalg.det(np.ones((2, 3)))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_det_derivatives(n):
    a = _matrix(n, n)
    check_grads(jnp.linalg.det, (a,), order=2, modes=["fwd", "rev"])
    np.testing.assert_allclose(jax.grad(jnp.linalg.det)(a), _adjugate(a).T, rtol=1e-9)
    check_grads(jnp.linalg.det, (_matrix(n, n, dtype=np.complex128),), order=1)


def test_det_gradient_at_singular_matrices_is_the_finite_adjugate():
    singular = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 0, 3]])
    grad = np.asarray(jax.grad(jnp.linalg.det)(singular))
    np.testing.assert_allclose(grad, _adjugate(singular).T, atol=1e-12)
    assert np.abs(grad).max() > 1  # (a rank n - 1 matrix has a nonzero adjugate)
    np.testing.assert_array_equal(jax.grad(jnp.linalg.det)(np.zeros((4, 4))), np.zeros((4, 4)))


def test_det_batching():
    check_vmap(jnp.linalg.det, (_matrix(3, 5, 5),), (0,), tol=1e-10, jit=True)
    check_vmap(jax.grad(jnp.linalg.det), (_matrix(3, 5, 5),), (0,), tol=1e-10)


@pytest.mark.parametrize("method", ["lu", "qr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_slogdet_matches_numpy(dtype, method):
    a = _matrix(3, 5, 5, dtype=dtype)
    sign, logabsdet = jnp.linalg.slogdet(a, method=method)
    want_sign, want_log = np.linalg.slogdet(a.astype(np.complex128 if a.dtype.kind == "c" else
                                                      np.float64))  # fmt: skip
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(sign, want_sign, rtol=tol)
    np.testing.assert_allclose(logabsdet, want_log, rtol=tol)
    assert sign.dtype == dtype and logabsdet.dtype == np.finfo(dtype).dtype
    jitted = jax.jit(lambda a: jnp.linalg.slogdet(a, method=method))(a)
    np.testing.assert_allclose(jitted.logabsdet, logabsdet, rtol=tol)


def test_slogdet_of_singular_and_empty_matrices():
    sign, logabsdet = jnp.linalg.slogdet(np.array([[1.0, 2], [2, 4]]))
    assert sign == 0 and logabsdet == -np.inf
    assert tuple(jnp.linalg.slogdet(np.zeros((0, 0)))) == (1.0, 0.0)
    with pytest.raises(ValueError, match="Unknown slogdet method 'x'"):
        jnp.linalg.slogdet(np.eye(2), method="x")
    # QR's rounding leaves a tiny pivot: JAX 0.10.2 gives the same (1, -14.444519) in float32
    sign, logabsdet = jnp.linalg.slogdet(np.array([[1.0, 2], [2, 4]], np.float32), method="qr")
    assert sign == 1 and np.isclose(logabsdet, -14.444519, rtol=1e-6)


def test_slogdet_derivatives():
    a = _matrix(4, 4)
    check_grads(lambda a: jnp.linalg.slogdet(a).logabsdet, (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda a: jnp.linalg.slogdet(a, method="qr").logabsdet, (a,), order=1)
    np.testing.assert_allclose(
        jax.grad(lambda a: jnp.linalg.slogdet(a)[1])(a), np.linalg.inv(a).T, rtol=1e-9
    )
    c = _matrix(4, 4, dtype=np.complex128)
    check_grads(lambda a: jnp.linalg.slogdet(a), (c,), order=1, modes=["fwd", "rev"])


def test_eig_and_eigvals():
    a = _matrix(2, 4, 4)
    w, v = jnp.linalg.eig(a)
    np.testing.assert_allclose(np.asarray(a) @ v, np.asarray(v) * np.asarray(w)[..., None, :],
                               atol=1e-10)  # fmt: skip
    np.testing.assert_allclose(jnp.linalg.eigvals(a), w, rtol=1e-12)
    np.testing.assert_allclose(np.sort_complex(w[0]), np.sort_complex(np.linalg.eigvals(a[0])))
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.float32)).dtype == np.complex64
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.int64)).dtype == np.complex128
    check_grads(lambda a: jnp.real(jnp.linalg.eigvals(a)), (_matrix(3, 3),), order=1)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jax.grad(lambda a: jnp.abs(jnp.linalg.eig(a)[1]).sum())(a[0])


def test_tensorinv_and_tensorsolve_match_numpy():
    a = _matrix(6, 2, 3)
    np.testing.assert_allclose(jnp.linalg.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1),
                               rtol=1e-10)  # fmt: skip
    a, b = _matrix(2, 3, 6), _matrix(2, 3)
    want = np.linalg.tensorsolve(a, b)
    check_eager_jit_numpy(jnp.linalg.tensorsolve, (a, b), want, tol=1e-10)
    a = _matrix(6, 2, 3)
    np.testing.assert_allclose(
        jnp.linalg.tensorsolve(a, b.ravel(), axes=(1, 2)),
        np.linalg.tensorsolve(a, b.ravel(), axes=(1, 2)),
        rtol=1e-10,
    )


def test_tensorinv_and_tensorsolve_errors():
    with pytest.raises(ValueError, match="ind must be a positive integer"):
        jnp.linalg.tensorinv(np.eye(4), ind=0)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        jnp.linalg.tensorinv(np.ones((2, 3, 4)), ind=1)
    with pytest.raises(ValueError, match="leading shape of a must match"):
        jnp.linalg.tensorsolve(np.ones((6, 2, 3)), np.ones(6), axes=(0,))
    with pytest.raises(ValueError, match="Input arrays must have prod"):
        jnp.linalg.tensorsolve(np.ones((2, 3, 4)), np.ones((2, 3)))


def test_roots_strips_leading_zeros():
    p = np.array([0, 0, 1.0, -6, 11, -6])
    np.testing.assert_allclose(np.sort(jnp.roots(p).real), [1, 2, 3], rtol=1e-10)
    assert jnp.roots(p).dtype == np.complex128
    assert jnp.roots(np.array([1, 2], np.float32)).dtype == np.complex64
    assert jnp.roots(np.array([3.0])).shape == jnp.roots(np.zeros(3)).shape == (0,)
    trailing = np.sort_complex(np.asarray(jnp.roots(np.array([1.0, -3, 2, 0, 0]))))
    np.testing.assert_allclose(trailing, [0, 0, 1, 2], atol=1e-12)
    with pytest.raises(ValueError, match="rank-1"):
        jnp.roots(np.ones((2, 2)))
    with pytest.raises(ConcretizationTypeError, match="strip_zeros=False"):
        jax.jit(jnp.roots)(p)


def test_roots_without_stripping_gives_nans_for_leading_zeros_under_jit():
    fun = jax.jit(lambda p: jnp.roots(p, strip_zeros=False))
    got = np.asarray(fun(np.array([0, 0, 1.0, -3, 2, 0, 0])))
    assert np.isnan(got[-2:]).all()  # one NaN per leading zero, last
    np.testing.assert_allclose(got[2:4], 0, atol=1e-12)  # zero roots before them
    np.testing.assert_allclose(np.sort(got[:2].real), [1, 2], rtol=1e-10)
    np.testing.assert_allclose(fun(np.array([1.0, -3, 2])), jnp.roots(np.array([1.0, -3, 2])))
    complex_roots = np.asarray(jnp.roots(np.array([1.0, 0, 1])))
    np.testing.assert_allclose(np.sort_complex(complex_roots), [-1j, 1j], atol=1e-12)
