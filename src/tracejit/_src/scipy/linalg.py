"""`tracejit.scipy.linalg`: SciPy's names over `lax.linalg`: the Cholesky, triangular and LU
families, `solve`/`inv`/`det`, the Schur and Hessenberg decompositions (`rsf2csf` turning a
real Schur form complex) and `eigh_tridiagonal` (bisection on Sturm counts, eigenvectors by
inverse iteration). Matrix functions
are in `linalg_functions`, special matrices in `linalg_matrices`."""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.lax import linalg_nonsymmetric as lax_nonsymmetric
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import sort as lax_sort
from tracejit._src.lax.control_flow import loops, scan
from tracejit._src.numpy import (
    creation,
    lib,
    manipulation,
    promotion,
    reductions,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.linalg import cholesky as _jnp_cholesky
from tracejit._src.numpy.linalg import inv as _jnp_inv
from tracejit._src.numpy.linalg import solve as _jnp_solve
from tracejit._src.numpy.linalg_determinants import det as _jnp_det
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.random import distributions as random_distributions
from tracejit._src.random import keys as random_keys

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
    return _cho_solve(c, b, lower)


@jnp_jit(static_argnums=(2,))
def _cho_solve(c, b, lower):
    # a = L Lᴴ: solve L y = b, then Lᴴ x = y (with c = Lᴴ when upper), as JAX does.
    y = _triangular_solve(c, b, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    return _triangular_solve(c, y, lower=lower, transpose_a=lower, conjugate_a=lower)


def _triangular_solve(a, b, **params):
    """`lax.linalg.triangular_solve` from the left, `b` a vector or a matrix of columns;
    `conjugate_a` only for complex `a`, as JAX records it."""
    params["conjugate_a"] = params["conjugate_a"] and dtypes.is_complex(a.dtype)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    x = lax_linalg.triangular_solve(a, b, left_side=True, **params)
    return x[..., 0] if vector else x


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):  # fmt: skip
    """x with op(a) x = b, a triangular (`lower` or upper); `trans` 0/'N', 1/'T' or 2/'C' picks
    op(a) = a, aᵀ or aᴴ; b a vector or a matrix of right-hand sides."""
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans!r}")
    a, b = promote_dtypes_inexact(*to_operands("solve_triangular", (a, b)))
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


@jnp_jit(static_argnums=(2, 3, 4))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    transpose_a, conjugate_a = _TRANS[trans]
    return _triangular_solve(
        a, b, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )  # fmt: skip


# --- LU ---------------------------------------------------------------------------------------


