"""Everyday array helpers over the shape ops: rolling, repeating, differences, triangles and
diagonals, grids and log-spaced ranges, functions applied along axes, Vandermonde matrices and
partial sorts.

None of these needs a primitive of its own. A static `roll` is two `slice`s and a
`concatenate`; a traced shift slices the array concatenated with itself at a `dynamic_slice`
offset. `repeat` by one count is a `broadcast_in_dim` along a new axis and a `reshape`; by a
count per element it takes the repeated positions with a gather (`take`). Diagonals are strided slices of the flattened last two axes (element `(i, i + k)` of an
`n x m` matrix sits at flat position `i * (m + 1) + k`), so they differentiate and batch like
any slice; building a diagonal matrix is the same walk backwards, a `pad` with `m` interior zeros
between the values. Triangles are a `select` against an `iota` mask, as `tri` builds it.
`apply_along_axis` vmaps the user's function over the other axes. `partition` and
`argpartition` give what JAX's two `top_k`s give, from one multi-key `sort`.

    >>> make_jaxpr(lambda x: jnp.diagonal(x))(jnp.ones((3, 4)))
    { lambda ; a:f32[3,4]. let
        b:f32[12] = reshape[dimensions=None new_sizes=(12,)] a
        c:f32[3] = slice[limit_indices=(11,) start_indices=(0,) strides=(5,)] b
      in (c,) }
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from tracejit._src import dtypes, vmap
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import conversions as lax_conversions
from tracejit._src.lax import cumulative as lax_cumulative
from tracejit._src.lax import gather as lax_gather
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import scatter as lax_scatter
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import (
    advanced_indexing,
    arithmetic,
    creation,
    manipulation,
    promotion,
    reductions,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.manipulation import normalize_axis
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import asarray_operand, check_placement

# --------------------------------------------------------------------------------------------
# roll


@jnp_jit(static_argnums=(1, 2))
def _roll_static(x, shift: int, axis: int):
    n = x.shape[axis]
    shift %= n
    if shift == 0:
        return x
    tail = lax_slicing.slice_in_dim(x, n - shift, n, axis=axis)
    head = lax_slicing.slice_in_dim(x, 0, n - shift, axis=axis)
    return lax_shapes.concatenate([tail, head], axis)


def _roll_traced(x, shift, axis: int):
    # Rolling by s picks the window [n - s, 2n - s) of the array repeated twice, with s taken
    # modulo n into [0, n) (rem keeps the dividend's sign, so negative remainders get n added).
    n = x.shape[axis]
    shift = promotion.convert_element_type(shift, dtypes.default_int_dtype())
    size = promotion.weak_scalar(n, shift.dtype)
    r = lax_binary.rem(shift, size)
    r = lax_selection.select(
        lax_comparison.lt(r, ufuncs.zero_like_scalar(r)), lax_binary.add(r, size), r
    )
    start = lax_binary.sub(size, r)  # in [1, n]: no negative-index wrapping needed
    doubled = lax_shapes.concatenate([x, x], axis)
    return lax_slicing.dynamic_slice_in_dim(doubled, start, n, axis, allow_negative_indices=False)


def _static_shift(s) -> int:
    """A concrete shift as an int; floats truncate toward zero, as JAX's cast does."""
    value = np.asarray(s).item()
    return int(value) if isinstance(value, float) else operator.index(value)


