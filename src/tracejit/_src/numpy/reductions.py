"""Reductions: sum, prod, max, min, all, any, mean, var, std, ptp, count_nonzero, argmax, argmin,
cumsum, cumprod, cumulative_sum, cumulative_prod.

Each stages one lax reduction over the normalized axes, then, with `keepdims`, a
`broadcast_in_dim` back to the operand's rank, as JAX does. Dtypes follow JAX:

- `sum` and `prod` promote bool and narrow integers to the default integer type (unsigned ones
  to the default unsigned type) unless `dtype` is given; `max`/`min` keep the dtype;
- `mean`, `var` and `std` compute integer and bool inputs in the default float type (`var` of
  complex values is real);
- results are never weakly typed: a weak operand is first converted to its strong dtype
  (`convert_element_type[new_dtype=float32 weak_type=False]`);
- `where=` masks take a boolean array broadcasting against the operand: masked elements become
  the reduction's identity (`initial` must be given for max/min), and `mean`/`var` count only
  the elements kept; `initial` is a scalar combined with the reduced value;
- `cumsum`/`cumprod` flatten when `axis` is None and only promote bools.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.array import Array
from tracejit._src.core import current_trace
from tracejit._src.interpreters import eval as eval_interpreter
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import cumulative as lax_cumulative
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import asarray_operand

_BOOL = np.dtype(bool)


# --- eager kernels ----------------------------------------------------------------------------
# An eager reduction of an Array over some axes, with none of the other arguments, is the
# reduction primitive's impl on the Array's value when the reduction converts no dtype: the C
# accelerator's kernels (`csrc/accel/eager.c`) call that impl directly and wrap its result as
# the strong Array every reduction here returns. Which dtypes a reduction leaves alone is
# learned as in `ufuncs.py`: on the slow path, whenever the operand it reduced was an Array of
# the dtype of an Array given.


def _reduction_kernel(primitive):
    if eval_interpreter.eager_context is None:
        return None
    return accel.ReductionKernel(eval_interpreter.eager_context, primitive.impl)


_kept_dtypes = {}  # reduction name -> dtypes it reduces as they are
ufuncs.register_fast_table(_kept_dtypes)


def _learn_kept_dtype(name: str, a, x, target) -> None:
    """Records that `name` reduced `a` (an Array) in its own dtype: `x`, the operand reduced,
    is an Array of that dtype, the result's dtype `target` too."""
    if type(a) is Array and type(x) is Array and x._value.dtype == a._value.dtype == target:
        _kept_dtypes.setdefault(name, set()).add(target)


def _eager(kernel, name: str, a, axis):
    """`name` of `a` over `axis` computed by `kernel` when `a` is an Array of a dtype the
    reduction keeps, else (or where the kernel declines) None."""
    if type(a) is not Array or a._value.dtype not in _kept_dtypes.get(name, ()):
        return None
    return kernel(a, None if axis is None else _reduction_axes(axis, a._value.ndim))


def _reduction_axes(axis, ndim: int) -> tuple:
    """`axis` (None, an int or a sequence of ints; negative ones count from the end) as a sorted
    tuple of non-negative axes, with NumPy's errors."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)) or np.ndim(axis) == 1:  # (an array of axes too)
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


def check_where(name: str, where):
    """The `where` mask as a boolean operand (None stays None), with JAX's error otherwise."""
    if where is None:
        return None
    mask = asarray_operand(name, where)
    if mask.dtype != _BOOL:
        raise ValueError(
            f"jnp.{name}: where must be None or a boolean array; got where.dtype={mask.dtype!r}."
        )
    return mask


