"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Each keeps its operand's shape, dtype and weak type; element `i` of the result reduces the
elements `0..i` along `axis` (params `axis`, non-negative, and `reverse`: with `reverse=True`
it reduces the elements `i..n-1` instead). The wrappers accept negative axes and normalize them.

As for the reductions, integer results wrap around in the operand's dtype, float16/bfloat16
accumulate in float32 and are rounded once, NaNs propagate, and cummax/cummin order -0.0 below
+0.0 as XLA does. Complex cummax/cummin compare lexicographically (real part first).
cumlogsumexp accepts only floating-point operands.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray
from tracejit._src.lax.standard import (
    check_dtype,
    is_float,
    is_numeric,
    normalize_axes,
    weak_if_all_weak,
)


def _canonical_axis(name: str, operand, axis) -> int:
    """The `axis` param from user input: an int, counted from the end when negative."""
    axis = operator.index(axis)
    shape = np.shape(operand)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of shape {shape}")
    return axis + len(shape) if axis < 0 else axis


def _cumulative_abstract_eval(name: str, accepts):
    def abstract_eval(operand: ShapedArray, *, axis, reverse):
        check_dtype(name, operand, accepts)
        normalize_axes(name, (axis,), operand.ndim)
        return operand

    return abstract_eval


# float16 and bfloat16 sums, products and logsumexps accumulate in float32, as XLA's CPU and
# GPU backends do; the other ml_dtypes floats (kind "V") are computed in float32 for every scan,
# since NumPy's ufunc loops for them are unreliable (NaNs, in particular).
_NARROW_FLOATS = frozenset(np.dtype(d) for d in (dtypes.float16, dtypes.bfloat16))


def _scan(accumulate, *, accumulates=True, negative_zero_wins=None):
    """The impl of a cumulative reduction given `accumulate(x, axis)` on NumPy values.
    `accumulates`: narrow floats are computed in float32 (max and min need not be);
    `negative_zero_wins` is True (cummin) or False (cummax) to order signed zeros as XLA does."""

    def impl(operand, *, axis, reverse):
        dtype = operand.dtype
        x = np.flip(operand, axis) if reverse else operand
        if dtype.kind == "V" or (accumulates and dtype in _NARROW_FLOATS):
            x = x.astype(np.float32)
        out = accumulate(x, axis)
        if negative_zero_wins is not None and x.dtype.kind == "f":
            out = _order_signed_zeros(out, x, axis, negative_zero_wins)
        if out.dtype != dtype:
            out = out.astype(dtype)
        return np.flip(out, axis) if reverse else out

    return impl


def _order_signed_zeros(out, x, axis, negative_wins: bool):
    """NumPy's maximum/minimum return their second operand when both are zeros; XLA orders
    -0. below +0., so a running max is +0. once a +0. has been seen (a running min: -0.)."""
    if out.all():  # no zeros (NaNs are truthy)
        return out
    zeros = out == 0
    signs = np.signbit(x)
    seen = np.logical_or.accumulate((x == 0) & (signs if negative_wins else ~signs), axis=axis)
    winner, loser = (-0.0, 0.0) if negative_wins else (0.0, -0.0)
    dtype = x.dtype
    fixed = np.where(seen, dtype.type(winner), dtype.type(loser))
    return np.where(zeros, fixed, out).astype(dtype, copy=False)


# --- cumsum ---------------------------------------------------------------------------------
cumsum_p = Primitive("cumsum")


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum of `operand` along `axis` (from the end when `reverse`)."""
    return cumsum_p.bind(
        operand, axis=_canonical_axis("cumsum", operand, axis), reverse=bool(reverse)
    )


cumsum_p.def_impl(_scan(lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype)))
cumsum_p.def_abstract_eval(_cumulative_abstract_eval("cumsum", is_numeric))
cumsum_p.def_weak_type_rule(weak_if_all_weak)

# --- cumprod --------------------------------------------------------------------------------
cumprod_p = Primitive("cumprod")


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product of `operand` along `axis` (from the end when `reverse`)."""
    return cumprod_p.bind(
        operand, axis=_canonical_axis("cumprod", operand, axis), reverse=bool(reverse)
    )


cumprod_p.def_impl(_scan(lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype)))
cumprod_p.def_abstract_eval(_cumulative_abstract_eval("cumprod", is_numeric))
cumprod_p.def_weak_type_rule(weak_if_all_weak)

# --- cummax ---------------------------------------------------------------------------------
cummax_p = Primitive("cummax")


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum of `operand` along `axis` (from the end when `reverse`)."""
    return cummax_p.bind(
        operand, axis=_canonical_axis("cummax", operand, axis), reverse=bool(reverse)
    )


cummax_p.def_impl(_scan(np.maximum.accumulate, accumulates=False, negative_zero_wins=False))
cummax_p.def_abstract_eval(_cumulative_abstract_eval("cummax", is_numeric))
cummax_p.def_weak_type_rule(weak_if_all_weak)

# --- cummin ---------------------------------------------------------------------------------
cummin_p = Primitive("cummin")


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum of `operand` along `axis` (from the end when `reverse`)."""
    return cummin_p.bind(
        operand, axis=_canonical_axis("cummin", operand, axis), reverse=bool(reverse)
    )


cummin_p.def_impl(_scan(np.minimum.accumulate, accumulates=False, negative_zero_wins=True))
cummin_p.def_abstract_eval(_cumulative_abstract_eval("cummin", is_numeric))
cummin_p.def_weak_type_rule(weak_if_all_weak)

# --- cumlogsumexp ---------------------------------------------------------------------------
cumlogsumexp_p = Primitive("cumlogsumexp")


def cumlogsumexp(operand, axis=0, reverse=False):
    r"""Cumulative :math:`\log \sum \exp` of `operand` along `axis` (from the end when
    `reverse`), computed without overflow."""
    return cumlogsumexp_p.bind(
        operand, axis=_canonical_axis("cumlogsumexp", operand, axis), reverse=bool(reverse)
    )


def _logaddexp_accumulate(x, axis):
    with np.errstate(invalid="ignore"):  # NumPy warns for inf - inf inside logaddexp(inf, inf)
        return np.logaddexp.accumulate(x, axis)


cumlogsumexp_p.def_impl(_scan(_logaddexp_accumulate))
cumlogsumexp_p.def_abstract_eval(_cumulative_abstract_eval("cumlogsumexp", is_float))
cumlogsumexp_p.def_weak_type_rule(weak_if_all_weak)
