"""Orthogonal and spectral factorizations (`lax.linalg.qr`, `eigh`, `svd`; QR's Householder
form `geqrf` and `householder_product`).

Each factors the matrices in the last two axes of its operand and batches over the leading
ones. Eagerly they are NumPy's LAPACK (geqrf/orgqr, syevd/heevd, gesdd), vectorized over the
batch (the Householder form matrix by matrix through SciPy's LAPACK); compiled, the same functions are called back from XLA (`ctx.host_callback`), because
XLA's own QR and eigh expanders measured 3x to 140x slower on CPU (`docs/linalg.md`). As in
JAX, a matrix with a NaN or an infinity has eigen- and singular values and vectors of NaNs;
LAPACK never sees such a matrix.

The derivatives are the standard matrix-calculus results with JAX's conventions: eigenvector
and singular-vector tangents are infinite or NaN where eigen- or singular values repeat (the
vectors are not unique there), and the tangent of the Householder complement Q₂ of a full QR
follows from Q = I - Y T Yᴴ, which expresses Q₂ through Q₁:
Q₂ = [0; I] - (E - Q₁) Kᴴ with E = [I; 0], K = Q₁,bot (Q₁,top - I)⁻¹.
"""

from __future__ import annotations

import enum

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.lax import (
    binary,
    comparison,
    conversions,
    elementwise,
    reductions,
    shapes,
    slicing,
)
from tracejit._src.lax.linalg import (
    adjoint,
    host_lowering,
    lu,
    matmul,
    matrix_transpose,
    permute_rows,
    refuse_half_precision,
    triangle_mask,
    triangular_solve,
)
from tracejit._src.lowering.lower import lowering_rules


def _check_operand(name: str, aval: ShapedArray) -> None:
    if len(aval.shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={aval.shape}")
    if not dtypes.is_inexact(aval.dtype):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype} at position 0. Accepted dtypes at "
            "position 0 are subtypes of floating, complexfloating."
        )


def _real_dtype(dtype) -> np.dtype:
    return np.dtype(dtypes.finfo(dtype).dtype)


def _subset(name: str, subset_by_index, size: int):
    """(start, end) as a tuple of ints within [0, size], or None for all `size`."""
    if subset_by_index is None:
        return None
    start, end = (int(i) for i in subset_by_index)
    if not 0 <= start <= end <= size:
        raise ValueError(
            f"{name}: subset_by_index must be (start, end) with 0 <= start <= end <= {size}, "
            f"got {subset_by_index}"
        )
    return None if (start, end) == (0, size) else (start, end)


def _lapack_or_nans(factor, x, read):
    """`factor(x)`'s outputs (arrays batched like x) with NaNs for each matrix whose `read` part
    holds a NaN or an infinity, or on which LAPACK does not converge; LAPACK sees zeros there."""
    bad = ~np.isfinite(read).all(axis=(-2, -1))
    safe = np.where(bad[..., None, None], 0, x)
    try:
        outs = factor(safe)
    except np.linalg.LinAlgError:
        flat, flat_bad = safe.reshape(-1, *x.shape[-2:]), bad.reshape(-1)
        for i, matrix in enumerate(flat):
            try:
                factor(matrix)
            except np.linalg.LinAlgError:
                flat_bad[i], flat[i] = True, 0
        outs = factor(safe)
    return [np.where(bad.reshape(bad.shape + (1,) * (o.ndim - bad.ndim)), np.nan, o) for o in outs]


def _batch_in_front(primitive):
    def rule(values, dims, **params):
        outs = primitive.bind(batch_at_front(values[0], dims[0], 0), **params)
        return outs, [0] * len(outs)

    return rule


# -- pieces of the derivative rules, on the last two axes --


def _identity_like(x):
    aval = get_aval(x)
    return np.broadcast_to(np.eye(aval.shape[-1], dtype=aval.dtype), aval.shape)


def _slice_axis(x, start, end, axis: int):
    return slicing.slice_in_dim(x, start, end, axis=len(get_aval(x).shape) + axis)


def _as_rows(v, shape):
    """Vector(s) v (..., k) broadcast to (..., k, k) with v[j] in column j."""
    rank = len(shape)
    return shapes.broadcast_in_dim(v, shape, (*range(rank - 2), rank - 1))