def _combine_initial(combine, initial, result):
    """`combine(initial, result)` with the scalar `initial` in the result's dtype."""
    initial = promotion.convert_element_type(initial, result.dtype)
    if initial.shape != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape {initial.shape}")
    return combine(initial, result)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype `sum`/`prod` accumulate in: bool and narrow integers widen to the default."""
    if dtype.kind in "fc":  # (the common case first)
        return dtype
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
    where = check_where(name, where)
    user_dtype = dtypes.check_user_dtype(dtype, name)
    if user_dtype is not None:
        target = user_dtype
    elif promote is not None:
        target = promote(x.dtype)
    else:
        target = x.dtype
    computation = _F32 if user_dtype is None and target in _NARROW_FLOATS else target
    if x.dtype == _BOOL:  # counted as default integers first, whatever the dtype (as JAX)
        x = promotion.convert_element_type(x, dtypes.default_int_dtype(), False)
    x = promotion.convert_element_type(x, computation, False)
    if where is not None:
        x = ufuncs.where(where, x, promotion.convert_element_type(identity, computation, False))
    return x, target


def _reduce(name: str, lax_reduce, x, axis, keepdims: bool, initial=None, combine=None):
    """The reduction, combined with `initial` (if given) before the reduced axes are kept."""
    axes = _reduction_axes(axis, x.ndim)
    out = lax_reduce(x, axes)
    if initial is not None:
        out = _combine_initial(combine, initial, out)
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
    if (
        _sum_kernel is not None
        and dtype is None
        and out is None
        and not keepdims
        and initial is None
        and where is None
        and promote_integers
    ):
        result = _eager(_sum_kernel, "sum", a, axis)
        if result is not None:
            return result
    _check_out(out, "sum")
    promote = _sum_dtype if promote_integers else None
    x, target = _prepare("sum", a, dtype, where, 0, promote)
    if dtype is None and promote_integers:  # (the dtype the fast path assumes)
        _learn_kept_dtype("sum", a, x, target)
    result = _reduce("sum", lax_reductions.reduce_sum, x, axis, keepdims, initial, ufuncs.add)
    return promotion.convert_element_type(result, target, False)


_sum_kernel = _reduction_kernel(lax_reductions.reduce_sum_p)


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
    if (
        _prod_kernel is not None
        and dtype is None
        and out is None
        and not keepdims
        and initial is None
        and where is None
        and promote_integers
    ):
        result = _eager(_prod_kernel, "prod", a, axis)
        if result is not None:
            return result
    _check_out(out, "prod")
    promote = _sum_dtype if promote_integers else None
    x, target = _prepare("prod", a, dtype, where, 1, promote)
    if dtype is None and promote_integers:  # (the dtype the fast path assumes)
        _learn_kept_dtype("prod", a, x, target)
    result = _reduce(
        "prod", lax_reductions.reduce_prod, x, axis, keepdims, initial, ufuncs.multiply
    )
    return promotion.convert_element_type(result, target, False)


_prod_kernel = _reduction_kernel(lax_reductions.reduce_prod_p)


def _extremum(name: str, lax_reduce, combine, a, axis, out, keepdims, initial, where):
    kernel = _extremum_kernels[name]
    if (
        kernel is not None
        and out is None
        and not keepdims
        and initial is None
        and where is None
        and type(a) is Array
        and a._value.size  # (reducing nothing raises, below)
    ):
        result = _eager(kernel, name, a, axis)
        if result is not None:
            return result
    _check_out(out, name)
    x = asarray_operand(name, a)
    where = check_where(name, where)
    axes = _reduction_axes(axis, x.ndim)
    if where is not None and initial is None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a "
            "where mask one has to specify 'initial'"
        )
    if initial is None and x.size == 0 and builtins.any(x.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    strong = promotion.convert_element_type(x, x.dtype, False)
    _learn_kept_dtype(name, a, strong, x.dtype)
    if where is not None:
        strong = ufuncs.where(where, strong, promotion.convert_element_type(initial, x.dtype))
    return _reduce(name, lax_reduce, strong, axes, keepdims, initial, combine)


_extremum_kernels = {
    "max": _reduction_kernel(lax_reductions.reduce_max_p),
    "min": _reduction_kernel(lax_reductions.reduce_min_p),
}


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
    kernel = _logical_kernels[name]
    if kernel is not None and out is None and not keepdims and where is None:
        result = _eager(kernel, name, a, axis)
        if result is not None:
            return result
    _check_out(out, name)
    x = asarray_operand(name, a)
    where = check_where(name, where)
    if dtypes.is_complex(x.dtype):
        x = ufuncs.real(x)  # as JAX does: only the real part is tested
    x = promotion.convert_element_type(x, _BOOL, False)
    _learn_kept_dtype(name, a, x, _BOOL)
    if where is not None:
        x = ufuncs.where(where, x, identity)
    return _reduce(name, lax_reduce, x, axis, keepdims)


_logical_kernels = {
    "all": _reduction_kernel(lax_reductions.reduce_and_p),
    "any": _reduction_kernel(lax_reductions.reduce_or_p),
}


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
    where = check_where("mean", where)
    if where is not None:
        mask = manipulation.broadcast_to(where, x.shape)
        total = sum(x, axes, keepdims=keepdims, where=mask)
        count = sum(mask, axes, dtype=computation, keepdims=keepdims)
        result = ufuncs.divide(total, count)
    else:
        total = lax_reductions.reduce_sum(x, axes)
        if keepdims:
            total = _keepdims(total, x.shape, axes)
        result = _divide_by_count(total, _count(x.shape, axes), computation)
    return promotion.convert_element_type(result, target, False)


def _divide_by_count(total, count: int, dtype: np.dtype):
    """`total / count`, staged as JAX stages it: a `div` by a literal, which XLA computes as a
    product with the literal's reciprocal. Eagerly the product is computed so too (JAX's eager
    mean runs as a jitted function, with the count as a literal): the mean of [a, a, a] is
    3a * (1/3), not a."""
    if current_trace() is not eval_interpreter.eval_trace or dtype.kind != "f":
        return lax_binary.div(total, _count_scalar(count, dtype))
    with np.errstate(divide="ignore"):  # the mean of nothing: 0 * inf, NaN as JAX's
        reciprocal = np.reciprocal(dtype.type(count))
    return lax_binary.mul(total, promotion.weak_scalar(float(reciprocal), dtype))


_mean = mean  # for var and std, whose parameter `mean` hides the function


def var_dtypes(name: str, a_dtype: np.dtype, dtype) -> tuple:
    """(computation dtype, result dtype) of a variance: a complex operand's variance is real;
    float16 and bfloat16 are computed in float32."""
    user_dtype = dtypes.check_user_dtype(dtype, name)
    if user_dtype is not None:
        if dtypes.is_complex(a_dtype) and not dtypes.is_complex(user_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values. The semantics of numpy.var seem "
                "unclear in this case. Please comment on "
                "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you."
            )
        computation = result = user_dtype
    elif dtypes.is_complex(a_dtype):
        computation, result = a_dtype, np.dtype(dtypes.finfo(a_dtype).dtype)
    else:
        computation = result = promotion.to_inexact_dtype(a_dtype)
    return (_F32 if computation in _NARROW_FLOATS else computation), result


def squared_magnitude(centered):
    """`|centered|**2`, real for complex values."""
    if dtypes.is_complex(centered.dtype):
        return ufuncs.real(lax_binary.mul(centered, ufuncs.conj(centered)))
    return ufuncs.square(centered)


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _variance_in_place(x, axis=None):
    """`var`'s steps without `ddof` or `where`, the squares computed where the deviations
    were: a fresh 4 MB array costs as much as a pass over it (its pages are mapped one by
    one), and the composite makes two."""
    if x.dtype in _NARROW_FLOATS:
        x = x.astype(_F32)
    axes = _reduction_axes(axis, x.ndim)
    reduce_sum = lax_reductions.reduce_sum_p.impl
    divide = lax_binary.div_p.impl  # (XLA's quotients by broadcast divisors, as the composite)
    count = x.dtype.type(float(_count(x.shape, axes)))
    centered = np.subtract(x, divide(np.expand_dims(reduce_sum(x, axes=axes), axes), count))
    np.square(centered, out=centered)
    normalizer = count - x.dtype.type(0)
    out = divide(reduce_sum(centered, axes=axes), normalizer)
    return out if normalizer > 0 else np.full_like(out, np.nan)


@numpy_namesake(_variance_in_place, FLOATS, keywords=("axis",))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):  # fmt: skip
    """Variance over `axis`, dividing by `N - ddof` (NaN when that is not positive), `N`
    counting only the elements `where` keeps. `mean`, when given, replaces the computed mean
    (it must broadcast against `a`, e.g. a mean with `keepdims=True`). Complex values give a
    real variance."""
    _check_out(out, "var")
    ddof = _ddof(ddof, correction)
    return _var(a, mean, static_axis(axis), dtype, out, ddof, keepdims, where=where)


def static_axis(axis):
    """`axis` as a jit's static argument (hashable): a list becomes a tuple."""
    return tuple(axis) if isinstance(axis, list) else axis


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
def _var(a, mean, axis, dtype, out, correction, keepdims, *, where):
    """`var`, its `correction` (ddof) traced, as JAX stages it."""
    x = asarray_operand("var", a)
    where = check_where("var", where)
    computation, result_dtype = var_dtypes("var", x.dtype, dtype)
    x = promotion.convert_element_type(x, computation, False)
    if mean is None:
        center = _mean(x, axis, computation, keepdims=True, where=where)
    else:
        center = promotion.convert_element_type(asarray_operand("var", mean), computation, False)
    squares = squared_magnitude(lax_binary.sub(x, center))
    real_dtype = squares.dtype
    count = _kept_count(x, axis, keepdims, where, real_dtype)
    normalizer = lax_binary.sub(
        count, promotion.convert_element_type(correction, real_dtype, False)
    )
    total = sum(squares, axis, real_dtype, keepdims=keepdims, where=where)
    result = promotion.convert_element_type(lax_binary.div(total, normalizer), result_dtype, False)
    positive = lax_comparison.gt(normalizer, promotion.weak_scalar(0.0, real_dtype))
    return ufuncs.where(positive, result, float("nan"))


