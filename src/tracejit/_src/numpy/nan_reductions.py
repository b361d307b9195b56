"""Reductions that ignore NaNs: nansum, nanprod, nanmax, nanmin, nanmean, nanvar, nanstd,
nanargmax, nanargmin (nancumsum and nancumprod live with the cumulative reductions).

Each replaces the NaNs of an inexact operand by the reduction's identity (0 for sums, 1 for
products, -inf/+inf for max/min and argmax/argmin) and reduces as the plain form does, with
the same dtypes, `where=` and `initial=`; integer and bool operands hold no NaN and reduce
unchanged. What a slice of NaNs only gives follows JAX: NaN for nanmax/nanmin (unless
`initial` is given), 0 or 1 for nansum/nanprod, NaN for nanmean/nanvar (nothing counted) and
-1 for nanargmax/nanargmin. The variance zeroes NaN deviations with a `where` on both sides
(the "double where"), so that gradients stay finite.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.numpy import promotion, reductions, ufuncs
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import asarray_operand


def _without_nans(name: str, a, identity, weak_identity: bool = False):
    """(operand, NaN mask): `a` with its NaNs replaced by `identity` (in `a`'s dtype, or weakly
    typed as JAX stages it for the arg reductions), and where they were (None for an operand
    that cannot hold NaNs)."""
    x = asarray_operand(name, a)
    if not dtypes.is_inexact(x.dtype):
        return x, None
    nans = ufuncs.isnan(x)
    if not weak_identity:
        identity = promotion.convert_element_type(identity, x.dtype)
    return ufuncs.where(nans, identity, x), nans


def _sum_without_nans(a, axis=None, nans=None):
    """The composite's sum: NaNs made zeros, then reduce_sum's own NumPy reduction."""
    nans = np.isnan(a) if nans is None else nans
    if nans.any():
        a = np.where(nans, a.dtype.type(0), a)
    return lax_reductions.reduce_sum_p.impl(a, axes=_axes(axis, a.ndim))


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    return tuple(np.lib.array_utils.normalize_axis_tuple(axis, ndim))


def _mean_without_nans(a, axis=None):
    """nanmean's steps for float32 and float64. Its count of the elements that are not NaN is
    a float sum of ones, exact (np.count_nonzero's) while below 2**24 in float32."""
    axes = _axes(axis, a.ndim)
    if np.prod([a.shape[i] for i in axes]) > 2 ** (np.finfo(a.dtype).nmant + 1):
        raise ValueError("so many elements that the composite's count may be rounded")
    nans = np.isnan(a)
    count = np.count_nonzero(~nans, axis=axes)
    return np.divide(_sum_without_nans(a, axes, nans), np.asarray(count, a.dtype))


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
@numpy_namesake(_sum_without_nans, FLOATS, keywords=("axis",))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum over `axis`, NaNs counted as zero."""
    x, _ = _without_nans("nansum", a, 0)
    return reductions.sum(x, axis, dtype, out, keepdims, initial, where)


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product over `axis`, NaNs counted as one."""
    x, _ = _without_nans("nanprod", a, 1)
    return reductions.prod(x, axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name: str, reduce, identity, a, axis, out, keepdims, initial, where):
    x, nans = _without_nans(name, a, identity)
    result = reduce(x, axis, out, keepdims, initial, where)
    if nans is None or initial is not None:
        return result
    all_nan = reductions.all(ufuncs.isnan(a), axis, keepdims=keepdims)
    return ufuncs.where(all_nan, promotion.convert_element_type(np.nan, x.dtype), result)


def _ignoring_nans(numpy_reduce, negative_zero_wins: bool):
    """np.fmax.reduce or np.fmin.reduce, which skip NaNs, with XLA's order of signed zeros."""

    def reduce(a, axis=None):
        out = numpy_reduce(a, axis=axis)
        return lax_reductions.order_signed_zeros(out, a, axis, negative_zero_wins)

    return reduce


@jnp_jit(static_argnames=("axis", "keepdims"))
@numpy_namesake(_ignoring_nans(np.fmax.reduce, False), FLOATS, keywords=("axis",))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over `axis` ignoring NaNs (NaN for a slice of NaNs only, without `initial`)."""
    return _nan_extremum("nanmax", reductions.max, -np.inf, a, axis, out, keepdims, initial, where)


@jnp_jit(static_argnames=("axis", "keepdims"))
@numpy_namesake(_ignoring_nans(np.fmin.reduce, True), FLOATS, keywords=("axis",))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over `axis` ignoring NaNs (NaN for a slice of NaNs only, without `initial`)."""
    return _nan_extremum("nanmin", reductions.min, np.inf, a, axis, out, keepdims, initial, where)


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
@numpy_namesake(_mean_without_nans, (np.float32, np.float64), keywords=("axis",))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean over `axis` of the elements that are not NaN (NaN when there are none)."""
    x = asarray_operand("nanmean", a)
    where = reductions.check_where("nanmean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    if not dtypes.is_inexact(x.dtype):
        return reductions.mean(x, axis, dtype, keepdims=keepdims, where=where)
    user_dtype = dtypes.check_user_dtype(dtype, "mean")
    dtype = promotion.to_inexact_dtype(x.dtype) if user_dtype is None else user_dtype
    count = reductions.sum(
        ufuncs.logical_not(ufuncs.isnan(x)), axis, dtype, keepdims=keepdims, where=where
    )
    total = nansum(x, axis, dtype, keepdims=keepdims, where=where)
    return lax_binary.div(total, count)


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance over `axis` of the elements that are not NaN, dividing by their number minus
    `ddof` (NaN when that is not positive). `mean` replaces the computed mean when given."""
    x = asarray_operand("nanvar", a)
    where = reductions.check_where("nanvar", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    computation, result_dtype = reductions.var_dtypes("nanvar", x.dtype, dtype)
    x = promotion.convert_element_type(x, computation, False)
    if mean is None:
        center = nanmean(x, axis, computation, keepdims=True, where=where)
    else:
        center = promotion.convert_element_type(asarray_operand("nanvar", mean), computation)
    nans = ufuncs.isnan(x)
    centered = ufuncs.where(nans, 0, lax_binary.sub(x, center))
    squares = reductions.squared_magnitude(centered)
    count = reductions.sum(
        ufuncs.logical_not(ufuncs.isnan(x)), axis, keepdims=keepdims, where=where
    )
    count = ufuncs.subtract(count, ddof)
    empty = ufuncs.less_equal(count, promotion.weak_scalar(0, count.dtype))
    total = reductions.sum(squares, axis, keepdims=keepdims, where=where)
    total = ufuncs.where(empty, float("nan"), total)
    divisor = ufuncs.where(empty, promotion.weak_scalar(1, count.dtype), count)
    result = lax_binary.div(total, promotion.convert_element_type(divisor, total.dtype))
    return promotion.convert_element_type(result, result_dtype, False)


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Standard deviation over `axis` ignoring NaNs: the square root of `nanvar`."""
    return ufuncs.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def _nan_arg_extremum(name: str, arg_reduce, identity, a, axis, keepdims):
    x, nans = _without_nans(name, a, identity, weak_identity=True)
    result = arg_reduce(x, axis, keepdims=keepdims)
    if nans is None:
        return result
    all_nan = reductions.all(nans, axis, keepdims=keepdims)
    return ufuncs.where(all_nan, promotion.weak_scalar(-1, result.dtype), result)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index of the (first) maximum over `axis` ignoring NaNs; -1 for a slice of NaNs only."""
    _check_out(out, "nanargmax")
    return _nanargmax(a, axis, keepdims=bool(keepdims))


@jnp_jit(static_argnames=("axis", "keepdims"))
def _nanargmax(a, axis, keepdims):
    return _nan_arg_extremum("nanargmax", reductions.argmax, -np.inf, a, axis, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index of the (first) minimum over `axis` ignoring NaNs; -1 for a slice of NaNs only."""
    _check_out(out, "nanargmin")
    return _nanargmin(a, axis, keepdims=bool(keepdims))


@jnp_jit(static_argnames=("axis", "keepdims"))
def _nanargmin(a, axis, keepdims):
    return _nan_arg_extremum("nanargmin", reductions.argmin, np.inf, a, axis, keepdims)


def _check_out(out, name: str):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
