"""NumPy index expressions parsed once, for basic indexing (`indexing`) and advanced indexing
(`advanced_indexing`) alike.

`parse_index(shape, idx)` checks the entries of `idx` (a tuple of entries, or one entry),
expands the `Ellipsis`, pads the index with full slices, and describes each entry by the
operand dimension it indexes:

- `None` stays `None`: a new axis of length 1;
- a slice becomes a `SliceIndex`, its bounds resolved against the dimension's size;
- an integer scalar becomes a `ScalarIndex`: a Python int for a Python or NumPy integer, a 0-d
  integer array, or a traced integer whose value the trace knows; the tracer itself otherwise;
- an integer array (a list, tuple, NumPy array or traced array) becomes an `ArrayIndex`; a
  boolean mask, whose values must be concrete, becomes one `ArrayIndex` per dimension it covers
  (the integer arrays of its `nonzero()`), and a boolean scalar the `ArrayIndex` of a new axis
  of length 1 (True) or 0 (False).

An index with an `ArrayIndex` is advanced (a gather or scatter reads or writes it); one without
is basic (slices). A top-level list is not an index: JAX, unlike NumPy, rejects it.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array
from tracejit._src.core import Tracer
from tracejit._src.errors import NonConcreteBooleanIndexError
from tracejit._src.lax.standard import int_bounds

_BOOL = np.dtype(bool)


class SliceIndex:
    """A slice of operand dimension `dim`: `count` elements from `start` by `step` (`stop` as
    `slice.indices` gives it)."""

    __slots__ = ("count", "dim", "start", "step", "stop")

    def __init__(self, dim: int, start: int, stop: int, step: int):
        self.dim, self.start, self.stop, self.step = dim, start, stop, step
        self.count = len(range(start, stop, step))


class ScalarIndex:
    """An integer scalar into operand dimension `dim`: a Python int, or an integer tracer whose
    value is not known while tracing."""

    __slots__ = ("dim", "value")

    def __init__(self, dim: int, value):
        self.dim, self.value = dim, value


class ArrayIndex:
    """An integer array (NumPy or traced) into operand dimension `dim`; `dim` is None for the
    new axis of a boolean scalar."""

    __slots__ = ("dim", "value")

    def __init__(self, dim: int | None, value):
        self.dim, self.value = dim, value


class ParsedIndex:
    """The entries of an index into an operand of `shape`: None, `SliceIndex`, `ScalarIndex`
    and `ArrayIndex` items, every operand dimension indexed once."""

    __slots__ = ("items", "shape")

    def __init__(self, shape: tuple, items: list):
        self.shape, self.items = shape, items

    @property
    def advanced(self) -> bool:
        """Whether an integer array or a boolean is among the entries (a gather reads them)."""
        return any(isinstance(it, ArrayIndex) for it in self.items)

    @property
    def has_traced_scalar(self) -> bool:
        """Whether an integer scalar is traced (updates at it scatter, which drops an
        out-of-bound update as JAX does, where dynamic_update_slice would clamp it)."""
        return any(
            isinstance(it, ScalarIndex) and isinstance(it.value, Tracer) for it in self.items
        )


def _dtype_error(dtype) -> TypeError:
    return TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")


def _non_concrete_boolean_error(x) -> NonConcreteBooleanIndexError:
    return NonConcreteBooleanIndexError(
        f"Array boolean indices must be concrete; got {x.aval.str_short()}. Boolean-mask "
        "indexing makes the result's shape depend on the values, which a traced function "
        "cannot know. Use jnp.where(mask, x, fill) to keep the shape instead."
    )


def _integer_scalar(e):
    """A 0-d integer array or tracer as a Python int, or the tracer when its value is unknown."""
    if isinstance(e, Tracer):
        concrete = e.to_concrete_value()
        return e if concrete is None else int(concrete)
    return int(np.asarray(e))


def _index_array(e):
    """An array-like entry as a NumPy array of integers or booleans, or an integer tracer or
    Array (kept, as JAX keeps it: its negative values are counted from the end by staged
    operations)."""
    if isinstance(e, Array) and dtypes.is_int(e.dtype):
        return e
    if isinstance(e, Tracer):
        if e.dtype == _BOOL:
            concrete = e.to_concrete_value()
            if concrete is None:
                raise _non_concrete_boolean_error(e)
            return np.asarray(concrete)
        if not dtypes.is_int(e.dtype):
            raise _dtype_error(e.dtype)
        return e
    value = np.asarray(e)
    if isinstance(e, (list, tuple)) and value.size == 0:
        value = value.astype(np.int64)  # `[]` is an empty integer index, as in NumPy
    if value.dtype != _BOOL and not dtypes.is_int(value.dtype):
        raise _dtype_error(value.dtype)
    return value


def _python_int(i: int) -> int:
    """An integer index must fit the index dtype (int32 unless x64 is on), as in JAX: else
    it would be clamped into range and silently pick an element."""
    dtype = dtypes.default_int_dtype()
    low, high = int_bounds(dtype)
    if not low <= i <= high:
        raise OverflowError(f"Python int {i} too large to convert to {dtype.name}")
    return i


def _entry(e):
    """One entry checked: None, Ellipsis and slices as they are, an int for an integer scalar
    (or its tracer), a NumPy array or tracer for an integer array or boolean."""
    if e is None or e is Ellipsis or isinstance(e, slice):
        return e
    if isinstance(e, str):
        raise TypeError(f"JAX does not support string indexing; got idx={e!r}")
    if isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)):
        return _python_int(operator.index(e))
    if isinstance(e, (np.ndarray, Array, Tracer)) and e.ndim == 0 and dtypes.is_int(e.dtype):
        return _integer_scalar(e)
    if isinstance(e, (bool, np.bool_, list, tuple, np.ndarray, Array, Tracer)):
        return _index_array(e)
    if isinstance(e, (float, complex, np.floating, np.complexfloating)):
        raise _dtype_error(np.asarray(e).dtype)
    raise TypeError(f"Unsupported index type {type(e).__name__}: {e!r}")


def _dims_used(e) -> int:
    if e is None or e is Ellipsis:
        return 0
    if isinstance(e, np.ndarray) and e.dtype == _BOOL:
        return e.ndim
    return 1


def _expanded(entries: list, rank: int) -> list:
    """The checked entries with the Ellipsis (or the end) filled with full slices."""
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_dims_used(e) for e in entries)
    if used > rank:
        raise IndexError(f"Too many indices: array is {rank}-dimensional, but {used} were indexed")
    fill = [slice(None)] * (rank - used)
    if any(e is Ellipsis for e in entries):
        i = next(k for k, e in enumerate(entries) if e is Ellipsis)
        return entries[:i] + fill + entries[i + 1 :]
    return entries + fill


def _mask_items(mask: np.ndarray, shape: tuple, dim: int) -> list:
    """The `ArrayIndex` items of a concrete boolean mask whose first dimension is `dim`."""
    if mask.ndim == 0:  # a new axis of length 1 (True) or 0 (False)
        return [ArrayIndex(None, np.zeros(int(mask), np.int64))]
    if mask.shape != tuple(shape[dim : dim + mask.ndim]):
        raise IndexError(
            f"boolean index did not match shape of indexed array in index {dim}: got "
            f"{mask.shape}, expected {list(shape[dim : dim + mask.ndim])}"
        )
    return [ArrayIndex(dim + k, nz) for k, nz in enumerate(np.nonzero(mask))]


def parse_index(shape: tuple, idx) -> ParsedIndex:
    """`idx` (what `x[idx]` or `x.at[idx]` received) as items for an operand of `shape`; see
    the module doc."""
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`."
        )
    entries = [_entry(e) for e in (idx if isinstance(idx, tuple) else (idx,))]
    items, dim = [], 0
    for e in _expanded(entries, len(shape)):
        if e is None:
            items.append(None)
        elif isinstance(e, slice):
            items.append(SliceIndex(dim, *e.indices(shape[dim])))
            dim += 1
        elif isinstance(e, np.ndarray) and e.dtype == _BOOL:
            items += _mask_items(e, shape, dim)
            dim += e.ndim
        else:
            is_scalar = isinstance(e, int) or e.ndim == 0
            items.append((ScalarIndex if is_scalar else ArrayIndex)(dim, e))
            dim += 1
    return ParsedIndex(tuple(shape), items)