def _as_columns(v, shape):
    """Vector(s) v (..., k) broadcast to (..., k, k) with v[i] in row i."""
    rank = len(shape)
    return shapes.broadcast_in_dim(v, shape, tuple(range(rank - 1)))


def _diagonal(m):
    """The diagonals (..., k) of square matrices m (..., k, k)."""
    return reductions.reduce_sum(binary.mul(m, _identity_like(m)), (len(get_aval(m).shape) - 1,))


def _gap_inverse(rows, columns):
    """F with F[i, j] = 1 / (rows[i, j] - columns[i, j]) off the diagonal, 0 on it (infinite
    where two values coincide, as JAX's)."""
    eye = _identity_like(rows)
    return binary.sub(elementwise.reciprocal(binary.add(binary.sub(rows, columns), eye)), eye)


def _like(x, dtype):
    return conversions.convert_element_type(x, dtype)


def _solve_right(s, v):
    """z with z s = v, by LU with partial pivoting (s[perm] = L U, so s⁻¹ = U⁻¹ L⁻¹ P)."""
    factors, _, permutation = lu(s)
    z = triangular_solve(factors, v, left_side=False, lower=False)
    z = triangular_solve(factors, z, left_side=False, lower=True, unit_diagonal=True)
    aval = get_aval(factors)
    rank = len(aval.shape)
    columns = shapes.broadcasted_iota(np.int32, aval.shape, rank - 1)
    rows = shapes.broadcast_in_dim(permutation, aval.shape, tuple(range(rank - 1)))
    return matmul(z, _like(comparison.eq(rows, columns), aval.dtype))


# --- qr -------------------------------------------------------------------------------------
qr_p = Primitive("qr", multiple_results=True)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """The QR decomposition of each matrix (m, n): (q, r) with q unitary (m, m) and r upper
    triangular (m, n), or (m, k) and (k, n), k = min(m, n), without `full_matrices`; with
    `pivoting`, also the column permutation p (int32) with x[..., :, p] = q r."""
    return tuple(
        qr_p.bind(
            x, pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma
        )
    )


def _pivoted_qr(x, full_matrices):
    import scipy.linalg

    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    q = np.zeros((*x.shape[:-2], m, k), x.dtype)
    r = np.zeros((*x.shape[:-2], k, n), x.dtype)
    p = np.broadcast_to(np.arange(n, dtype=np.int32), (*x.shape[:-2], n)).copy()
    if x.size:
        flat_q, flat_r, flat_p = q.reshape(-1, m, k), r.reshape(-1, k, n), p.reshape(-1, n)
        mode = "full" if full_matrices else "economic"
        for i, matrix in enumerate(x.reshape(-1, m, n)):
            flat_q[i], flat_r[i], flat_p[i] = scipy.linalg.qr(
                matrix, mode=mode, pivoting=True, check_finite=False
            )
    else:
        q[...] = np.eye(m, k, dtype=x.dtype)
    return [q, r, p]


@qr_p.def_impl
def _qr_impl(x, *, pivoting, full_matrices, use_magma):
    refuse_half_precision("qr", x)
    if pivoting:
        return _pivoted_qr(x, full_matrices)
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype), r.astype(x.dtype)]


