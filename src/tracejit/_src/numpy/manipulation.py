"""Shape manipulation: reshape, transpose and friends, joining, splitting, broadcasting,
flipping, rotating and tiling.

Each stages the lax shape ops JAX stages (`reshape`, `transpose`, `squeeze`, `broadcast_in_dim`,
`rev`, `concatenate`, `slice`, `pad`) and stages nothing when the result would be the operand
itself (`x.reshape(x.shape)`, `jnp.transpose(x, (0, 1))`), as JAX does. Where current JAX has a
dedicated primitive that this project does not (`stack`, `split`, `tile`), the older
composition of the basic ops is staged instead: `broadcast_in_dim` + `concatenate` for
`stack`, `slice` for `split`, `broadcast_in_dim` + `reshape` for `tile`.
"""

from __future__ import annotations

import builtins
import itertools
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.numpy import promotion
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.promotion import asarray_operand, check_placement


def normalize_axis(axis, ndim: int, name: str = "axis") -> int:
    """A non-negative axis, or NumPy's error for one out of range."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def normalize_axis_tuple(axis, ndim: int, argname: str = "axis") -> tuple:
    if isinstance(axis, (tuple, list)) or np.ndim(axis) == 1:  # (an array of axes too)
        axes = tuple(normalize_axis(a, ndim) for a in axis)
    else:
        axes = (normalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in `{argname}` argument")
    return axes


def ndim(a) -> int:
    """The number of dimensions of `a`."""
    return np.ndim(a) if not hasattr(a, "ndim") else a.ndim


def shape(a) -> tuple:
    """The shape of `a`."""
    return np.shape(a) if not hasattr(a, "shape") else tuple(a.shape)


def size(a, axis=None) -> int:
    """The number of elements of `a` (along `axis`, if given)."""
    s = shape(a)
    if axis is None:
        return int(np.prod(s, dtype=np.int64))
    return s[normalize_axis(axis, len(s))]


# --------------------------------------------------------------------------------------------
# reshape


def _resolve_shape(old_shape: tuple, new_shape) -> tuple:
    new_shape = promotion.shape_ints(new_shape)
    old_size = int(np.prod(old_shape, dtype=np.int64))
    unknown = [i for i, d in enumerate(new_shape) if d == -1]
    if len(unknown) > 1:
        raise TypeError(
            f"can only specify one unknown axis size with a `-1` value, got {new_shape}"
        )
    if any(d < -1 for d in new_shape):
        raise TypeError(f"reshape new_sizes must all be non-negative or -1, got {new_shape}")
    if unknown:
        known = int(np.prod([d for d in new_shape if d != -1], dtype=np.int64))
        if known == 0 or old_size % known:
            raise TypeError(
                f"cannot reshape array of shape {old_shape} (size {old_size}) into shape "
                f"{new_shape} because the product of specified axis sizes ({known}) does not "
                f"evenly divide {old_size}"
            )
        i = unknown[0]
        new_shape = new_shape[:i] + (old_size // known,) + new_shape[i + 1 :]
    new_size = int(np.prod(new_shape, dtype=np.int64))
    if new_size != old_size:
        shown = new_shape[0] if len(new_shape) == 1 else new_shape
        raise TypeError(
            f"cannot reshape array of shape {old_shape} (size {old_size}) into shape {shown} "
            f"(size {new_size})"
        )
    return new_shape


def reshape(a, shape=None, order="C", *, copy=None, out_sharding=None):
    """`a` with a new shape holding the same elements (one dimension may be -1)."""
    if out_sharding is not None:
        check_placement("reshape", out_sharding=out_sharding)
    if shape is None:
        raise TypeError("jnp.reshape requires the 'shape' argument")
    x = asarray_operand("reshape", a)
    new_shape = _resolve_shape(x.shape, shape)
    if order == "C":
        if new_shape == x.shape:
            return x
        return lax_shapes.reshape(x, new_shape)
    if order == "F":
        dims = tuple(range(x.ndim - 1, -1, -1))
        out = lax_shapes.reshape(x, new_shape[::-1], dims)
        return transpose(out)
    raise NotImplementedError(f"reshape with order={order!r} is not supported")


def ravel(a, order="C", *, out_sharding=None):
    """`a` flattened to one dimension."""
    if out_sharding is not None:
        check_placement("ravel", out_sharding=out_sharding)
    x = asarray_operand("ravel", a)
    if order == "C" and x.ndim == 1:
        return x
    return reshape(x, (x.size,), order=order)


def expand_dims_reshape(x, axis: int):
    """`x` with a new size-1 axis, staged as `reshape` (what linspace does in JAX)."""
    return lax_shapes.reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


# --------------------------------------------------------------------------------------------
# Axis permutations


def transpose(a, axes=None):
    """`a` with its axes permuted (reversed when `axes` is None)."""
    x = asarray_operand("transpose", a)
    if axes is None:
        perm = tuple(range(x.ndim - 1, -1, -1))
    else:
        perm = tuple(normalize_axis(i, x.ndim) for i in axes)
        if sorted(perm) != list(range(x.ndim)):
            raise TypeError(
                "transpose permutation isn't a permutation of operand dimensions, got "
                f"permutation {perm} for operand shape {x.shape}."
            )
    if perm == tuple(range(x.ndim)):
        return x
    return lax_shapes.transpose(x, perm)


def matrix_transpose(x, /):
    """Swaps the last two axes."""
    x = asarray_operand("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got {x.ndim=}")
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def moveaxis(a, source, destination):
    """`a` with the axes `source` moved to positions `destination`."""
    x = asarray_operand("moveaxis", a)
    src = normalize_axis_tuple(source, x.ndim, "source")
    dst = normalize_axis_tuple(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    rest = [i for i in range(x.ndim) if i not in src]
    perm = [None] * x.ndim
    for s, d in sorted(zip(dst, src, strict=True)):
        perm[s] = d
    remaining = iter(rest)
    perm = [p if p is not None else next(remaining) for p in perm]
    return transpose(x, perm)


def permute_dims(a, /, axes):
    """`a` with its axes permuted (the array API's `transpose`, which needs `axes`)."""
    x = asarray_operand("permute_dims", a)
    axes = tuple(axes)
    if sorted(axes) != list(range(x.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got permutation "
            f"{axes} for operand shape {x.shape}."
        )
    return transpose(x, axes)


@jnp_jit(static_argnames=("axis", "start"))
def rollaxis(a, axis, start=0):
    """`a` with `axis` moved to just before the axis now at position `start` (NumPy's older
    `moveaxis`)."""
    x = asarray_operand("rollaxis", a)
    axis = normalize_axis(axis, x.ndim)
    start = operator.index(start)
    if not -x.ndim <= start <= x.ndim:
        raise ValueError(f"{start=} must satisfy {-x.ndim}<=start<={x.ndim}")
    if start < 0:
        start += x.ndim
    if start > axis:
        start -= 1
    return moveaxis(x, axis, start)


def swapaxes(a, axis1, axis2):
    """`a` with two axes exchanged."""
    x = asarray_operand("swapaxes", a)
    i, j = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


# --------------------------------------------------------------------------------------------
# Adding and removing size-1 axes


def squeeze(a, axis=None):
    """`a` without its size-1 axes (only those in `axis`, if given)."""
    x = asarray_operand("squeeze", a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        dims = tuple(sorted(normalize_axis_tuple(axis, x.ndim)))
        bad = [i for i in dims if x.shape[i] != 1]
        if bad:
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={x.shape} and dimensions={tuple(bad)}"
            )
    if not dims:
        return x
    return lax_shapes.squeeze(x, dims)


def expand_dims(a, axis):
    """`a` with new size-1 axes at the positions `axis` of the result."""
    x = asarray_operand("expand_dims", a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = x.ndim + len(axes)
    new = set(normalize_axis_tuple(tuple(axes), out_ndim))
    it = iter(x.shape)
    out_shape = tuple(1 if i in new else next(it) for i in range(out_ndim))
    dims = tuple(i for i in range(out_ndim) if i not in new)
    return lax_shapes.broadcast_in_dim(x, out_shape, dims)


def _atleast(x, nd: int):
    if x.ndim >= nd:
        return x
    if nd == 3 and x.ndim == 1:
        return lax_shapes.broadcast_in_dim(x, (1, x.shape[0], 1), (1,))
    if nd == 3 and x.ndim == 2:
        return lax_shapes.broadcast_in_dim(x, x.shape + (1,), (0, 1))
    lead = nd - x.ndim
    return lax_shapes.broadcast_in_dim(x, (1,) * lead + x.shape, tuple(range(lead, nd)))


def _atleast_nd(name: str, nd: int, arys):
    out = [_atleast(asarray_operand(name, a, i), nd) for i, a in enumerate(arys)]
    return out[0] if len(out) == 1 else out


@jnp_jit
def atleast_1d(*arys):
    """The arguments with at least one dimension."""
    return _atleast_nd("atleast_1d", 1, arys)


@jnp_jit
def atleast_2d(*arys):
    """The arguments with at least two dimensions (1-D arrays become rows)."""
    return _atleast_nd("atleast_2d", 2, arys)


@jnp_jit
def atleast_3d(*arys):
    """The arguments with at least three dimensions (as NumPy: (N,) -> (1, N, 1))."""
    return _atleast_nd("atleast_3d", 3, arys)


# --------------------------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes) -> tuple:
    """The shape that arrays of the given shapes broadcast to."""
    return promotion.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes])


def broadcast_to(array, shape, *, out_sharding=None):
    """`array` broadcast to `shape` (NumPy's rules)."""
    if out_sharding is not None:
        check_placement("broadcast_to", out_sharding=out_sharding)
    x = asarray_operand("broadcast_to", array)
    shape = (
        (shape,)
        if isinstance(shape, (int, np.integer))
        else tuple(operator.index(d) for d in shape)
    )
    if x.shape == shape:
        return x
    if len(shape) < x.ndim:
        raise ValueError(
            f"Cannot broadcast to shape with fewer dimensions: arr_shape={x.shape} shape={shape}"
        )
    lead = len(shape) - x.ndim
    for have, want in zip(x.shape, shape[lead:], strict=True):
        if have != 1 and have != want:
            dims = ",".join(map(str, x.shape)), ",".join(map(str, shape))
            raise ValueError(
                f"Incompatible types for broadcasting: input type={x.dtype.name}[{dims[0]}] and "
                f"requested type={x.dtype.name}[{dims[1]}]"
            )
    return lax_shapes.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*args):
    """The arguments broadcast to their common shape."""
    operands = [asarray_operand("broadcast_arrays", a, i) for i, a in enumerate(args)]
    target = promotion.broadcast_shapes(*[x.shape for x in operands])
    return [broadcast_to(x, target) for x in operands]


