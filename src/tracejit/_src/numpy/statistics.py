"""Statistics: the weighted average, covariance and correlation; order statistics (quantile,
percentile, median and their NaN-ignoring forms).

`average`, `cov` and `corrcoef` follow JAX: inexact results (integers in the default float
type); `cov` centres each variable (a row, or a column with `rowvar=False`) on its weighted
mean and contracts with `dot`, dividing by the weights' sum less `ddof` (NumPy's formula with
`aweights`); `corrcoef` divides by the standard deviations and clips into [-1, 1].

Order statistics:

The reduced axes are moved to the end and merged into one, which is sorted (NaNs last); each
quantile `q` is then a position `q * (n - 1)` along it, where `n` is the slice's length (or,
for the nan-forms, its number of non-NaN elements, which the sort put first). The method
decides which elements around that position are read, with one `take_along_axis` each, and
how they combine:

    linear    x[floor] + (x[ceil] - x[floor]) * frac      lower / higher   x[floor] / x[ceil]
    midpoint  (x[floor] + x[ceil]) / 2                     nearest          x[ceil if frac > .5]
    inverted_cdf  x[ceil(q * n) - 1]

Sorting and gathering are differentiable, so gradients flow to the elements read. A slice
holding a NaN gives NaN (the plain forms), as does an all-NaN slice (the nan-forms); an empty
slice raises JAX's errors. With `weights` (method 'inverted_cdf' only, as in JAX) the weights
ride along the sort and the quantile is the first element whose cumulative weight reaches `q`
times the slice's total; a negative or NaN weight makes its slice's quantiles NaN. `q`
outside [0, 1] clamps to the ends instead of raising, and 'nearest' breaks ties towards the
lower element (NumPy rounds the position half to even), as in JAX. Results are inexact (integer
inputs in the default float type) and strongly typed; a 1-D `q` puts its axis first.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import creation, lib, manipulation, products, promotion, reductions, ufuncs
from tracejit._src.numpy.advanced_indexing import take_along_axis
from tracejit._src.numpy.promotion import asarray_operand


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The mean over `axis` weighted by `weights` (the shape of `a`, or of `a` along `axis`),
    and with `returned` the sum of the weights as well (broadcast to the average's shape)."""
    if weights is None:
        (x,) = promotion.promote_dtypes_inexact(asarray_operand("average", a))
        avg = reductions.mean(x, axis, keepdims=keepdims)
        axes = reductions._reduction_axes(axis, x.ndim)
        count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
        weights_sum = promotion.convert_element_type(count, avg.dtype, False)
    else:
        x, w = promotion.promote_dtypes_inexact(
            asarray_operand("average", a), asarray_operand("average", weights, 1)
        )
        if x.shape != w.shape:
            w = _weights_along(x, w, axis)
        weights_sum = reductions.sum(w, axis, keepdims=keepdims)
        weighted_sum = reductions.sum(ufuncs.multiply(x, w), axis, keepdims=keepdims)
        avg = ufuncs.divide(weighted_sum, weights_sum)
    if not returned:
        return avg
    if weights_sum.shape != avg.shape:
        weights_sum = manipulation.broadcast_to(weights_sum, avg.shape)
    return avg, weights_sum


def _weights_along(x, w, axis):
    """Weights given along `axis` only, shaped to broadcast against `x`."""
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    axes = manipulation.normalize_axis_tuple(axis, x.ndim)
    if w.shape != tuple(x.shape[d] for d in axes):
        raise ValueError(
            "Shape of weights must be consistent with shape of a along specified axis."
        )
    w = manipulation.transpose(w, tuple(np.argsort(axes))) if len(axes) > 1 else w
    return manipulation.reshape(w, tuple(n if d in axes else 1 for d, n in enumerate(x.shape)))


def _check_inexact_dtype(name: str, dtype):
    if dtype is not None and not dtypes.is_inexact(dtypes.check_user_dtype(dtype, name)):
        raise ValueError(
            f"{name}: dtype must be a subclass of float or complex; got dtype={np.dtype(dtype)!r}"
        )


