"""`RegularGridInterpolator`: SciPy's interpolation on a rectilinear grid, as JAX has it.

Each query coordinate finds its cell on its axis by `searchsorted` (clipped to the first and
last cells, so points outside extrapolate from the edge cells) and its position t in [0, 1]
within the cell. Linear interpolation sums, over the 2^N corners of the cell, the corner's
value times the product of its weights (1 - t for the lower node, t for the upper); nearest
takes the node with t <= 1/2 (ties to the lower node, as SciPy). Points outside the grid get
`fill_value` unless it is None. The interpolator is a pytree (grid, values and fill value are
its leaves), so it passes through `jit` and `vmap`.
"""

import functools
import itertools
import operator

from tracejit._src import dtypes
from tracejit._src.numpy import manipulation
from tracejit._src.numpy.creation import asarray
from tracejit._src.numpy.promotion import promote_dtypes_inexact
from tracejit._src.numpy.reductions import any as jnp_any
from tracejit._src.numpy.sorting import searchsorted
from tracejit._src.numpy.ufuncs import clip, where
from tracejit._src.tree_util import register_pytree_node_class

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim):
    """The query points as an (..., ndim) array: a tuple of coordinate arrays is broadcast
    and stacked; a 1-D array is one point per row of `ndim` values."""
    if isinstance(xi, tuple):
        xi = manipulation.stack(manipulation.broadcast_arrays(*map(asarray, xi)), axis=-1)
    xi = asarray(xi)
    if xi.ndim == 1:
        xi = xi.reshape(-1, ndim)
    if xi.shape[-1] != ndim:
        raise ValueError(
            f"the requested sample points xi have dimension {xi.shape[-1]}, but this "
            f"RegularGridInterpolator has dimension {ndim}"
        )
    return xi


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolation of `values` given on the grid `points` (one strictly increasing 1-D
    array per dimension of `values`' leading axes; further axes of `values` are carried
    along), by `method` 'linear' or 'nearest'. Points outside the grid give `fill_value`
    (NaN by default) or, with None, extrapolate. `bounds_error=True` is refused, as in JAX:
    a traced value cannot raise."""

    def __init__(
        self, points, values, method="linear", bounds_error=False, fill_value=float("nan")
    ):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        (values,) = promote_dtypes_inexact(asarray(values))
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {values.ndim} dimensions"
            )
        if fill_value is not None:
            fill_value = asarray(fill_value)
            if dtypes.is_complex(fill_value.dtype) and not dtypes.is_complex(values.dtype):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.grid = tuple(promote_dtypes_inexact(asarray(p))[0] for p in points)
        self.values = values
        self.fill_value = fill_value
        self.method = method
        self.bounds_error = bounds_error

    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        interpolator = object.__new__(cls)
        interpolator.grid, interpolator.values, interpolator.fill_value = children
        interpolator.method, interpolator.bounds_error = aux_data
        return interpolator

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        batch_shape = xi.shape[:-1]
        xi = xi.reshape(-1, ndim)
        cells, positions = zip(
            *(self._locate(grid, xi[:, d]) for d, grid in enumerate(self.grid)), strict=True
        )
        if method == "linear":
            result = self._linear(cells, positions)
        else:
            result = self.values[
                tuple(where(t <= 0.5, i, i + 1) for i, t in zip(cells, positions, strict=True))
            ]
        if self.fill_value is not None:
            outside = jnp_any(
                manipulation.stack(
                    [(x < g[0]) | (x > g[-1]) for x, g in zip(xi.T, self.grid, strict=True)]
                ),
                axis=0,
            )
            outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = where(outside, self.fill_value, result)
        return result.reshape(batch_shape + self.values.shape[ndim:])

    @staticmethod
    def _locate(grid, x):
        """(cell index i, position t = (x - grid[i]) / (grid[i+1] - grid[i])) of each x."""
        i = clip(searchsorted(grid, x) - 1, 0, grid.shape[0] - 2)
        return i, (x - grid[i]) / (grid[i + 1] - grid[i])

    def _linear(self, cells, positions):
        trailing = (1,) * (self.values.ndim - len(cells))
        result = 0
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weights = [t if upper else 1 - t for upper, t in zip(corner, positions, strict=True)]
            weight = functools.reduce(operator.mul, weights)
            node = tuple(i + upper for upper, i in zip(corner, cells, strict=True))
            result = result + weight.reshape(weight.shape + trailing) * self.values[node]
        return result
