"""Linear-algebra primitives of general (non-symmetric) matrices and their reductions:
`lu_pivots_to_permutation`, `eig`, `schur`, `hessenberg`, `tridiagonal`, `tridiagonal_solve`.

Each calls LAPACK (SciPy's) once per matrix of the batch, eagerly and, compiled, through a
host callback (`LoweringContext.host_callback`), as JAX calls LAPACK on CPU; XLA has no op for
any of them. The iterative routines (`eig`, `schur`) are never handed a matrix with NaNs or
infinities, whose results are NaNs as JAX's are; a singular tridiagonal system gives NaNs too.

    >>> make_jaxpr(lambda a: eig(a, compute_left_eigenvectors=False))(a)   # a: f64[3,3]
    { lambda ; a:f64[3,3]. let
        b:c128[3] c:c128[3,3] = eig[compute_left_eigenvectors=False ...] a
      in (b, c) }
"""

from __future__ import annotations

import enum
import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.lax import binary, conversions, elementwise, reductions, shapes
from tracejit._src.lax.linalg import adjoint, host_lowering, matmul, refuse_half_precision
from tracejit._src.lowering.lower import lowering_rules


def _check_inexact(name: str, aval: ShapedArray, position: int = 0) -> None:
    if not dtypes.is_inexact(aval.dtype):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} at position {position}. Accepted "
            f"dtypes at position {position} are subtypes of floating, complexfloating."
        )


def _check_square(name: str, aval: ShapedArray) -> None:
    _check_inexact(name, aval)
    if len(aval.shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got shape={aval.shape}")
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"The input to {name} must be a square matrix. Got shape {aval.shape}.")


def _per_matrix(function, x, outs):
    """`function(matrix) -> tuple of arrays` over the matrices of `x` (last two axes); `outs`
    gives each result's trailing shape and dtype, so that an empty batch has results too."""
    batch = x.shape[:-2]
    results = [np.empty((*batch, *shape), dtype) for shape, dtype in outs]
    count = math.prod(batch)
    flat = [r.reshape(count, *r.shape[len(batch) :]) for r in results]
    for i, matrix in enumerate(x.reshape(count, *x.shape[-2:])):
        for out, value in zip(flat, function(matrix), strict=True):
            out[i] = value
    return results


def _batch_front(primitive):
    """The batch rule of a primitive over stacks of matrices: every operand's batch axis in
    front (an unbatched one broadcast), every result's batch axis in front."""

    def rule(values, dims, **params):
        size = next(x.shape[d] for x, d in zip(values, dims, strict=True) if d is not None)
        moved = [batch_at_front(x, d, size) for x, d in zip(values, dims, strict=True)]
        out = primitive.bind(*moved, **params)
        return out, ([0] * len(out) if primitive.multiple_results else 0)

    return rule


def _lapack(name: str, dtype):
    import scipy.linalg

    return scipy.linalg.get_lapack_funcs((name,), dtype=dtype)[0]


def _real_dtype(dtype) -> np.dtype:
    return np.dtype(dtypes.finfo(dtype).dtype)


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype of `dtype`'s precision: complex128 for double precision, complex64
    for the others (half precision too, as JAX types them before refusing to compute them)."""
    double = np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if double else np.complex64)


# --- lu_pivots_to_permutation ---------------------------------------------------------------
lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation of `permutation_size` rows that LU's row swaps make: row i swapped with
    row `pivots[i]` in turn, starting from the identity."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


@lu_pivots_to_permutation_p.def_impl
def _lu_pivots_to_permutation_impl(pivots, *, permutation_size):
    batch = pivots.shape[:-1]
    flat_pivots = pivots.reshape(-1, pivots.shape[-1])
    perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32),
                           (len(flat_pivots), permutation_size)).copy()  # fmt: skip
    rows = np.arange(len(flat_pivots))
    for k in range(flat_pivots.shape[1]):  # the swaps in order, each over the whole batch
        target = flat_pivots[:, k]
        here, there = perm[:, k].copy(), perm[rows, target]
        perm[:, k], perm[rows, target] = there, here
    return perm.reshape(*batch, permutation_size)


@lu_pivots_to_permutation_p.def_abstract_eval
def _lu_pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
    if pivots.dtype != np.int32:
        raise TypeError(
            f"lu_pivots_to_permutation does not accept dtype {pivots.dtype.name} at position 0."
            " Accepted dtypes at position 0 are subtypes of int32."
        )
    if len(pivots.shape) < 1:
        raise TypeError(
            "Input 0 to lu_pivots_to_permutation must have rank at least 1, but got "
            f"shape={pivots.shape}"
        )
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing dimension "
            f"of the pivots. Got pivots size {pivots.shape[-1]}"
        )
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


ad.defjvp_zero(lu_pivots_to_permutation_p)
batch_rules[lu_pivots_to_permutation_p] = _batch_front(lu_pivots_to_permutation_p)
lowering_rules[lu_pivots_to_permutation_p] = host_lowering(_lu_pivots_to_permutation_impl)


# --- eig ------------------------------------------------------------------------------------
class EigImplementation(enum.Enum):
    """Which library computes `eig`; tracejit has LAPACK only."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


