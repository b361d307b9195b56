"""Products with matrices and factors, without forming what they multiply
(`lax.linalg.symmetric_product`, `ormqr`, `cholesky_update`).

`symmetric_product` is alpha A Aᵀ + beta C (BLAS's syrk), `ormqr` multiplies C by the Q of
`geqrf`'s Householder reflectors (LAPACK's ormqr/unmqr) and `cholesky_update` turns the
Cholesky factor R of A = RᵀR into that of A + w wᵀ by Givens rotations, in O(n²). As in JAX,
none has a derivative, and `cholesky_update` no batching rule. Eagerly they are NumPy and
SciPy's LAPACK; compiled, `symmetric_product` is its dot and sums, the other two the same
LAPACK and NumPy called back from XLA.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.interpreters.registration import lower_fun
from tracejit._src.lax import arrays, binary, comparison, selection, shapes
from tracejit._src.lax.linalg import (
    host_lowering,
    matmul,
    matrix_transpose,
    refuse_half_precision,
)
from tracejit._src.lowering.lower import lowering_rules


def _check_dtypes(name: str, avals, accepted: str) -> None:
    """JAX's errors: each operand of a floating (or, `accepted` 'inexact', complex) dtype, all
    of one dtype."""
    check = dtypes.is_float if accepted == "floating" else dtypes.is_inexact
    kinds = "floating" if accepted == "floating" else "floating, complexfloating"
    for i, aval in enumerate(avals):
        if not check(aval.dtype):
            raise TypeError(
                f"{name} does not accept dtype {aval.dtype} at position {i}. Accepted dtypes at "
                f"position {i} are subtypes of {kinds}."
            )
    if len({aval.dtype for aval in avals}) > 1:
        got = ", ".join(str(aval.dtype) for aval in avals)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}.")


def _batch_all_at_front(primitive: Primitive):
    """A batching rule for a primitive over the trailing matrix axes: every operand batched at
    the front."""

    def rule(values, dims, **params):
        size = next(x.shape[d] for x, d in zip(values, dims, strict=True) if d is not None)
        operands = [batch_at_front(x, d, size) for x, d in zip(values, dims, strict=True)]
        return primitive.bind(*operands, **params), 0

    return rule


def _lower_tril(x, k: int):
    """x with the entries above its k-th diagonal zeroed, as JAX's `tril` stages it."""
    shape = x.shape[-2:]
    rows = binary.add(shapes.broadcasted_iota(np.int32, shape, 0), np.int32(k))
    keep = comparison.ge(rows, shapes.broadcasted_iota(np.int32, shape, 1))
    if len(x.shape) > 2:
        keep = shapes.broadcast_in_dim(keep, x.shape, (len(x.shape) - 2, len(x.shape) - 1))
    return selection.select_n(keep, arrays.full(x.shape, 0, x.dtype), x)


