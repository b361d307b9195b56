"""`jnp.linalg`: matrix powers, the products `jnp` already has under their `linalg`
names, and the Cholesky and LU solvers (`cholesky`, `solve`, `inv`) over `lax.linalg`. The
determinants and general eigenproblems are in `linalg_determinants`, what QR, eigh and the SVD
give (and the norms) in `linalg_spectral`.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.numpy import (
    creation,
    lib,
    lib_math,
    manipulation,
    products,
    promotion,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.manipulation import matrix_transpose  # noqa: F401
from tracejit._src.numpy.products import vecdot  # noqa: F401

# --- the array API's products: `jnp`'s, over the last axes, with positional-only operands ---


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis` (the array API has no 2-vectors)."""
    x1, x2 = promotion.asarray_operand("cross", x1, 0), promotion.asarray_operand("cross", x2, 1)
    sizes = np.shape(x1)[axis], np.shape(x2)[axis]
    if sizes != (3, 3):
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={sizes[0]} and x2.shape[axis]={sizes[1]}"
        )
    return lib_math.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    return lib.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    return lib.trace(x, offset, -2, -1, dtype)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return products.matmul(
        x1, x2, precision=precision, preferred_element_type=preferred_element_type
    )


def outer(x1, x2, /):
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(
            "Input arrays must be one-dimensional, but they are "
            f"x1.ndim={np.ndim(x1)} x2.ndim={np.ndim(x2)}"
        )
    return products.outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None):
    if out_sharding is not None:
        raise NotImplementedError("tensordot(out_sharding=...): tracejit runs on one device")
    return products.tensordot(
        x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type
    )


@jnp_jit(static_argnames=("n",))
def matrix_power(a, n):
    """`a` (a stack of square matrices) to the integer power `n`, by repeated squaring;
    `n = 0` gives identities, a negative `n` powers of the inverse."""
    a = promotion.asarray_operand("jnp.linalg.matrix_power", a)
    n = operator.index(n)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TypeError(f"matrix_power requires a square array, got shape {a.shape}")
    if n < 0:
        a, n = inv(a), -n
    identity = manipulation.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else products.matmul(square, result)
        n >>= 1
        if n:
            square = products.matmul(square, square)
    return identity if result is None else result


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (1-D ends as vectors), left to right."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot requires at least two arrays")
    out = arrays[0]
    for b in arrays[1:]:
        out = products.matmul(out, b, precision=precision)
    return out


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of each Hermitian positive-definite matrix of `a`: lower (L Lᴴ = a),
    or upper (Uᴴ U = a) with `upper`; NaNs where `a` is not positive definite."""
    (a,) = promotion.promote_args_inexact("cholesky", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"cholesky: a must be a (batch of) square matrices, got shape {a.shape}")
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return ufuncs.conj(manipulation.matrix_transpose(factor)) if upper else factor


def _lu_solve(factors, permutation, b):
    """x with a x = b from a's LU factors (b: matrices of right-hand sides, batched as a)."""
    rows = lax_linalg.permute_rows(b, permutation)
    y = lax_linalg.triangular_solve(factors, rows, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(factors, y, left_side=True, lower=False)


def solve(a, b):
    """x with a x = b for each square matrix of `a`: `b` a vector (1-D, shared by the batch)
    or matrices of right-hand sides (..., n, k), broadcast against `a`'s batch."""
    a, b = promotion.promote_dtypes_inexact(*promotion.to_operands("solve", (a, b)))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"solve: a must be a (batch of) square matrices, got shape {a.shape}")
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}")
        b, vector = manipulation.broadcast_to(b[:, None], (*a.shape[:-2], n, 1)), True
    elif b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}")
    else:
        vector = False
    batch = promotion.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = manipulation.broadcast_to(a, (*batch, n, n))
    b = manipulation.broadcast_to(b, (*batch, *b.shape[-2:]))
    factors, _, permutation = lax_linalg.lu(a)
    x = _lu_solve(factors, permutation, b)
    return x[..., 0] if vector else x


def inv(a):
    """The inverse of each square matrix of `a` (infinities and NaNs where it is singular)."""
    (a,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("inv", a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {a.shape}.")
    eye = manipulation.broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return solve(a, eye)