def _square(name: str, a):
    (a,) = promote_dtypes_inexact(promotion.asarray_operand(name, a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected a (batch of) square matrices, got shape {a.shape}")
    return a


def _permutation_matrix(permutation, dtype):
    """P with P[perm[i], i] = 1, so that a = P L U when a[perm] = L U."""
    n = permutation.shape[-1]
    rows = ufuncs.equal(permutation[..., None, :], creation.arange(n, dtype=np.int32)[:, None])
    return rows.astype(dtype)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p l u, p a permutation matrix, l unit lower and u upper triangular;
    (p l, u) with `permute_l`."""
    (a,) = promote_dtypes_inexact(promotion.asarray_operand("lu", a))
    factors, _, permutation = lax_linalg.lu(a)
    n = a.shape[-1]
    eye = creation.eye(n, dtype=a.dtype)
    lower = ufuncs.add(lib.tril(factors, -1), eye)
    upper = lib.triu(factors)
    p = _permutation_matrix(permutation, np.finfo(a.dtype).dtype)  # (real, as JAX's)
    return (p @ lower, upper) if permute_l else (p, lower, upper)


@jnp_jit(static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, pivots) as LAPACK's getrf gives them: L below the diagonal (unit diagonal
    implied), U on and above; row i swapped with row pivots[i] in turn."""
    (a,) = promote_dtypes_inexact(promotion.asarray_operand("lu_factor", a))
    factors, pivots, _ = lax_linalg.lu(a)
    return factors, pivots


@jnp_jit(static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (`trans` 0), aᵀ x = b (1) or aᴴ x = b (2), from `lu_factor`'s output."""
    factors, pivots = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    factors, b = promote_dtypes_inexact(*to_operands("lu_solve", (factors, b)))
    n = factors.shape[-1]
    rows = b.shape[-1] if b.ndim == factors.ndim - 1 else b.shape[-2]
    if rows != n:
        raise ValueError(f"lu_solve: b's rows {rows} do not match lu's size {n}")
    batch = promotion.broadcast_shapes(factors.shape[:-2], b.shape[: factors.ndim - 2])
    pivots = manipulation.broadcast_to(pivots, (*batch, n))
    permutation = lax_nonsymmetric.lu_pivots_to_permutation(pivots, n)
    return _lu_solve(factors, permutation, b, trans)


@jnp_jit(static_argnums=(3,))
def _lu_solve(factors, permutation, b, trans):
    n = factors.shape[-1]
    vector = b.ndim == factors.ndim - 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    batch = promotion.broadcast_shapes(factors.shape[:-2], b.shape[:-2])
    factors = manipulation.broadcast_to(factors, (*batch, n, n))
    b = manipulation.broadcast_to(b, (*batch, *b.shape[-2:]))
    permutation = manipulation.broadcast_to(permutation, (*batch, n))
    solve = lambda m, rhs, **kw: lax_linalg.triangular_solve(m, rhs, left_side=True, **kw)

    def permuted(x, permutation):
        # One matrix gathers its rows as `x[permutation]` does (as JAX's), a batch per matrix.
        return x[permutation] if not batch else lax_linalg.permute_rows(x, permutation)

    if trans == 0:
        y = solve(factors, permuted(b, permutation), lower=True, unit_diagonal=True)
        x = solve(factors, y, lower=False)
    else:  # aᵀ = Uᵀ Lᵀ P: x = Pᵀ L⁻ᵀ U⁻ᵀ b
        conjugate = trans == 2
        y = solve(factors, b, lower=False, transpose_a=True, conjugate_a=conjugate)
        z = solve(factors, y, lower=True, transpose_a=True, conjugate_a=conjugate,
                  unit_diagonal=True)  # fmt: skip
        iota = lax_shapes.broadcasted_iota(permutation.dtype, permutation.shape, len(batch))
        _, inverse = lax_sort.sort((permutation, iota), dimension=-1, num_keys=1)
        x = permuted(z, inverse)
    return x[..., 0] if vector else x


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):  # fmt: skip
    """x with a x = b; `assume_a` 'pos' solves by Cholesky, reading a's `lower` (else upper)
    triangle only; 'gen', 'sym' and 'her' by LU."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(
            f"Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got {assume_a!r}"
        )
    if assume_a != "pos":
        return _jnp_solve(a, b)
    a, b = promote_dtypes_inexact(*to_operands("solve", (a, b)))
    triangle = a if lower else ufuncs.conj(manipulation.matrix_transpose(a))
    factor = lax_linalg.cholesky(triangle, symmetrize_input=False)
    return cho_solve((factor, True), b)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix of `a`."""
    return _jnp_inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix of `a`."""
    return _jnp_det(a)


# --- Schur, Hessenberg ------------------------------------------------------------------------


def schur(a, output="real"):
    """(T, Z) with a = Z T Zᴴ: T quasi-triangular ('real', for real a) or triangular
    ('complex')."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    (a,) = promote_dtypes_inexact(promotion.asarray_operand("schur", a))
    if output == "complex":
        a = a.astype(lax_nonsymmetric.complex_dtype(a.dtype))
    return tuple(lax_nonsymmetric.schur(a))


def _givens_for_block(t, m):
    """The rotation that triangularizes the 2x2 block of T at rows/columns m - 1, m, or the
    identity where that block is already triangular (SciPy's rsf2csf test)."""
    a, b = t[..., m - 1, m - 1], t[..., m - 1, m]
    c, d = t[..., m, m - 1], t[..., m, m]
    eps = np.finfo(t.dtype).eps
    split = ufuncs.less_equal(ufuncs.abs(c), eps * (ufuncs.abs(a) + ufuncs.abs(d)))
    half = (a - d) / 2
    mu = half + ufuncs.sqrt(half * half + b * c)  # the eigenvalue with Im >= 0, minus d
    r = ufuncs.sqrt(ufuncs.abs(mu) ** 2 + ufuncs.abs(c) ** 2).astype(t.dtype)
    safe_r = ufuncs.where(split, 1, r)
    cos, sin = ufuncs.where(split, 1, mu / safe_r), ufuncs.where(split, 0, c / safe_r)
    rotation = manipulation.stack(
        [manipulation.stack([ufuncs.conj(cos), sin], -1),
         manipulation.stack([-sin, cos], -1)], -2,
    )  # fmt: skip
    return rotation, split


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (T', Z') of a real one: each 2x2 block of T rotated to upper
    triangular, from the bottom up, as SciPy does."""
    T, Z = promote_dtypes_inexact(*to_operands("rsf2csf", (T, Z)))
    if T.ndim < 2 or T.shape[-1] != T.shape[-2] or Z.shape != T.shape:
        raise ValueError(f"rsf2csf: T and Z must be square and alike, got {T.shape}, {Z.shape}")
    complex_dtype = lax_nonsymmetric.complex_dtype(T.dtype)
    T, Z = T.astype(complex_dtype), Z.astype(complex_dtype)
    for m in range(T.shape[-1] - 1, 0, -1):
        rotation, split = _givens_for_block(T, m)
        adjoint = ufuncs.conj(manipulation.matrix_transpose(rotation))
        T = T.at[..., m - 1 : m + 1, m - 1 :].set(rotation @ T[..., m - 1 : m + 1, m - 1 :])
        T = T.at[..., : m + 1, m - 1 : m + 1].set(T[..., : m + 1, m - 1 : m + 1] @ adjoint)
        Z = Z.at[..., :, m - 1 : m + 1].set(Z[..., :, m - 1 : m + 1] @ adjoint)
        T = T.at[..., m, m - 1].set(ufuncs.where(split, T[..., m, m - 1], 0))
    return T, Z


def _reflectors_product(packed, taus):
    """Q = H₁ ⋯ Hₖ, Hⱼ = 1 - τⱼ vⱼ vⱼᴴ with vⱼ 1 at row j + 1 and packed's column j below it."""
    n = packed.shape[-1]
    q = manipulation.broadcast_to(creation.eye(n, dtype=packed.dtype), packed.shape)
    rows = np.arange(n)
    for j in range(taus.shape[-1]):
        v = ufuncs.where(rows == j + 1, 1, ufuncs.where(rows > j + 1, packed[..., :, j], 0))
        qv = (q @ v[..., None])[..., 0]
        q = q - taus[..., j, None, None] * qv[..., :, None] * ufuncs.conj(v)[..., None, :]
    return q


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form H = Qᴴ a Q of each square matrix, and Q with `calc_q`."""
    (a,) = promote_dtypes_inexact(promotion.asarray_operand("hessenberg", a))
    packed, taus = lax_nonsymmetric.hessenberg(a)
    h = lib.triu(packed, -1)
    return (h, _reflectors_product(packed, taus)) if calc_q else h


# --- eigh_tridiagonal -------------------------------------------------------------------------


def _sturm_counts(d, e_squared, x):
    """How many eigenvalues of the symmetric tridiagonal (d, e) lie below each of the points
    x: the negative pivots of the LDLᵀ factorization of T - x, a zero pivot nudged."""
    tiny = np.finfo(d.dtype).tiny

    def step(carry, row):
        pivot, count = carry
        diagonal, off_squared = row
        pivot = diagonal - x - off_squared / ufuncs.where(pivot == 0, tiny, pivot)
        return (pivot, count + (pivot < 0).astype(np.int32)), None

    first = d[0] - x
    (_, count), _ = scan.scan(step, (first, (first < 0).astype(np.int32)), (d[1:], e_squared))
    return count


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):  # fmt: skip
    """The eigenvalues (ascending) of the Hermitian tridiagonal matrix T of diagonal `d`,
    super-diagonal `e` and sub-diagonal conj(e), by bisection of every eigenvalue at once on
    Sturm counts (to `tol`); `select` 'i' keeps those of indices select_range[0] to
    select_range[1]. Unless `eigvals_only`, also the eigenvectors (columns), by inverse
    iteration from random vectors (`key`, a fixed one by default)."""
    d, e = to_operands("eigh_tridiagonal", (d, e))
    if d.dtype not in (np.float32, np.float64) and not dtypes.is_complex(d.dtype):
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to "
            f"jax.scipy.linalg.eigh_tridiagonal, got {d.dtype} and {e.dtype}"
        )
    if select not in ("a", "i"):
        raise NotImplementedError(f"eigh_tridiagonal(..., select={select!r}) is not implemented")
    if d.ndim != 1 or e.shape != (max(d.shape[0] - 1, 0),):
        raise TypeError(f"eigh_tridiagonal: d (n,) and e (n - 1,) expected, got {d.shape} "
                        f"and {e.shape}")  # fmt: skip
    d = ufuncs.real(d)
    first, last = (0, d.shape[0] - 1) if select == "a" else map(int, select_range)
    w = _bisect_eigenvalues(d, ufuncs.real(e * ufuncs.conj(e)), first, last, tol)
    if eigvals_only:
        return w
    key = random_keys.PRNGKey(0) if key is None else key
    return w, _inverse_iteration(d, e, w, key)


def _bisect_eigenvalues(d, e_squared, first, last, tol):
    """Eigenvalues `first` to `last` (in ascending order) of the symmetric tridiagonal matrix,
    each bisected in its Gershgorin interval until its width is `tol`."""
    wanted = creation.arange(first, last + 1, dtype=np.int32)
    lo, hi = _gershgorin_bounds(d, ufuncs.sqrt(e_squared))
    tol = np.finfo(d.dtype).eps * (hi - lo) if tol is None else tol

    def unresolved(bounds):  # (until `tol`, or until the midpoints are no longer between)
        lows, highs = bounds
        middle = (lows + highs) / 2
        splittable = ufuncs.logical_and(lows < middle, middle < highs)
        return reductions.any(ufuncs.logical_and(highs - lows > tol, splittable))

    def bisect(bounds):
        lows, highs = bounds
        middle = (lows + highs) / 2
        below = _sturm_counts(d, e_squared, middle) > wanted
        return ufuncs.where(below, lows, middle), ufuncs.where(below, middle, highs)

    start = tuple(manipulation.broadcast_to(x, wanted.shape) for x in (lo, hi))
    lows, highs = loops.while_loop(unresolved, bisect, start)
    return (lows + highs) / 2


_INVERSE_ITERATIONS = 3
_CLUSTER = 1e-3  # (eigenvalues closer than this times ‖T‖ have their vectors orthogonalized)


def _inverse_iteration(d, e, w, key):
    """The eigenvectors of T for the eigenvalues w: x ← (T - w_k)⁻¹ x from random x, all k at
    once (tridiagonal solves with partial pivoting, the shift nudged off exact singularity),
    the vectors of each cluster of close eigenvalues orthonormalized after every step."""
    n, m = d.shape[0], w.shape[0]
    scale = ufuncs.maximum(reductions.max(ufuncs.abs(d), initial=0.0)
                           + 2 * reductions.max(ufuncs.abs(e), initial=0.0), 1e-30)  # fmt: skip
    dtype = e.dtype if dtypes.is_complex(e.dtype) else d.dtype
    zero = creation.zeros((1,), dtype)
    sub = manipulation.concatenate([zero, ufuncs.conj(e).astype(dtype)])
    sup = manipulation.concatenate([e.astype(dtype), zero])
    shifts = w + np.finfo(d.dtype).eps * scale
    diagonal = (d[None, :] - shifts[:, None]).astype(dtype)
    rows = [manipulation.broadcast_to(x, (m, n)) for x in (sub, sup)]
    x = random_distributions.normal(key, (m, n), d.dtype).astype(dtype)
    cluster = ufuncs.abs(w[:, None] - w[None, :]) <= _CLUSTER * scale
    for _ in range(_INVERSE_ITERATIONS):
        x = lax_nonsymmetric.tridiagonal_solve(rows[0], diagonal, rows[1], x[..., None])[..., 0]
        x = _orthonormalize_clusters(x, cluster)
    return manipulation.matrix_transpose(x)


def _orthonormalize_clusters(x, cluster):
    """Gram-Schmidt over the rows of x, each made orthogonal to the earlier rows of its
    cluster, then of unit norm."""
    m = x.shape[0]
    order = creation.arange(m)

    def step(k, x):
        v = x[k]
        earlier = ufuncs.logical_and(order < k, cluster[k])
        overlaps = ufuncs.where(earlier, ufuncs.conj(x) @ v, 0)
        v = v - overlaps @ x
        return x.at[k].set(v / ufuncs.sqrt(reductions.sum(ufuncs.abs(v) ** 2)))

    return loops.fori_loop(0, m, step, x)


def _gershgorin_bounds(d, radius):
    """An interval holding every eigenvalue: the union of the Gershgorin discs, widened."""
    zero = radius[:0].sum(keepdims=True) * 0
    reach = manipulation.concatenate([zero, radius]) + manipulation.concatenate([radius, zero])
    lo, hi = (d - reach).min(), (d + reach).max()
    margin = ufuncs.maximum(hi - lo, 1) * np.finfo(d.dtype).eps * 4
    return lo - margin, hi + margin
