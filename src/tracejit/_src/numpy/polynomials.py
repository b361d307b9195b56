"""Polynomials as 1-D coefficient arrays, highest power first: poly, polyadd, polysub, polymul,
polydiv, polyder, polyint, and trim_zeros (`polyval` lives with the other lib functions).

Products are `convolve`s, division is long division unrolled over the static degrees, and
the derivative and integral scale by falling factorials built with `arange`, as in JAX; all
are differentiable in the coefficients. Results are inexact (integers in the default float
type) except for polyadd/polysub, which keep the promoted dtype. `trim_zeros` and the
`trim_leading_zeros` options read the values, so they need concrete operands.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.numpy import creation, lib_math, manipulation, promotion, reductions, ufuncs
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.promotion import asarray_operand


def _static_order(m, what: str) -> int:
    if isinstance(m, Tracer):
        raise concretization_error(m, ConcretizationTypeError, f"the 'm' argument of jnp.{what}")
    return operator.index(m)


def _concrete(name: str, x):
    """The NumPy value of `x`, which must be concrete."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise concretization_error(
                x, ConcretizationTypeError, f"the `filt` argument of {name}()"
            )
        return np.asarray(value)
    return np.asarray(x)


def _length(x) -> int:
    """len(x), with Python's error for a 0-d operand (JAX's polynomials call len())."""
    if x.ndim == 0:
        raise TypeError("len() of unsized object")
    return x.shape[0]


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (1-D)."""
    (zeros,) = promotion.promote_dtypes_inexact(asarray_operand("poly", seq_of_zeros))
    zeros = manipulation.atleast_1d(zeros)
    shape = zeros.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        raise NotImplementedError(
            "jnp.poly of a square matrix needs its eigenvalues (jnp.linalg.eigvals), which "
            "tracejit does not have yet"
        )
    if zeros.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = zeros.dtype
    if zeros.shape[0] == 0:
        return creation.ones((), dtype)
    coefficients = creation.ones((1,), dtype)
    one = creation.ones((1,), dtype)
    for k in range(zeros.shape[0]):
        factor = manipulation.concatenate([one, ufuncs.negative(zeros[k : k + 1])])
        coefficients = lib_math.convolve(coefficients, factor, mode="full")
    return coefficients


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter one aligned to the end)."""
    p, q = promotion.promote_dtypes(
        asarray_operand("polyadd", a1), asarray_operand("polyadd", a2, 1)
    )
    if q.shape[0] > p.shape[0]:
        p, q = q, p
    return p.at[-q.shape[0] :].add(q) if q.shape[0] else p


def polysub(a1, a2):
    """The difference of two polynomials."""
    p, q = promotion.promote_dtypes(
        asarray_operand("polysub", a1), asarray_operand("polysub", a2, 1)
    )
    return polyadd(p, ufuncs.negative(q))


def _trim_leading(name: str, x, tolerance=None):
    """`x` without its leading zeros (entries below `tolerance` in magnitude when given)."""
    value = _concrete(name, x)
    small = np.abs(value) < tolerance if tolerance is not None else value == 0
    keep = np.flatnonzero(~small)
    return x[int(keep[0]) :] if keep.size else x[:0]


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials: the full convolution of their coefficients."""
    p, q = promotion.promote_dtypes_inexact(
        asarray_operand("polymul", a1), asarray_operand("polymul", a2, 1)
    )
    if trim_leading_zeros and (_length(p) > 1 or _length(q) > 1):
        p, q = _trim_leading("trim_zeros", p), _trim_leading("trim_zeros", q)
    if _length(p) == 0:
        p = creation.zeros(1, q.dtype)
    if _length(q) == 0:
        q = creation.zeros(1, p.dtype)
    return lib_math.convolve(p, q, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of the polynomial division of `u` by `v` (long division; the
    remainder keeps `u`'s length unless `trim_leading_zeros` drops its leading entries below
    the square root of the dtype's epsilon)."""
    num, den = promotion.promote_dtypes_inexact(
        asarray_operand("polydiv", u), asarray_operand("polydiv", v, 1)
    )
    m, n = _length(num) - 1, _length(den) - 1
    scale = ufuncs.divide(1.0, den[0])
    quotient = creation.zeros(max(m - n + 1, 1), num.dtype)
    for k in range(m - n + 1):
        d = ufuncs.multiply(scale, num[k])
        quotient = quotient.at[k].set(d)
        num = num.at[k : k + n + 1].add(ufuncs.negative(ufuncs.multiply(d, den)))
    if trim_leading_zeros:
        tolerance = np.sqrt(dtypes.finfo(num.dtype).eps)
        num = _trim_leading("trim_zeros_tol", num, tolerance)
    return quotient, num


@jnp_jit(static_argnames=("m",))
def polyder(p, m=1):
    """The `m`-th derivative of the polynomial `p`."""
    (p,) = promotion.promote_dtypes_inexact(asarray_operand("polyder", p))
    m = _static_order(m, "polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    powers = ufuncs.subtract(
        creation.arange(m, _length(p), dtype=p.dtype)[None],
        creation.arange(m, dtype=p.dtype)[:, None],
    )
    coefficients = reductions.prod(powers, 0)
    return ufuncs.multiply(p[:-m], coefficients[::-1])


def polyint(p, m=1, k=None):
    """The `m`-th antiderivative of the polynomial `p`, with integration constants `k` (one
    for every step, or one per step, lowest order last)."""
    m = _static_order(m, "polyint")
    p, k = promotion.promote_dtypes_inexact(
        asarray_operand("polyint", p), asarray_operand("polyint", 0 if k is None else k, 2)
    )
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = manipulation.atleast_1d(k)
    if k.shape[0] == 1:
        k = manipulation.broadcast_to(k, (m,))
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = ufuncs.subtract(
        creation.arange(_length(p) + m, dtype=p.dtype)[None],
        creation.arange(m, dtype=p.dtype)[:, None],
    )
    divisors = reductions.prod(ufuncs.maximum(1, grid), 0)[::-1]
    return ufuncs.true_divide(manipulation.concatenate([p, k]), divisors)


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without the leading ('f') and/or trailing ('b') slices that are all zero along
    each axis in `axis` (all axes by default); `filt` must be concrete."""
    x = asarray_operand("trim_zeros", filt)
    value = _concrete("trim_zeros", x)
    axes = (
        set(range(x.ndim)) if axis is None else set(manipulation.normalize_axis_tuple(axis, x.ndim))
    )
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return x
    index = []
    for ax in range(x.ndim):
        if ax not in axes:
            index.append(slice(None))
            continue
        nonzero = np.any(value != 0, axis=tuple(d for d in range(x.ndim) if d != ax))
        if not nonzero.any():
            index.append(slice(0, 0))
            continue
        start = int(nonzero.argmax()) if "f" in trim else None
        stop = x.shape[ax] - int(nonzero[::-1].argmax()) if "b" in trim else None
        index.append(slice(start, stop))
    return x[tuple(index)]
