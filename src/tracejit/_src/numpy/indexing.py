"""Basic indexing (`x[idx]`), and indexed updates (`x.at[idx].set(y)`) of concrete arrays at
static indices, without gather/scatter.

An index is a tuple of ints, slices, `None` and at most one `Ellipsis`, parsed (as advanced
indices are) by `index_parsing.parse_index`. Reading stages what JAX stages for such indices:
one `slice` (skipped when it would take everything; a positive step keeps its stop as the
limit), `rev` for the dimensions with negative steps, `squeeze` for the integer-indexed ones,
and `broadcast_in_dim` for the `None`s. Integer indices out of range are clamped, as JAX clamps
(NumPy would raise). A traced integer scalar indexes through one `dynamic_slice` of the whole
operand (when every step is 1), all start indices normalized: negative values counted from the
end.

Integer-array and boolean-mask indices are advanced indexing, done with gather and scatter in
`advanced_indexing.py`; so are `.at[idx].get(mode=...)`, updates with an explicit `mode`,
updates at a traced integer (scatter drops them when out of range, where dynamic_update_slice
would clamp them), and every update that is staged (a traced `x` or `y`): JAX stages a scatter
even at static indices, and so jaxprs print as JAX's.

Eager updates (`.at[idx].set/add/multiply/divide/power/min/max/apply`) of concrete arrays at
static indices write the region directly, which beats building scatter indices op by op. The
update `y` is converted to `x`'s dtype, broadcast to `x[idx]`'s shape and brought back to the
shape of the indexed region of `x` (undoing squeezes, reversals and new axes); then:

- a contiguous region is written with `dynamic_update_slice`;
- a strided region is spread to `x`'s shape with `pad` (interior padding leaves the gaps), and
  a mask padded the same way chooses between it and `x` with `select_n`.

Indices out of range drop the update, as JAX's scatter does.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Tracer
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.numpy import advanced_indexing, arithmetic, manipulation, promotion, ufuncs
from tracejit._src.numpy.index_parsing import ParsedIndex, ScalarIndex, SliceIndex, parse_index


class _Dim:
    """How one dimension of the operand is indexed."""

    __slots__ = ("count", "index", "kind", "oob", "start", "step", "stop")

    def __init__(self, kind, start=0, stop=0, step=1, count=0, index=None, oob=False):
        self.kind = kind  # "int", "slice" or "dynamic"
        self.start, self.stop, self.step, self.count = start, stop, step, count
        self.index = index  # an int or traced scalar as written (for `dynamic_slice`)
        self.oob = oob  # an int index out of range (clamped on reads, dropped on updates)


def _slice_dim(it: SliceIndex, size: int) -> _Dim:
    """A slice as the bounds of the region it reads (in increasing order, also for negative
    steps, which `rev` applies afterwards); a positive step keeps its stop as the limit, as JAX
    writes it (`x[::2]` of 4 rows: limit 4)."""
    start, step, count = it.start, it.step, it.count
    if not count:
        edge = 0 if step < 0 else min(start, size)
        return _Dim("slice", edge, edge, step, count)
    if step > 0:
        return _Dim("slice", start, it.stop, step, count)
    first = start + (count - 1) * step
    return _Dim("slice", first, start + 1, step, count)


def _scalar_dim(it: ScalarIndex, size: int) -> _Dim:
    """An integer (clamped into range, as JAX clamps) or a traced integer scalar."""
    if isinstance(it.value, Tracer):
        if size == 0:
            raise IndexError(f"index is out of bounds for axis {it.dim} with size 0")
        return _Dim("dynamic", 0, 1, 1, 1, index=it.value)
    if size == 0:
        raise IndexError(f"index {it.value} is out of bounds for axis {it.dim} with size 0")
    i = it.value + size if it.value < 0 else it.value
    oob = not 0 <= i < size
    i = min(max(i, 0), size - 1)
    return _Dim("int", i, i + 1, 1, 1, index=it.value, oob=oob)


def _plan(index: ParsedIndex):
    """(dims, new_axes): a `_Dim` per operand dimension, and the positions in the result of the
    axes `None` adds."""
    dims, new_axes = [], []
    out_pos = 0
    for it in index.items:
        if it is None:
            new_axes.append(out_pos)
            out_pos += 1
        elif isinstance(it, SliceIndex):
            dims.append(_slice_dim(it, index.shape[it.dim]))
            out_pos += 1
        else:
            dims.append(_scalar_dim(it, index.shape[it.dim]))
    return dims, new_axes


def _dynamic_start(index, size: int):
    """An index (traced, or a Python int) as an int32 start, negative values counted from the
    end."""
    # All int32: a Python int would become int64 under x64.
    index, zero, size = (
        promotion.convert_element_type(v, np.dtype(np.int32), False) for v in (index, 0, size)
    )
    return lax_selection.select_n(
        lax_comparison.lt(index, zero), index, lax_binary.add(index, size)
    )


def _region(x, dims):
    """The part of `x` the index selects, before squeezes, reversals and new axes.

    With a traced integer and unit steps, that is one `dynamic_slice` of `x`, every start
    (static ones too, integers as written) normalized by `_dynamic_start`, as JAX stages it;
    other steps slice statically first."""
    if any(d.kind == "dynamic" for d in dims) and all(abs(d.step) == 1 for d in dims):
        starts = [
            _dynamic_start(d.start if d.kind == "slice" else d.index, size)
            for d, size in zip(dims, x.shape, strict=True)
        ]
        sizes = [d.count for d in dims]
        return lax_slicing.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
    start = tuple(d.start for d in dims)
    limit = tuple(
        d.stop if d.kind != "dynamic" else size for d, size in zip(dims, x.shape, strict=True)
    )
    strides = tuple(abs(d.step) if d.kind == "slice" else 1 for d in dims)
    if start != (0,) * len(dims) or limit != tuple(x.shape) or any(s != 1 for s in strides):
        x = lax_slicing.slice(x, start, limit, None if all(s == 1 for s in strides) else strides)
    dynamic = [i for i, d in enumerate(dims) if d.kind == "dynamic"]
    if dynamic:
        # As JAX does, every start index is normalized (the static zeros too).
        starts = [
            _dynamic_start(d.index if d.kind == "dynamic" else 0, x.shape[i])
            for i, d in enumerate(dims)
        ]
        sizes = [1 if d.kind == "dynamic" else x.shape[i] for i, d in enumerate(dims)]
        x = lax_slicing.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
    return x


def getitem(x, idx):
    """`x[idx]`: basic indexing here, advanced indexing with a gather (`advanced_indexing`)."""
    x = promotion.asarray_operand("getitem", x)
    index = parse_index(x.shape, idx)
    if index.advanced:
        return advanced_indexing.getitem(x, index)
    return _basic_getitem(x, index)


def _basic_getitem(x, index: ParsedIndex):
    dims, new_axes = _plan(index)
    out = _region(x, dims)
    reversed_dims = tuple(i for i, d in enumerate(dims) if d.kind == "slice" and d.step < 0)
    if reversed_dims:
        out = lax_shapes.rev(out, reversed_dims)
    squeezed = tuple(i for i, d in enumerate(dims) if d.kind != "slice")
    if squeezed:
        out = lax_shapes.squeeze(out, squeezed)
    if new_axes:
        rank = out.ndim + len(new_axes)
        shape = list(out.shape)
        for i in new_axes:
            shape.insert(i, 1)
        kept = tuple(i for i in range(rank) if i not in new_axes)
        out = lax_shapes.broadcast_in_dim(out, tuple(shape), kept)
    return out


def iterate(x):
    """The sub-arrays along the leading axis, as `for row in x` gives them."""
    if not x.shape:
        raise TypeError("iteration over a 0-d array")
    n, rest = x.shape[0], tuple(x.shape[1:])
    strides = (1,) * x.ndim
    for i in range(n):
        row = lax_slicing.slice(x, (i,) + (0,) * len(rest), (i + 1,) + rest, strides)
        yield lax_shapes.squeeze(row, (0,))


# --------------------------------------------------------------------------------------------
# Indexed updates


def _update_region(x, dims, new_axes, y):
    """`y` (broadcast to x[idx]'s shape) reshaped to the shape of the selected region."""
    out_shape = _getitem_shape(dims, new_axes)
    if y.shape != out_shape:
        y = manipulation.broadcast_to(y, out_shape)
    if new_axes:
        y = lax_shapes.squeeze(y, tuple(new_axes))
    region_shape = tuple(d.count for d in dims)
    if y.shape != region_shape:
        kept = tuple(i for i, d in enumerate(dims) if d.kind == "slice")
        y = lax_shapes.broadcast_in_dim(y, region_shape, kept)
    reversed_dims = tuple(i for i, d in enumerate(dims) if d.kind == "slice" and d.step < 0)
    if reversed_dims:
        y = lax_shapes.rev(y, reversed_dims)
    return y


def _getitem_shape(dims, new_axes) -> tuple:
    """The shape of `x[idx]`."""
    out = [d.count for d in dims if d.kind == "slice"]
    for i in new_axes:
        out.insert(i, 1)
    return tuple(out)


def _write(x, dims, region):
    """`x` with its selected region replaced by `region` (static indices only: updates at a
    traced index are scatters, see `advanced_indexing`)."""
    if any(d.kind == "slice" and abs(d.step) > 1 for d in dims):
        config = []
        for d, size in zip(dims, x.shape, strict=True):
            step = abs(d.step) if d.kind == "slice" else 1
            if d.count == 0:
                return x
            last = d.start + (d.count - 1) * step
            config.append((d.start, size - last - 1, step - 1))
        config = tuple(config)
        spread = lax_shapes.pad(region, promotion.convert_element_type(0, x.dtype, False), config)
        mask = lax_shapes.pad(lax_shapes.broadcast_in_dim(True, region.shape, ()), False, config)
        return lax_selection.select_n(mask, x, spread)
    if any(d.count == 0 for d in dims):
        return x
    if region.shape == x.shape:
        return region
    starts = [np.int32(d.start) for d in dims]
    return lax_slicing.dynamic_update_slice(x, region, starts, allow_negative_indices=False)


class _IndexUpdateHelper:
    """`x.at`: indexing it gives the object whose methods make updated copies."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: `set`, `add`, `multiply`, ... return the updated copy of `x`."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """`x[idx]`; `mode='fill'` gives `fill_value` at out-of-bound indices, 'clip' (like
        the default) the nearest element."""
        x = promotion.asarray_operand("getitem", self.array)
        index = parse_index(x.shape, self.index)
        if mode is None and fill_value is None and not index.advanced:
            return _basic_getitem(x, index)
        return advanced_indexing.getitem(
            x,
            index,
            mode=mode,
            fill_value=fill_value,
            unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted,
        )

    def _update(self, name: str, combine, values, indices_are_sorted, unique_indices, mode):
        x = promotion.asarray_operand(f"at[].{name}", self.array)
        index = parse_index(x.shape, self.index)
        staged = isinstance(x, Tracer) or isinstance(values, Tracer)
        if mode is not None or index.advanced or index.has_traced_scalar or staged:
            return advanced_indexing.update(
                x,
                index,
                name,
                combine,
                values,
                mode=mode,
                unique_indices=unique_indices,
                indices_are_sorted=indices_are_sorted,
            )
        dims, new_axes = _plan(index)
        if any(d.oob or d.count == 0 for d in dims):
            return x  # out-of-range updates are dropped; an empty region changes nothing
        if name == "apply":
            region = combine(_region(x, dims))
        else:
            y = promotion.convert_element_type(
                promotion.to_operand(f"at[].{name}", values), x.dtype, x.weak_type
            )
            region = _update_region(x, dims, new_axes, y)
            if combine is not None:
                region = combine(_region(x, dims), region)
        region = promotion.convert_element_type(region, x.dtype, x.weak_type)
        return _write(x, dims, region)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] = values`."""
        return self._update("set", None, values, indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] += values` (repeated indices accumulate)."""
        return self._update("add", ufuncs.add, values, indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] -= values`."""
        return self._update(
            "subtract", ufuncs.subtract, values, indices_are_sorted, unique_indices, mode
        )

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] *= values`."""
        return self._update(
            "multiply", ufuncs.multiply, values, indices_are_sorted, unique_indices, mode
        )

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] /= values`; an integer or boolean `x` becomes floating point first,
        as true division makes it in JAX."""
        array = self.array
        dtype = promotion.to_inexact_dtype(np.dtype(array.dtype))
        if dtype != array.dtype:
            array = promotion.convert_element_type(array, dtype, getattr(array, "weak_type", False))
        return _IndexUpdateRef(array, self.index)._update(
            "divide", ufuncs.divide, values, indices_are_sorted, unique_indices, mode
        )

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] **= values`."""
        return self._update(
            "power", arithmetic.power, values, indices_are_sorted, unique_indices, mode
        )

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] = minimum(x[idx], values)`."""
        return self._update("min", ufuncs.minimum, values, indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] = maximum(x[idx], values)`."""
        return self._update("max", ufuncs.maximum, values, indices_are_sorted, unique_indices, mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x` with `x[idx] = func(x[idx])`."""
        return self._update("apply", func, None, indices_are_sorted, unique_indices, mode)