def _kept_count(x, axis, keepdims: bool, where, dtype: np.dtype):
    """The number of elements each reduction over `axis` sees, in `dtype`: all of them, or
    those `where` keeps."""
    if where is None:
        axes = _reduction_axes(axis, x.ndim)
        return promotion.convert_element_type(_count(x.shape, axes), dtype, False)
    return sum(manipulation.broadcast_to(where, x.shape), axis, dtype, keepdims=keepdims)


def _deviation_in_place(x, axis=None):
    return np.sqrt(_variance_in_place(x, axis))


@numpy_namesake(_deviation_in_place, FLOATS, keywords=("axis",))
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):  # fmt: skip
    """Standard deviation over `axis`: the square root of `var`."""
    _check_out(out, "std")
    ddof = _ddof(ddof, correction)
    user_dtype = dtypes.check_user_dtype(dtype, "std")
    if user_dtype is not None and not dtypes.is_inexact(user_dtype):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {user_dtype}")
    return _std(a, mean, static_axis(axis), dtype, out, ddof, keepdims, where=where)


@jnp_jit(static_argnames=("axis", "dtype", "keepdims"))
def _std(a, mean, axis, dtype, out, correction, keepdims, *, where):
    return ufuncs.sqrt(_var(a, mean, axis, dtype, out, correction, keepdims, where=where))


