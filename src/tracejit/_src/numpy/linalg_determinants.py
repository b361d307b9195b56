"""`jnp.linalg`'s determinants (`det`, `slogdet`), tensor inverses and solves, the
non-symmetric eigendecomposition (`eig`, `eigvals`) and `jnp.roots` (eigenvalues of the
companion matrix).

Determinants come from the LU factorization P A = L U: the product of U's diagonal and the
parity of the row swaps. Their derivatives are custom, as JAX's: `slogdet`'s is tr(A⁻¹ dA),
and `det`'s is tr(adj(A) dA) with the adjugate computed without dividing by U's last pivot,
adj(A) = sign(P) ∏_{i<n} u_ii · U'⁻¹ diag(u_nn, ..., u_nn, 1) L⁻¹ P (U' is U with u_nn = 1),
so that it stays finite at a singular matrix (JAX's zero-safe gradient; like JAX's, it is 0
when a pivot before the last is 0). 2x2
and 3x3 determinants are their closed-form polynomials, as in JAX.
"""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.lax import linalg_nonsymmetric as lax_nonsymmetric
from tracejit._src.lax import linalg_spectral
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import (
    arithmetic,
    creation,
    lib,
    manipulation,
    promotion,
    reductions,
    sorting,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.linalg import inv, solve


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def _square_inexact(name: str, a):
    (a,) = promotion.promote_dtypes_inexact(promotion.asarray_operand(name, a))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {name}() must have shape [..., n, n], got {a.shape}")
    return a


def _complex_dtype(dtype) -> np.dtype:
    return np.dtype(
        np.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else np.complex128
    )


def _row_swaps(pivots):
    """How many rows LU's pivots swap (each pivot not on its own row swaps two)."""
    rows = creation.arange(pivots.shape[-1], dtype=pivots.dtype)
    return reductions.count_nonzero(ufuncs.not_equal(pivots, rows), axis=-1)


def _parity_sign(count, dtype):
    """(-1) ** count."""
    return promotion.convert_element_type(1 - 2 * arithmetic.remainder(count, 2), dtype)


# --- slogdet ----------------------------------------------------------------------------------


def _signed_log_det(diag, factor_sign):
    """(sign, log|det|) of a triangular factor with diagonal `diag` times a factor of
    determinant `factor_sign` (a permutation's or reflections' ±1 or unit phase)."""
    singular = reductions.any(ufuncs.equal(diag, 0), axis=-1)
    if dtypes.is_complex(diag.dtype):
        phases = ufuncs.divide(diag, ufuncs.abs(diag).astype(diag.dtype))
        sign = reductions.prod(phases, axis=-1) * factor_sign
    else:
        negatives = reductions.count_nonzero(ufuncs.less(diag, 0), axis=-1)
        sign = factor_sign * _parity_sign(negatives, diag.dtype)
    sign = ufuncs.where(singular, np.zeros((), diag.dtype), sign)
    logabsdet = reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)
    logabsdet = ufuncs.where(singular, np.array(-np.inf, logabsdet.dtype), logabsdet)
    return sign, logabsdet


@partial(custom_jvp, nondiff_argnums=(1,))
def _slogdet(a, method):
    """By LU (P A = L U: det P = ±1) or QR (A = Q R, Q a product of Householder reflections
    I - τ v vᴴ, each of determinant -τ/conj(τ), -1 when real, 1 when τ = 0)."""
    if method == "qr":
        factors, taus = linalg_spectral.geqrf(a)
        if dtypes.is_complex(a.dtype):
            reflections = ufuncs.where(taus == 0, np.ones((), a.dtype), -taus / ufuncs.conj(taus))
            factor_sign = reductions.prod(reflections, axis=-1)
        else:
            factor_sign = _parity_sign(reductions.count_nonzero(taus, axis=-1), a.dtype)
    else:
        factors, pivots, _ = lax_linalg.lu(a)
        factor_sign = _parity_sign(_row_swaps(pivots), a.dtype)
    return _signed_log_det(lib.diagonal(factors, 0, -2, -1), factor_sign)


