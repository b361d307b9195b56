"""`jnp.linalg` over the orthogonal and spectral factorizations (`lax.linalg.qr`, `eigh`,
`svd`): the decompositions with NumPy's result tuples, and what singular values give,
pseudo-inverses, least squares, ranks, condition numbers, `jnp.polyfit` and the norms (the
vector norms too, beside the matrix norms they share `jnp.linalg.norm` with).

Thresholds follow NumPy's and JAX's defaults: a singular value counts when it exceeds
`rtol * s_max` (`pinv`: rtol = 10 max(m, n) eps; `matrix_rank`: max(m, n) eps), or, in
`lstsq`, when it is at least `rcond * s_max` (rcond = max(m, n) eps).
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import linalg_spectral as lax_spectral
from tracejit._src.numpy import (
    advanced_indexing,
    arithmetic,
    creation,
    lib,
    manipulation,
    products,
    promotion,
    reductions,
    sorting,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.linalg import inv


class QRResult(NamedTuple):
    Q: object
    R: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _inexact(name: str, *args):
    return promotion.promote_dtypes_inexact(*promotion.to_operands(name, args))


def _adjoint(x):
    return ufuncs.conj(manipulation.swapaxes(x, -1, -2))


def _eps(x) -> float:
    return float(dtypes.finfo(dtypes.finfo(x.dtype).dtype).eps)


@jnp_jit(static_argnames=("mode",))
def qr(a, mode="reduced"):
    """(Q, R) with Q R = a: Q (m, k) and R (k, n), k = min(m, n) ('reduced'), Q (m, m) and
    R (m, n) ('complete'), R alone ('r'), or LAPACK's Householder form ('raw': (h, tau), h
    transposed, as NumPy's)."""
    (a,) = _inexact("jnp.linalg.qr", a)
    if mode == "raw":
        h, taus = lax_spectral.geqrf(a)
        return QRResult(manipulation.swapaxes(h, -1, -2), taus)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_spectral.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _lower(UPLO) -> bool:
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    return UPLO != "U"


