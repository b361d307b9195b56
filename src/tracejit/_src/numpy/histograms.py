"""Histograms: histogram_bin_edges, histogram, histogram2d, histogramdd.

A histogram is a `searchsorted` of the samples into the bin edges (`side='right'`, so that
bin `k` is `[edge[k], edge[k + 1])`) and a scatter-add of the weights into the bins, as in
JAX. The last bin is closed: a sample equal to the last edge counts in it. Samples outside
the edges fall into two extra bins at either end that are cut off. The number of bins is
static: an integer `bins` must be concrete (a `ConcretizationTypeError` under jit otherwise);
the edges themselves, the range and the weights may be traced. String `bins` ('auto',
'fd', ...) are not supported, as in JAX. Results are inexact (integer samples in the default
float type).
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.numpy import creation, lib, manipulation, promotion, reductions, ufuncs
from tracejit._src.numpy.promotion import asarray_operand
from tracejit._src.numpy.sorting import bincount, searchsorted


def _bin_count(bins, name: str) -> int:
    if isinstance(bins, Tracer):
        raise concretization_error(bins, ConcretizationTypeError, f"the bins argument of {name}")
    return operator.index(bins)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins `histogram` uses: `bins` itself when it is 1-D, else `bins + 1`
    evenly spaced edges over `range` (the data's minimum and maximum by default; a range of
    zero width is widened by 0.5 on each side)."""
    del weights  # only string bins, which are not supported, would use them
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    x = asarray_operand("histogram_bin_edges", a)
    dtype = promotion.to_inexact_dtype(x.dtype)
    if np.ndim(bins) == 1:
        edges = asarray_operand("histogram_bin_edges", bins, 1)
        return promotion.convert_element_type(edges, dtype, False)
    count = _bin_count(bins, "histogram_bin_edges")
    if range is None:
        range = [reductions.min(x), reductions.max(x)]
    bounds = creation.asarray(range, dtype=dtype)
    if bounds.shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    empty = ufuncs.equal(reductions.ptp(bounds), promotion.weak_scalar(0, dtype))
    low = ufuncs.where(empty, ufuncs.subtract(bounds[0], 0.5), bounds[0])
    high = ufuncs.where(empty, ufuncs.add(bounds[1], 0.5), bounds[1])
    return creation.linspace(low, high, count + 1, dtype=dtype)


def _bin_index(samples, edges):
    """The bin of each sample among `len(edges) + 1` (0: below the first edge; the last
    edge itself in the last real bin)."""
    index = searchsorted(edges, samples, side="right")
    last = promotion.weak_scalar(1, index.dtype)
    return ufuncs.where(ufuncs.equal(samples, edges[-1]), ufuncs.subtract(index, last), index)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, edges): the number of samples (or the sum of their `weights`) in each bin
    (see `histogram_bin_edges`); with `density`, normalized to integrate to one."""
    x = asarray_operand("histogram", a)
    if weights is None:
        (x,) = promotion.promote_dtypes_inexact(x)
        w = creation.ones_like(x)
    else:
        w = asarray_operand("histogram", weights, 3)
        if x.shape != w.shape:
            raise ValueError("weights should have the same shape as a.")
        x, w = promotion.promote_dtypes_inexact(x, w)
    edges = histogram_bin_edges(x, bins, range, w)
    index = manipulation.ravel(_bin_index(x, edges))
    n = edges.shape[0]
    counts = creation.zeros(n + 1, w.dtype).at[index].add(manipulation.ravel(w))[1:n]
    if density:
        widths = lib.diff(edges)
        counts = ufuncs.divide(ufuncs.divide(counts, widths), reductions.sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges): the 2-D histogram of the points (x, y) (see
    `histogramdd`); `bins` is one count or edge array for both axes, or one per axis."""
    x = asarray_operand("histogram2d", x)
    y = asarray_operand("histogram2d", y, 1)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [bins, bins]
    sample = manipulation.transpose(manipulation.stack(promotion.promote_dtypes(x, y)))
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, edges per dimension): the histogram of the N points of dimension D in the rows
    of the (N, D) `sample`; `bins` is one count or edge array for every dimension, or one
    per dimension, `range` one (low, high) pair or None per dimension."""
    points = asarray_operand("histogramdd", sample)
    if weights is None:
        (points,) = promotion.promote_dtypes_inexact(points)
    else:
        w = asarray_operand("histogramdd", weights, 3)
        if w.shape != points.shape[:1]:
            raise ValueError("should have one weight for each sample.")
        points, w = promotion.promote_dtypes_inexact(points, w)
    n, d = points.shape
    if range is not None and (
        len(range) != d or any(r is not None and np.shape(r)[0] != 2 for r in range)
    ):
        raise ValueError(
            f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; "
            f"got range={range}"
        )
    try:
        per_dimension = list(bins)
    except TypeError:
        per_dimension = [bins] * d
    else:
        if len(per_dimension) != d:
            raise ValueError("should be a bin for each dimension.")
    flat = None
    edges_by_dim = []
    for i in builtins.range(d):
        edges = histogram_bin_edges(
            points[:, i], per_dimension[i], None if range is None else range[i]
        )
        index = _bin_index(points[:, i], edges)
        if flat is not None:  # row-major position among the bins of the dimensions so far
            index = ufuncs.add(ufuncs.multiply(flat, edges.shape[0] + 1), index)
        flat = index
        edges_by_dim.append(edges)
    shape = tuple(e.shape[0] + 1 for e in edges_by_dim)
    size = int(np.prod(shape, dtype=np.int64))
    if flat is None:
        flat = creation.zeros(n, dtypes.default_int_dtype())
    counts = bincount(flat, None if weights is None else w, length=size)
    counts = manipulation.reshape(counts, shape)[(slice(1, -1),) * d]
    if density:
        counts = promotion.convert_element_type(counts, points.dtype)
        counts = ufuncs.divide(counts, reductions.sum(counts))
        for i, edges in enumerate(edges_by_dim):
            along_i = tuple(-1 if j == i else 1 for j in builtins.range(d))
            counts = ufuncs.divide(counts, manipulation.reshape(lib.diff(edges), along_i))
    return counts, edges_by_dim