eig_p = Primitive("eig", multiple_results=True)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None,
        use_magma: bool | None = None):  # fmt: skip
    """The eigenvalues w of each square matrix (complex), then its left eigenvectors (columns
    u with uᴴ x = w uᴴ) and right ones (x v = w v) as asked, each of unit norm with its largest
    component real, as LAPACK's geev gives them. Eigenvectors are differentiable only with
    `enable_eigvec_derivs` (their derivative assumes distinct eigenvalues)."""
    if use_magma is not None:
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    if implementation not in (None, EigImplementation.LAPACK):
        raise NotImplementedError(f"eig: tracejit has LAPACK only, not {implementation}")
    return eig_p.bind(
        x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs), implementation=implementation,
    )  # fmt: skip


@eig_p.def_impl
def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    refuse_half_precision("eig", x)
    import scipy.linalg

    n, dtype = x.shape[-1], complex_dtype(x.dtype)
    left, right = compute_left_eigenvectors, compute_right_eigenvectors

    def of_matrix(m):
        if not np.isfinite(m).all():
            return [np.nan] * (1 + left + right)
        out = scipy.linalg.eig(m, left=left, right=right, check_finite=False)
        return out if isinstance(out, tuple) else (out,)

    outs = [((n,), dtype)] + [((n, n), dtype)] * (left + right)
    return _per_matrix(of_matrix, x, outs)


@eig_p.def_abstract_eval
def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    _check_square("eig", x)
    dtype = complex_dtype(x.dtype)
    vectors = ShapedArray(x.shape, dtype)
    count = compute_left_eigenvectors + compute_right_eigenvectors
    return [ShapedArray(x.shape[:-1], dtype), *[vectors] * count]


def _eigvec_tangent(vectors, inner, w):
    """dV = V (F ∘ K) made unit-norm to first order, K = V⁻¹ dA V, F_ij = 1 / (w_j - w_i)
    off the diagonal (0 on it): the derivative of eigenvectors with distinct eigenvalues."""
    gaps = binary.sub(shapes.expand_dims(w, (-2,)), shapes.expand_dims(w, (-1,)))
    aval = get_aval(gaps)
    off_diagonal = ~np.eye(aval.shape[-1], dtype=bool)
    safe_gaps = binary.add(gaps, (~off_diagonal).astype(aval.dtype))  # (its diagonal unused)
    factors = binary.div(off_diagonal.astype(aval.dtype), safe_gaps)
    dv = matmul(vectors, binary.mul(factors, inner))
    rows = len(get_aval(dv).shape) - 2
    along = elementwise.real(
        reductions.reduce_sum(binary.mul(elementwise.conj(vectors), dv), (rows,))
    )
    along = conversions.convert_element_type(shapes.expand_dims(along, (-2,)), get_aval(dv).dtype)
    return binary.sub(dv, binary.mul(vectors, along))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):  # fmt: skip
    """dw = diag(K), K = V⁻¹ dA V = diag(1 / (u_iᴴ v_i)) Uᴴ dA V with the left eigenvectors U,
    which spares a solve; the left eigenvectors are the right ones of Aᴴ, with conj(w)."""
    (x,), (dx,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
            "input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
            "in. See https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    w, u, v = eig_p.bind(x, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
                         enable_eigvec_derivs=True, implementation=implementation)  # fmt: skip
    outs = [w] + [u] * compute_left_eigenvectors + [v] * compute_right_eigenvectors
    if type(dx) is Zero:
        return outs, [Zero.from_primal_value(o) for o in outs]
    rank = len(get_aval(x).shape)
    dx = conversions.convert_element_type(dx, get_aval(w).dtype)
    scale = reductions.reduce_sum(binary.mul(elementwise.conj(u), v), (rank - 2,))
    projected = matmul(adjoint(u), matmul(dx, v))
    inner = binary.div(projected, shapes.expand_dims(scale, (-1,)))
    n = get_aval(w).shape[-1]
    dw = reductions.reduce_sum(binary.mul(inner, np.eye(n, dtype=get_aval(w).dtype)), (rank - 1,))
    out_tangents = [dw]
    if compute_left_eigenvectors:
        left_scale = shapes.expand_dims(elementwise.conj(scale), (-1,))
        left_inner = binary.div(adjoint(projected), left_scale)
        out_tangents.append(_eigvec_tangent(u, left_inner, elementwise.conj(w)))
    if compute_right_eigenvectors:
        out_tangents.append(_eigvec_tangent(v, inner, w))
    return outs, out_tangents


