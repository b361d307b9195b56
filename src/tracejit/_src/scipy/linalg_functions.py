"""`tracejit.scipy.linalg`'s matrix functions: `expm` (Padé approximation with scaling and
squaring) and its Fréchet derivative `expm_frechet`, `sqrtm` and `funm` (over the complex
Schur form), and `solve_sylvester`.

`expm` follows Higham (2005): the 1-norm of A picks the lowest Padé degree (3, 5, 7, 9, 13;
float32 stops at 7) accurate for it, A is scaled by 2⁻ˢ into that degree's range when it is
larger, r(A) = (V - U)⁻¹ (V + U) is formed and squared s times (a scan of `max_squarings` guarded
steps, so reverse mode works; more squarings than that give NaNs, as in JAX). Its Fréchet
derivative L(A, E) is the JVP of `expm` at A in direction E.

`sqrtm` and `funm` work on the upper-triangular T of A = Z T Zᴴ, filling f(T) one superdiagonal
at a time (the entries of later superdiagonals still zero): the square root R from R R = T, f(T)
by Parlett's recurrence from f(T) T = T f(T); both need distinct eigenvalues where JAX's do.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.api import jvp
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.lax.control_flow import conditionals, scan
from tracejit._src.lax.linalg_nonsymmetric import complex_dtype, eig, schur
from tracejit._src.numpy import creation, lib, manipulation, promotion, reductions, ufuncs
from tracejit._src.numpy.linalg import solve
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands
from tracejit._src.vmap import vmap

# --- expm -------------------------------------------------------------------------------------

# Padé coefficients b₀ … b_m of exp and the 1-norm up to which each degree m is accurate.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}  # fmt: skip
_THETA_64 = {3: 0.01495585217958292, 5: 0.2539398330063230, 7: 0.9504178996162932,
             9: 2.097847961257068, 13: 5.371920351148152}  # fmt: skip
_THETA_32 = {3: 0.4258730016922831, 5: 1.880152677804762, 7: 3.925724783138660}


def _pade(degree):
    """(U, V) of the degree's Padé approximant, r(A) = (V - U)⁻¹ (V + U)."""
    b = _PADE[degree]

    def parts(a):
        eye = creation.eye(a.shape[-1], dtype=a.dtype)
        powers = [eye, a @ a]  # A⁰, A², A⁴, A⁶
        while len(powers) < 4:
            powers.append(powers[-1] @ powers[1])
        if degree == 13:
            high_u = powers[3] @ (b[13] * powers[3] + b[11] * powers[2] + b[9] * powers[1])
            high_v = powers[3] @ (b[12] * powers[3] + b[10] * powers[2] + b[8] * powers[1])
            u = a @ (high_u + sum(b[2 * k + 1] * powers[k] for k in range(4)))
            return u, high_v + sum(b[2 * k] * powers[k] for k in range(4))
        if degree == 9:
            powers.append(powers[3] @ powers[1])
        terms = range(degree // 2 + 1)
        u = a @ sum(b[2 * k + 1] * powers[k] for k in terms)
        return u, sum(b[2 * k] * powers[k] for k in terms)

    return parts


def _expm_of_matrix(a, max_squarings, upper_triangular):
    theta = _THETA_32 if np.finfo(a.dtype).bits == 32 else _THETA_64
    degrees = sorted(theta)
    norm = reductions.max(reductions.sum(ufuncs.abs(a), axis=0))
    squarings = ufuncs.maximum(0.0, ufuncs.floor(ufuncs.log2(norm / theta[degrees[-1]])))
    scaled = a / (2.0**squarings).astype(a.dtype)
    bounds = np.array([theta[d] for d in degrees[:-1]])
    branch = reductions.sum(ufuncs.greater_equal(norm, bounds).astype(np.int32))
    u, v = conditionals.switch(branch, [_pade(d) for d in degrees], scaled)
    if upper_triangular:  # (the approximant of a triangular A is triangular)
        r = lax_linalg.triangular_solve(v - u, v + u, left_side=True, lower=False)
    else:
        r = solve(v - u, v + u)

    def square(r, step):
        return ufuncs.where(step < squarings, r @ r, r), None

    r, _ = scan.scan(square, r, creation.arange(max_squarings, dtype=squarings.dtype))
    return ufuncs.where(squarings > max_squarings, np.array(np.nan, a.dtype), r)


def _square_matrices(name: str, a):
    (a,) = promote_dtypes_inexact(promotion.asarray_operand(name, a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    return a


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of each square matrix of `A` (NaNs where it needs more than
    `max_squarings` squarings). With `upper_triangular`, A is taken as upper triangular (its
    Padé solve a triangular one, reading the upper triangle)."""
    a = _square_matrices("expm", A)
    if a.shape[-1] == 0:
        return a
    fun = lambda m: _expm_of_matrix(m, int(max_squarings), bool(upper_triangular))
    for _ in range(a.ndim - 2):
        fun = vmap(fun)
    return fun(a)


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """(expm(A), L(A, E)), L the Fréchet derivative of expm at A in direction E (only L
    without `compute_expm`); `method` is accepted as JAX accepts it, the JVP computes L."""
    a, e = promote_dtypes_inexact(*to_operands("expm_frechet", (A, E)))
    if a.shape != e.shape:
        raise ValueError(
            f"expected A and E to be the same shape, got A.shape={a.shape} E.shape={e.shape}"
        )
    value, derivative = jvp(expm, (a,), (e,))
    return (value, derivative) if compute_expm else derivative


# --- the triangular recurrences: sqrtm, funm -----------------------------------------------


def _complex_schur(name: str, a):
    (a,) = promote_dtypes_inexact(promotion.asarray_operand(name, a))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name}: expected a square matrix, got shape {a.shape}")
    return schur(a.astype(complex_dtype(a.dtype)))


def _fill_superdiagonals(diagonal, next_entries):
    """The upper-triangular F with `diagonal`, its p-th superdiagonal taken from
    `next_entries(F)` once superdiagonals 1 … p - 1 are filled."""
    n = diagonal.shape[-1]
    f = diagonal[:, None] * creation.eye(n, dtype=diagonal.dtype)
    for p in range(1, n):
        f = ufuncs.where(np.eye(n, k=p, dtype=bool), next_entries(f), f)
    return f


def _off_diagonal_quotient(numerator, denominator):
    """numerator / denominator above the diagonal (where the recurrences divide), 0 elsewhere."""
    above = np.triu(np.ones(numerator.shape, bool), 1)
    return ufuncs.where(above, numerator / ufuncs.where(above, denominator, 1), 0)


def sqrtm(A, blocksize=1):
    """The principal square root X (X X = A) of a square matrix, complex, from the Schur
    form: R R = T gives R_ij = (T_ij - Σ_{i<k<j} R_ik R_kj) / (R_ii + R_jj)."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    t, z = _complex_schur("sqrtm", A)
    roots = ufuncs.sqrt(lib.diagonal(t))
    sums = roots[:, None] + roots[None, :]
    r = _fill_superdiagonals(roots, lambda r: _off_diagonal_quotient(t - r @ r, sums))
    return z @ r @ ufuncs.conj(z.T)


def funm(A, func, disp=True):
    """f(A) for a scalar function `func` (applied to the eigenvalues), complex, by Parlett's
    recurrence on the Schur form; with `disp=False` also an estimate of its relative error
    (SciPy's)."""
    t, z = _complex_schur("funm", A)
    values = func(lib.diagonal(t))
    diagonal = lib.diagonal(t)
    gaps = diagonal[:, None] - diagonal[None, :]
    f = _fill_superdiagonals(values.astype(t.dtype),
                             lambda f: _off_diagonal_quotient(f @ t - t @ f, gaps))  # fmt: skip
    result = z @ f @ ufuncs.conj(z.T)
    if disp:
        return result
    return result, _funm_error_estimate(t, result, gaps)


def _funm_error_estimate(t, result, gaps):
    """SciPy's: min(1, max(eps, eps / min gap × ‖triu(T, 1)‖₁)), inf if f(A) is not finite."""
    n = t.shape[-1]
    eps = float(np.finfo(t.dtype).eps)
    above = np.triu(np.ones((n, n), bool), 1)
    smallest = reductions.min(ufuncs.where(above, ufuncs.abs(gaps), np.inf), initial=np.inf)
    smallest = ufuncs.minimum(smallest, ufuncs.abs(t[0, 0]))
    smallest = ufuncs.where(smallest == 0, eps, smallest)
    strict = reductions.max(reductions.sum(ufuncs.abs(lib.triu(t, 1)), axis=0), initial=0.0)
    estimate = ufuncs.minimum(1.0, ufuncs.maximum(eps, eps / smallest * strict))
    finite = reductions.all(ufuncs.isfinite(result))
    return ufuncs.where(finite, estimate, np.inf)


# --- solve_sylvester --------------------------------------------------------------------------


def _sylvester_operands(A, B, C):
    a, b, c = promote_dtypes_inexact(*to_operands("solve_sylvester", (A, B, C)))
    m, n = a.shape[-1], b.shape[-1]
    if (a.ndim < 2 or b.ndim < 2 or c.ndim < 2 or a.shape[-2] != m or b.shape[-2] != n
            or c.shape[-2:] != (m, n)):  # fmt: skip
        raise ValueError(
            f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}\nC: {c.shape}"
        )
    batch = promotion.broadcast_shapes(a.shape[:-2], b.shape[:-2], c.shape[:-2])
    return [manipulation.broadcast_to(x, (*batch, *x.shape[-2:])) for x in (a, b, c)]


def _adjoint(x):
    return ufuncs.conj(manipulation.matrix_transpose(x))


def _triangular_sylvester(r, s, f):
    """Y with R Y + Y S = F, R and S upper triangular, column by column:
    (R + S_kk) y_k = f_k - Σ_{j<k} y_j S_jk."""
    eye = creation.eye(r.shape[-1], dtype=r.dtype)
    columns = []
    for k in range(s.shape[-1]):
        rhs = f[..., :, k]
        for j, y in enumerate(columns):
            rhs = rhs - y * s[..., j, k, None]
        shifted = r + s[..., k, k, None, None] * eye
        y = lax_linalg.triangular_solve(shifted, rhs[..., None], left_side=True, lower=False)
        columns.append(y[..., 0])
    return manipulation.stack(columns, axis=-1)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C, by the Bartels-Stewart method (`method` 'schur': complex Schur
    forms of A and B, then a triangular Sylvester equation) or by eigendecompositions
    ('eigen'); NaNs where some eigenvalue of A plus one of B is within `tol` of 0."""
    if method not in ("schur", "eigen"):
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".'
        )
    a, b, c = _sylvester_operands(A, B, C)
    complex_type = complex_dtype(c.dtype)
    a, b, cc = (x.astype(complex_type) for x in (a, b, c))
    if method == "schur":
        (r, u), (s, v) = schur(a), schur(b)
        sums = lib.diagonal(r, 0, -2, -1)[..., :, None] + lib.diagonal(s, 0, -2, -1)[..., None, :]
        y = _triangular_sylvester(r, s, _adjoint(u) @ cc @ v)
        x = u @ y @ _adjoint(v)
    else:
        (wa, p), (wb, q) = (eig(m, compute_left_eigenvectors=False) for m in (a, b))
        sums = wa[..., :, None] + wb[..., None, :]
        y = solve(p, cc @ q) / sums
        x = manipulation.matrix_transpose(solve(manipulation.matrix_transpose(q),
                                                manipulation.matrix_transpose(p @ y)))  # fmt: skip
    near_zero = reductions.any(ufuncs.abs(sums) < tol, axis=(-2, -1), keepdims=True)
    x = ufuncs.where(near_zero, np.array(np.nan, x.dtype), x)
    return x if np.dtype(c.dtype).kind == "c" else ufuncs.real(x)
