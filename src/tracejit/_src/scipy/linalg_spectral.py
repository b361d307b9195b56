"""`tracejit.scipy.linalg`'s QR, SVD, symmetric eigendecomposition and polar decomposition,
with SciPy's signatures and tuple results over `lax.linalg` and `jnp.linalg`.

The polar decomposition a = U P (U with orthonormal columns, P Hermitian positive
semidefinite) comes from the SVD, a = (u vh)(vhᴴ s vh), or, by default as in JAX, from QDWH:
the dynamically weighted Halley iteration X ← X (a + b XᴴX)(I + c XᴴX)⁻¹, which drives every
singular value of X = a / ‖a‖ to 1 in at most six steps for any condition number below 1/eps,
its weights (a, b, c) chosen from a lower bound l of the smallest singular value, tracked
alongside. Ill-conditioned steps (large c) run as a QR of [√c X; I] (backward stable); once c
is small, as a Cholesky solve of I + c XᴴX (cheaper).
"""

from __future__ import annotations

import numpy as np

from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.lax import linalg_spectral as lax_spectral
from tracejit._src.lax.control_flow import conditionals, loops
from tracejit._src.numpy import linalg_spectral as jnp_spectral
from tracejit._src.numpy import manipulation, products, promotion, ufuncs
from tracejit._src.numpy.linalg_spectral import norm

_QR_MODES = {"full": True, "economic": False, "r": True}


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) with q r = a ('full': q square; 'economic': q with min(m, n) columns), or (r,)
    ('r'); with `pivoting`, also the columns' permutation p, a[:, p] = q r."""
    if mode not in _QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("qr", a))
    out = lax_spectral.qr(a, pivoting=pivoting, full_matrices=_QR_MODES[mode])
    return out[1:] if mode == "r" else out


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):  # fmt: skip
    """(c q, r) for `mode` 'right' or (q c, r) for 'left', with a's economic QR (q with
    min(m, n) columns; conj(q) with `conjugate`); with `pivoting`, also a's column
    permutation."""
    a, c = promotion.promote_dtypes_inexact(*promotion.to_operands("qr_multiply", (a, c)))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be either 'right' or 'left', got {mode}")
    q, *rest = lax_spectral.qr(a, pivoting=pivoting, full_matrices=False)
    q = ufuncs.conj(q) if conjugate else q
    if mode == "right":
        if c.shape[-1] != q.shape[0]:
            raise ValueError(
                f"Array shapes are not compatible for c @ Q operation: a has shape {a.shape} "
                f"so Q has {q.shape[0]} rows, but c has {c.shape[-1]} columns (expected "
                f"{q.shape[0]})."
            )
        return (products.matmul(c, q), *rest)
    if c.shape[0] != q.shape[1]:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape {a.shape} so "
            f"Q has {q.shape[1]} columns, but c has {c.shape[0]} rows (expected {q.shape[1]})."
        )
    return (products.matmul(q, c), *rest)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):  # fmt: skip
    """(u, s, vh) with a = u diag(s) vh, s descending, or s alone without `compute_uv`
    (`lapack_driver` is ignored, as in JAX: LAPACK's gesdd always)."""
    out = jnp_spectral.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # fmt: skip
    """(w, v) of the Hermitian a (a symmetrized, so `lower` only names the triangle LAPACK
    would read), eigenvalues ascending; w alone with `eigvals_only`. Only the standard
    problem (no `b`, `type=1`, all eigenvalues) is built, as in JAX."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    w, v = jnp_spectral.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (`side` 'right', p n x n) or a = p u ('left', p m x m), u with
    orthonormal columns (rows), p Hermitian positive semidefinite; `method` 'svd' or 'qdwh'
    (m >= n for 'right', m <= n for 'left'; `eps`, `max_iterations` tune its stopping)."""
    (a,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("polar", a))
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method == "svd":
        u, s, vh = lax_spectral.svd(a, full_matrices=False)
        unitary = products.matmul(u, vh)
        basis = _adjoint(vh) if side == "right" else u
        return unitary, products.matmul(basis * s.astype(a.dtype), _adjoint(basis))
    if method != "qdwh":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    m, n = a.shape
    if (side == "right" and m < n) or (side == "left" and m > n):
        raise NotImplementedError(
            "method='qdwh' only supports mxn matrices where m < n where side='right' and "
            f"m >= n side='left', got {a.shape} with side='{side}'"
        )
    if side == "right":
        return _qdwh(a, eps=eps, max_iterations=max_iterations)
    unitary, p = _qdwh(_adjoint(a), eps=eps, max_iterations=max_iterations)
    return _adjoint(unitary), p


