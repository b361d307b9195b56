"""Set operations on flattened arrays: isin, union1d, intersect1d, setdiff1d, setxor1d, and the
array API's unique_all, unique_counts, unique_inverse and unique_values.

Every result's length depends on the values, so each operation is computed for a static
`size` (JAX's `size=`/`fill_value=`): the distinct elements of each operand come from
`unique` with one slot per element (its counts tell the real slots from the padding), the
candidates are sorted with the padding last, a mask marks the results and the marked elements
compact into `size` slots, the rest being `fill_value`. Without `size` the operands must be
concrete and `size` is the mask's count (a `ConcretizationTypeError` naming the operand
otherwise, as in JAX). Results keep the operands' promoted dtype; index results are of the
default integer type. The default `fill_value` is the smallest result (0 when there is none)
for intersect1d and setxor1d, 0 for setdiff1d and the smallest value for union1d, as in JAX.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import creation, manipulation, promotion, reductions, ufuncs
from tracejit._src.numpy.promotion import asarray_operand
from tracejit._src.numpy.sorting import nonzero, searchsorted, unique

_BOOL = np.dtype(bool)


def _is_traced(x) -> bool:
    return isinstance(x, Tracer) and x.to_concrete_value() is None


def _traced_operand_error(name: str, operands: dict) -> ConcretizationTypeError:
    """The error for a traced operand (the first in `operands`) whose values decide the size
    of the result."""
    argname, operand = next((k, v) for k, v in operands.items() if _is_traced(v))
    return concretization_error(
        operand,
        ConcretizationTypeError,
        f"the jnp.{name} argument '{argname}' (the result's size depends on its values: pass "
        f"a static size= to use jnp.{name} under transformations)",
    )


def _result_size(name: str, size, mask, operands: dict) -> int:
    """`size`, or without it the number of True elements of `mask`, which needs concrete
    `operands`."""
    if size is not None:
        return operator.index(size)
    if _is_traced(mask):
        raise _traced_operand_error(name, operands)
    value = mask.to_concrete_value() if isinstance(mask, Tracer) else np.asarray(mask)
    return int(np.count_nonzero(value))


def _compact(values, mask, size: int, fill):
    """The elements of the 1-D `values` where `mask` holds, in order, in `size` slots; the
    slots past them hold `fill`."""
    (positions,) = nonzero(mask, size=size, fill_value=0)
    picked = values[positions] if values.shape[0] else creation.zeros(size, values.dtype)
    count = reductions.sum(mask)
    return ufuncs.where(ufuncs.less(creation.arange(size), count), picked, fill)


def _fill_for(picked, count, fill_value):
    """`fill_value` in the dtype of the results `picked` (the first `count` slots are real),
    by default the smallest result, or 0 when there is none (as JAX fills intersect1d and
    setxor1d)."""
    if fill_value is not None:
        return promotion.convert_element_type(fill_value, picked.dtype, picked.weak_type)
    zero = promotion.convert_element_type(0, picked.dtype, picked.weak_type)
    if picked.shape[0] == 0:
        return zero
    real = ufuncs.less(creation.arange(picked.shape[0]), count)
    smallest = reductions.min(ufuncs.where(real, picked, picked[0]))
    smallest = promotion.convert_element_type(smallest, picked.dtype, picked.weak_type)
    return ufuncs.where(ufuncs.greater(count, 0), smallest, zero)


def _flat_operands(name: str, ar1, ar2):
    x1 = asarray_operand(name, ar1)
    x2 = asarray_operand(name, ar2, 1)
    x1, x2 = promotion.promote_dtypes(x1, x2)
    return manipulation.ravel(x1), manipulation.ravel(x2), x1, x2


# --------------------------------------------------------------------------------------------
# isin


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of `element` is among `test_elements` (its complement with
    `invert`), in `element`'s shape. 'auto' and 'compare_all' compare all pairs;
    'binary_search' and 'sort' search the sorted test elements."""
    del assume_unique  # only a hint
    x = asarray_operand("isin", element)
    tests = asarray_operand("isin", test_elements, 1)
    a, b = promotion.promote_dtypes(manipulation.ravel(x), manipulation.ravel(tests))
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(
            f"method={method!r} is not implemented; options are 'compare_all', "
            "'binary_search', 'sort', and 'auto'"
        )
    if a.shape[0] == 0 or b.shape[0] == 0:
        found = creation.full(a.shape, bool(invert), _BOOL)
    elif method in ("auto", "compare_all"):
        if invert:
            found = reductions.all(ufuncs.not_equal(a[:, None], b[None, :]), axis=-1)
        else:
            found = reductions.any(ufuncs.equal(a[:, None], b[None, :]), axis=-1)
    else:
        ordered = lax_sort.sort(b, 0)
        nearest = ordered[ufuncs.minimum(searchsorted(ordered, a), b.shape[0] - 1)]
        found = (ufuncs.not_equal if invert else ufuncs.equal)(a, nearest)
    return manipulation.reshape(found, x.shape)


