"""`lax.map`: a function applied to each slice of arrays along their leading axis, as a scan.

One traced body, however many slices: compile time and program size do not grow with the
length, unlike a Python loop or `vmap`'s single wide application (which `batch_size` mixes in).
"""

from __future__ import annotations

from tracejit._src.core import shape_of
from tracejit._src.interpreters import batching
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.lax.shapes import concatenate, reshape
from tracejit._src.lax.slicing import slice_in_dim
from tracejit._src.tree_util import tree_flatten, tree_map, tree_unflatten


def _vmap_leading(f):
    """`f` applied to every slice along the leading axis of its argument's leaves at once;
    every output batched at the front."""

    def batched_f(x):
        leaves, in_tree = tree_flatten(x)
        size = shape_of(leaves[0])[0]
        out_trees = []

        def flat_f(*xs):
            out_leaves, out_tree = tree_flatten(f(tree_unflatten(in_tree, xs)))
            out_trees.append(out_tree)
            return out_leaves

        outs, dims = batching.vmap_flat(flat_f, leaves, [0] * len(leaves), size)
        fronts = [batching.batch_at_front(o, d, size) for o, d in zip(outs, dims, strict=True)]
        return tree_unflatten(out_trees[0], fronts)

    return batched_f


def map(f, xs, *, batch_size=None):
    """`f` applied to each slice of `xs` along its leading axis, as a scan: one traced body,
    however long `xs` is. With `batch_size`, each scan step applies `vmap(f)` to that many
    slices (and the remainder is one more vmapped call)."""
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    leaves = tree_flatten(xs)[0]
    if not leaves:
        raise ValueError("lax.map with batch_size needs at least one array to map over.")
    n = shape_of(leaves[0])[0]
    num_batches, remainder = divmod(n, int(batch_size))
    batched_f = _vmap_leading(f)
    outs = []
    if num_batches:

        def batches(x):
            main = slice_in_dim(x, 0, num_batches * batch_size)
            return reshape(main, (num_batches, batch_size, *shape_of(x)[1:]))

        _, ys = scan(lambda _, x: ((), batched_f(x)), (), tree_map(batches, xs))
        size = num_batches * batch_size
        outs.append(tree_map(lambda y: reshape(y, (size, *shape_of(y)[2:])), ys))
    if remainder:
        outs.append(batched_f(tree_map(lambda x: slice_in_dim(x, n - remainder, n), xs)))
    if len(outs) == 1:
        return outs[0]
    return tree_map(lambda a, b: concatenate([a, b], 0), *outs)
