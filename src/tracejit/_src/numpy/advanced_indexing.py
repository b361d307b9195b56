"""Advanced indexing: integer-array and boolean-mask indices, read with one `gather` and
written with one `scatter`; `take` and `take_along_axis`.

NumPy's rules decide the result's shape. The integer arrays of an index (lists, concrete
boolean masks turned into the integer arrays of their `nonzero()`, and the plain integers that
sit among them) broadcast together into one block of result dimensions. The block stands where
the first of them stands when they are adjacent in the index, and in front otherwise (a slice,
`None` or `Ellipsis` between two of them separates them):

    x: f32[3,4,5]    x[:, i, j] -> f32[3,2]      x[i, :, j] -> f32[2,4]    (i, j: i32[2])

One gather computes it. Its start indices hold one component per indexed operand dimension,
broadcast over the index batch dimensions, which are the result's dimensions that do not run
over a window, in order:

- an integer array or integer (negative values counted from the end, as NumPy does) indexes a
  collapsed dimension, and its block of batch dimensions is the broadcast shape;
- a slice of step 1 is a window of its length; one that does not start at 0 adds its start, a
  constant, as a component (JAX does the same);
- a slice of another step is a collapsed dimension with its own batch dimension, indexed by
  `start + step * iota(count)`;
- `None` is added to the gather's result with `broadcast_in_dim`.

The components are built as JAX builds them, so that jaxprs print alike: each broadcast to
its place with `broadcast_in_dim` and all concatenated; a NumPy index array is normalized by a
staged `add` and `select_n` whose test for negative values is a NumPy constant (a traced one
by a staged `lt` too), a Python integer in Python.

    x[:, i]  (x: f32[3,4,5], i: i32[2])
        c:bool[2] = lt b 0:i32[]
        d:i32[2] = add b 4:i32[]
        e:i32[2] = select_n c b d
        f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
        g:f32[3,2,5] = gather[dimension_numbers=GatherDimensionNumbers(offset_dims=(0, 2),
          collapsed_slice_dims=(1,), start_index_map=(1,), ...) ...
          mode=GatherScatterMode.PROMISE_IN_BOUNDS slice_sizes=(3, 1, 5) ...] a f

Reads default to PROMISE_IN_BOUNDS, computed as CLIP (an out-of-bound index reads the nearest
element, as JAX's default does); `.at[idx].get(mode='fill')` gives `fill_value` instead.
Updates scatter with the same dimension numbers (the gather's windows are the update windows,
its collapsed dimensions the inserted ones) and default to FILL_OR_DROP: an update at an
out-of-bound index is dropped. `set` is a `scatter` (which of several updates to one element
wins is unspecified, as in JAX), `add` a `scatter_add` (repeated indices accumulate),
and `subtract`, `multiply`, `min`, `max` are `scatter_sub`, `scatter_mul`, `scatter_min`,
`scatter_max` (repeated indices combine in turn). `divide` and
`power` divide (raise) by the product of the updates at each element, a `scatter_mul` into
ones, where a scatter of `True`s says an update reached it. `apply`, and `divide`/`power` where
no index repeats (no integer arrays, or `unique_indices=True`), read the indexed elements with a
gather, combine them and write them back with a `scatter`: exact then, and for `apply` even
when some index repeats.

A boolean mask that is traced cannot work at all (the result's shape would depend on its
values): `index_parsing.parse_index`, which reads the index for both basic and advanced
indexing, raises `NonConcreteBooleanIndexError` for it, as JAX does.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import gather as lax_gather
from tracejit._src.lax import scatter as lax_scatter
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.index_parsing import ArrayIndex, ParsedIndex, ScalarIndex
from tracejit._src.numpy.jitted import jnp_jit

_BOOL = np.dtype(bool)
_INDEX_DTYPE = np.dtype(np.int32)
_Mode = lax_gather.GatherScatterMode


# The items advanced indexing treats alike: integer scalars are 0-d integer arrays here.
_INTEGER_ITEMS = (ScalarIndex, ArrayIndex)


def _integer_index(it) -> tuple:
    """(operand dim, integer array) of a `ScalarIndex` or `ArrayIndex`: a Python int becomes a
    0-d NumPy array, a traced scalar an integer array of its own."""
    return it.dim, np.asarray(it.value) if isinstance(it.value, int) else it.value


# --------------------------------------------------------------------------------------------
# The gather that reads them


class _Plan:
    """The gather (or scatter) an index amounts to; see the module doc."""

    def __init__(self, index: ParsedIndex, staged: bool, normalize: bool = True):
        shape, items = index.shape, index.items
        self.staged = staged
        advs = [_integer_index(it) for it in items if isinstance(it, _INTEGER_ITEMS)]
        self.adv_shape = promotion.broadcast_shapes((), *(np.shape(value) for _, value in advs))
        self.has_arrays = any(np.ndim(value) > 0 for _, value in advs)
        positions = [k for k, it in enumerate(items) if isinstance(it, _INTEGER_ITEMS)]
        adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
        rest = [it for it in items if not isinstance(it, _INTEGER_ITEMS)]
        if not positions:
            layout = rest
        elif adjacent:
            layout = rest[: positions[0]] + ["adv"] + rest[positions[0] :]
        else:
            layout = ["adv"] + rest
        self.slice_sizes = list(shape)
        self.offset_dims, self.new_axes, self.batch_shape = [], [], []
        components = {}  # operand dim -> (value, first batch position)
        collapsed = set()
        position = 0  # in the gather's result
        for it in layout:
            if it is None:
                self.new_axes.append(position + len(self.new_axes))
            elif it == "adv":
                for dim, value in advs:
                    if dim is not None:
                        lead = len(self.batch_shape) + len(self.adv_shape) - np.ndim(value)
                        value = (
                            _normalized(value, shape[dim], staged)
                            if normalize
                            else _as_index(value)
                        )
                        if staged and self.has_arrays and isinstance(value, np.ndarray):
                            value, lead = (
                                _broadcast_integer(value, self.adv_shape),
                                lead - len(self.adv_shape),
                            )
                        components[dim] = (value, lead)
                        collapsed.add(dim)
                        self.slice_sizes[dim] = 1
                self.batch_shape += self.adv_shape
                position += len(self.adv_shape)
            elif it.step == 1:
                self.offset_dims.append(position)
                self.slice_sizes[it.dim] = it.count
                if it.start != 0:
                    components[it.dim] = (np.asarray(it.start), len(self.batch_shape))
                position += 1
            else:
                components[it.dim] = (_strided(it, staged), len(self.batch_shape))
                collapsed.add(it.dim)
                self.slice_sizes[it.dim] = 1
                self.batch_shape.append(it.count)
                position += 1
        self.batch_shape = tuple(self.batch_shape)
        self.start_index_map = tuple(sorted(components))
        self.collapsed = tuple(sorted(collapsed))
        self.components = [components[d] for d in self.start_index_map]
        self.gather_rank = position

    def indices(self):
        """The start indices: batch_shape + (one component per start_index_map entry,), each
        component broadcast to its place and the components concatenated, as JAX builds
        them; eagerly, constant components are stacked by NumPy at once."""
        shape = self.batch_shape + (1,)
        if not self.staged and all(isinstance(v, np.ndarray) for v, _ in self.components):
            parts = [
                np.broadcast_to(
                    v.reshape(v.shape + (1,) * (len(self.batch_shape) - lead - v.ndim)),
                    self.batch_shape,
                )
                for v, lead in self.components
            ]
            stacked = np.stack(parts, axis=-1) if parts else np.zeros(shape[:-1] + (0,))
            return promotion.numpy_to_array(stacked.astype(_INDEX_DTYPE))
        if not self.components:
            return promotion.numpy_to_array(np.zeros(self.batch_shape + (0,), _INDEX_DTYPE))
        parts = []
        for v, lead in self.components:
            if isinstance(v, np.ndarray):
                v = promotion.numpy_to_array(v.astype(_INDEX_DTYPE))
            dims = tuple(range(lead, lead + v.ndim))
            parts.append(lax_shapes.broadcast_in_dim(v, shape, dims))
        return parts[0] if len(parts) == 1 else lax_shapes.concatenate(parts, len(shape) - 1)

    def gather_dnums(self):
        return lax_gather.GatherDimensionNumbers(
            offset_dims=tuple(self.offset_dims),
            collapsed_slice_dims=self.collapsed,
            start_index_map=self.start_index_map,
        )

    def scatter_dnums(self):
        return lax_gather.ScatterDimensionNumbers(
            update_window_dims=tuple(self.offset_dims),
            inserted_window_dims=self.collapsed,
            scatter_dims_to_operand_dims=self.start_index_map,
        )

    def gather_shape(self) -> tuple:
        windows = iter(self.slice_sizes[d] for d in range(len(self.slice_sizes))
                       if d not in self.collapsed)  # fmt: skip
        batch = iter(self.batch_shape)
        return tuple(
            next(windows) if r in self.offset_dims else next(batch) for r in range(self.gather_rank)
        )

    def result_shape(self) -> tuple:
        shape = list(self.gather_shape())
        for i in self.new_axes:
            shape.insert(i, 1)
        return tuple(shape)


def _as_index(value):
    """Integer indices as int32, the dtype of the start indices."""
    if isinstance(value, np.ndarray):
        return value.astype(_INDEX_DTYPE)
    return promotion.convert_element_type(value, _INDEX_DTYPE, False)


def _broadcast_integer(value: np.ndarray, shape: tuple):
    """An integer among index arrays, broadcast to their shape as JAX broadcasts it (weakly
    typed, then made int32)."""
    if value.ndim:
        return value
    weak = promotion.convert_element_type(int(value), _INDEX_DTYPE, True)
    return _as_index(lax_shapes.broadcast_in_dim(weak, shape, ()))


def _strided(it, staged: bool):
    """The indices `start + step * iota(count)` of a slice of step other than 1 (staged as
    JAX stages them, or eagerly a NumPy constant)."""
    if not staged:
        return it.start + it.step * np.arange(it.count)
    iota = lax_shapes.iota(_INDEX_DTYPE, it.count)
    start, step = (
        promotion.convert_element_type(v, _INDEX_DTYPE, True) for v in (it.start, it.step)
    )
    return lax_binary.add(start, lax_binary.mul(step, iota))


def _normalized(value, size: int, staged: bool = True):
    """Integer indices with negative values counted from the end, as int32. As in JAX, a
    NumPy array's test for negative values is a NumPy constant, its sum with `size` staged,
    and a Python integer is counted from the end in Python; eagerly (not `staged`) a NumPy
    array is normalized by NumPy."""
    if isinstance(value, np.ndarray) and (value.ndim == 0 or not staged):
        return np.where(value < 0, value + size, value).astype(_INDEX_DTYPE)
    if isinstance(value, np.ndarray):
        value = value.astype(_INDEX_DTYPE)
        negative = value < 0
        value = promotion.numpy_to_array(value)
        size = promotion.convert_element_type(size, _INDEX_DTYPE, True)
        return lax_selection.select_n(negative, value, lax_binary.add(value, size))
    value = _as_index(value)
    zero, size = (promotion.convert_element_type(v, _INDEX_DTYPE, True) for v in (0, size))
    return lax_selection.select_n(
        lax_comparison.lt(value, zero), value, lax_binary.add(value, size)
    )


def _with_new_axes(out, plan: _Plan):
    if not plan.new_axes:
        return out
    shape = plan.result_shape()
    kept = tuple(i for i in range(len(shape)) if i not in plan.new_axes)
    return lax_shapes.broadcast_in_dim(out, shape, kept)


def _gather(x, plan: _Plan, mode, fill_value, unique_indices, indices_are_sorted, indices=None):
    return lax_gather.gather(
        x,
        plan.indices() if indices is None else indices,
        plan.gather_dnums(),
        tuple(plan.slice_sizes),
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        mode=mode,
        fill_value=fill_value,
    )


def _nothing_to_gather(x, shape):
    """The empty result of a gather that reads no element: the gather itself cannot be built
    when the operand is empty too (its slice sizes of 1 exceed the operand's dimensions)."""
    zero = promotion.convert_element_type(0, x.dtype, x.weak_type)
    return lax_shapes.broadcast_in_dim(zero, shape, ())


def _check_mode(mode):
    if mode is None or isinstance(mode, _Mode):
        return mode
    if mode not in ("clip", "fill", "drop", "promise_in_bounds"):
        raise ValueError(f'Unknown gather mode "{mode}"')
    return _Mode.from_any(mode)


def getitem(x, index: ParsedIndex, *, mode=None, fill_value=None, unique_indices=False,
            indices_are_sorted=False):  # fmt: skip
    """`x[idx]` (or `x.at[idx].get(...)`) with one gather; see the module doc."""
    plan = _Plan(index, staged=isinstance(x, Tracer))
    mode = _check_mode(mode)
    if 0 in plan.result_shape():
        return _nothing_to_gather(x, plan.result_shape())
    out = _gather(x, plan, mode, fill_value, unique_indices, indices_are_sorted)
    return _with_new_axes(out, plan)


# --------------------------------------------------------------------------------------------
# The scatters that write them


def update(x, index: ParsedIndex, name: str, combine, values, *, mode=None,
           unique_indices=False, indices_are_sorted=False):  # fmt: skip
    """`x.at[idx].<name>(values)` (see the module doc); `combine(old, new)` gives the written
    values where a read-combine-write does the update. `name == "apply"` passes the function as
    `combine` and no values."""
    plan = _Plan(index, staged=isinstance(x, Tracer) or isinstance(values, Tracer))
    if 0 in plan.result_shape():
        return x  # nothing to update
    scatter_mode = _check_mode(mode)
    unique = bool(unique_indices) or not plan.has_arrays
    params = {
        "indices_are_sorted": bool(indices_are_sorted) or not plan.has_arrays,
        "unique_indices": unique,
        "mode": scatter_mode,
    }
    indices, dnums = plan.indices(), plan.scatter_dnums()
    if name == "apply":
        updates = None
    else:
        y = promotion.convert_element_type(
            promotion.to_operand(f"at[].{name}", values), x.dtype, x.weak_type
        )
        updates = manipulation.broadcast_to(y, plan.result_shape())
        if plan.new_axes:
            updates = lax_shapes.squeeze(updates, tuple(plan.new_axes))
    if name == "set":
        return lax_scatter.scatter(x, indices, updates, dnums, **params)
    if name == "add":
        return lax_scatter.scatter_add(x, indices, updates, dnums, **params)
    if name in _COMBINING:
        return _COMBINING[name](x, indices, updates, dnums, **params)
    if name == "apply" or unique:
        # Read, combine, write back: exact when no index repeats (see the module doc).
        old = _gather(x, plan, _Mode.CLIP, None, unique, params["indices_are_sorted"], indices)
        new = combine(old) if name == "apply" else combine(old, updates)
        new = promotion.convert_element_type(new, x.dtype, x.weak_type)
        return lax_scatter.scatter(x, indices, new, dnums, **params)

    # divide, power at indices that may repeat: see the module doc.
    def filled(value, dtype):
        scalar = promotion.convert_element_type(value, dtype, False)
        return lax_shapes.broadcast_in_dim(scalar, x.shape, ())

    factor = lax_scatter.scatter_mul(filled(1, x.dtype), indices, updates, dnums, **params)
    trues = lax_shapes.broadcast_in_dim(True, updates.shape, ())
    touched = lax_scatter.scatter(filled(False, _BOOL), indices, trues, dnums, **params)
    new = promotion.convert_element_type(combine(x, factor), x.dtype, x.weak_type)
    return lax_selection.select_n(touched, x, new)


_COMBINING = {
    "subtract": lax_scatter.scatter_sub,
    "multiply": lax_scatter.scatter_mul,
    "min": lax_scatter.scatter_min,
    "max": lax_scatter.scatter_max,
}


# --------------------------------------------------------------------------------------------
# take and take_along_axis


def _int_indices(name: str, indices):
    indices = promotion.asarray_operand(name, indices, 1)
    if not dtypes.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    return indices


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):  # fmt: skip
    """`a`'s elements along `axis` (of the flattened `a` for None) at `indices`, as in JAX:
    `mode` None or 'fill' gives `fill_value` (None: NaN for inexact dtypes, the most negative
    or largest integer, True) for out-of-bound indices; 'clip' clamps them (negative indices
    too, to 0); 'wrap' takes them modulo the axis length; 'promise_in_bounds' is computed as
    'clip' but counts negative indices from the end. 'raise' is not supported, as in JAX."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a = promotion.asarray_operand("take", a)
    indices = _int_indices("take", indices)
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode not in (None, "fill", "clip", "wrap", "promise_in_bounds"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    return _take(a, indices, axis, mode, unique_indices, indices_are_sorted, fill_value)


@jnp_jit(static_argnums=(2, 3, 4, 5, 6))
def _take(a, indices, axis, mode, unique_indices, indices_are_sorted, fill_value):
    """`take` as JAX stages it: one gather of the (flattened) `a`, its indices normalized
    (unless clipped) by `where(i < 0, i + size, i)`."""
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    axis = manipulation.normalize_axis(axis, a.ndim)
    size = a.shape[axis]
    if size == 0 and np.size(indices) > 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    if mode == "wrap":
        indices = promotion.convert_element_type(indices, _INDEX_DTYPE, False)
        n = promotion.convert_element_type(size, _INDEX_DTYPE, True)
        indices = lax_binary.rem(lax_binary.add(lax_binary.rem(indices, n), n), n)
    elif mode != "clip":
        indices = ufuncs.where(indices < 0, indices + size, indices)
    shape = a.shape[:axis] + indices.shape + a.shape[axis + 1 :]
    if 0 in shape:
        return _nothing_to_gather(a, shape)
    dnums = lax_gather.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + indices.ndim, len(shape))),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    gather_mode = {"clip": _Mode.CLIP, "wrap": _Mode.PROMISE_IN_BOUNDS}.get(
        mode, _Mode.PROMISE_IN_BOUNDS if mode == "promise_in_bounds" else _Mode.FILL_OR_DROP
    )
    index = lax_shapes.broadcast_in_dim(
        promotion.convert_element_type(indices, _INDEX_DTYPE, False),
        indices.shape + (1,),
        tuple(range(indices.ndim)),
    )
    slice_sizes = a.shape[:axis] + (1,) + a.shape[axis + 1 :]
    return lax_gather.gather(
        a,
        index,
        dnums,
        slice_sizes,
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        mode=gather_mode,
        fill_value=fill_value,
    )


def take_along_axis(
    arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None
):
    """`arr`'s elements at `indices` along `axis`, matched position by position along the
    other dimensions (which broadcast), as `np.take_along_axis`; `axis=None` takes from the
    flattened `arr` with 1-D `indices`. Out-of-bound indices follow `mode` as in `take`
    (default: filled); negative ones count from the end unless `wrap_negative_indices=False`
    makes them out of bounds too."""
    arr = promotion.asarray_operand("take_along_axis", arr)
    indices = _int_indices("take_along_axis", indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                f"take_along_axis indices must be 1D if axis=None, got shape {indices.shape}"
            )
        arr, axis = manipulation.ravel(arr), 0
    if indices.ndim != arr.ndim:
        raise ValueError(
            "indices and arr must have the same number of dimensions; "
            f"{indices.ndim} vs. {arr.ndim}"
        )
    axis = manipulation.normalize_axis(axis, arr.ndim)
    size = arr.shape[axis]

    def with_axis(shape, n):
        return shape[:axis] + (n,) + shape[axis + 1 :]

    common = promotion.broadcast_shapes(with_axis(arr.shape, 1), with_axis(indices.shape, 1))
    arr = _broadcast_keeping(arr, with_axis(common, size))
    indices = _broadcast_keeping(indices, with_axis(common, indices.shape[axis]))
    indices = promotion.convert_element_type(indices, _INDEX_DTYPE, False)
    if 0 in indices.shape:
        return _nothing_to_gather(arr, indices.shape)
    if wrap_negative_indices is not False:
        indices = _normalized(indices, size)
    gather_mode = _Mode.CLIP if mode == "clip" else _check_mode(mode) or _Mode.FILL_OR_DROP
    others = tuple(d for d in range(arr.ndim) if d != axis)
    dnums = lax_gather.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    indices = lax_shapes.reshape(indices, indices.shape + (1,))
    return lax_gather.gather(
        arr, indices, dnums, (1,) * arr.ndim, mode=gather_mode, fill_value=fill_value
    )


def _broadcast_keeping(x, shape):
    return x if x.shape == shape else manipulation.broadcast_to(x, shape)