@jnp_jit(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input=True):
    """(eigenvalues, eigenvectors) of each Hermitian matrix, eigenvalues ascending; without
    `symmetrize_input` only the lower (`UPLO` 'L' or None) or upper ('U') triangle is read."""
    (a,) = _inexact("jnp.linalg.eigh", a)
    v, w = lax_spectral.eigh(a, lower=_lower(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues of each Hermitian matrix, ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def _hermitian_svd(a, compute_uv, subset_by_index):
    """From a = v diag(w) vᴴ: s = |w| descending, u = v in that order, vh = (u sign(w))ᴴ."""
    v, w = lax_spectral.eigh(a)
    order = sorting.argsort(ufuncs.abs(w), axis=-1, descending=True)
    keep = slice(None) if subset_by_index is None else slice(*subset_by_index)
    w = advanced_indexing.take_along_axis(w, order, axis=-1)[..., keep]
    if not compute_uv:
        return ufuncs.abs(w)
    u = advanced_indexing.take_along_axis(v, order[..., None, :], axis=-1)[..., keep]
    vh = _adjoint(u * ufuncs.sign(w)[..., None, :].astype(u.dtype))
    return SVDResult(u, ufuncs.abs(w), vh)


@jnp_jit(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """(U, S, Vh) with a = U diag(S) Vh, S descending (or S alone without `compute_uv`); a
    `hermitian` a is factored through its eigendecomposition; `subset_by_index` (start, end)
    keeps those singular values."""
    (a,) = _inexact("jnp.linalg.svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    out = lax_spectral.svd(
        a, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index
    )
    return SVDResult(*out) if compute_uv else out


def svdvals(x, /):
    """The singular values of each matrix, descending."""
    return svd(x, compute_uv=False)


def _pinv_core(hermitian, a, rtol):
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = rtol[..., None] * s[..., :1]
    s = ufuncs.where(s > cutoff, s, np.inf).astype(s.dtype)
    return products.matmul(_adjoint(vh), _adjoint(u) / s[..., :, None].astype(u.dtype))


_pinv = custom_jvp(_pinv_core, nondiff_argnums=(0,))


@_pinv.defjvp
def _pinv_jvp(hermitian, primals, tangents):
    """The Golub-Pereyra derivative of the pseudo-inverse p of a (rtol only moves the cutoff,
    which no small change crosses): dp = -p da p + p pᴴ daᴴ (I - a p) + (I - p a) daᴴ pᴴ p."""
    a, rtol = primals
    da = tangents[0]
    p = _pinv(hermitian, a, rtol)
    p_da_p = products.matmul(p, products.matmul(da, p))
    left = products.matmul(p, products.matmul(_adjoint(p), _adjoint(da)))
    left = left - products.matmul(left, products.matmul(a, p))
    right = products.matmul(_adjoint(da), products.matmul(_adjoint(p), p))
    right = right - products.matmul(p, products.matmul(a, right))
    return p, -p_da_p + left + right


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse of each matrix: singular values up to `rtol` times the
    largest are treated as zero (default 10 max(m, n) eps; `rcond` is its older name)."""
    if rtol is not None and rcond is not None:
        raise ValueError("pinv: only one of rtol and rcond may be specified.")
    (a,) = _inexact("jnp.linalg.pinv", a)
    rtol = rcond if rtol is None else rtol
    real = dtypes.finfo(a.dtype).dtype
    if rtol is None:
        rtol = 10 * max(a.shape[-2:]) * _eps(a)
    return _pinv(bool(hermitian), a, creation.asarray(rtol, dtype=real))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, resid, rank, s): the x minimizing ‖a x - b‖₂ of least norm, from a's singular
    values s, those below `rcond` times the largest (default max(m, n) eps) treated as zero;
    resid the squared residual norms (NumPy's: empty unless a has full column rank and more
    rows than columns, with `numpy_resid`, which needs a concrete rank)."""
    a, b = _inexact("jnp.linalg.lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    b = b[:, None] if vector else b
    if rcond is None:
        rcond = _eps(a) * max(m, n)
    else:
        rcond = ufuncs.where(creation.asarray(rcond) < 0, _eps(a), rcond)
    u, s, vh = lax_spectral.svd(a, full_matrices=False)
    largest = s[:1] if s.shape[0] else creation.zeros((1,), s.dtype)
    mask = s >= (creation.asarray(rcond, dtype=s.dtype) * largest)
    rank = reductions.sum(mask)
    s_inv = ufuncs.where(mask, 1 / ufuncs.where(mask, s, 1), 0).astype(s.dtype)
    x = products.matmul(_adjoint(vh), s_inv[:, None].astype(a.dtype) * products.matmul(
        _adjoint(u), b))  # fmt: skip
    resid = norm(b - products.matmul(a, x), axis=0) ** 2
    if numpy_resid and not (rank == n and m > n):
        resid = creation.zeros((0,), resid.dtype)
    return (x[:, 0] if vector else x), resid, rank, s


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above `tol` (absolute) or `rtol` times the largest
    (default max(m, n) eps); for a vector, whether it has a nonzero element."""
    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    (M,) = _inexact("jnp.linalg.matrix_rank", M)
    if M.ndim < 2:
        return reductions.any(M != 0).astype(dtypes.default_int_dtype())
    s = svd(M, compute_uv=False, hermitian=hermitian)
    if tol is None:
        rtol = max(M.shape[-2:]) * _eps(M) if rtol is None else rtol
        tol = creation.asarray(rtol, dtype=s.dtype) * reductions.max(s, axis=-1, initial=0)
    tol = creation.asarray(tol, dtype=s.dtype)
    return reductions.sum(s > tol[..., None], axis=-1)


def cond(x, p=None):
    """The condition number of each matrix in the `p`-norm: s_max / s_min for None and 2
    (s_min / s_max for -2), else ‖x‖ ‖x⁻¹‖ (square x only); infinite for a singular x."""
    (x,) = _inexact("jnp.linalg.cond", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: x must be at least 2-dimensional, got {x.shape}")
    if p in (None, 2, -2):
        s = svdvals(x)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        if x.shape[-1] != x.shape[-2]:
            raise ValueError(f"jnp.linalg.cond({p=}) needs square matrices, got {x.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    finite_input = ~reductions.any(ufuncs.isnan(x), axis=(-2, -1))
    return ufuncs.where(ufuncs.isnan(r) & finite_input, np.inf, r).astype(r.dtype)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y), highest power first (a
    column per column of a 2-D y); `full` adds lstsq's (resid, rank, s) and rcond, `cov` the
    coefficients' covariance (scaled by resid / (len(x) - deg - 1) unless 'unscaled')."""
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x, y = _inexact("jnp.polyfit", x, y)
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    order = deg + 1
    lhs, rhs = lib.vander(x, order), y
    rcond = len(x) * _eps(x) if rcond is None else rcond
    if w is not None:
        (w,) = _inexact("jnp.polyfit", w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = ufuncs.sqrt(reductions.sum(ufuncs.real(lhs * ufuncs.conj(lhs)), axis=0))
    lhs = lhs / scale.astype(lhs.dtype)
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale.astype(c.dtype)).T
    if full:
        return c, resids, rank, s, creation.asarray(rcond)
    if not cov:
        return c
    base = inv(products.matmul(_adjoint(lhs), lhs)) / products.outer(scale, scale)
    if cov == "unscaled":
        fac = 1
    elif len(x) <= order:
        raise ValueError(
            "the number of data points must exceed order to scale the covariance matrix"
        )
    else:
        fac = resids / (len(x) - order)
    return c, (base * fac if y.ndim == 1 else base[:, :, None] * fac)


# --- norms: of vectors, and of matrices, whose spectral norms are singular values ---


def _norm_operand(name: str, x):
    """`x` as an array of a floating-point or complex dtype (norms of integers are floats)."""
    x = promotion.asarray_operand(name, x)
    dtype = promotion.to_inexact_dtype(np.dtype(x.dtype))
    return promotion.convert_element_type(x, dtype, False)


def _abs_squared(x):
    """|x|^2, real for complex x: the 2-norm's summand, differentiable away from 0."""
    if dtypes.is_complex(x.dtype):
        return ufuncs.real(ufuncs.multiply(x, ufuncs.conjugate(x)))
    return ufuncs.multiply(x, x)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The `ord`-norm of `x` along `axis` (all axes for None): `inf`/`-inf` the largest/smallest
    magnitude, 0 the number of nonzero entries, any other p `sum(|x|^p)^(1/p)`."""
    x = _norm_operand("jnp.linalg.vector_norm", x)
    return _vector_norm(x, axis, keepdims, ord)


def _vector_norm(x, axis, keepdims, ord):
    if ord == np.inf:
        return reductions.max(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = ufuncs.not_equal(x, 0)
        return reductions.sum(nonzero, axis=axis, keepdims=keepdims, dtype=_real_dtype(x.dtype))
    if ord == 1:
        return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 2:
        return ufuncs.sqrt(reductions.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")  # noqa: TRY004 (JAX's)
    p = float(ord)
    powered = reductions.sum(arithmetic.power(ufuncs.abs(x), p), axis=axis, keepdims=keepdims)
    return arithmetic.power(powered, 1.0 / p)


def _real_dtype(dtype) -> np.dtype:
    return np.dtype(np.float64 if np.dtype(dtype) == np.complex128 else np.float32) if (
        dtypes.is_complex(dtype)
    ) else np.dtype(dtype)  # fmt: skip


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The `ord`-norm of the matrices in the last two axes of `x`: 'fro', the induced 1
    (largest column sum), inf (largest row sum), -1 and -inf (smallest), the spectral 2 and -2
    (largest and smallest singular value) or 'nuc' (their sum)."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@jnp_jit(static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's `linalg.norm`: a vector norm for one axis (or a 1-D `x`), a matrix norm for two
    (or a 2-D `x`), the 2-norm over all axes when neither `ord` nor `axis` is given."""
    x = _norm_operand("jnp.linalg.norm", x)
    if axis is None:
        if ord is None:
            return _vector_norm(x, None, keepdims, 2)
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of axes for norm")
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(operator.index(a) for a in axis)
    axes = tuple(manipulation.normalize_axis(a, x.ndim) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, axes, keepdims, 2 if ord is None else ord)
    if len(axes) != 2:
        raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")
    if ord is None or ord == "fro":
        return ufuncs.sqrt(reductions.sum(_abs_squared(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        return _induced_norm(x, ord, axes, keepdims)
    if ord in (2, -2, "nuc"):
        # (the jitted svd, as JAX's spectral norms call it: jit[name=svd] inside jit[name=norm])
        s = svd(manipulation.moveaxis(x, axes, (-2, -1)), compute_uv=False)
        if ord == 2:
            out = reductions.max(s, axis=-1, initial=0)
        else:
            out = reductions.min(s, axis=-1) if ord == -2 else reductions.sum(s, axis=-1)
        return manipulation.expand_dims(out, axes) if keepdims else out
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _induced_norm(x, ord, axes, keepdims):
    """The largest (ord 1, inf) or smallest (-1, -inf) absolute column (1) or row (inf) sum."""
    summed, over = axes if abs(ord) == 1 else axes[::-1]
    if not keepdims and over > summed:
        over -= 1
    sums = reductions.sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
    if ord > 0:
        return reductions.max(sums, axis=over, keepdims=keepdims, initial=0)
    return reductions.min(sums, axis=over, keepdims=keepdims)
