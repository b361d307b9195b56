"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin, cumsum, cumprod.

Each stages one lax reduction over the normalized axes, then, with `keepdims`, a
`broadcast_in_dim` back to the operand's rank, as JAX does. Dtypes follow JAX:

- `sum` and `prod` promote bool and narrow integers to the default integer type (unsigned ones
  to the default unsigned type) unless `dtype` is given; `max`/`min` keep the dtype;
- `mean`, `var` and `std` compute integer and bool inputs in the default float type (`var` of
  complex values is real);
- results are never weakly typed: a weak operand is first converted to its strong dtype
  (`convert_element_type[new_dtype=float32 weak_type=False]`);
- `cumsum`/`cumprod` flatten when `axis` is None and only promote bools.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import cumulative as lax_cumulative
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.promotion import asarray_operand

_BOOL = np.dtype(bool)


def _reduction_axes(axis, ndim: int) -> tuple:
    """`axis` (None, an int or a sequence of ints; negative ones count from the end) as a sorted
    tuple of non-negative axes, with NumPy's errors."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        given = tuple(operator.index(a) for a in axis)
    else:
        given = (operator.index(axis),)
    axes = []
    for a in given:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        axes.append(a + ndim if a < 0 else a)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {given}")
    return tuple(sorted(axes))


def _keepdims(out, shape: tuple, axes: tuple):
    """The reduced `out` broadcast back to rank len(shape), reduced axes of size 1."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    target = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return lax_shapes.broadcast_in_dim(out, target, kept)


def _check_out(out, name: str):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype `sum`/`prod` accumulate in: bool and narrow integers widen to the default."""
    if dtype == _BOOL:
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.is_int(dtype):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


_NARROW_FLOATS = frozenset(np.dtype(d) for d in (dtypes.float16, dtypes.bfloat16))
_F32 = np.dtype(np.float32)


def _prepare(name: str, a, dtype, where, identity, promote):
    """(operand, result dtype): the operand converted to the dtype the reduction computes in
    (strong; float16 and bfloat16 are computed in float32, as JAX does), masked by `where`
    (masked elements become `identity`)."""
    x = asarray_operand(name, a)
    user_dtype = dtypes.check_user_dtype(dtype, name)
    if user_dtype is not None:
        target = user_dtype
    elif promote is not None:
        target = promote(x.dtype)
    else:
        target = x.dtype
    computation = _F32 if user_dtype is None and target in _NARROW_FLOATS else target
    x = promotion.convert_element_type(x, computation, False)
    if where is not None:
        x = ufuncs.where(where, x, promotion.convert_element_type(identity, computation, False))
    return x, target


def _reduce(name: str, lax_reduce, x, axis, keepdims: bool):
    axes = _reduction_axes(axis, x.ndim)
    out = lax_reduce(x, axes)
    return _keepdims(out, x.shape, axes) if keepdims else out


def sum(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Sum of the elements over `axis` (all axes when None)."""
    _check_out(out, "sum")
    promote = _sum_dtype if promote_integers else None
    x, target = _prepare("sum", a, dtype, where, 0, promote)
    result = _reduce("sum", lax_reductions.reduce_sum, x, axis, keepdims)
    if initial is not None:
        result = ufuncs.add(promotion.convert_element_type(initial, result.dtype), result)
    return promotion.convert_element_type(result, target, False)


