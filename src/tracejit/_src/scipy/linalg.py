"""`tracejit.scipy.linalg`: SciPy's names over `lax.linalg` (the Cholesky and triangular
families so far; the decompositions that need LU, QR, eigh and SVD come with them)."""

from __future__ import annotations

from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.numpy import manipulation
from tracejit._src.numpy.linalg import cholesky as _jnp_cholesky
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands

_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}  # fmt: skip


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of each Hermitian positive-definite matrix of `a`: upper (Uᴴ U = a)
    unless `lower`."""
    return _jnp_cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(factor, lower), as `cho_solve` takes it."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b, given a's Cholesky factorization `(c, lower)` from `cho_factor`."""
    c, lower = c_and_lower
    c, b = promote_dtypes_inexact(*to_operands("cho_solve", (c, b)))
    vector = b.ndim == c.ndim - 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    # a = L Lᴴ: solve L y = b, then Lᴴ x = y (with c = Lᴴ when upper).
    y = lax_linalg.triangular_solve(
        c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower
    )
    x = lax_linalg.triangular_solve(
        c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )
    return x[..., 0] if vector else x


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):  # fmt: skip
    """x with op(a) x = b, a triangular (`lower` or upper); `trans` 0/'N', 1/'T' or 2/'C' picks
    op(a) = a, aᵀ or aᴴ; b a vector or a matrix of right-hand sides."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans!r}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(*to_operands("solve_triangular", (a, b)))
    vector = b.ndim == a.ndim - 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    x = lax_linalg.triangular_solve(
        a, b, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )  # fmt: skip
    return x[..., 0] if vector else x