def ptp(a, axis=None, out=None, keepdims=False):
    """The range (maximum - minimum) over `axis`."""
    _check_out(out, "ptp")
    return _ptp(a, static_axis(axis), keepdims)


@jnp_jit(static_argnames=("axis", "keepdims"))
def _ptp(a, axis, keepdims):
    return ufuncs.subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


@jnp_jit(static_argnames=("axis", "keepdims"))
@numpy_namesake(np.count_nonzero, (np.bool_, *_INTS, *FLOATS), keywords=("axis", "keepdims"))
def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements over `axis`, in the default integer type."""
    x = asarray_operand("count_nonzero", a)
    return sum(_nonzero(x), axis, dtypes.default_int_dtype(), keepdims=keepdims)


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
    if not -x.ndim <= operator.index(axis) < x.ndim:  # (JAX's class: the axis indexes a shape)
        raise IndexError(f"{name}: axis {axis} is out of bounds for array of dimension {x.ndim}")
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


def _cumulative(name: str, lax_cumulative_op, a, axis, dtype, out, *, nan_fill=None,
                promote_integers=False):  # fmt: skip
    """The cumulative reduction along `axis` (of the flattened `a` for None): bools (and, with
    `promote_integers`, narrow integers) accumulate in the default integer type; an explicit
    bool dtype accumulates the truth values in it and converts back. NaNs become `nan_fill`
    first where given (the nan-forms)."""
    _check_out(out, name)
    x = asarray_operand(name, a)
    if axis is None:
        x = manipulation.ravel(x) if x.ndim != 1 else x
        axis = 0
    axis = manipulation.normalize_axis(axis, x.ndim)
    if nan_fill is not None and dtypes.is_inexact(x.dtype):
        x = ufuncs.where(ufuncs.isnan(x), promotion.convert_element_type(nan_fill, x.dtype), x)
    user_dtype = dtypes.check_user_dtype(dtype, name)
    if user_dtype == _BOOL:
        target, computation = _BOOL, _sum_dtype(_BOOL)
        x = _nonzero(x) if x.dtype != _BOOL else x
    elif user_dtype is not None:
        target = computation = user_dtype
    elif promote_integers or x.dtype == _BOOL:
        target = computation = _sum_dtype(x.dtype)
    else:
        target = computation = x.dtype
    x = promotion.convert_element_type(x, computation, False)
    return promotion.convert_element_type(lax_cumulative_op(x, axis), target, False)


def _nonzero(x):
    return ufuncs.not_equal(x, promotion.convert_element_type(0, x.dtype, False))


@jnp_jit(static_argnames=("axis", "dtype", "out"))
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when None)."""
    return _cumulative("cumsum", lax_cumulative.cumsum, a, axis, dtype, out)