@_slogdet.defjvp
def _slogdet_jvp(method, primals, tangents):
    """d log|det A| = Re tr(A⁻¹ dA); the sign turns by i Im tr(A⁻¹ dA) (complex A only)."""
    (a,), (da,) = primals, tangents
    sign, logabsdet = _slogdet(a, method)
    change = lib.trace(solve(a, da), 0, -2, -1)
    if dtypes.is_complex(a.dtype):
        turn = ufuncs.multiply(sign, (1j * ufuncs.imag(change)).astype(a.dtype))
        return (sign, logabsdet), (turn, ufuncs.real(change))
    return (sign, logabsdet), (creation.zeros_like(sign), change)


def slogdet(a, *, method=None):
    """(sign, log|det a|) of each square matrix of `a` (sign 0 and -inf for a singular one;
    for complex `a` the sign is a unit complex number), by LU (`method` None or 'lu') or QR."""
    a = _square_inexact("slogdet", a)
    if method not in (None, "lu", "qr"):
        raise ValueError(
            f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'."
        )
    if a.shape[-1] == 0:
        ones = manipulation.broadcast_to(np.ones((), a.dtype), a.shape[:-2])
        return SlogdetResult(ones, ufuncs.real(ones) * 0)
    return SlogdetResult(*_slogdet(a, method or "lu"))


# --- det --------------------------------------------------------------------------------------


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (
        a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
        + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
        + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
        - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
        - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
        - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2]
    )


@custom_jvp
def _det_lu(a):
    sign, logabsdet = _slogdet(a, "lu")
    return sign * ufuncs.exp(logabsdet).astype(a.dtype)


@_det_lu.defjvp
def _det_jvp(primals, tangents):
    """d det = tr(adj(A) dA), the adjugate without a division by U's last pivot (above)."""
    (a,), (da,) = primals, tangents
    n = a.shape[-1]
    factors, pivots, permutation = lax_linalg.lu(a)
    diag = lib.diagonal(factors, 0, -2, -1)
    last = np.zeros((n, n), bool)
    last[-1, -1] = True
    # A zero pivot before the last makes the cofactor 0 (as JAX's): a 1 there keeps it finite.
    zero_pivot = ufuncs.logical_and(np.eye(n, dtype=bool), ufuncs.equal(factors, 0))
    unit_last = ufuncs.where(ufuncs.logical_or(last, zero_pivot), np.ones((), a.dtype), factors)
    rows = lax_linalg.permute_rows(da, permutation)
    lower = lax_linalg.triangular_solve(factors, rows, left_side=True, lower=True,
                                        unit_diagonal=True)  # fmt: skip
    last_pivot = diag[..., -1:]
    scale = manipulation.concatenate(
        [manipulation.broadcast_to(last_pivot, (*a.shape[:-2], n - 1)),
         np.ones((*a.shape[:-2], 1), a.dtype)], axis=-1,
    )  # fmt: skip
    solved = lax_linalg.triangular_solve(unit_last, lower * scale[..., None], left_side=True,
                                         lower=False)  # fmt: skip
    cofactor = reductions.prod(diag[..., :-1], axis=-1) * _parity_sign(_row_swaps(pivots),
                                                                        a.dtype)  # fmt: skip
    return _det_lu(a), cofactor * lib.trace(solved, 0, -2, -1)


@jnp_jit
def det(a):
    """The determinant of each square matrix of `a` (0 for a singular one, whose gradient,
    the adjugate, stays finite)."""
    a = _square_inexact("_det", a)
    n = a.shape[-1]
    if n == 0:
        return manipulation.broadcast_to(np.ones((), a.dtype), a.shape[:-2])
    if n == 1:
        return a[..., 0, 0]
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    return _det_lu(a)


# --- eig, eigvals -----------------------------------------------------------------------------