def _cov_weights(name: str, weights, n: int, integer: bool):
    weights = asarray_operand("cov", weights)
    if weights.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if weights.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if integer and not dtypes.is_int(weights.dtype):
        raise TypeError("fweights must be integer.")
    return ufuncs.abs(weights)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):  # fmt: skip
    """The covariance matrix of the variables in the rows of `m` (columns with `rowvar=False`),
    and of `y`'s, weighted by the integer frequencies `fweights` and the `aweights`; a scalar
    for a single variable."""
    if y is None:
        (x,) = promotion.promote_args_inexact("cov", m)
    else:
        x, y = promotion.promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    _check_inexact_dtype("cov", dtype)
    rows = manipulation.atleast_2d(x)
    if not rowvar and x.ndim != 1:
        rows = manipulation.transpose(rows)
    if rows.shape[0] == 0:
        return manipulation.reshape(creation.array([]), (0, 0))
    if y is not None:
        more = manipulation.atleast_2d(y)
        if not rowvar and more.shape[0] != 1:
            more = manipulation.transpose(more)
        rows = manipulation.concatenate([rows, more], axis=0)
    variables, n = rows.shape
    if n == 0:
        shape = () if variables == 1 else (variables, variables)
        return creation.full(shape, np.nan, dtype=rows.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None if fweights is None else _cov_weights("fweights", fweights, n, True)
    if aweights is not None:
        aweights = _cov_weights("aweights", aweights, n, False)
        w = aweights if w is None else ufuncs.multiply(w, aweights)
    if dtype is not None:
        rows = promotion.convert_element_type(rows, dtypes.check_user_dtype(dtype, "cov"))
        w = None if w is None else promotion.convert_element_type(w, rows.dtype)
    avg, w_sum = average(rows, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = n - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ufuncs.subtract(w_sum, ddof)
    else:
        correction = ufuncs.divide(reductions.sum(ufuncs.multiply(w, aweights)), w_sum)
        f = ufuncs.subtract(w_sum, ufuncs.multiply(ddof, correction))
    centered = ufuncs.subtract(rows, avg[:, None])
    weighted = centered if w is None else ufuncs.multiply(centered, w)
    product = products.dot(centered, ufuncs.conj(manipulation.transpose(weighted)))
    return manipulation.squeeze(ufuncs.true_divide(product, f))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """The correlation coefficients of the variables (see `cov`), clipped into [-1, 1]."""
    _check_inexact_dtype("corrcoef", dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: 1, or NaN for nan/nan, inf/inf, 0/0
        return ufuncs.divide(c, c)
    stddev = promotion.convert_element_type(ufuncs.sqrt(ufuncs.real(lib.diag(c))), c.dtype)
    c = ufuncs.divide(ufuncs.divide(c, stddev[:, None]), stddev[None, :])
    real = ufuncs.clip(ufuncs.real(c), -1, 1)
    if not dtypes.is_complex(c.dtype):
        return real
    imag = ufuncs.clip(ufuncs.imag(c), -1, 1)
    return ufuncs.add(real, ufuncs.multiply(promotion.weak_scalar(1j, c.dtype), imag))


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")
_I32 = np.dtype(np.int32)


def _check_unsupported(name: str, out, overwrite_input):
    if out is not None or overwrite_input:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")


def _merge_reduced_axes(x, axes: tuple):
    """`x` with its kept axes first, in order, and its reduced axes merged into a last one."""
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    x = manipulation.transpose(x, kept + axes)
    m = int(np.prod([x.shape[len(kept) + i] for i in range(len(axes))], dtype=np.int64))
    return manipulation.reshape(x, tuple(x.shape[: len(kept)]) + (m,)), kept


def _quantile_operands(name: str, a, q, method: str, weights):
    """(x, q, weights): the data as a strong inexact array, `q` in its dtype and the weights
    (None, or broadcast to the data's shape), all checked."""
    if method not in _METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    x = asarray_operand(name, a)
    if weights is None:
        (x,) = promotion.promote_dtypes_inexact(x)
    else:
        w = asarray_operand(name, weights, 2)
        if dtypes.is_complex(w.dtype):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(
                f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
            )
        x, w = promotion.promote_dtypes_inexact(x, w)
    x = promotion.convert_element_type(x, x.dtype, False)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"jnp.{name} does not support complex input")
    q = asarray_operand(name, q, 1)
    if dtypes.is_complex(q.dtype):
        raise TypeError(
            f"jnp.{name}: q must be real, got {q.dtype.name} (complex quantiles have no order)"
        )
    q = promotion.convert_element_type(q, x.dtype, False)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")  # JAX's wording
    return x, q, None if weights is None else w


def _check_nonempty(name: str, m: int, axis, ignore_nans: bool):
    """JAX's errors for quantiles of empty slices (its gathers fail on them)."""
    if m:
        return
    if ignore_nans and axis is None:
        raise IndexError("index is out of bounds for axis 0 with size 0")
    raise TypeError(f"jnp.{name}: cannot take quantiles of empty slices (the reduced size is 0)")


def _quantile(name: str, a, q, axis, method: str, keepdims: bool, ignore_nans: bool,
              weights=None):  # fmt: skip
    x, q, w = _quantile_operands(name, a, q, method, weights)
    axes = reductions._reduction_axes(axis, x.ndim)
    w = None if w is None else _weights_for(x, w, axis, axes)
    merged, kept = _merge_reduced_axes(x, axes)
    last = merged.ndim - 1
    m = merged.shape[last]
    _check_nonempty(name, m, axis, ignore_nans)
    if w is None:
        data = lax_sort.sort(merged, last)
    else:
        data, w = lax_sort.sort((merged, _merge_reduced_axes(w, axes)[0]), last, num_keys=1)
    nan_mask = ufuncs.isnan(merged)
    dtype = x.dtype
    if ignore_nans:
        count = lax_reductions.reduce_sum(
            promotion.convert_element_type(ufuncs.logical_not(nan_mask), dtype), (last,)
        )
        count = manipulation.expand_dims(count, -1)  # [..., 1]: one count per slice
    else:
        count = promotion.convert_element_type(m, dtype, False)
    qs = manipulation.reshape(q, (-1,))  # [k]
    one = promotion.weak_scalar(1.0, dtype)
    top = ufuncs.maximum(ufuncs.subtract(count, one), promotion.weak_scalar(0.0, dtype))

    def clipped(position):
        return ufuncs.clip(position, promotion.weak_scalar(0.0, dtype), top)

    def read(index):
        index = promotion.convert_element_type(index, _I32, False)
        index = manipulation.broadcast_to(index, merged.shape[:last] + (qs.shape[0],))
        return take_along_axis(data, index, axis=last, mode="clip")

    if ignore_nans:
        empty = ufuncs.equal(count, promotion.weak_scalar(0.0, dtype))
    else:
        empty = reductions.any(nan_mask, axis=last, keepdims=True)
    if w is None:
        result = _interpolated(method, read, clipped, qs, count)
    else:
        result, bad_weights = _weighted_inverted_cdf(read, clipped, data, w, qs)
        empty = ufuncs.logical_or(empty, bad_weights)
    result = ufuncs.where(empty, promotion.convert_element_type(float("nan"), dtype), result)
    # result: kept dims + [k]; put q's axis first, then restore keepdims
    result = manipulation.moveaxis(result, -1, 0)
    if keepdims:
        kept_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    else:
        kept_shape = tuple(x.shape[d] for d in kept)
    return manipulation.reshape(result, q.shape + kept_shape)


def _weights_for(x, w, axis, axes: tuple):
    """The weights broadcast to the data's shape: given whole, or along the reduced axes."""
    if w.shape == x.shape:
        return w
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    along = tuple(x.shape[d] for d in manipulation.normalize_axis_tuple(axis, x.ndim))
    if w.shape != along:
        raise ValueError(f"Weights shape {w.shape} must match reduction axes {along}")
    order = manipulation.normalize_axis_tuple(axis, x.ndim)
    return lax_shapes.broadcast_in_dim(w, x.shape, order)


def _weighted_inverted_cdf(read, clipped, data, w, qs):
    """(quantiles, bad weights): the first sorted element whose cumulative weight reaches
    `q` times the total, per slice and quantile (NaN data and bad weights weigh nothing), and
    which slices hold a negative or NaN weight (their quantiles are NaN)."""
    last = data.ndim - 1
    bad = ufuncs.logical_or(ufuncs.less(w, promotion.weak_scalar(0, w.dtype)), ufuncs.isnan(w))
    ignored = ufuncs.logical_or(bad, ufuncs.isnan(data))
    counted = ufuncs.where(ignored, promotion.weak_scalar(0, w.dtype), w)
    cumulative = reductions.cumsum(counted, axis=last)
    target = ufuncs.multiply(qs, cumulative[..., -1:])  # [..., k]
    below = ufuncs.less(cumulative[..., None, :], target[..., :, None])  # [..., k, m]
    index = reductions.sum(below, axis=-1, dtype=data.dtype)
    return read(clipped(index)), reductions.any(bad, axis=last, keepdims=True)


def _interpolated(method: str, read, clipped, qs, count):
    """The quantiles `qs` of sorted slices of `count` elements by `method`, from `read(index)`
    (the elements at an index per slice and quantile) and `clipped(position)` (a position
    clipped into the slice)."""
    dtype = qs.dtype
    one = promotion.weak_scalar(1.0, dtype)
    position = ufuncs.multiply(qs, ufuncs.subtract(count, one))
    low = clipped(ufuncs.floor(position))
    high = clipped(ufuncs.ceil(position))
    if method == "linear":
        lo, hi = read(low), read(high)
        frac = ufuncs.subtract(clipped(position), low)
        return ufuncs.add(lo, ufuncs.multiply(ufuncs.subtract(hi, lo), frac))
    if method == "lower":
        return read(low)
    if method == "higher":
        return read(high)
    if method == "midpoint":
        half = promotion.weak_scalar(0.5, dtype)
        return ufuncs.multiply(ufuncs.add(read(low), read(high)), half)
    if method == "nearest":  # a position halfway between two elements reads the lower, as in JAX
        above_half = ufuncs.greater(
            ufuncs.subtract(clipped(position), low), promotion.weak_scalar(0.5, dtype)
        )
        return ufuncs.where(above_half, read(high), read(low))
    # inverted_cdf
    return read(clipped(ufuncs.subtract(ufuncs.ceil(ufuncs.multiply(qs, count)), one)))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None):  # fmt: skip
    """The `q`-th quantiles (0 <= q <= 1) of `a` over `axis` (all axes for None; a tuple
    reduces several), NaN where a slice holds a NaN."""
    _check_unsupported("quantile", out, overwrite_input)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):  # fmt: skip
    """`quantile` ignoring NaNs (NaN only for a slice with no other element)."""
    _check_unsupported("nanquantile", out, overwrite_input)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def _percent(name: str, q):
    q = asarray_operand(name, q, 1)
    (q,) = promotion.promote_dtypes_inexact(q)
    return ufuncs.divide(q, promotion.weak_scalar(100.0, q.dtype))


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, out_sharding=None):  # fmt: skip
    """The `q`-th percentiles (0 <= q <= 100): `quantile` at q / 100. (`out_sharding` places
    the result on several devices in JAX; tracejit's arrays live on one.)"""
    _check_unsupported("quantile", out, overwrite_input)
    if out_sharding is not None:
        raise NotImplementedError("jnp.percentile: out_sharding is not supported by tracejit")
    q = _percent("percentile", q)
    return _quantile("percentile", a, q, axis, method, keepdims, False, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):  # fmt: skip
    """`percentile` ignoring NaNs."""
    _check_unsupported("nanquantile", out, overwrite_input)
    q = _percent("nanpercentile", q)
    return _quantile("nanpercentile", a, q, axis, method, keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over `axis`: the 0.5 quantile (the mean of the two middle elements of an
    even-length slice)."""
    _check_unsupported("quantile", out, overwrite_input)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, ignore_nans=False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over `axis`, ignoring NaNs."""
    _check_unsupported("nanquantile", out, overwrite_input)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, ignore_nans=True)
