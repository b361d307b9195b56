"""`ravel_pytree`: a pytree of arrays as one flat vector, and the function that undoes it.

Optimizers and solvers written for one vector (`scipy.optimize.minimize`, L-BFGS, a Newton
step) work on any pytree of parameters this way. The leaves are promoted to one dtype (the
dtypes' `result_type`, weak types left out, as JAX does); unraveling casts each piece back to
its leaf's dtype and shape, and refuses a vector of another dtype rather than casting it
silently.
"""

import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import conversions
from tracejit._src.numpy import creation, manipulation
from tracejit._src.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
    """(flat, unravel): the leaves of `pytree` raveled and concatenated into one 1-D array, and
    a function mapping such an array back to a pytree like `pytree`."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_leaves = _ravel_leaves(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
    return tree_unflatten(treedef, unravel_leaves(flat))


def _ravel_leaves(leaves):
    if not leaves:
        return creation.zeros(0, np.float32), _unravel_nothing
    from_dtypes = [dtypes.dtype_of(leaf) for leaf in leaves]
    to_dtype = dtypes.result_type(*from_dtypes)
    shapes = [np.shape(leaf) for leaf in leaves]
    flat = manipulation.concatenate(
        [manipulation.ravel(conversions.convert_element_type(leaf, to_dtype)) for leaf in leaves]
    )
    unravel = functools.partial(_unravel_leaves, to_dtype, from_dtypes, shapes)
    return flat, unravel


def _unravel_nothing(flat):
    return []


def _unravel_leaves(to_dtype, from_dtypes, shapes, flat):
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    if np.shape(flat) != (sum(sizes),):
        raise ValueError(
            f"unravel function given array of shape {np.shape(flat)}, but expected shape "
            f"({sum(sizes)},)"
        )
    if dtypes.dtype_of(flat) != to_dtype:
        raise TypeError(
            f"unravel function given array of dtype {dtypes.dtype_of(flat)}, but expected dtype "
            f"{to_dtype}"
        )
    pieces = manipulation.split(flat, np.cumsum(sizes)[:-1])
    return [
        conversions.convert_element_type(manipulation.reshape(piece, shape), dtype)
        for piece, shape, dtype in zip(pieces, shapes, from_dtypes, strict=True)
    ]