ad.jvp_rules[eig_p] = _eig_jvp
batch_rules[eig_p] = _batch_front(eig_p)
lowering_rules[eig_p] = host_lowering(_eig_impl)


# --- schur ----------------------------------------------------------------------------------
schur_p = Primitive("schur", multiple_results=True)


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):  # fmt: skip
    """The Schur form T of each square matrix, x = Z T Zᴴ with Z unitary, and Z if
    `compute_schur_vectors`: T quasi-triangular (2x2 blocks for complex pairs) for real x,
    triangular for complex x. LAPACK's eigenvalue sorting is not built, as in JAX."""
    return schur_p.bind(
        x, compute_schur_vectors=bool(compute_schur_vectors),
        sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable,
    )  # fmt: skip


@schur_p.def_impl
def _schur_impl(x, *, compute_schur_vectors, **_):
    refuse_half_precision("schur", x)
    import scipy.linalg

    output = "complex" if dtypes.is_complex(x.dtype) else "real"

    def of_matrix(m):
        if not np.isfinite(m).all():
            return np.triu(np.full(m.shape, np.nan)), np.nan
        return scipy.linalg.schur(m, output=output, check_finite=False)

    count = 1 + compute_schur_vectors
    return _per_matrix(lambda m: of_matrix(m)[:count], x, [(x.shape[-2:], x.dtype)] * count)


@schur_p.def_abstract_eval
def _schur_abstract_eval(x, *, compute_schur_vectors, sort_eig_vals, **_):
    _check_square("schur", x)
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    return [x.update(weak_type=False)] * (1 + compute_schur_vectors)


ad.not_differentiable(schur_p, "JAX has no derivative of the Schur decomposition")
batch_rules[schur_p] = _batch_front(schur_p)
lowering_rules[schur_p] = host_lowering(_schur_impl)


# --- hessenberg -----------------------------------------------------------------------------
hessenberg_p = Primitive("hessenberg", multiple_results=True)


def hessenberg(a):
    """The reduction of each square matrix to upper Hessenberg form H = Qᴴ a Q, in LAPACK's
    gehrd form: (H on and above the first subdiagonal, Householder vectors below it; their
    n - 1 scale factors τ), Q = (1 - τ₁ v₁ v₁ᴴ) ⋯ (1 - τₙ₋₁ vₙ₋₁ vₙ₋₁ᴴ)."""
    return tuple(hessenberg_p.bind(a))


@hessenberg_p.def_impl
def _hessenberg_impl(a):
    refuse_half_precision("hessenberg", a)
    n = a.shape[-1]
    if n == 0:
        return [a.copy(), np.empty((*a.shape[:-2], 0), a.dtype)]
    gehrd = _lapack("gehrd", a.dtype)
    return _per_matrix(lambda m: gehrd(m)[:2], a, [((n, n), a.dtype), ((n - 1,), a.dtype)])