def eig(a):
    """(eigenvalues, right eigenvectors) of each square matrix of `a`, complex, the vectors in
    columns of unit norm; not differentiable in the eigenvectors (see `lax.linalg.eig`)."""
    a = _square_inexact("eig", a)
    w, v = lax_nonsymmetric.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The (complex) eigenvalues of each square matrix of `a`."""
    a = _square_inexact("eigvals", a)
    (w,) = lax_nonsymmetric.eig(a, compute_left_eigenvectors=False,
                                compute_right_eigenvectors=False)  # fmt: skip
    return w


# --- tensorinv, tensorsolve -------------------------------------------------------------------


def tensorinv(a, ind=2):
    """The tensor x with tensordot(a, x, ind) the identity: `a`'s first `ind` axes against the
    rest, inverted as a square matrix and reshaped to (rest, first)."""
    a = promotion.asarray_operand("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got {ind=}")
    first, rest = a.shape[:ind], a.shape[ind:]
    if math.prod(first) != math.prod(rest):
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions equals "
            f"that of the remaining dimensions. got arr.shape={a.shape} with {ind=}."
        )
    inverse = inv(manipulation.reshape(a, (math.prod(first), -1)))
    return manipulation.reshape(inverse, (*rest, *first))


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b; `axes` of `a` are first moved to its end."""
    a, b = promotion.to_operands("tensorsolve", (a, b))
    if axes is not None:
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        a = manipulation.moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    if a.shape[: b.ndim] != b.shape:
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. got "
            f"a.shape={a.shape}, b.shape={b.shape}"
        )
    unknowns = a.shape[b.ndim :]
    if math.prod(b.shape) != math.prod(unknowns):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
            f"a.shape={a.shape}, b.ndim={b.ndim}."
        )
    matrix = manipulation.reshape(a, (math.prod(b.shape), -1))
    return manipulation.reshape(solve(matrix, manipulation.ravel(b)), unknowns)


# --- roots ------------------------------------------------------------------------------------


def _companion_eigvals(p):
    """The roots of the polynomial p (leading coefficient first, nonzero), as the eigenvalues
    of its companion matrix."""
    n = p.shape[0] - 1
    top = manipulation.expand_dims(-p[1:] / p[0], 0)
    below = manipulation.concatenate([creation.eye(n - 1, dtype=p.dtype),
                                      creation.zeros((n - 1, 1), p.dtype)], axis=1)  # fmt: skip
    return eigvals(manipulation.concatenate([top, below], axis=0))


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients `p` (highest power first). With
    `strip_zeros`, leading zeros are dropped (`p` must be concrete); without, `p` may be
    traced and each leading zero gives a NaN root, last."""
    (p,) = promotion.promote_dtypes_inexact(promotion.asarray_operand("roots", p))
    empty = creation.zeros((0,), lax_nonsymmetric.complex_dtype(p.dtype))
    if p.ndim == 0:  # a constant: no roots
        return empty
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if strip_zeros:
        if isinstance(p, Tracer) and p.to_concrete_value() is None:
            raise concretization_error(
                p, ConcretizationTypeError, "jnp.roots() (to use it within a JIT-compiled "
                "context, pass strip_zeros=False, but be aware that leading zeros will result "
                "in some returned roots being set to NaN)",
            )  # fmt: skip
        nonzero = np.flatnonzero(sorting.concrete_value(p))
        p = p[int(nonzero[0]) :] if nonzero.size else p[:0]
        return empty if p.shape[0] < 2 else _companion_eigvals(p)
    if p.shape[0] < 2:
        return empty
    size = p.shape[0]
    zero = ufuncs.equal(p, 0)
    leading = ufuncs.where(reductions.all(zero), size, reductions.argmin(zero))
    p = ufuncs.where(leading == size, np.ones((), p.dtype), p)
    shifted = p[(creation.arange(size) + leading) % size]
    found = _companion_eigvals(shifted)
    found = lax_sort.sort((ufuncs.equal(found, 0), found), num_keys=1)[1]  # zero roots last
    missing = creation.arange(size - 1) >= size - 1 - leading
    return ufuncs.where(missing, np.array(np.nan + 1j * np.nan, found.dtype), found)
