"""`lax.linalg.symmetric_product`, `ormqr` and `cholesky_update`: checked by what they compute
(NumPy's products, the Q of the QR factorization, the updated Gram matrix), eagerly, under
`jit` and `vmap`, with JAX 0.10.2's jaxprs (the printouts below are JAX's for the same calls)
and errors; as in JAX none is differentiable and `cholesky_update` does not batch."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.lax import linalg

RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 5)).astype(np.float32)
_M = RNG.normal(size=(3, 3))
C = (_M + _M.T).astype(np.float32)  # symmetric


@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (2.0, 0.5), (-1, 3)])
def test_symmetric_product_is_alpha_a_at_plus_beta_c(alpha, beta):
    expected = alpha * A @ A.T + beta * C
    for fun in (
        linalg.symmetric_product,
        jax.jit(linalg.symmetric_product, static_argnames=("alpha", "beta")),
    ):
        out = fun(A, C, alpha=alpha, beta=beta)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_symmetric_product_symmetrizes_from_the_lower_triangle():
    c = np.tril(C) + 10 * np.triu(np.ones((3, 3), np.float32), 1)  # upper triangle ignored
    out = np.asarray(linalg.symmetric_product(A, c, beta=1.0, symmetrize_output=True))
    lower = np.tril(A @ A.T + c)
    np.testing.assert_allclose(out, lower + np.tril(lower, -1).T, rtol=1e-5, atol=1e-5)


def test_symmetric_product_batches():
    a, c = RNG.normal(size=(4, 2, 3)).astype(np.float32), np.ones((4, 2, 2), np.float32)
    out = jax.vmap(lambda a, c: linalg.symmetric_product(a, c, beta=2.0))(a, c)
    np.testing.assert_allclose(out, a @ a.transpose(0, 2, 1) + 2 * c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(linalg.symmetric_product(a, c, beta=2.0), out, rtol=1e-6)


def test_symmetric_product_jaxprs_as_jax():
    ones, eye = jnp.ones((2, 3)), jnp.eye(2)
    assert str(
        jax.make_jaxpr(lambda a, c: linalg.symmetric_product(a, c, alpha=2, beta=1))(ones, eye)
    ) == (
        "{ lambda ; a:f32[2,3] b:f32[2,2]. let\n"
        "    c:f32[2,2] = symmetric_product[alpha=2 beta=1] a b\n"
        "  in (c,) }"
    )
    printed = str(
        jax.make_jaxpr(lambda a, c: linalg.symmetric_product(a, c, symmetrize_output=True))(
            ones, eye
        )
    )
    assert printed.splitlines()[1:3] == [
        "    c:f32[2,2] = symmetric_product[alpha=1.0 beta=0.0] a b",
        "    d:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2) sharding=None] ",
    ]
    assert printed.splitlines()[-2:] == ["    q:f32[2,2] = add p j", "  in (q,) }"]


def _householder(shape, dtype):
    x = RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if dtype == np.complex64 else 0)
    a, taus = jnp.linalg.qr(x.astype(dtype), mode="raw")
    q = np.linalg.qr(np.asarray(x, dtype), mode="complete")[0]
    return jnp.swapaxes(a, -1, -2), taus, q


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_ormqr_multiplies_by_q_without_forming_it(dtype, left, transpose):
    a, taus, q = _householder((5, 3), dtype)
    q = q.conj().T if transpose else q
    c = RNG.normal(size=(5, 2) if left else (2, 5)).astype(dtype)
    expected = q @ c if left else c @ q
    for fun in (linalg.ormqr, jax.jit(linalg.ormqr, static_argnames=("left", "transpose"))):
        out = fun(a, taus, c, left=left, transpose=transpose)
        assert out.dtype == dtype and out.shape == c.shape
        np.testing.assert_allclose(out, _q_of(a, taus, left, transpose, c), rtol=1e-4, atol=1e-5)
        # (NumPy's Q is LAPACK's too, the same reflectors: the same product)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def _q_of(a, taus, left, transpose, c):
    """Q from householder_product (the same reflectors), applied densely."""
    m = a.shape[-2]
    padded = np.zeros((m, m), np.asarray(a).dtype)
    padded[:, : a.shape[-1]] = np.asarray(a)
    q = np.asarray(linalg.householder_product(padded, np.asarray(taus)))
    q = q.conj().T if transpose else q
    return q @ c if left else c @ q


def test_ormqr_batches():
    a, taus, _ = _householder((4, 3), np.float32)
    c = RNG.normal(size=(6, 4, 2)).astype(np.float32)
    out = jax.vmap(linalg.ormqr, in_axes=(None, None, 0))(a, taus, c)
    for i in range(6):
        np.testing.assert_allclose(out[i], linalg.ormqr(a, taus, c[i]), rtol=1e-5, atol=1e-6)


def test_ormqr_jaxpr_and_errors_as_jax():
    assert str(jax.make_jaxpr(lambda a, t, c: linalg.ormqr(a, t, c, left=False, transpose=True))(
        jnp.ones((4, 3)), jnp.ones(3), jnp.ones((2, 4))
    )) == (
        "{ lambda ; a:f32[4,3] b:f32[3] c:f32[2,4]. let\n"
        "    d:f32[2,4] = ormqr[left=False transpose=True] a b c\n"
        "  in (d,) }"
    )  # fmt: skip
    with pytest.raises(ValueError, match="expects c to have the same number of rows"):
        linalg.ormqr(jnp.ones((4, 3)), jnp.ones(3), jnp.ones((3, 2)))
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        linalg.ormqr(jnp.ones((4, 3)), jnp.ones(3), jnp.ones((4, 2), jnp.int32).astype(jnp.float16))


def test_cholesky_update_is_the_factor_of_the_updated_matrix():
    m = RNG.normal(size=(4, 4))
    spd = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    r = np.linalg.cholesky(spd).T
    w = RNG.normal(size=4).astype(np.float32)
    for fun in (linalg.cholesky_update, jax.jit(linalg.cholesky_update)):
        updated = np.asarray(fun(r, w))
        assert updated.dtype == np.float32
        np.testing.assert_array_equal(np.tril(updated, -1), 0)
        np.testing.assert_allclose(updated.T @ updated, spd + np.outer(w, w), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(
            updated, np.linalg.cholesky(spd + np.outer(w, w)).T, rtol=1e-4, atol=1e-5
        )


def test_cholesky_update_jaxpr_and_errors_as_jax():
    assert str(jax.make_jaxpr(linalg.cholesky_update)(jnp.eye(3), jnp.ones(3))) == (
        "{ lambda ; a:f32[3,3] b:f32[3]. let c:f32[3,3] = cholesky_update a b in (c,) }"
    )
    with pytest.raises(ValueError, match=r"Got shapes \(3, 3\) and \(2,\) instead"):
        linalg.cholesky_update(jnp.eye(3), jnp.ones(2))
    with pytest.raises(TypeError, match="must have a rank of exactly 2"):
        linalg.cholesky_update(jnp.ones((2, 3, 3)), jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="does not accept dtype complex64 at position 0"):
        linalg.cholesky_update(jnp.eye(2, dtype=jnp.complex64), jnp.ones(2, jnp.complex64))
    with pytest.raises(NotImplementedError, match="cholesky_update"):
        jax.vmap(linalg.cholesky_update)(jnp.stack([jnp.eye(2)] * 2), jnp.ones((2, 2)))


@pytest.mark.parametrize(
    "fun",
    [
        lambda a: linalg.symmetric_product(a, jnp.eye(3)).sum(),
        lambda a: linalg.ormqr(a, jnp.ones(3) * 0.5, jnp.ones((3, 2))).sum(),
        lambda a: linalg.cholesky_update(a + 3 * jnp.eye(3), jnp.ones(3)).sum(),
    ],
    ids=["symmetric_product", "ormqr", "cholesky_update"],
)
def test_not_differentiable_as_in_jax(fun):
    with pytest.raises(NotImplementedError, match="Differentiation rule"):
        jax.grad(fun)(jnp.triu(jnp.ones((3, 3))))