# --------------------------------------------------------------------------------------------
# Joining


def _sequence_of_arrays(name: str, arrays) -> list:
    """The arrays of a sequence, or of an array's first axis (a 0-d array has none: JAX's
    ValueError, not Python's TypeError for iterating it)."""
    if isinstance(arrays, np.ndarray) or hasattr(arrays, "aval"):
        if np.ndim(arrays) == 0:
            raise ValueError(
                f"jnp.{name} needs a sequence of arrays or an array of rank at least 1; got a "
                f"zero-dimensional array. Need at least one array to concatenate."
            )
        return [arrays[i] for i in range(len(arrays))]
    return list(arrays)


def concatenate(arrays, axis=0, dtype=None):
    """The arrays joined along an existing axis (flattened first when `axis` is None)."""
    arrays = _sequence_of_arrays("concatenate", arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    operands = [asarray_operand("concatenate", a, i) for i, a in enumerate(arrays)]
    if axis is None:
        operands = [ravel(x) for x in operands]
        axis = 0
    user_dtype = dtypes.check_user_dtype(dtype, "concatenate")
    if user_dtype is not None:
        operands = [promotion.convert_element_type(x, user_dtype) for x in operands]
    else:
        operands = promotion.promote_dtypes(*operands)
    if len(operands) == 1:
        return operands[0]
    rank = operands[0].ndim
    if any(x.ndim != rank for x in operands):
        shapes = ", ".join(str(x.shape) for x in operands)
        raise TypeError(
            f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}."
        )
    if rank == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = normalize_axis(axis, rank)
    first = operands[0].shape
    for x in operands[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(first, x.shape, strict=True)) if i != axis):
            shapes = ", ".join(str(x.shape) for x in operands)
            raise TypeError(
                "Cannot concatenate arrays with shapes that differ in dimensions other than the "
                f"one being concatenated: concatenating along dimension {axis} for shapes "
                f"{shapes}."
            )
    return lax_shapes.concatenate(operands, axis)