@qr_p.def_abstract_eval
def _qr_abstract_eval(x, *, pivoting, full_matrices, use_magma):
    _check_operand("qr", x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    outs = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    if pivoting:
        outs.append(ShapedArray((*batch, n), np.dtype(np.int32)))
    return outs


def _qr_tangents(q, r, dx):
    """(dq, dr) of a square or tall reduced QR: with C = qᴴ dx r⁻¹, qᴴ dq = Ω is skew-Hermitian
    (its diagonal imaginary: r's is real) and dr r⁻¹ = C - Ω upper triangular."""
    g = triangular_solve(r, dx, left_side=False, lower=False)
    c = matmul(adjoint(q), g)
    aval = get_aval(c)
    below = binary.mul(c, triangle_mask(aval.shape, aval.dtype, lower=True, diagonal=0.0))
    omega = binary.sub(below, adjoint(below))
    if dtypes.is_complex(aval.dtype):
        imaginary = binary.mul(binary.sub(c, elementwise.conj(c)), np.array(0.5, aval.dtype))
        omega = binary.add(omega, binary.mul(imaginary, _identity_like(c)))
    dq = binary.add(g, matmul(q, binary.sub(omega, c)))
    return dq, matmul(binary.sub(c, omega), r)


def _complement_tangent(q1, dq1):
    """The tangent of the Householder complement Q₂ = [0; I] - (E - Q₁) Kᴴ (module docstring):
    dQ₂ = dQ₁ Kᴴ - (E - Q₁) dKᴴ, dK = (dQ₁,bot - K dQ₁,top) S⁻¹, S = Q₁,top - I."""
    n = get_aval(q1).shape[-1]
    top, bottom = _slice_axis(q1, 0, n, -2), _slice_axis(q1, n, None, -2)
    d_top, d_bottom = _slice_axis(dq1, 0, n, -2), _slice_axis(dq1, n, None, -2)
    s = binary.sub(top, _identity_like(top))
    k = _solve_right(s, bottom)
    dk = _solve_right(s, binary.sub(d_bottom, matmul(k, d_top)))
    rows_axis = len(get_aval(q1).shape) - 2
    e_minus_q1 = shapes.concatenate([elementwise.neg(s), elementwise.neg(bottom)], rows_axis)
    return binary.sub(matmul(dq1, adjoint(k)), matmul(e_minus_q1, adjoint(dk)))


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    """Tall: `_qr_tangents`, and the complement's for full q. Wide, x = [X | Y] = q [U | V]:
    (dq, dU) from X's square rule, dV = dqᴴ Y + qᴴ dY."""
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    if type(dx) is Zero:
        return outs, [Zero.from_primal_value(o) for o in outs]
    q, r = outs[:2]
    if pivoting:
        x, dx = (matrix_transpose(permute_rows(matrix_transpose(v), outs[2])) for v in (x, dx))
    m, n = get_aval(x).shape[-2:]
    rank = len(get_aval(x).shape)
    if m >= n:
        q1 = _slice_axis(q, 0, n, -1)
        dq, dr = _qr_tangents(q1, _slice_axis(r, 0, n, -2), dx)
        if full_matrices and m > n:
            dq = shapes.concatenate([dq, _complement_tangent(q1, dq)], rank - 1)
            dr = shapes.pad(dr, np.array(0, get_aval(dr).dtype),
                            [(0, 0, 0)] * (rank - 2) + [(0, m - n, 0), (0, 0, 0)])  # fmt: skip
    else:
        y, dy = _slice_axis(x, m, None, -1), _slice_axis(dx, m, None, -1)
        dq, du = _qr_tangents(q, _slice_axis(r, 0, m, -1), _slice_axis(dx, 0, m, -1))
        dv = binary.add(matmul(adjoint(dq), y), matmul(adjoint(q), dy))
        dr = shapes.concatenate([du, dv], rank - 1)
    return outs, [dq, dr, *(Zero.from_primal_value(p) for p in outs[2:])]


ad.jvp_rules[qr_p] = _qr_jvp
batch_rules[qr_p] = _batch_in_front(qr_p)
lowering_rules[qr_p] = host_lowering(_qr_impl)


# --- geqrf ----------------------------------------------------------------------------------
geqrf_p = Primitive("geqrf", multiple_results=True)


def geqrf(x):
    """LAPACK's Householder QR (geqrf) of each matrix (m, n): (a, taus), r on and above a's
    diagonal, the reflectors' vectors below it (their leading 1 implied), k = min(m, n) taus;
    `householder_product(a, taus)` makes q of them (`jnp.linalg.qr(mode='raw')`)."""
    return tuple(geqrf_p.bind(x))


@geqrf_p.def_impl
def _geqrf_impl(x):
    refuse_half_precision("geqrf", x)
    from scipy.linalg import lapack

    m, n = x.shape[-2:]
    a, taus = x.copy(), np.zeros((*x.shape[:-2], min(m, n)), x.dtype)
    if x.size:
        flat_a, flat_taus = a.reshape(-1, m, n), taus.reshape(-1, min(m, n))
        for i, matrix in enumerate(x.reshape(-1, m, n)):
            (routine,) = lapack.get_lapack_funcs(("geqrf",), (matrix,))
            flat_a[i], flat_taus[i], _, _ = routine(matrix)
    return [a, taus]


@geqrf_p.def_abstract_eval
def _geqrf_abstract_eval(x):
    _check_operand("geqrf", x)
    *batch, m, n = x.shape
    return [x.update(weak_type=False), ShapedArray((*batch, min(m, n)), x.dtype)]


ad.not_differentiable(geqrf_p, "JAX has no derivative of the Householder form either")
batch_rules[geqrf_p] = _batch_in_front(geqrf_p)
lowering_rules[geqrf_p] = host_lowering(_geqrf_impl)


# --- householder_product --------------------------------------------------------------------
householder_product_p = Primitive("householder_product")


def householder_product(a, taus):
    """The first n columns of H₁ H₂ … H_k, Hᵢ = I - τᵢ vᵢ vᵢᴴ with vᵢ the i-th column of a
    (m x n, m >= n) below the diagonal and a 1 on it: the q of `geqrf`'s (a, taus)."""
    return householder_product_p.bind(a, taus)


@householder_product_p.def_impl
def _householder_product_impl(a, taus):
    refuse_half_precision("householder_product", a, taus)
    from scipy.linalg import lapack

    q = np.zeros_like(a)
    m, n = a.shape[-2:]
    if q.size:
        flat_q, flat_taus = q.reshape(-1, m, n), taus.reshape(-1, taus.shape[-1])
        name = "ungqr" if np.iscomplexobj(a) else "orgqr"
        for i, matrix in enumerate(a.reshape(-1, m, n)):
            (routine,) = lapack.get_lapack_funcs((name,), (matrix,))
            flat_q[i] = routine(matrix, flat_taus[i])[0]
    return q


@householder_product_p.def_abstract_eval
def _householder_product_abstract_eval(a, taus):
    _check_operand("householder_product", a)
    *batch, m, n = a.shape
    if m < n:
        raise ValueError(
            "The first argument to householder_product must have at least as many rows as "
            f"columns, got shape {a.shape}"
        )
    if taus.dtype != a.dtype or tuple(batch) != taus.shape[:-1] or taus.shape[-1] > n:
        raise ValueError(
            "householder_product: taus must have a's dtype and batch dimensions and at most "
            f"{n} elements per matrix, got {a.str_short()} and {taus.str_short()}"
        )
    return a.update(weak_type=False)


def _householder_product_batch(values, dims):
    size = next(x.shape[d] for x, d in zip(values, dims, strict=True) if d is not None)
    a, taus = (batch_at_front(x, d, size) for x, d in zip(values, dims, strict=True))
    return householder_product_p.bind(a, taus), 0


ad.not_differentiable(householder_product_p, "as in JAX")
batch_rules[householder_product_p] = _householder_product_batch
lowering_rules[householder_product_p] = host_lowering(_householder_product_impl)


class EighImplementation(enum.Enum):
    """The eigensolvers JAX can ask for (`eigh(implementation=)`); tracejit has LAPACK's,
    which is `None` (JAX's default on CPU)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The SVD algorithms JAX can ask for (`svd(algorithm=)`); tracejit has LAPACK's, which is
    `DEFAULT` (JAX's choice on CPU)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# --- eigh -----------------------------------------------------------------------------------
eigh_p = Primitive("eigh", multiple_results=True)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):  # fmt: skip
    """The eigendecomposition of each Hermitian matrix: (v, w) with x v = v diag(w), w real
    and ascending, v unitary; `subset_by_index` (start, end) keeps those eigenvalues (in
    ascending order) and their vectors. Without `symmetrize_input` only x's `lower` (else
    upper) triangle is read; with it, x is replaced by (x + xᴴ) / 2 first."""
    if implementation is not None:
        raise NotImplementedError(
            f"eigh(implementation={implementation!r}): tracejit has LAPACK's only (None)"
        )
    aval = get_aval(x)
    _check_operand("eigh", aval)
    if symmetrize_input:
        if aval.shape[-1] != aval.shape[-2]:
            raise TypeError(f"eigh: the matrices must be square, got {aval.str_short()}")
        x = binary.div(binary.add(x, adjoint(x)), np.array(2, aval.dtype))
    v, w = eigh_p.bind(
        x, algorithm=None, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
        subset_by_index=_subset("eigh", subset_by_index, aval.shape[-1]),
    )  # fmt: skip
    return v, w


@eigh_p.def_impl
def _eigh_impl(x, *, algorithm, lower, sort_eigenvalues, subset_by_index):
    refuse_half_precision("eigh", x)
    # (LAPACK's eigenvalues come sorted, with or without `sort_eigenvalues`, as JAX's on CPU)
    read = np.tril(x) if lower else np.triu(x)
    w, v = _lapack_or_nans(lambda a: np.linalg.eigh(a, UPLO="L" if lower else "U"), x, read)
    if subset_by_index is not None:
        w, v = w[..., slice(*subset_by_index)], v[..., slice(*subset_by_index)]
    return [v.astype(x.dtype), w.astype(_real_dtype(x.dtype))]


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(x, *, algorithm, lower, sort_eigenvalues, subset_by_index):
    _check_operand("eigh", x)
    *batch, m, n = x.shape
    if m != n:
        raise ValueError(
            f"Argument to symmetric eigendecomposition must have shape [..., n, n], got "
            f"shape {x.shape}"
        )
    k = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return [ShapedArray((*batch, n, k), x.dtype), ShapedArray((*batch, k), _real_dtype(x.dtype))]


def _eigh_jvp(primals, tangents, **params):
    """With M = vᴴ dx v: dw = Re diag(M), dv = v (F ∘ M), F[i, j] = 1 / (w[j] - w[i])."""
    (x,), (dx,) = primals, tangents
    v, w = eigh_p.bind(x, **params)
    if type(dx) is Zero:
        return [v, w], [Zero.from_primal_value(v), Zero.from_primal_value(w)]
    if params["subset_by_index"] is not None:
        raise NotImplementedError(
            "eigh's derivative with subset_by_index: the kept eigenvectors' tangents need the "
            "others"
        )
    shape, dtype = get_aval(v).shape, get_aval(v).dtype
    inner = matmul(adjoint(v), matmul(dx, v))
    gaps = _like(_gap_inverse(_as_rows(w, shape), _as_columns(w, shape)), dtype)
    dv = matmul(v, binary.mul(gaps, inner))
    dw = _diagonal(inner)
    return [v, w], [dv, elementwise.real(dw) if dtypes.is_complex(dtype) else dw]


ad.jvp_rules[eigh_p] = _eigh_jvp
batch_rules[eigh_p] = _batch_in_front(eigh_p)
lowering_rules[eigh_p] = host_lowering(_eigh_impl)


# --- svd ------------------------------------------------------------------------------------
svd_p = Primitive("svd", multiple_results=True)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):  # fmt: skip
    """The singular value decomposition of each matrix (m, n): (u, s, vh) with x = u diag(s) vh,
    s real, descending and non-negative, u (m, m) and vh (n, n) unitary, or (m, k) and (k, n),
    k = min(m, n), without `full_matrices`; only s with `compute_uv=False`. `subset_by_index`
    (start, end) keeps those singular values (in descending order) and their vectors."""
    if algorithm not in (None, SvdAlgorithm.DEFAULT):
        raise NotImplementedError(
            f"svd(algorithm={algorithm!r}): tracejit has LAPACK's only (SvdAlgorithm.DEFAULT)"
        )
    aval = get_aval(x)
    _check_operand("svd", aval)
    if full_matrices and subset_by_index is not None:
        raise ValueError("full_matrices and subset_by_index cannot both be set")
    outs = svd_p.bind(
        x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv), algorithm=None,
        subset_by_index=_subset("svd", subset_by_index, min(aval.shape[-2:])),
    )  # fmt: skip
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


@svd_p.def_impl
def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    refuse_half_precision("svd", x)
    if compute_uv:
        u, s, vh = _lapack_or_nans(lambda a: np.linalg.svd(a, full_matrices=full_matrices), x, x)
    else:
        (s,) = _lapack_or_nans(lambda a: (np.linalg.svd(a, compute_uv=False),), x, x)
    s = s.astype(_real_dtype(x.dtype))
    if subset_by_index is not None:
        keep = slice(*subset_by_index)
        s = s[..., keep]
        if compute_uv:
            u, vh = u[..., keep], vh[..., keep, :]
    return [s, u.astype(x.dtype), vh.astype(x.dtype)] if compute_uv else [s]


@svd_p.def_abstract_eval
def _svd_abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    _check_operand("svd", x)
    *batch, m, n = x.shape
    k = min(m, n) if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    u_columns, vh_rows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, u_columns), x.dtype), ShapedArray((*batch, vh_rows, n), x.dtype)]  # fmt: skip


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    """With dS = uᴴ dx v: ds = Re diag(dS); du = u (F ∘ (dS s + (dS s)ᴴ)), dv = v (F ∘ (s dS +
    (s dS)ᴴ)), F[i, j] = 1 / (s[j]² - s[i]²), plus, for complex x, the phase u (dS - dSᴴ) / 2s
    on the diagonal, and for a non-square x the part of dx outside u's (v's) span."""
    (x,), (dx,) = primals, tangents
    m, n = get_aval(x).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices"
        )
    s, u, vh = svd_p.bind(x, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)  # fmt: skip
    primal_out = [s, u, vh] if compute_uv else [s]
    if type(dx) is Zero:
        return primal_out, [Zero.from_primal_value(o) for o in primal_out]
    v = adjoint(vh)
    d_s = matmul(adjoint(u), matmul(dx, v))
    shape, dtype = get_aval(d_s).shape, get_aval(d_s).dtype
    ds = _diagonal(d_s)
    ds = elementwise.real(ds) if dtypes.is_complex(dtype) else ds
    if not compute_uv:
        return primal_out, [ds]
    if subset_by_index is not None:
        raise NotImplementedError(
            "svd's derivative with subset_by_index: the kept singular vectors' tangents need "
            "the others"
        )
    rows, columns = _as_rows(s, shape), _as_columns(s, shape)
    gaps = _like(_gap_inverse(binary.mul(rows, rows), binary.mul(columns, columns)), dtype)
    rows, columns = _like(rows, dtype), _like(columns, dtype)
    ds_s, s_ds = binary.mul(d_s, rows), binary.mul(columns, d_s)
    du_inner = binary.mul(gaps, binary.add(ds_s, adjoint(ds_s)))
    if dtypes.is_complex(dtype):
        zero = _like(comparison.eq(s, np.array(0, get_aval(s).dtype)), get_aval(s).dtype)
        s_inv = binary.sub(elementwise.reciprocal(binary.add(s, zero)), zero)
        phase = binary.mul(binary.sub(d_s, adjoint(d_s)), np.array(0.5, dtype))
        diag_s_inv = binary.mul(_identity_like(d_s), _like(_as_rows(s_inv, shape), dtype))
        du_inner = binary.add(du_inner, binary.mul(phase, diag_s_inv))
    du = matmul(u, du_inner)
    dv = matmul(v, binary.mul(gaps, binary.add(s_ds, adjoint(s_ds))))
    if m > n:
        du = binary.add(du, _outside_span(u, matmul(dx, v), s))
    if n > m:
        dv = binary.add(dv, _outside_span(v, matmul(adjoint(dx), u), s))
    return primal_out, [ds, du, adjoint(dv)]


def _outside_span(basis, product, s):
    """(product - basis basisᴴ product) / s: the part of `product` outside the basis's span,
    its columns divided by the singular values."""
    inside = matmul(basis, matmul(adjoint(basis), product))
    aval = get_aval(product)
    rank = len(aval.shape)
    scale = shapes.broadcast_in_dim(_like(s, aval.dtype), aval.shape, (*range(rank - 2), rank - 1))
    return binary.div(binary.sub(product, inside), scale)


ad.jvp_rules[svd_p] = _svd_jvp
batch_rules[svd_p] = _batch_in_front(svd_p)
lowering_rules[svd_p] = host_lowering(_svd_impl)