# --------------------------------------------------------------------------------------------
# union1d, setdiff1d


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct elements of both operands (see `unique` for `size`/`fill_value`)."""
    a, b, x1, x2 = _flat_operands("union1d", ar1, ar2)
    if size is None and (_is_traced(x1) or _is_traced(x2)):
        raise _traced_operand_error("union1d", {"ar1": x1, "ar2": x2})
    size = None if size is None else operator.index(size)
    return unique(manipulation.concatenate([a, b]), size=size, fill_value=fill_value)


def _distinct(x, assume_unique: bool):
    """(values, real): the distinct elements of the 1-D `x` sorted into `len(x)` slots and
    which slots hold one (all of them with `assume_unique`, which keeps `x`'s order)."""
    if assume_unique:
        return x, creation.ones(x.shape, _BOOL)
    values, counts = unique(x, return_counts=True, size=x.shape[0])
    return values, ufuncs.greater(counts, 0)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The distinct elements of `ar1` that are not in `ar2`, sorted (in `ar1`'s order with
    `assume_unique`), in `ar1`'s dtype."""
    x1 = asarray_operand("setdiff1d", ar1)
    x2 = asarray_operand("setdiff1d", ar2, 1)
    a, b = manipulation.ravel(x1), manipulation.ravel(x2)
    fill = promotion.convert_element_type(
        0 if fill_value is None else fill_value, a.dtype, a.weak_type
    )
    if a.shape[0] == 0:
        return creation.full((0 if size is None else operator.index(size),), fill, a.dtype)
    values, real = _distinct(a, assume_unique)
    mask = ufuncs.logical_and(real, isin(values, b, invert=True))
    size = _result_size("setdiff1d", size, mask, {"ar1": x1, "ar2": x2})
    return _compact(values, mask, size, fill)


# --------------------------------------------------------------------------------------------
# intersect1d, setxor1d


def _candidates(a, b, assume_unique: bool):
    """(sorted values, sorted real-slot mask, sorted origins): the distinct elements of both
    operands in one array, sorted with the padding last; an origin is a position in the
    concatenated distinct elements of `a` and `b`."""
    values_a, real_a = _distinct(a, assume_unique)
    values_b, real_b = _distinct(b, assume_unique)
    values = manipulation.concatenate([values_a, values_b])
    real = manipulation.concatenate([real_a, real_b])
    origins = creation.arange(values.shape[0])
    padding = promotion.convert_element_type(ufuncs.logical_not(real), np.dtype(np.int32))
    _, values, origins = lax_sort.sort((padding, values, origins), 0, True, num_keys=2)
    return values, manipulation.concatenate([real_a, real_b])[origins], origins


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):  # fmt: skip
    """The sorted distinct elements common to both operands, and with `return_indices` the
    positions of their first occurrences in each flattened operand (padded with each
    operand's size)."""
    a, b, x1, x2 = _flat_operands("intersect1d", ar1, ar2)
    values, real, origins = _candidates(a, b, assume_unique)
    n = values.shape[0]
    if n:
        mask = ufuncs.logical_and(ufuncs.equal(values[1:], values[:-1]), real[1:])
    else:
        mask = creation.zeros((0,), _BOOL)
    size = _result_size("intersect1d", size, mask, {"ar1": x1, "ar2": x2})
    count = reductions.sum(mask)
    (slots,) = nonzero(mask, size=size, fill_value=max(n - 1, 0))
    picked = values[slots] if n else creation.zeros(size, values.dtype)
    valid = ufuncs.less(creation.arange(size), count)
    result = ufuncs.where(valid, picked, _fill_for(picked, count, fill_value))
    if not return_indices:
        return result
    return result, *_intersect_indices(a, b, origins, slots, valid, assume_unique)