def prod(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Product of the elements over `axis`."""
    _check_out(out, "prod")
    promote = _sum_dtype if promote_integers else None
    x, target = _prepare("prod", a, dtype, where, 1, promote)
    result = _reduce("prod", lax_reductions.reduce_prod, x, axis, keepdims)
    if initial is not None:
        result = ufuncs.multiply(promotion.convert_element_type(initial, result.dtype), result)
    return promotion.convert_element_type(result, target, False)


def _extremum(name: str, lax_reduce, combine, a, axis, out, keepdims, initial, where):
    _check_out(out, name)
    x = asarray_operand(name, a)
    axes = _reduction_axes(axis, x.ndim)
    if where is not None and initial is None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a "
            "where mask one has to specify 'initial'"
        )
    if initial is None and builtins.any(x.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    x = promotion.convert_element_type(x, x.dtype, False)
    if where is not None:
        x = ufuncs.where(where, x, promotion.convert_element_type(initial, x.dtype))
    result = lax_reduce(x, axes)
    if keepdims:
        result = _keepdims(result, x.shape, axes)
    if initial is not None:
        result = combine(promotion.convert_element_type(initial, result.dtype), result)
    return result


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum of the elements over `axis` (NaN if any is NaN)."""
    return _extremum(
        "max", lax_reductions.reduce_max, ufuncs.maximum, a, axis, out, keepdims, initial, where
    )


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum of the elements over `axis` (NaN if any is NaN)."""
    return _extremum(
        "min", lax_reductions.reduce_min, ufuncs.minimum, a, axis, out, keepdims, initial, where
    )


amax, amin = max, min


def _logical_reduction(name: str, lax_reduce, identity: bool, a, axis, out, keepdims, where):
    _check_out(out, name)
    x = asarray_operand(name, a)
    if dtypes.is_complex(x.dtype):
        x = ufuncs.real(x)  # as JAX does: only the real part is tested
    x = promotion.convert_element_type(x, _BOOL, False)
    if where is not None:
        x = ufuncs.where(where, x, identity)
    return _reduce(name, lax_reduce, x, axis, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """True when every element over `axis` is nonzero."""
    return _logical_reduction("all", lax_reductions.reduce_and, True, a, axis, out, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """True when some element over `axis` is nonzero."""
    return _logical_reduction("any", lax_reductions.reduce_or, False, a, axis, out, keepdims, where)


def _count(shape: tuple, axes: tuple) -> int:
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


def _mean_dtype(dtype: np.dtype) -> np.dtype:
    return promotion.to_inexact_dtype(dtype)


def _count_scalar(count, dtype: np.dtype):
    value = complex(count) if dtypes.is_complex(dtype) else float(count)
    return promotion.weak_scalar(value, dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over `axis`; integers are averaged in floating point (float16 and
    bfloat16 in float32)."""
    _check_out(out, "mean")
    x = asarray_operand("mean", a)
    user_dtype = dtypes.check_user_dtype(dtype, "mean")
    target = user_dtype if user_dtype is not None else _mean_dtype(x.dtype)
    computation = _F32 if user_dtype is None and target in _NARROW_FLOATS else target
    if x.dtype == _BOOL:
        x = promotion.convert_element_type(x, dtypes.default_int_dtype(), False)
    x = promotion.convert_element_type(x, computation, False)
    axes = _reduction_axes(axis, x.ndim)
    if where is not None:
        mask = manipulation.broadcast_to(asarray_operand("mean", where), x.shape)
        total = sum(x, axes, keepdims=keepdims, where=mask)
        count = sum(mask, axes, dtype=computation, keepdims=keepdims)
        result = ufuncs.divide(total, count)
    else:
        total = lax_reductions.reduce_sum(x, axes)
        if keepdims:
            total = _keepdims(total, x.shape, axes)
        result = lax_binary.div(total, _count_scalar(_count(x.shape, axes), computation))
    return promotion.convert_element_type(result, target, False)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over `axis`, dividing by `N - ddof` (NaN when that is not positive). Complex
    values give a real variance."""
    _check_out(out, "var")
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if where is not None:
        raise NotImplementedError("jnp.var with a where mask is not implemented yet")
    x = asarray_operand("var", a)
    user_dtype = dtypes.check_user_dtype(dtype, "var")
    computation = promotion.to_inexact_dtype(x.dtype if user_dtype is None else user_dtype)
    if dtypes.is_complex(computation):
        result_dtype = np.dtype(dtypes.finfo(computation).dtype)
    else:
        result_dtype = computation
    if user_dtype is not None:
        result_dtype = user_dtype
    if computation in _NARROW_FLOATS:
        computation = _F32
    x = promotion.convert_element_type(x, computation, False)
    axes = _reduction_axes(axis, x.ndim)
    count = _count(x.shape, axes)
    centered = lax_binary.sub(
        x,
        lax_binary.div(
            _keepdims(lax_reductions.reduce_sum(x, axes), x.shape, axes),
            _count_scalar(count, computation),
        ),
    )
    if dtypes.is_complex(computation):
        squares = ufuncs.real(lax_binary.mul(centered, ufuncs.conj(centered)))
    else:
        squares = ufuncs.square(centered)
    real_dtype = squares.dtype
    normalizer = lax_binary.sub(
        _count_scalar(count, real_dtype), promotion.convert_element_type(ddof, real_dtype, False)
    )
    total = lax_reductions.reduce_sum(squares, axes)
    if keepdims:
        total = _keepdims(total, x.shape, axes)
    result = lax_binary.div(total, normalizer)
    result = promotion.convert_element_type(result, result_dtype, False)
    positive = lax_comparison.gt(normalizer, promotion.weak_scalar(0.0, real_dtype))
    nan = promotion.convert_element_type(float("nan"), result_dtype, False)
    if result.shape:
        nan = lax_shapes.broadcast_in_dim(nan, result.shape, ())
    return lax_selection.select_n(positive, nan, result)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Standard deviation over `axis`: the square root of `var`."""
    return ufuncs.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _arg_extremum(name: str, lax_arg, a, axis, out, keepdims):
    _check_out(out, name)
    x = asarray_operand(name, a)
    if axis is None:
        if x.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = manipulation.reshape(x, (x.size,)) if x.ndim != 1 else x
        result = lax_arg(flat, 0, dtypes.default_int_dtype())
        if keepdims:
            result = lax_shapes.broadcast_in_dim(result, (1,) * x.ndim, ())
        return result
    ax = manipulation.normalize_axis(axis, x.ndim)
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = lax_arg(x, ax, dtypes.default_int_dtype())
    if keepdims:
        result = _keepdims(result, x.shape, (ax,))
    return result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the (first) maximum over `axis` (of the flattened array when None)."""
    return _arg_extremum("argmax", lax_reductions.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the (first) minimum over `axis` (of the flattened array when None)."""
    return _arg_extremum("argmin", lax_reductions.argmin, a, axis, out, keepdims)


def _cumulative(name: str, lax_cumulative_op, a, axis, dtype, out):
    _check_out(out, name)
    x = asarray_operand(name, a)
    if axis is None:
        x = manipulation.ravel(x) if x.ndim != 1 else x
        axis = 0
    axis = manipulation.normalize_axis(axis, x.ndim)
    user_dtype = dtypes.check_user_dtype(dtype, name)
    if user_dtype is not None:
        target = user_dtype
    elif x.dtype == _BOOL:
        target = dtypes.default_int_dtype()
    else:
        target = x.dtype
    x = promotion.convert_element_type(x, target, False)
    return lax_cumulative_op(x, axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when None)."""
    return _cumulative("cumsum", lax_cumulative.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis` (of the flattened array when None)."""
    return _cumulative("cumprod", lax_cumulative.cumprod, a, axis, dtype, out)


# --------------------------------------------------------------------------------------------
# Whole-array comparisons


def array_equal(a1, a2, equal_nan=False):
    """True when the arrays have the same shape and elements (False, as an Array, when the
    shapes differ)."""
    x = asarray_operand("array_equal", a1)
    y = asarray_operand("array_equal", a2)
    if x.shape != y.shape:
        return promotion.convert_element_type(False, _BOOL)
    same = ufuncs.equal(x, y)
    if equal_nan:
        same = ufuncs.logical_or(same, ufuncs.logical_and(ufuncs.isnan(x), ufuncs.isnan(y)))
    return all(same)


def array_equiv(a1, a2):
    """True when the arrays broadcast together and are equal elementwise."""
    x = asarray_operand("array_equiv", a1)
    y = asarray_operand("array_equiv", a2)
    try:
        promotion.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return promotion.convert_element_type(False, _BOOL)
    return all(ufuncs.equal(x, y))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of `a` is close to the one of `b` (see `isclose`)."""
    return all(ufuncs.isclose(a, b, rtol, atol, equal_nan))
