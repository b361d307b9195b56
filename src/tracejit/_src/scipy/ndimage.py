"""`tracejit.scipy.ndimage.map_coordinates`: interpolation of an array at given coordinates.

Each coordinate array gives, per dimension, the interpolation nodes (one, the nearest, for
order 0; the two neighbours with linear weights for order 1); `mode` maps a node outside the
array back into it ('nearest', 'wrap', 'mirror', 'reflect') or marks it invalid ('constant',
where such nodes contribute `cval`). The result sums, over every combination of one node per
dimension, the product of the weights times the gathered value.
"""

import functools
import itertools
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.numpy.arithmetic import floor_divide
from tracejit._src.numpy.creation import asarray
from tracejit._src.numpy.promotion import convert_element_type
from tracejit._src.numpy.ufuncs import abs, clip, floor, where


def _mirror_index(index, size):
    s = size - 1
    return abs((index + s) % (2 * s) - s)


def _reflect_index(index, size):
    return floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_DTYPE = np.dtype(np.int32)

_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away_from_zero(a):
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax_elementwise.round(a)


def _nearest_nodes(coordinate):
    index = convert_element_type(_round_half_away_from_zero(coordinate), _INDEX_DTYPE)
    return [(index, coordinate.dtype.type(1))]


def _linear_nodes(coordinate):
    lower = floor(coordinate)
    upper_weight = coordinate - lower
    index = convert_element_type(lower, _INDEX_DTYPE)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """`input` interpolated (order 0: nearest, 1: linear) at the points whose i-th
    coordinates are `coordinates[i]`; other orders and modes raise NotImplementedError, as
    in JAX."""
    input_arr = asarray(input)
    coordinate_arrs = [asarray(c) for c in coordinates]
    cval = asarray(cval, input_arr.dtype)
    if len(coordinates) != input_arr.ndim:
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coordinates)} != {input_arr.ndim}"
        )
    index_fixer = _INDEX_FIXERS.get(mode)
    if index_fixer is None:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates does not yet support mode "
            f"{mode}. Currently supported modes are {set(_INDEX_FIXERS)}."
        )
    nodes_of = {0: _nearest_nodes, 1: _linear_nodes}.get(order)
    if nodes_of is None:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_dimension = []
    for coordinate, size in zip(coordinate_arrs, input_arr.shape, strict=True):
        per_dimension.append(
            [
                (index_fixer(index, size), (0 <= index) & (index < size), weight)
                for index, weight in nodes_of(coordinate)
            ]
        )
    outputs = []
    for items in itertools.product(*per_dimension):
        indices, validities, weights = zip(*items, strict=True)
        contribution = input_arr[indices]
        if mode == "constant":
            contribution = where(functools.reduce(operator.and_, validities), contribution, cval)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result = functools.reduce(operator.add, outputs)
    if dtypes.issubdtype(input_arr.dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return convert_element_type(result, input_arr.dtype)
