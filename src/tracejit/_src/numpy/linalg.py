"""`jnp.linalg`: norms, matrix powers, the products `jnp` already has under their `linalg`
names, and the Cholesky and LU solvers (`cholesky`, `solve`, `inv`) over `lax.linalg`. The
determinants and general eigenproblems are in `linalg_determinants`, what QR, eigh and the SVD
give in `linalg_spectral`.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import linalg as lax_linalg
from tracejit._src.numpy import (
    arithmetic,
    creation,
    lib,
    lib_math,
    manipulation,
    products,
    promotion,
    reductions,
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


def _inexact(name: str, x):
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
    x = _inexact("jnp.linalg.vector_norm", x)
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
    x = _inexact("jnp.linalg.norm", x)
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
        # circle: linalg_spectral imports norm and inv from here; norm uses its jitted svd,
        # which JAX's spectral norms call (jit[name=svd] inside jit[name=norm]).
        from tracejit._src.numpy.linalg_spectral import svd

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