def roll(a, shift, axis=None):
    """`a` with its elements shifted cyclically by `shift` along `axis` (the flattened array
    when `axis` is None); `shift` and `axis` may be tuples, broadcast against each other. A
    traced `shift` is allowed: it becomes a `dynamic_slice` offset."""
    x = asarray_operand("roll", a)
    if axis is None:
        return manipulation.reshape(roll(manipulation.ravel(x), shift, 0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if isinstance(shift, (tuple, list)) or np.ndim(shift) > 0:
        shifts = (
            shift if isinstance(shift, (tuple, list)) else [shift[i] for i in range(len(shift))]
        )
    else:
        shifts = [shift]
    shape = promotion.broadcast_shapes((len(shifts),), (len(axes),))
    shifts = list(shifts) * (shape[0] // len(shifts))
    axes = axes * (shape[0] // len(axes))
    for s, ax in zip(shifts, axes, strict=True):
        ax = normalize_axis(ax, x.ndim)
        if x.shape[ax] == 0:
            continue
        if isinstance(s, Tracer):
            if not dtypes.is_int(s.dtype):
                raise TypeError(f"roll shift must be an integer, got dtype {s.dtype}")
            x = _roll_traced(x, s, ax)
        else:
            x = _roll_static(x, _static_shift(s), ax)
    return x


# --------------------------------------------------------------------------------------------
# Repeating elements


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element of `a` along `axis` (of the flattened `a` for None) repeated `repeats`
    times: an integer, or one count per element. With `total_repeat_length` the result has that
    length (extra elements dropped, the last one repeated to fill), which traced `repeats`
    need: the result's shape must be static."""
    if out_sharding is not None:
        check_placement("repeat", out_sharding=out_sharding)
    x = asarray_operand("repeat", a)
    if isinstance(repeats, (list, tuple)):
        raise TypeError(
            f"repeat requires ndarray or scalar arguments, got {type(repeats)} at position 1."
        )
    if axis is None:
        x = manipulation.ravel(x)
        axis = 0
    axis = normalize_axis(axis, x.ndim)
    if np.ndim(repeats) == 0 and total_repeat_length is None:
        count = operator.index(
            repeats if not hasattr(repeats, "__index__") else repeats.__index__()
        )
        if count < 0:
            raise ValueError("repeats may not contain negative values.")
        # Every element the same number of times: a broadcast along a new axis, flattened.
        wide_shape = x.shape[: axis + 1] + (count,) + x.shape[axis + 1 :]
        dims = tuple(i if i <= axis else i + 1 for i in range(x.ndim))
        wide = lax_shapes.broadcast_in_dim(x, wide_shape, dims)
        return manipulation.reshape(
            wide, x.shape[:axis] + (x.shape[axis] * count,) + x.shape[axis + 1 :]
        )
    positions = _repeated_positions(repeats, x.shape[axis], total_repeat_length)
    return advanced_indexing.take(x, positions, axis=axis, mode="clip")


def _repeated_positions(repeats, n: int, total):
    """The position along the axis that each element of the result takes."""
    if not isinstance(repeats, Tracer):
        counts = np.broadcast_to(np.asarray(repeats), (n,)).astype(np.int64)
        if (counts < 0).any():
            raise ValueError("repeats may not contain negative values.")
        positions = np.repeat(np.arange(n), counts)
        if total is not None:
            last = positions[-1:] if positions.size else np.zeros(1, np.int64)
            positions = np.concatenate([positions, np.repeat(last, max(total - positions.size, 0))])
            positions = positions[:total]
        return positions.astype(np.int32)
    if total is None:
        raise concretization_error(repeats, ConcretizationTypeError, "jnp.repeat's repeats") from (
            ValueError(
                "When jit-compiling jnp.repeat, the total number of repeats must be static. To "
                "fix this, either specify a static value for `repeats`, or pass a static value "
                "to `total_repeat_length`."
            )
        )
    # Traced counts: a 1 where each element's run ends, summed up, numbers the runs.
    counts = lax_shapes.broadcast_in_dim(lax_conversions.convert_element_type(repeats, np.int32), (n,), (0,) if
                                         np.ndim(repeats) else ())  # fmt: skip
    run_ends = lax_cumulative.cumsum(counts)
    marks = lax_scatter.scatter_add(
        np.zeros(int(total), np.int32),
        lax_shapes.reshape(lax_slicing.slice(run_ends, (0,), (n - 1,)), (n - 1, 1)),
        np.ones(n - 1, np.int32),
        lax_gather.ScatterDimensionNumbers((), (0,), (0,)),
    )
    return lax_cumulative.cumsum(marks)


# --------------------------------------------------------------------------------------------
# differences


def _along(x, start: int, stop: int, axis: int):
    """`x[..., start:stop, ...]` at `axis` (a slice without strides, as JAX's indexing)."""
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = start, stop
    return lax_slicing.slice(x, starts, limits)


def _edge(name: str, value, x, axis: int):
    """`prepend`/`append`: a scalar becomes a size-1 slab along `axis`."""
    value = asarray_operand(name, value)
    if value.ndim == 0:
        shape = x.shape[:axis] + (1,) + x.shape[axis + 1 :]
        value = manipulation.broadcast_to(value, shape)
    return value


@jnp_jit(static_argnames=("n", "axis"))
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference `a[1:] - a[:-1]` along `axis` (`!=` for booleans, as
    NumPy), after joining `prepend`/`append`."""
    x = asarray_operand("diff", a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:  # as NumPy and JAX: the input itself, whatever its rank and `axis`
        return x
    if x.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {x}")
    axis = normalize_axis(axis, x.ndim)
    pieces = []
    if prepend is not None:
        pieces.append(_edge("diff", prepend, x, axis))
    pieces.append(x)
    if append is not None:
        pieces.append(_edge("diff", append, x, axis))
    if len(pieces) > 1:
        x = manipulation.concatenate(pieces, axis)
    op = ufuncs.not_equal if x.dtype == np.bool_ else ufuncs.subtract
    for _ in range(n):
        size = x.shape[axis]
        if size == 0:
            break
        x = op(_along(x, 1, size, axis), _along(x, 0, size - 1, axis))
    return x


@jnp_jit
def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened `ary`, with `to_begin` and
    `to_end` (cast to `ary`'s dtype) joined at either end."""
    x = manipulation.ravel(asarray_operand("ediff1d", ary))
    size = x.shape[0]
    if size == 0:  # still a subtraction, which refuses booleans as JAX does
        out = ufuncs.subtract(x, x)
    else:
        out = ufuncs.subtract(_along(x, 1, size, 0), _along(x, 0, size - 1, 0))
    pieces = []
    if to_begin is not None:
        pieces.append(manipulation.ravel(creation.asarray(to_begin, dtype=x.dtype)))
    pieces.append(out)
    if to_end is not None:
        pieces.append(manipulation.ravel(creation.asarray(to_end, dtype=x.dtype)))
    return manipulation.concatenate(pieces) if len(pieces) > 1 else out


# --------------------------------------------------------------------------------------------
# triangles


def _triangle(name: str, m, k: int, lower: bool):
    """`m` where `row + k >= column` (tril) or its complement (triu, with k - 1), zeros
    elsewhere, over the last two axes."""
    x = asarray_operand(name, m)
    if x.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    shape, int_dtype = x.shape[-2:], dtypes.default_int_dtype()
    rows = lax_shapes.broadcasted_iota(int_dtype, shape, 0)
    shift = operator.index(k) - (0 if lower else 1)
    rows = lax_binary.add(rows, promotion.weak_scalar(shift, int_dtype))
    below = lax_comparison.ge(rows, lax_shapes.broadcasted_iota(int_dtype, shape, 1))
    if x.ndim > 2:
        below = lax_shapes.broadcast_in_dim(below, x.shape, (x.ndim - 2, x.ndim - 1))
    zeros = _zeros_like(x)
    cases = (zeros, x) if lower else (x, zeros)
    return lax_selection.select_n(below, *cases)


def _zeros_like(x):
    zero = promotion.convert_element_type(0, x.dtype, False)
    return lax_shapes.broadcast_in_dim(zero, x.shape, ())


@jnp_jit(static_argnames=("k",))
def tril(m, k=0):
    """`m` with the elements above the k-th diagonal (of its last two axes) zeroed."""
    return _triangle("tril", m, k, lower=True)


@jnp_jit(static_argnames=("k",))
def triu(m, k=0):
    """`m` with the elements below the k-th diagonal (of its last two axes) zeroed."""
    return _triangle("triu", m, k, lower=False)


# --------------------------------------------------------------------------------------------
# diagonals


def _diagonal_length(n: int, m: int, k: int) -> int:
    return builtins.max(0, builtins.min(n + builtins.min(k, 0), m - builtins.max(k, 0)))


def _diagonal_copy(a, offset=0, axis1=0, axis2=1):
    return np.diagonal(a, offset, axis1, axis2).copy()


_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
_ALL_DTYPES = (np.bool_, *_INTS, *FLOATS, np.complex64, np.complex128)


@jnp_jit(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset`-th diagonal of the 2-D slices over `axis1`/`axis2`, as the last axis of
    the result: gathered at (i, i + offset), as JAX stages it."""
    return _diagonal(a, offset=offset, axis1=axis1, axis2=axis2)


@numpy_namesake(_diagonal_copy, _ALL_DTYPES, keywords=("offset", "axis1", "axis2"))
def _diagonal(a, *, offset, axis1, axis2):
    x = asarray_operand("diagonal", a)
    if x.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    k = operator.index(offset)
    x = manipulation.moveaxis(x, (ax1, ax2), (-2, -1))
    length = _diagonal_length(*x.shape[-2:], k)
    int_dtype = dtypes.default_int_dtype()
    first, second = lax_shapes.iota(int_dtype, length), lax_shapes.iota(int_dtype, length)
    if k > 0:
        return x[..., first, ufuncs.add(k, second)]
    if k < 0:
        return x[..., ufuncs.add(-k, second), first]
    return x[..., first, second]


def _diagonal_matrix(v, k: int):
    """The square matrix with the 1-D `v` on its k-th diagonal: `v` spread out by `pad` with
    `size` interior zeros (one row's step), offset to the diagonal's first element."""
    size = v.shape[0] + abs(k)
    zero = ufuncs.zero_like_scalar(v)
    zero = promotion.convert_element_type(zero, v.dtype)
    if v.shape[0] == 0:
        return lax_shapes.broadcast_in_dim(zero, (size, size), ())
    start = k if k >= 0 else -k * size
    spread = v.shape[0] + (v.shape[0] - 1) * size
    flat = lax_shapes.pad(v, zero, [(start, size * size - start - spread, size)])
    return lax_shapes.reshape(flat, (size, size))


def diag(v, k=0):
    """The k-th diagonal of a 2-D `v`, or the square matrix with a 1-D `v` on its k-th
    diagonal."""
    x = asarray_operand("diag", v)
    k = operator.index(k)
    if x.ndim == 1:
        return _diagonal_matrix(x, k)
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k=0):
    """The square matrix with the flattened `v` on its k-th diagonal."""
    return _diagonal_matrix(manipulation.ravel(asarray_operand("diagflat", v)), operator.index(k))


def _matrix_trace(a, offset=0):
    """The composite's sum for one float matrix, by NumPy: the same masked matrix (its
    diagonal, zeros elsewhere) built in two passes, not seven, and summed as reduce_sum
    sums it."""
    if a.ndim != 2:
        raise ValueError("not a matrix: the composite handles stacks")
    masked = np.zeros_like(a)
    rows = np.arange(_diagonal_length(*a.shape, offset)) + builtins.max(-offset, 0)
    cols = rows + offset
    masked[rows, cols] = a[rows, cols]
    return lax_reductions.reduce_sum_p.impl(masked, axes=(0, 1))


@jnp_jit(static_argnames=("axis1", "axis2", "dtype", "out"))
@numpy_namesake(_matrix_trace, (np.float32, np.float64), keywords=("offset",))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along the `offset`-th diagonal (with `sum`'s dtypes: small ints widen): the
    sum of the elements where `row + offset == column`, `offset` traced as JAX does."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    x = asarray_operand("trace", a)
    if x.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = manipulation.moveaxis(x, (ax1, ax2), (-2, -1))
    shape, int_dtype = x.shape[-2:], dtypes.default_int_dtype()
    rows = lax_shapes.broadcasted_iota(int_dtype, shape, 0)
    cols = lax_shapes.broadcasted_iota(int_dtype, shape, 1)
    rows = lax_binary.add(rows, promotion.convert_element_type(offset, int_dtype, False))
    on_diagonal = lax_comparison.eq(rows, cols)
    masked = ufuncs.where(on_diagonal, x, _zeros_like(x))
    return reductions.sum(masked, axis=(-2, -1), dtype=dtype)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """`a` with its main diagonal set to `val` (repeated cyclically). JAX arrays are immutable,
    so only `inplace=False`, which returns the new array, is supported."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    x = asarray_operand("fill_diagonal", a)
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.ndim > 2 and builtins.any(d != x.shape[0] for d in x.shape):
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(x.shape)
    values = manipulation.ravel(asarray_operand("fill_diagonal", val, 1))
    values = promotion.convert_element_type(values, x.dtype)
    if n == 0:
        return x
    if values.shape[0] == 0:
        raise ValueError("fill_diagonal: val must not be empty")
    reps = -(-n // values.shape[0])
    values = _along(manipulation.tile(values, reps), 0, n, 0)
    idx = creation.arange(n)
    return x.at[(idx,) * x.ndim].set(values)


# --------------------------------------------------------------------------------------------
# grids and ranges


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors: 'xy' (Cartesian) swaps the first two
    output axes, 'ij' (matrix) does not; `sparse` keeps the size-1 axes unbroadcast."""
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    arrays = [asarray_operand("meshgrid", x, i) for i, x in enumerate(xi)]
    if builtins.any(x.ndim != 1 for x in arrays):
        shapes = [x.shape for x in arrays]
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {shapes}")
    sizes = [x.shape[0] for x in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(arrays):
        dim = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            dim = 1 - i
        shape = (
            tuple(sizes) if not sparse else tuple(s if j == dim else 1 for j, s in enumerate(sizes))
        )
        out.append(lax_shapes.broadcast_in_dim(x, shape, (dim,)))
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`base ** linspace(start, stop)`, computed in floating point and then cast to `dtype`."""
    dtype = dtypes.check_user_dtype(dtype, "logspace")
    return _logspace(start, stop, operator.index(num), endpoint, base, dtype, axis)


@jnp_jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
    start, stop = _inexact_bounds("logspace", start, stop)
    exponents = creation.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    base = promotion.convert_element_type(asarray_operand("logspace", base), exponents.dtype)
    base = manipulation.expand_dims(base, axis) if base.ndim else base
    out = ufuncs.power(base, exponents) if base.ndim else arithmetic.power(base, exponents)
    return _cast_result(out, dtype)


def _inexact_bounds(name: str, start, stop):
    """`start` and `stop` in the floating dtype they are computed in (strong, as JAX)."""
    start, stop = asarray_operand(name, start), asarray_operand(name, stop, 1)
    computation = promotion.to_inexact_dtype(dtypes.result_type(start, stop))
    return (
        promotion.convert_element_type(start, computation),
        promotion.convert_element_type(stop, computation),
    )


def _cast_result(out, dtype):
    """`out` as the requested `dtype`; integer dtypes truncate (no rounding), as in JAX."""
    if dtype is None:
        return out
    return promotion.convert_element_type(out, dtypes.canonicalize_dtype(dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values from `start` to `stop` spaced evenly on a log scale: `logspace` between the
    `log10`s of the magnitudes, times the sign of `start` (NaN where a bound is 0, and the
    endpoints not patched to be exact, as in JAX)."""
    dtype = dtypes.check_user_dtype(dtype, "geomspace")
    return _geomspace(start, stop, operator.index(num), endpoint, dtype, axis)


@jnp_jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
    start, stop = _inexact_bounds("geomspace", start, stop)
    sign = ufuncs.sign(start)

    def log10(v):  # log(|v|) / ln(10), the exact staging JAX uses, so that casts truncate alike
        scale = promotion.weak_scalar(float(np.log10(np.e)), v.dtype)
        return ufuncs.multiply(ufuncs.log(ufuncs.true_divide(v, sign)), scale)

    log_start, log_stop = log10(start), log10(stop)
    out = _logspace(log_start, log_stop, num, endpoint, 10.0, None, axis)
    out = (
        ufuncs.multiply(sign, out)
        if sign.ndim == 0
        else ufuncs.multiply(manipulation.expand_dims(sign, axis), out)
    )
    return _cast_result(out, dtype)


# --------------------------------------------------------------------------------------------
# Functions applied along axes


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`func1d` applied to each 1-D slice of `arr` along `axis`: vmapped over the other axes,
    so `func1d` may return an array of any shape, whose axes replace `axis`."""
    x = asarray_operand("apply_along_axis", arr)
    axis = normalize_axis(axis, x.ndim)

    def func(slice_1d):
        return func1d(slice_1d, *args, **kwargs)

    for i in range(1, x.ndim - axis):
        func = vmap.vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap.vmap(func, in_axes=0, out_axes=0)
    return func(x)


def apply_over_axes(func, a, axes):
    """`func(a, axis)` applied for each axis in turn, a reduced axis put back as size 1."""
    x = asarray_operand("apply_over_axes", a)
    for axis in axes:
        out = func(x, axis)
        if out.ndim == x.ndim:
            x = out
        elif out.ndim == x.ndim - 1:
            x = manipulation.expand_dims(out, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return x


@jnp_jit(static_argnames=("N", "increasing"))
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D `x`: its powers, highest first unless `increasing`."""
    x = asarray_operand("vander", x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = lax_shapes.iota(x.dtype, N)
    if not increasing:
        powers = lax_binary.sub(promotion.convert_element_type(N - 1, x.dtype), powers)
    column = lax_shapes.broadcast_in_dim(x, (x.shape[0], 1), (0,))
    return arithmetic.power(column, manipulation.expand_dims(powers, 0))


# --------------------------------------------------------------------------------------------
# Partial sorts


def _partition_operand(name: str, a, kth, axis):
    """(`a` with `axis` last, kth normalized): JAX's checks for partition and argpartition."""
    x = asarray_operand(name, a)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    if x.dtype == np.dtype(bool):
        raise TypeError(
            "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
            "complexfloating."
        )
    axis = normalize_axis(axis, x.ndim)
    kth = normalize_axis(kth, x.shape[axis])
    return manipulation.swapaxes(x, axis, -1), kth


def _ascending(x):
    """(values, positions) of `x` sorted along its last axis in the order JAX's `top_k` gives
    them: ascending, ties by position, -0.0 before 0.0 (a second key)."""
    positions = lax_shapes.broadcasted_iota(np.dtype(np.int32), x.shape, x.ndim - 1)
    if not dtypes.is_float(x.dtype):
        return lax_sort.sort((x, positions), x.ndim - 1, True, num_keys=1)
    positive = ufuncs.logical_not(ufuncs.signbit(x))
    values, _, positions = lax_sort.sort((x, positive, positions), x.ndim - 1, True, num_keys=2)
    return values, positions


def partition(a, kth, axis=-1):
    """`a` partially sorted along `axis`: its `kth + 1` smallest values first (ascending), then
    the others largest first, as JAX's two `top_k`s give them."""
    x, kth = _partition_operand("partition", a, kth, axis)
    values, _ = _ascending(x)
    last = x.ndim - 1
    bottom = lax_slicing.slice_in_dim(values, 0, kth + 1, 1, last)
    top = lax_shapes.rev(lax_slicing.slice_in_dim(values, kth + 1, x.shape[-1], 1, last), (last,))
    return manipulation.swapaxes(lax_shapes.concatenate([bottom, top], last), -1, axis)


def argpartition(a, kth, axis=-1):
    """Positions that partition `a` along `axis` (int32, as `top_k`'s): those of the `kth + 1`
    smallest values in ascending order, then the rest in increasing position."""
    x, kth = _partition_operand("argpartition", a, kth, axis)
    _, order = _ascending(x)
    last = x.ndim - 1
    positions = lax_shapes.broadcasted_iota(order.dtype, x.shape, last)
    _, rank = lax_sort.sort((order, positions), last, True, num_keys=1)
    in_bottom = ufuncs.less_equal(rank, promotion.convert_element_type(kth, order.dtype))
    _, rest = lax_sort.sort((in_bottom, positions), last, True, num_keys=1)
    bottom = lax_slicing.slice_in_dim(order, 0, kth + 1, 1, last)
    top = lax_slicing.slice_in_dim(rest, 0, x.shape[-1] - kth - 1, 1, last)
    return manipulation.swapaxes(lax_shapes.concatenate([bottom, top], last), -1, axis)