# --- symmetric_product ----------------------------------------------------------------------
symmetric_product_p = Primitive("symmetric_product")


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """alpha A Aᵀ + beta C for A [..., m, n] and C [..., m, m] (symmetric); the whole product
    is computed, and `symmetrize_output` mirrors its lower triangle onto the upper one."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        upper = matrix_transpose(_lower_tril(result, -1))
        result = binary.add(_lower_tril(result, 0), upper)
    return result


def _symmetric_product(a, c, *, alpha, beta):
    """The product from operations that stage and lower (its eager impl and its lowering)."""
    product = matmul(a, matrix_transpose(a))
    return binary.add(
        binary.mul(arrays.full((), alpha, a.dtype), product),
        binary.mul(arrays.full((), beta, c.dtype), c),
    )


@symmetric_product_p.def_impl
def _symmetric_product_impl(a, c, *, alpha, beta):
    product = np.matmul(a, np.swapaxes(a, -1, -2))
    return (a.dtype.type(alpha) * product + c.dtype.type(beta) * c).astype(c.dtype)


@symmetric_product_p.def_abstract_eval
def _symmetric_product_abstract_eval(a, c, *, alpha, beta):
    if (
        len(a.shape) < 2
        or len(c.shape) < 2
        or a.shape[:-1] != c.shape[:-1]
        or (c.shape[-1] != c.shape[-2])
    ):
        raise ValueError(
            "symmetric_update expects a rectangular matrix of shape (m, n) and a square "
            f"matrix of shape (n, n). Got shapes {a.shape} and {c.shape}."
        )
    _check_dtypes("symmetric_product", (a, c), "floating")
    return ShapedArray(c.shape, c.dtype)


ad.not_differentiable(symmetric_product_p, "as in JAX")
batch_rules[symmetric_product_p] = _batch_all_at_front(symmetric_product_p)
lowering_rules[symmetric_product_p] = lower_fun(_symmetric_product, multiple_results=False)


# --- ormqr ----------------------------------------------------------------------------------
ormqr_p = Primitive("ormqr")


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Q C (`left`), C Q (not `left`), or with Qᴴ (`transpose`), for the Q of `geqrf`'s
    Householder reflectors `a` [..., m, n] and `taus` [..., k], without forming Q."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


@ormqr_p.def_impl
def _ormqr_impl(a, taus, c, *, left, transpose):
    refuse_half_precision("ormqr", a, taus, c)
    from scipy.linalg import lapack

    out = np.array(c, copy=True)
    if out.size == 0:
        return out
    m, n = a.shape[-2:]
    complex_ = np.iscomplexobj(a)
    name = "unmqr" if complex_ else "ormqr"
    trans = ("C" if complex_ else "T") if transpose else "N"
    flat_a, flat_taus = a.reshape(-1, m, n), taus.reshape(-1, taus.shape[-1])
    flat_out = out.reshape(-1, *c.shape[-2:])
    for i in range(flat_a.shape[0]):
        (routine,) = lapack.get_lapack_funcs((name,), (flat_a[i],))
        lwork = max(1, flat_out[i].shape[1 if left else 0] * 64)
        flat_out[i], _, info = routine("L" if left else "R", trans, flat_a[i], flat_taus[i],
                                       flat_out[i], lwork)  # fmt: skip
        if info != 0:
            raise ValueError(f"ormqr: LAPACK's {name} failed with info={info}")
    return out


@ormqr_p.def_abstract_eval
def _ormqr_abstract_eval(a, taus, c, *, left, transpose):
    _check_dtypes("ormqr", (a, taus, c), "inexact")
    if len(a.shape) < 2 or len(c.shape) < 2:
        raise ValueError(f"ormqr expects matrices, got shapes {a.shape} and {c.shape}")
    m = a.shape[-2]
    if left and c.shape[-2] != m:
        raise ValueError(
            "ormqr with left=True expects c to have the same number of rows as the Householder "
            f"matrix a. Got a shape {a.shape} and c shape {c.shape}."
        )
    if not left and c.shape[-1] != m:
        raise ValueError(
            "ormqr with left=False expects c to have as many columns as the Householder matrix "
            f"a has rows. Got a shape {a.shape} and c shape {c.shape}."
        )
    if taus.shape[-1] > min(a.shape[-2:]) or (
        a.shape[:-2] != taus.shape[:-1] or a.shape[:-2] != c.shape[:-2]
    ):
        raise ValueError(
            "ormqr: a, taus and c must have the same batch dimensions, and taus at most "
            f"min(m, n) elements, got shapes {a.shape}, {taus.shape} and {c.shape}"
        )
    return ShapedArray(c.shape, c.dtype)


ad.not_differentiable(ormqr_p, "as in JAX")
batch_rules[ormqr_p] = _batch_all_at_front(ormqr_p)
lowering_rules[ormqr_p] = host_lowering(_ormqr_impl)


# --- cholesky_update ------------------------------------------------------------------------
cholesky_update_p = Primitive("cholesky_update")


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of RᵀR + w wᵀ, from R's (upper, n x n) and w (n)."""
    return cholesky_update_p.bind(r_matrix, w_vector)


@cholesky_update_p.def_impl
def _cholesky_update_impl(r, w):
    """Row k of R is rotated with what is left of w, by the Givens rotation that zeroes w[k]:
    one vectorized step per row."""
    r, w = np.triu(r), np.array(w, copy=True)
    for k in range(r.shape[0]):
        diagonal = np.hypot(r[k, k], w[k])
        cosine, sine = diagonal / r[k, k], w[k] / r[k, k]
        r[k, k] = diagonal
        r[k, k + 1 :] = (r[k, k + 1 :] + sine * w[k + 1 :]) / cosine
        w[k + 1 :] = cosine * w[k + 1 :] - sine * r[k, k + 1 :]
    return r


@cholesky_update_p.def_abstract_eval
def _cholesky_update_abstract_eval(r, w):
    if len(r.shape) != 2:
        raise TypeError(
            f"Input 0 to cholesky_update must have a rank of exactly 2, but got shape={r.shape}"
        )
    if r.shape[0] != r.shape[1] or w.shape != r.shape[:1]:
        raise ValueError(
            "Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the "
            f"same size as input. Got shapes {r.shape} and {w.shape} instead"
        )
    _check_dtypes("cholesky_update", (r, w), "floating")
    return ShapedArray(r.shape, r.dtype)


def _cholesky_update_batch(values, dims):
    raise NotImplementedError("Batching rule for 'cholesky_update' not implemented (as in JAX)")


ad.not_differentiable(cholesky_update_p, "as in JAX")
batch_rules[cholesky_update_p] = _cholesky_update_batch
lowering_rules[cholesky_update_p] = lambda ctx, r, w: ctx.host_callback(
    lambda r, w: [_cholesky_update_impl(r, w)], [r, w], "cholesky_update", has_side_effect=False
)[0]