@jnp_jit(static_argnames=("axis", "dtype", "out"))
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis` (of the flattened array when None)."""
    return _cumulative("cumprod", lax_cumulative.cumprod, a, axis, dtype, out)


@jnp_jit(static_argnames=("axis", "dtype", "out"))
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis`, NaNs counted as zero."""
    return _cumulative("nancumsum", lax_cumulative.cumsum, a, axis, dtype, out, nan_fill=0)


@jnp_jit(static_argnames=("axis", "dtype", "out"))
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis`, NaNs counted as one."""
    return _cumulative("nancumprod", lax_cumulative.cumprod, a, axis, dtype, out, nan_fill=1)


def _array_api_cumulative(name: str, what: str, a, axis, dtype, include_initial, identity):
    """The array API's cumulative reductions: `axis` may be left out only for 1-D input; with
    `include_initial` the result starts with the identity."""
    x = asarray_operand(name, a)
    if x.ndim == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative {what}, however a scalar value "
            "or scalar array was given."
        )
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"The input array has rank {x.ndim}, however axis was not set to an explicit "
                "value. The axis argument is only optional for one-dimensional arrays."
            )
        axis = 0
    axis = manipulation.normalize_axis(axis, x.ndim)
    if what == "sum":
        result = _cumulative(
            name, lax_cumulative.cumsum, x, axis, dtype, None, promote_integers=True
        )
    else:
        result = _cumulative(name, lax_cumulative.cumprod, x, axis, dtype, None)
    if not include_initial:
        return result
    shape = tuple(1 if d == axis else n for d, n in enumerate(result.shape))
    first = lax_shapes.broadcast_in_dim(
        promotion.convert_element_type(identity, result.dtype), shape, ()
    )
    return manipulation.concatenate([first, result], axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along `axis` (the array API's `cumsum`; narrow integers widen as in
    `sum`)."""
    return _array_api_cumulative("cumulative_sum", "sum", x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along `axis` (the array API's `cumprod`)."""
    return _array_api_cumulative("cumulative_prod", "product", x, axis, dtype, include_initial, 1)


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


@jnp_jit(static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of `a` is close to the one of `b` (see `isclose`)."""
    return all(ufuncs.isclose(a, b, rtol, atol, equal_nan))