@hessenberg_p.def_abstract_eval
def _hessenberg_abstract_eval(a):
    _check_square("hessenberg", a)
    taus = ShapedArray((*a.shape[:-2], max(a.shape[-1] - 1, 0)), a.dtype)
    return [a.update(weak_type=False), taus]


ad.not_differentiable(hessenberg_p, "JAX has no derivative of the Hessenberg reduction")
batch_rules[hessenberg_p] = _batch_front(hessenberg_p)
lowering_rules[hessenberg_p] = host_lowering(_hessenberg_impl)


# --- tridiagonal ----------------------------------------------------------------------------
tridiagonal_p = Primitive("tridiagonal", multiple_results=True)


def tridiagonal(a, *, lower: bool = True):
    """The reduction of each Hermitian matrix (its `lower` or upper triangle read) to a real
    symmetric tridiagonal T = Qᴴ a Q, in LAPACK's sytrd/hetrd form: (the reflectors stored in
    a's read triangle, T's diagonal d, its off-diagonal e, the reflectors' n - 1 factors τ)."""
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


@tridiagonal_p.def_impl
def _tridiagonal_impl(a, *, lower):
    refuse_half_precision("tridiagonal", a)
    n, real = a.shape[-1], _real_dtype(a.dtype)
    reduce = _lapack("hetrd" if dtypes.is_complex(a.dtype) else "sytrd", a.dtype)
    outs = [((n, n), a.dtype), ((n,), real), ((n - 1,), real), ((n - 1,), a.dtype)]
    return _per_matrix(lambda m: reduce(m, lower=int(lower))[:4], a, outs)


@tridiagonal_p.def_abstract_eval
def _tridiagonal_abstract_eval(a, *, lower):
    _check_inexact("tridiagonal", a)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {a.shape}.")
    batch, n, real = a.shape[:-2], a.shape[-1], _real_dtype(a.dtype)
    return [
        a.update(weak_type=False),
        ShapedArray((*batch, n), real),
        ShapedArray((*batch, n - 1), real),
        ShapedArray((*batch, n - 1), a.dtype),
    ]


ad.not_differentiable(tridiagonal_p, "JAX has no derivative of the tridiagonal reduction")
batch_rules[tridiagonal_p] = _batch_front(tridiagonal_p)
lowering_rules[tridiagonal_p] = host_lowering(_tridiagonal_impl)