def _intersect_indices(a, b, origins, slots, valid, assume_unique: bool):
    """The positions in `a` and `b` of the common elements found at `slots` of the sorted
    candidates (the one from `a` sorts first: the sort is stable), padded with the sizes."""
    n1, n2 = a.shape[0], b.shape[0]
    if origins.shape[0] == 0:
        empty = creation.zeros(slots.shape, dtypes.default_int_dtype())
        return ufuncs.add(empty, n1), ufuncs.add(empty, n2)
    in_a = origins[slots]
    in_b = ufuncs.subtract(origins[ufuncs.minimum(slots + 1, origins.shape[0] - 1)], n1)
    if not assume_unique:
        _, first_a = unique(a, return_index=True, size=n1)
        _, first_b = unique(b, return_index=True, size=n2)
        in_a, in_b = first_a[in_a], first_b[in_b]
    index_dtype = dtypes.default_int_dtype()
    in_a = ufuncs.where(valid, promotion.convert_element_type(in_a, index_dtype), n1)
    in_b = ufuncs.where(valid, promotion.convert_element_type(in_b, index_dtype), n2)
    return in_a, in_b


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct elements in exactly one of the operands."""
    a, b, x1, x2 = _flat_operands("setxor1d", ar1, ar2)
    values, real, _ = _candidates(a, b, assume_unique)
    n = values.shape[0]
    if n:
        differs = ufuncs.not_equal(values[1:], values[:-1])
        edge = creation.ones((1,), _BOOL)
        after_previous = manipulation.concatenate([edge, differs])
        before_next = manipulation.concatenate([differs, edge])
        # the last real slot differs from the padding after it, whatever its value
        last_real = manipulation.concatenate([ufuncs.logical_not(real[1:]), edge])
        before_next = ufuncs.logical_or(before_next, last_real)
        mask = ufuncs.logical_and(real, ufuncs.logical_and(after_previous, before_next))
    else:
        mask = creation.zeros((0,), _BOOL)
    size = _result_size("setxor1d", size, mask, {"ar1": x1, "ar2": x2})
    count = reductions.sum(mask)
    (slots,) = nonzero(mask, size=size, fill_value=0)
    picked = values[slots] if n else creation.zeros(size, values.dtype)
    valid = ufuncs.less(creation.arange(size), count)
    return ufuncs.where(valid, picked, _fill_for(picked, count, fill_value))


# --------------------------------------------------------------------------------------------
# The array API's unique functions


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts) of `unique`, NaNs distinct."""
    values, indices, inverse, counts = unique(
        x, True, True, True, equal_nan=False, size=size, fill_value=fill_value
    )
    return UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts) of `unique`, NaNs distinct."""
    values, counts = unique(
        x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices) of `unique`, NaNs distinct."""
    values, inverse = unique(
        x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return UniqueInverseResult(values, inverse)


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted distinct values of `x`, NaNs distinct."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)