def concat(arrays, /, *, axis=0):
    """The array API's `concatenate`: the arrays of a sequence (or of an array's first axis)
    joined along `axis`."""
    if hasattr(arrays, "ndim") and arrays.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return concatenate(arrays, axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """The arrays (all of one shape) joined along a new axis."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    operands = [asarray_operand("stack", a, i) for i, a in enumerate(arrays)]
    shapes = {x.shape for x in operands}
    if len(shapes) > 1:
        got = ", ".join(str(x.shape) for x in operands)
        raise ValueError(f"All input arrays must have the same shape. Got {got}.")
    axis = normalize_axis(axis, operands[0].ndim + 1)
    return concatenate([expand_dims(x, axis) for x in operands], axis, dtype=dtype)


def hstack(tup, dtype=None):
    """The arrays joined along their second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in _sequence_of_arrays("hstack", tup)]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype)


def vstack(tup, dtype=None):
    """The arrays joined along their first axis (1-D arrays become rows)."""
    return concatenate([atleast_2d(a) for a in _sequence_of_arrays("vstack", tup)], 0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """The arrays joined along their third axis."""
    return concatenate([atleast_3d(a) for a in _sequence_of_arrays("dstack", tup)], 2, dtype=dtype)


def column_stack(tup):
    """1-D arrays as columns of a 2-D array (scalars as 1x1); 2-D arrays joined along their
    second axis."""
    arrays = []
    for a in _sequence_of_arrays("column_stack", tup):
        x = asarray_operand("column_stack", a)
        if x.ndim < 2:
            x = transpose(atleast_2d(x))
        arrays.append(x)
    return concatenate(arrays, 1)


@jnp_jit(static_argnames=("axis",))
def append(arr, values, axis=None):
    """`values` joined to the end of `arr` along `axis` (both flattened for None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


@jnp_jit
def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists are joined along the
    last axis, the next along the second-to-last, and so on."""
    out, _ = _block(arrays)
    return out


def _block(xs):
    """(the joined blocks, the depth of the list nesting `xs` had)."""
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")  # noqa: TRY004
    if not isinstance(xs, list):
        return asarray_operand("block", xs), 1
    if not xs:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts, depths = zip(*[_block(x) for x in xs], strict=True)
    if any(d != depths[0] for d in depths[1:]):
        raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = builtins.max(depths[0], *(x.ndim for x in parts))
    parts = [reshape(x, (1,) * (rank - x.ndim) + x.shape) for x in parts]
    return concatenate(parts, axis=-depths[0]), depths[0] + 1


def resize(a, new_shape):
    """`a` flattened, repeated cyclically (or cut) to fill `new_shape` (zeros if `a` is
    empty)."""
    x = ravel(asarray_operand("resize", a))
    new_shape = promotion.shape_ints(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    new_size = int(np.prod(new_shape, dtype=np.int64))
    if x.size == 0 or new_size == 0:
        zero = promotion.convert_element_type(0, x.dtype, x.weak_type)
        return lax_shapes.broadcast_in_dim(zero, new_shape, ())
    repeats = -(-new_size // x.size)
    flat = lax_slicing.slice_in_dim(tile(x, repeats), 0, new_size, 1, 0)
    return reshape(flat, new_shape)


# --------------------------------------------------------------------------------------------
# Splitting


def _split(name: str, ary, indices_or_sections, axis, equal: bool):
    x = asarray_operand(name, ary)
    axis = normalize_axis(axis, x.ndim)
    length = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and length % sections:
            raise ValueError(
                f"array split does not result in an equal division: rest is {length % sections}"
            )
        base, extra = divmod(length, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        points = [operator.index(i) for i in indices_or_sections]
        bounds = (
            [0]
            + [builtins.min(builtins.max(p + length if p < 0 else p, 0), length) for p in points]
            + [length]
        )
    out = []
    for start, stop in itertools.pairwise(bounds):
        stop = builtins.max(start, stop)
        out.append(lax_slicing.slice_in_dim(x, start, stop, 1, axis))
    return out


def split(ary, indices_or_sections, axis=0):
    """`ary` cut into equal sections, or at the given indices, along `axis`."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """Like `split`, but the sections may differ in length by one."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary, indices_or_sections):
    """`split` along the second axis (the first for 1-D arrays)."""
    x = asarray_operand("hsplit", ary)
    if x.ndim == 0:
        raise IndexError("tuple index out of range")
    return _split("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, equal=True)


def vsplit(ary, indices_or_sections):
    """`split` along the first axis."""
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary, indices_or_sections):
    """`split` along the third axis."""
    x = asarray_operand("dsplit", ary)
    if x.ndim < 3:
        raise IndexError("tuple index out of range")
    return _split("dsplit", x, indices_or_sections, 2, equal=True)


def unstack(x, /, *, axis=0):
    """The slices of `x` along `axis`, as a tuple."""
    x = asarray_operand("unstack", x)
    axis = normalize_axis(axis, x.ndim)
    return tuple(
        lax_shapes.squeeze(lax_slicing.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
        for i in range(x.shape[axis])
    )


# --------------------------------------------------------------------------------------------
# Reversing, rotating, tiling


def flip(m, axis=None):
    """`m` with the order of its elements reversed along `axis` (all axes if None)."""
    return _flip(asarray_operand("flip", m), axis)


@jnp_jit(static_argnums=(1,))
def _flip(x, axis):
    if axis is None:
        dims = tuple(range(x.ndim))
    else:
        dims = normalize_axis_tuple(axis, x.ndim)
    if not dims:
        return x
    return lax_shapes.rev(x, dims)


@jnp_jit(static_argnames=("k", "axes"))
def rot90(m, k=1, axes=(0, 1)):
    """`m` rotated by `k` quarter turns in the plane of `axes` (from the first axis towards
    the second): two flips for a half turn, a flip and a transpose for a quarter."""
    x = asarray_operand("rot90", m)
    if x.ndim < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first "
            f"argument of shape {x.shape}, which has ndim {x.ndim}"
        )
    ax1, ax2 = axes
    ax1, ax2 = normalize_axis(ax1, x.ndim), normalize_axis(ax2, x.ndim)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return _flip(_flip(x, ax1), ax2)
    perm = list(range(x.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(_flip(x, ax2), perm)
    return _flip(transpose(x, perm), ax2)


def fliplr(m):
    """Reverses the second axis."""
    return _flip(asarray_operand("fliplr", m), 1)


def flipud(m):
    """Reverses the first axis."""
    return _flip(asarray_operand("flipud", m), 0)


def tile(A, reps):
    """`A` repeated `reps` times along each axis."""
    x = asarray_operand("tile", A)
    reps = (operator.index(reps),) if np.ndim(reps) == 0 else tuple(operator.index(r) for r in reps)
    rank = builtins.max(len(reps), x.ndim)
    reps = (1,) * (rank - len(reps)) + reps
    x = reshape(x, (1,) * (rank - x.ndim) + x.shape)
    if all(r == 1 for r in reps):
        return x
    interleaved = tuple(d for pair in zip(reps, x.shape, strict=True) for d in pair)
    wide = lax_shapes.broadcast_in_dim(x, interleaved, tuple(range(1, 2 * rank, 2)))
    return reshape(wide, tuple(r * d for r, d in zip(reps, x.shape, strict=True)))
