"""`tracejit.scipy.linalg.expm`, `expm_frechet`, `sqrtm`, `funm` and `solve_sylvester` against
SciPy in float64 (and float32 for expm): every Padé degree and the scaling, JAX's NaNs past
`max_squarings`, batches, jit, derivatives to second order, JAX's dtypes and errors."""

import numpy as np
import pytest
import scipy.linalg
from helpers import check_eager_jit_numpy, check_vmap

import tracejit as jax
import tracejit.numpy as jnp
import tracejit.scipy.linalg as jsl
from tracejit.test_util import check_grads

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _matrix(*shape, dtype=np.float64):
    a = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


# 1-norms in the range of each Padé degree (3, 5, 7, 9) and of 13 with 0 and several squarings.
NORMS = [0.01, 0.2, 0.8, 2.0, 5.0, 40.0]


@pytest.mark.parametrize("norm", NORMS)
def test_expm_matches_scipy_at_every_degree(norm):
    a = _matrix(4, 4)
    a = a * norm / np.abs(a).sum(0).max()
    want = scipy.linalg.expm(a)
    check_eager_jit_numpy(jsl.expm, (a,), want, tol=1e-12 * max(1, norm))
    got32 = jsl.expm(a.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(
        got32, want, rtol=2e-5 * max(1, norm), atol=2e-5 * np.abs(want).max()
    )


def test_expm_complex_batched_and_triangular():
    c = _matrix(2, 3, 3, dtype=np.complex128)
    np.testing.assert_allclose(jsl.expm(c), scipy.linalg.expm(c), rtol=1e-12)
    check_vmap(jsl.expm, (_matrix(3, 3, 3),), (0,), tol=1e-12)
    upper = np.triu(_matrix(4, 4)) * 3
    np.testing.assert_allclose(jsl.expm(upper, upper_triangular=True), scipy.linalg.expm(upper),
                               rtol=1e-12)  # fmt: skip
    assert jsl.expm(np.eye(3, dtype=np.int32)).dtype == np.float32  # JAX's
    assert jsl.expm(np.zeros((0, 0))).shape == (0, 0)


def test_expm_overflow_and_too_many_squarings_as_jax():
    big = np.diag([800.0, 1.0])
    np.testing.assert_allclose(jsl.expm(big), [[np.inf, 0], [0, np.e]], rtol=1e-13)
    assert np.isnan(np.asarray(jsl.expm(big, max_squarings=2))).all()
    assert np.isnan(np.asarray(jsl.expm(np.full((2, 2), np.nan)))).all()
    with pytest.raises(ValueError, match="Expected A to be a \\(batched\\) square matrix"):
        jsl.expm(np.ones((2, 3)))


@pytest.mark.parametrize("norm", [0.1, 3.0, 20.0])
def test_expm_derivatives(norm):
    a = _matrix(3, 3)
    a = a * norm / np.abs(a).sum(0).max()
    check_grads(jsl.expm, (a,), order=2, modes=["fwd", "rev"], rtol=1e-4, atol=1e-4)


def test_expm_frechet_matches_scipy():
    a, e = _matrix(4, 4), _matrix(4, 4)
    want = scipy.linalg.expm_frechet(a, e)
    check_eager_jit_numpy(jsl.expm_frechet, (a, e), want, tol=1e-11)
    only = jsl.expm_frechet(a, e, compute_expm=False)
    np.testing.assert_allclose(only, want[1], rtol=1e-11)
    assert jsl.expm_frechet(np.stack([a, a]), np.stack([e, e]))[1].shape == (2, 4, 4)
    with pytest.raises(ValueError, match="expected A and E to be the same shape"):
        jsl.expm_frechet(a, np.ones((2, 2)))


def test_sqrtm_matches_scipy():
    # (no eigenvalue on the negative real axis, where the principal root is not defined)
    a = _matrix(4, 4) + 4 * np.eye(4)
    assert (np.linalg.eigvals(a).real > 0).all()
    for m in (a, a @ a.T, _matrix(3, 3, dtype=np.complex128) + 3 * np.eye(3)):
        want = scipy.linalg.sqrtm(m).astype(np.complex128)
        check_eager_jit_numpy(jsl.sqrtm, (m,), want, tol=1e-10)
        root = np.asarray(jsl.sqrtm(m))
        np.testing.assert_allclose(root @ root, m, atol=1e-10)
    assert jsl.sqrtm(a.astype(np.float32)).dtype == np.complex64
    with pytest.raises(NotImplementedError, match="Blocked version"):
        jsl.sqrtm(a, blocksize=2)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.grad(lambda a: jnp.real(jsl.sqrtm(a)).sum())(a)


@pytest.mark.parametrize("func", [jnp.exp, jnp.sin, lambda x: x**3 + 2 * x])
def test_funm_matches_scipy(func):
    a = _matrix(4, 4)
    reference = {jnp.exp: np.exp, jnp.sin: np.sin}.get(func, func)
    want = scipy.linalg.funm(a, reference).astype(np.complex128)
    check_eager_jit_numpy(lambda a: jsl.funm(a, func), (a,), want, tol=1e-10)
    _, error = jsl.funm(a, func, disp=False)
    # (an estimate: the Schur forms differ by a unitary similarity, so only its size agrees)
    np.testing.assert_allclose(error, scipy.linalg.funm(a, reference, disp=False)[1], rtol=0.5)
    assert jsl.funm(a.astype(np.float32), func).dtype == np.complex64


@pytest.mark.parametrize("method", ["schur", "eigen"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_solve_sylvester_matches_scipy(method, dtype):
    a, c = _matrix(3, 3, dtype=dtype), _matrix(3, 4, dtype=dtype)
    b = _matrix(4, 4, dtype=dtype) + 5 * np.eye(4)
    want = scipy.linalg.solve_sylvester(a, b, c)
    fun = lambda a, b, c: jsl.solve_sylvester(a, b, c, method=method)
    check_eager_jit_numpy(fun, (a, b, c), want, tol=1e-9)
    batch = [np.stack([x, 2 * x]) for x in (a, b, c)]
    check_vmap(fun, batch, (0, 0, 0), tol=1e-9)


def test_solve_sylvester_singular_and_errors():
    assert np.isnan(np.asarray(jsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2))))).all()
    x = jsl.solve_sylvester(np.eye(2, dtype=int), np.eye(2, dtype=int), np.ones((2, 2), int))
    np.testing.assert_allclose(x, 0.5 * np.ones((2, 2)))
    with pytest.raises(ValueError, match="Unrecognized method x"):
        jsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="x")
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        jsl.solve_sylvester(np.ones((2, 3)), np.eye(3), np.ones((3, 3)))
