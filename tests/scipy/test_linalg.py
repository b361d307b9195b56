"""`tracejit.scipy.linalg` and `jnp.linalg.cholesky` against SciPy and NumPy in float64:
values, vectors and matrices of right-hand sides, jit, derivatives."""

import numpy as np
import pytest
import scipy.linalg

import tracejit as jax
import tracejit.numpy as jnp
import tracejit.scipy.linalg as jsl
from tracejit.test_util import check_grads

RNG = np.random.default_rng(1)
A = RNG.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
TRI = np.tril(A) + 4 * np.eye(4)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_and_cho_solve_match_scipy(lower):
    np.testing.assert_allclose(
        jsl.cholesky(SPD, lower=lower), scipy.linalg.cholesky(SPD, lower=lower)
    )
    factor = jsl.cho_factor(SPD, lower=lower)
    assert factor[1] is lower
    for b in (RNG.normal(size=4), RNG.normal(size=(4, 3))):
        want = scipy.linalg.cho_solve(scipy.linalg.cho_factor(SPD, lower=lower), b)
        np.testing.assert_allclose(jsl.cho_solve(factor, b), want, rtol=1e-10)
        solve = jax.jit(lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=lower), b))
        np.testing.assert_allclose(solve(SPD, b), want, rtol=1e-10)


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_matches_scipy(trans, lower):
    a = TRI if lower else TRI.T
    for b in (RNG.normal(size=4), RNG.normal(size=(4, 2))):
        want = scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower)
        got = jsl.solve_triangular(a, b, trans=trans, lower=lower)
        np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(ValueError, match="trans"):
        jsl.solve_triangular(a, b, trans="X")


def test_derivatives_through_a_cholesky_solve():
    def solve(a, b):
        return jsl.cho_solve(jsl.cho_factor(a @ a.T + 4 * jnp.eye(4)), b)

    check_grads(solve, (A, RNG.normal(size=(4, 2))), order=2, modes=["fwd", "rev"])
    check_grads(
        lambda a, b: jsl.solve_triangular(a, b, lower=True), (TRI, RNG.normal(size=4)), order=1
    )


def test_jnp_linalg_cholesky():
    np.testing.assert_allclose(jnp.linalg.cholesky(SPD), np.linalg.cholesky(SPD), rtol=1e-12)
    np.testing.assert_allclose(
        jnp.linalg.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T, rtol=1e-12
    )
    assert jnp.linalg.cholesky(np.eye(2, dtype=np.int32)).dtype == np.float32  # as in JAX
    assert np.isnan(jnp.linalg.cholesky(-np.eye(2))).all()
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.cholesky(np.ones(3))
