"""`associative_scan`: all prefix combinations of an associative function, in parallel.

Not a primitive: the classic odd/even recursion built from slices, pads and the user's
function, so every transformation applies as it does to any lax program. Combining the pairs
(0, 1), (2, 3), ... halves the problem; scanning that recursively gives every odd-indexed
prefix, and one more combination with the even-indexed elements gives the rest. Work is O(n)
applications of `fn` to arrays of n/2 elements or fewer; depth is O(log n).
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import shape_of
from tracejit._src.lax import binary, bitwise, shapes, slicing
from tracejit._src.tree_util import tree_flatten, tree_unflatten


def associative_scan(fn, elems, reverse=False, axis=0):
    """The inclusive scan of `elems` (a pytree of arrays of equal length along `axis`) with
    the associative binary `fn` on such pytrees: element i combines elements 0..i (or i..n-1
    with `reverse=True`)."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan needs at least one array in elems")
    ndim = len(shape_of(leaves[0]))
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for rank {ndim}")
    axis %= ndim
    lengths = {shape_of(x)[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[shape_of(x) for x in leaves]})"
        )

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                f"associative_scan: fn must return a pytree of the structure of elems ({tree}), "
                f"got {out_tree}"
            )
        return out_leaves

    def take(xs, start, stop=None, stride=1):
        return [slicing.slice_in_dim(x, start, stop, stride, axis) for x in xs]

    def prefix_scan(xs):
        n = shape_of(xs[0])[axis]
        if n < 2:
            return xs
        pairs = combine(take(xs, 0, n - 1, 2), take(xs, 1, None, 2))
        odd = prefix_scan(pairs)  # prefixes ending at 1, 3, 5, ...
        if n % 2 == 0:
            even = combine(take(odd, 0, -1), take(xs, 2, None, 2))
        else:
            even = combine(odd, take(xs, 2, None, 2))
        first = take(xs, 0, 1)
        even = [shapes.concatenate([f, e], axis) for f, e in zip(first, even, strict=True)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]

    if reverse:
        leaves = [shapes.rev(x, (axis,)) for x in leaves]
    out = prefix_scan(leaves)
    if reverse:
        out = [shapes.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _interleave(a, b, axis):
    """[a0, b0, a1, b1, ...] along `axis` (a has as many elements as b, or one more)."""
    n = shape_of(a)[axis] + shape_of(b)[axis]
    ndim = len(shape_of(a))
    zero = np.zeros((), a.dtype)

    def spread(x, low):
        config = [(0, 0, 0)] * ndim
        high = n - low - (2 * shape_of(x)[axis] - 1)
        config[axis] = (low, high, 1)
        return shapes.pad(x, zero, config)

    combine = bitwise.or_ if a.dtype == np.bool_ else binary.add
    return combine(spread(a, 0), spread(b, 1))