# --- tridiagonal_solve ----------------------------------------------------------------------
tridiagonal_solve_p = Primitive("tridiagonal_solve")


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """x with A x = b for the tridiagonal A of sub-diagonal `dl` (dl[0] unread), diagonal `d`
    and super-diagonal `du` (du[-1] unread), by LAPACK's gtsv (partial pivoting); NaNs where
    A is singular. With `perturb_singular` a zero pivot is replaced by the smallest normal
    number instead (no pivoting then), which gives finite results."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _thomas_perturbed(dl, d, du, b):
    """Gaussian elimination without pivoting, vectorized over the batch, a zero pivot
    replaced by the smallest normal number."""
    tiny = dtypes.finfo(d.dtype).tiny
    m = d.shape[-1]
    pivots, rhs = np.empty_like(d), np.empty_like(b)
    with np.errstate(all="ignore"):
        for i in range(m):
            pivot = d[..., i] - (dl[..., i] * du[..., i - 1] / pivots[..., i - 1] if i else 0)
            pivots[..., i] = np.where(pivot == 0, tiny, pivot)
            previous = dl[..., i, None] * rhs[..., i - 1, :] / pivots[..., i - 1, None] if i else 0
            rhs[..., i, :] = b[..., i, :] - previous
        x = np.empty_like(b)
        for i in reversed(range(m)):
            after = du[..., i, None] * x[..., i + 1, :] if i < m - 1 else 0
            x[..., i, :] = (rhs[..., i, :] - after) / pivots[..., i, None]
    return x


@tridiagonal_solve_p.def_impl
def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
    refuse_half_precision("tridiagonal_solve", dl, d, du, b)
    if perturb_singular:
        return _thomas_perturbed(dl, d, du, b)
    gtsv = _lapack("gtsv", b.dtype)
    count = math.prod(d.shape[:-1])
    x = np.empty((count, *b.shape[-2:]), b.dtype)
    flat = [v.reshape(count, *v.shape[len(d.shape) - 1 :]) for v in (dl, d, du, b)]
    for i, (sub, diag, sup, rhs) in enumerate(zip(*flat, strict=True)):
        if d.shape[-1]:
            *_, solution, info = gtsv(sub[1:], diag, sup[:-1], rhs)
            x[i] = solution if info == 0 else np.nan
    return x.reshape(b.shape)


@tridiagonal_solve_p.def_abstract_eval
def _tridiagonal_solve_abstract_eval(dl, d, du, b, *, perturb_singular):
    for position, aval in enumerate((dl, d, du, b)):
        _check_inexact("tridiagonal_solve", aval, position)
        if len(aval.shape) < 1 + (position == 3):
            raise TypeError(
                f"Input {position} to tridiagonal_solve must have rank at least "
                f"{1 + (position == 3)}, but got shape={aval.shape}"
            )
    if len({dl.dtype, d.dtype, du.dtype, b.dtype}) != 1:
        names = ", ".join(a.dtype.name for a in (dl, d, du, b))
        raise TypeError(f"lax.tridiagonal_solve requires arguments to have the same dtypes, "
                        f"got {names}.")  # fmt: skip
    if not dl.shape == d.shape == du.shape:
        raise TypeError(
            "tridiagonal_solve requires that all diagonal arguments have the same shape."
        )
    if b.shape[:-1] != d.shape:
        batch_dims = [len(a.shape) - 1 for a in (dl, d, du)] + [len(b.shape) - 2]
        if len(set(batch_dims)) != 1:
            raise TypeError(
                "All inputs to tridiagonal_solve must have the same number of batch "
                f"dimensions, but got {batch_dims} batch dimensions for the inputs."
            )
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
            "dimensions of the diagonal arguments."
        )
    return b.update(weak_type=False)


def _tridiagonal_matvec(dl, d, du, x):
    """A x for the tridiagonal A (dl, d, du) and matrices x, batched alike."""
    rank = len(get_aval(x).shape)
    column = lambda v: shapes.expand_dims(v, (rank - 1,))
    zero_row = [(0, 0, 0)] * (rank - 2)
    below = binary.mul(column(dl), shapes.pad(x, np.zeros((), get_aval(x).dtype),
                                              [*zero_row, (1, -1, 0), (0, 0, 0)]))  # fmt: skip
    above = binary.mul(column(du), shapes.pad(x, np.zeros((), get_aval(x).dtype),
                                              [*zero_row, (-1, 1, 0), (0, 0, 0)]))  # fmt: skip
    return binary.add(binary.add(binary.mul(column(d), x), below), above)


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    """Linear in b; in the diagonals: dx = A⁻¹ (db - dA x)."""
    (dl, d, du, b), (ddl, dd, ddu, db) = primals, tangents
    x = tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    rhs = db
    if not all(type(t) is Zero for t in (ddl, dd, ddu)):
        change = _tridiagonal_matvec(*map(ad.instantiate_zeros, (ddl, dd, ddu)), x)
        rhs = elementwise.neg(change) if type(db) is Zero else binary.sub(db, change)
    if type(rhs) is Zero:
        return x, Zero.from_primal_value(x)
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    """b̄ = A⁻ᵀ x̄, Aᵀ having sub-diagonal [0, du[:-1]] and super-diagonal [dl[1:], 0]."""
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    rank = len(get_aval(d).shape)
    zero = np.zeros((), get_aval(d).dtype)
    batch = [(0, 0, 0)] * (rank - 1)
    sub = shapes.pad(du, zero, [*batch, (1, -1, 0)])
    sup = shapes.pad(dl, zero, [*batch, (-1, 1, 0)])
    return [
        None,
        None,
        None,
        tridiagonal_solve_p.bind(sub, d, sup, ct, perturb_singular=perturb_singular),
    ]


ad.jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
ad.mark_linear(tridiagonal_solve_p, 3)
transpose_rules[tridiagonal_solve_p] = _tridiagonal_solve_transpose
batch_rules[tridiagonal_solve_p] = _batch_front(tridiagonal_solve_p)
lowering_rules[tridiagonal_solve_p] = host_lowering(_tridiagonal_solve_impl)