def _adjoint(x):
    return ufuncs.conj(manipulation.swapaxes(x, -1, -2))


def _halley_weights(l):
    """The dynamically weighted Halley coefficients (a, b, c) for a smallest singular value
    of at least l (Nakatsukasa, Bai and Gygi, 2010), and the bound after the step."""
    l2 = l * l
    gamma = ufuncs.cbrt(4.0 * (1.0 - l2) / (l2 * l2))
    root = ufuncs.sqrt(1.0 + gamma)
    a = root + 0.5 * ufuncs.sqrt(8.0 - 4.0 * gamma + 8.0 * (2.0 - l2) / (l2 * root))
    b = (a - 1.0) ** 2 / 4.0
    c = a + b - 1.0
    return a, b, c, l * (a + b * l2) / (1.0 + c * l2)


def _halley_step_qr(x, a, b, c):
    """X (a + b XᴴX)(I + c XᴴX)⁻¹ = (b/c) X + (a - b/c)/√c Q₁ Q₂ᴴ, [√c X; I] = [Q₁; Q₂] R."""
    n = x.shape[-1]
    eye = np.eye(n, dtype=x.dtype)
    root_c = ufuncs.sqrt(c)
    q, _ = lax_spectral.qr(
        manipulation.concatenate([x * root_c.astype(x.dtype), eye], axis=0),
        full_matrices=False,
    )
    q1, q2 = q[: x.shape[0]], q[x.shape[0] :]
    scale = ((a - b / c) / root_c).astype(x.dtype)
    return (b / c).astype(x.dtype) * x + scale * products.matmul(q1, _adjoint(q2))


def _halley_step_cholesky(x, a, b, c):
    """The same step through the Cholesky factor L of I + c XᴴX: X (I + c XᴴX)⁻¹ is solved
    with L and Lᴴ."""
    gram = products.matmul(_adjoint(x), x)
    factor = lax_linalg.cholesky(np.eye(x.shape[-1], dtype=x.dtype) + c.astype(x.dtype) * gram)
    z = lax_linalg.triangular_solve(factor, x, left_side=False, lower=True, transpose_a=True,
                                    conjugate_a=True)  # fmt: skip
    z = lax_linalg.triangular_solve(factor, z, left_side=False, lower=True)
    return (b / c).astype(x.dtype) * x + ((a - b / c).astype(x.dtype)) * z


def _qdwh(x, *, eps, max_iterations):
    """(u, h): the polar decomposition x = u h of an m x n matrix, m >= n, by QDWH (module
    docstring), stopping once the bound l is within (5 eps)^(1/3) of 1 and a step moves X by
    less than that (the next, cubically convergent, step would move it by about eps), or after
    `max_iterations` (default 10);
    h = (uᴴ x + (uᴴ x)ᴴ) / 2."""
    real = np.dtype(np.finfo(x.dtype).dtype)
    eps = float(np.finfo(real).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    tol = np.asarray(np.cbrt(5 * eps), real)
    one_norm = norm(x, ord=1)
    inf_norm = norm(x, ord=np.inf)
    alpha = ufuncs.sqrt(one_norm) * ufuncs.sqrt(inf_norm)  # ≥ ‖x‖₂
    alpha = ufuncs.where(alpha == 0, 1, alpha).astype(real)
    start = x / alpha.astype(x.dtype)
    lower_bound = np.asarray(eps, real)  # (of the smallest singular value of `start`)

    def keep_going(state):
        k, _, l, change = state
        return (k < max_iterations) & ((change > tol) | (l < 1 - tol))

    def step(state):
        k, x, l, _ = state
        a, b, c, l_next = _halley_weights(l)
        new = conditionals.cond(c > 100, _halley_step_qr, _halley_step_cholesky, x, a, b, c)
        return k + 1, new, l_next, norm(new - x)

    init = (np.int32(0), start, lower_bound, np.asarray(np.inf, real))
    _, u, _, _ = loops.while_loop(keep_going, step, init)
    h = products.matmul(_adjoint(u), x)
    return u, (h + _adjoint(h)) / 2
