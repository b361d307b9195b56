"""Half precision and the linear-algebra primitives, as in JAX 0.10.2: those computed by LAPACK,
which has no half-precision routines, refuse float16 and bfloat16 with NotImplementedError when
they run, eagerly or compiled (tracing them works); `triangular_solve`, `symmetric_product` and
`cholesky_update` compute in half precision."""

import ml_dtypes
import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.lax import linalg

HALF = [np.float16, ml_dtypes.bfloat16]
A = np.eye(3) + 0.1
B = np.ones((3, 1))
D = np.ones(3)

COMPUTED_BY_LAPACK = {
    "cholesky": lambda a: linalg.cholesky(a),
    "lu": lambda a: linalg.lu(a),
    "qr": lambda a: linalg.qr(a),
    "householder_product": lambda a: linalg.householder_product(a, a[0, :2]),
    "ormqr": lambda a: linalg.ormqr(a, a[0, :2], a),
    "eig": lambda a: linalg.eig(a),
    "eigh": lambda a: linalg.eigh(a),
    "svd": lambda a: linalg.svd(a),
    "schur": lambda a: linalg.schur(a),
    "hessenberg": lambda a: linalg.hessenberg(a),
    "tridiagonal": lambda a: linalg.tridiagonal(a),
    "tridiagonal_solve": lambda a: linalg.tridiagonal_solve(a[0], a[1] * 3, a[2], a[:, :1]),
    "jnp.linalg.inv": lambda a: jnp.linalg.inv(a),
    "jnp.linalg.solve": lambda a: jnp.linalg.solve(a, a[:, 0]),
}


@pytest.mark.parametrize("dtype", HALF, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", COMPUTED_BY_LAPACK)
def test_lapack_primitives_refuse_half_precision(name, dtype):
    fun = COMPUTED_BY_LAPACK[name]
    a = jnp.asarray(A, dtype)
    jax.make_jaxpr(fun)(a)  # tracing works
    with pytest.raises(NotImplementedError, match=f"Unsupported dtype {np.dtype(dtype).name}"):
        fun(a)
    with pytest.raises(NotImplementedError, match=f"Unsupported dtype {np.dtype(dtype).name}"):
        jax.jit(fun)(a)


def test_eig_types_half_precision_as_complex64():
    out = jax.eval_shape(linalg.eig, jnp.asarray(A, ml_dtypes.bfloat16))
    assert [x.dtype for x in out] == [np.complex64] * 3


COMPUTED_IN_HALF_PRECISION = {
    "triangular_solve": lambda a: linalg.triangular_solve(a, jnp.ones_like(a[:, :1]),
                                                          left_side=True, lower=True),
    "symmetric_product": lambda a: linalg.symmetric_product(a, a),
    "cholesky_update": lambda a: linalg.cholesky_update(a, jnp.ones_like(a[0])),
}  # fmt: skip


@pytest.mark.parametrize("dtype", HALF, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", COMPUTED_IN_HALF_PRECISION)
def test_other_primitives_compute_in_half_precision(name, dtype):
    fun = COMPUTED_IN_HALF_PRECISION[name]
    lower = np.tril(A) + np.eye(3)
    want = np.asarray(fun(jnp.asarray(lower, np.float32)))
    for got in (fun(jnp.asarray(lower, dtype)), jax.jit(fun)(jnp.asarray(lower, dtype))):
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=2e-2, atol=2e-2)
