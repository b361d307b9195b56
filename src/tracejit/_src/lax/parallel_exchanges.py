"""Collectives that exchange blocks between the members of named axes: `all_to_all` (and
`pswapaxes`), `ppermute` (and `pshuffle`), `pbroadcast`, and `pcast`.

Like those of `parallel.py`, each is carried out by the batching trace mapping its axis under
`vmap` (and on the NumPy platform) and lowered to StableHLO collectives over replica groups in
a program of replicas (`pmap`, `shard_map`):

    all_to_all[axis_index_groups=None axis_name=('x', 'y') concat_axis=1 split_axis=1 tiled=True]

Over several axes at once, the members are numbered in the product of the axes, the first
slowest-varying: on devices that is one collective over the product's replica groups; under
vmap, where each trace maps one axis, it is carried out as one exchange per axis
(`_on_trace`).
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive, ShapedArray, set_current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    bound_axis_size,
    collective_rules,
    move_batch_dim,
)
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import binary, comparison, selection, shapes, slicing
from tracejit._src.lax.parallel import (
    all_gather,
    axis_index,
    by_group,
    checked_groups,
    dense_i64,
    member_count,
    merge,
    names_of,
    replica_groups,
    split_dim,
    unbound_impl,
    within_or_across,
)
from tracejit._src.lax.standard import vectorized_batch_rule, weak_if_all_weak
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_map

# --- all_to_all -----------------------------------------------------------------------------
all_to_all_p = Primitive("all_to_all")


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Member j receives block j of every member's `x` along `split_axis`, concatenated along
    `concat_axis` in the members' order (`tiled=False`: `split_axis` has one entry per member
    and is dropped, and the members' axis is inserted at `concat_axis`). Over several axis
    names the members are their product, the first slowest-varying."""
    names = names_of(axis_name)
    groups = checked_groups(axis_index_groups, names, equal_sizes=True)
    size = len(groups[0]) if groups else member_count(names)

    def exchange(v):
        rank = len(v.shape)
        split, concat = split_axis % rank, concat_axis % rank
        if tiled:
            return _bind_all_to_all(v, names, groups, split, concat)
        if v.shape[split] != size:
            raise ValueError(
                f"all_to_all requires the size of the mapped axis axis_name to equal "
                f"x.shape[split_axis], but they are {size} and {v.shape[split]} respectively."
            )
        if concat <= split:
            y = shapes.expand_dims(v, (concat,))
            out = _bind_all_to_all(y, names, groups, split + 1, concat)
            return shapes.squeeze(out, (split + 1,))
        y = shapes.expand_dims(v, (concat + 1,))
        return shapes.squeeze(_bind_all_to_all(y, names, groups, split, concat + 1), (split,))

    return tree_map(exchange, x)


def _bind_all_to_all(x, names, groups, split, concat):
    return all_to_all_p.bind(
        x,
        axis_index_groups=groups,
        axis_name=names,
        concat_axis=concat,
        split_axis=split,
        tiled=True,
    )


all_to_all_p.def_impl(unbound_impl)


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(
    x, *, axis_name, axis_index_groups, split_axis, concat_axis, **params
):
    size = member_count(axis_name)
    if axis_index_groups is not None:
        size = len(axis_index_groups[0])
    shape = list(x.shape)
    if shape[split_axis] % size:
        raise ValueError(
            f"all_to_all: split_axis {split_axis} of shape {tuple(shape)} does not divide over "
            f"the {size} members of axis {axis_name}"
        )
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_to_all_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(all_to_all_p)


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, **params):
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


transpose_rules[all_to_all_p] = _all_to_all_transpose


def _all_to_all_lowering(ctx, x, *, axis_name, axis_index_groups, split_axis, concat_axis, tiled):
    groups = replica_groups(ctx, axis_name, axis_index_groups)
    attributes = {
        "split_dimension": f"{split_axis} : i64",
        "concat_dimension": f"{concat_axis} : i64",
        "split_count": f"{len(groups[0])} : i64",
        "replica_groups": dense_i64(groups),
    }
    return ctx.op("stablehlo.all_to_all", [x], attributes=attributes)


lowering_rules[all_to_all_p] = within_or_across(all_to_all_p, _all_to_all_lowering)


def _all_to_all_batch(values, dims, *, split_axis, concat_axis, **params):
    (x,), (dim,) = values, dims
    split, concat = split_axis + (dim <= split_axis), concat_axis + (dim <= concat_axis)
    return all_to_all_p.bind(x, split_axis=split, concat_axis=concat, **params), dim


batch_rules[all_to_all_p] = _all_to_all_batch


def _all_to_all_collective(
    trace, value, dim, *, axis_name, axis_index_groups, split_axis, concat_axis, tiled
):
    """Members k at the front, each one's split axis cut into (j, block): moving j to the
    front and k beside the concat axis, then merging them, gives member j's result. Over
    groups, the same within each group; over several axes, one exchange per axis
    (`_all_to_all_per_axis`)."""
    if len(axis_name) > 1:
        exchange = lambda v: _all_to_all_per_axis(v, axis_name, split_axis, concat_axis)
        return _on_trace(trace, value, dim, exchange)
    members = batch_at_front(value, dim, trace.axis_size)
    if axis_index_groups is None:
        return _exchanged(members, split_axis, concat_axis), 0

    def exchange_in_group(stack):
        out = _exchanged(stack, split_axis, concat_axis)
        return [slicing.index_in_dim(out, p, 0, keepdims=False) for p in range(stack.shape[0])]

    return by_group(members, axis_index_groups, exchange_in_group), 0


def _exchanged(members, split_axis: int, concat_axis: int):
    """The members' results of a tiled all_to_all among all of `members` (stacked first)."""
    size = members.shape[0]
    blocks = split_dim(members, split_axis + 1, size)
    by_receiver = move_batch_dim(blocks, split_axis + 1, 0)  # (j, k, ...)
    placed = move_batch_dim(by_receiver, 1, concat_axis + 1)
    return merge(placed, concat_axis + 1)


def _all_to_all_per_axis(v, names, split: int, concat: int):
    """A tiled all_to_all over several axes as one per axis: the split axis cut into a block
    per member of each axis and the rest, each axis's exchange brings its blocks' sources in
    place, and the sources (first axis slowest) then join the concat axis."""
    sizes = tuple(bound_axis_size(name) for name in names)
    shape = tuple(v.shape)
    count = int(np.prod(sizes, dtype=np.int64))
    u = shapes.reshape(v, (*shape[:split], *sizes, shape[split] // count, *shape[split + 1 :]))
    for k, name in enumerate(names):
        u = _bind_all_to_all(u, (name,), None, split + k, split + k)
    u = shapes.reshape(u, (*shape[:split], count, shape[split] // count, *shape[split + 1 :]))
    return merge(move_batch_dim(u, split, concat), concat)  # the sources before its blocks


def _on_trace(trace, value, dim, composite):
    """A collective's `composite` (made of collectives over single axes) carried out under
    `trace` on its batched `value`: (value, batch dimension) of the result."""
    with set_current_trace(trace):
        out = composite(trace.new_tracer(value, dim))
    return trace.to_batch_info(out)


collective_rules[all_to_all_p] = _all_to_all_collective


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the mapped axis `axis_name` with the positional axis `axis` (whose size must be
    the number of members): member j gets entry j of every member's `axis`."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x, axis_name, source):
    """Every member gets member `source`'s `x` (JAX's `CollectiveBroadcast`; here each member
    gathers the members' values and keeps the source's)."""
    names = names_of(axis_name)
    size = member_count(names)
    if not 0 <= int(source) < size:
        raise ValueError(
            f"pbroadcast source {source} is outside the {size} members of axis {axis_name}"
        )
    keep = lambda v: slicing.index_in_dim(all_gather(v, names), int(source), 0, keepdims=False)
    return tree_map(keep, x)


# --- pvary ----------------------------------------------------------------------------------
pvary_p = Primitive("pvary")
"""The type change of `shard_map(check_vma=True)`: a value the same on every member of the
manual axes `axes` used where one that differs is (`f32[]` to `f32[]{V:i}`). The same values:
the identity everywhere, in gradients too, as the global form (vmap over the mesh axes) sums an
unmapped value's cotangents itself. Bound by `pcast(to="varying")` and inserted by shard_map's
typing, as JAX does."""

pvary_p.def_impl(lambda x, *, axes: x)
pvary_p.def_abstract_eval(lambda x, *, axes: x)
pvary_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(pvary_p)
transpose_rules[pvary_p] = lambda ct, x, *, axes: [ct]
batch_rules[pvary_p] = vectorized_batch_rule(pvary_p)
lowering_rules[pvary_p] = lambda ctx, x, *, axes: x

_PCAST_TARGETS = ("reduced", "varying", "unreduced")


def pcast(x, axis_name, *, to: str):
    """`x` recast as varying over `axis_name` (`to="varying"`): the same values, a `pvary` that
    `shard_map(check_vma=True)` types (and drops under `check_vma=False`, as JAX stages
    nothing there). The other targets need Explicit mesh axes' types."""
    if to not in _PCAST_TARGETS:
        raise ValueError(
            "Got unexpected `to` value. Allowed `to` values are: {'reduced', 'varying', "
            "'unreduced'}"
        )
    names = names_of(axis_name)
    member_count(names)  # (NameError for an unbound axis)
    if to != "varying":
        raise NotImplementedError(
            f"pcast(to={to!r}) needs the reduced and unreduced types of Explicit mesh axes, "
            "which are not built yet"
        )
    return tree_map(lambda v: pvary_p.bind(v, axes=names), x)


# --- ppermute -------------------------------------------------------------------------------
ppermute_p = Primitive("ppermute")


def ppermute(x, axis_name, perm):
    """Sends member `source`'s `x` to member `destination` for each (source, destination) of
    `perm`; a member no pair sends to gets zeros. Over several axis names the members are
    numbered in their product, the first slowest-varying."""
    names = names_of(axis_name)
    size = member_count(names)
    perm = tuple((int(s), int(d)) for s, d in perm)
    sources, destinations = [s for s, _ in perm], [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not 0 <= i < size for pair in perm for i in pair):
        raise ValueError(
            f"ppermute permutation {perm} has an index outside the {size} members of axis "
            f"{axis_name}"
        )
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Member i receives member `perm[i]`'s `x`."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)), strict=True)))


ppermute_p.def_impl(unbound_impl)


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, perm):
    member_count(axis_name)
    return x


ppermute_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(ppermute_p)


def _ppermute_transpose(ct, x, *, axis_name, perm):
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))]


transpose_rules[ppermute_p] = _ppermute_transpose


def _permuted_by_gathering(v, names, perm):
    """`ppermute` as every member gathering every member's value and keeping its source's
    (zeros where no pair sends to it)."""
    sources = np.full(member_count(names), -1, np.int32)
    for source, destination in perm:
        sources[destination] = source
    gathered = all_gather(v, names)
    source = slicing.dynamic_index_in_dim(sources, axis_index(names), keepdims=False)
    kept = slicing.dynamic_index_in_dim(gathered, binary.max(source, np.int32(0)), keepdims=False)
    zeros = binary.mul(kept, np.zeros((), kept.dtype))
    return selection.select(comparison.ge(source, np.int32(0)), kept, zeros)


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    """This plugin's XLA runs `collective_permute` only between partitions, and a pmap body is
    a program of replicas: the permutation is made of an all_gather."""
    closed = trace_to_jaxpr(
        lambda v: [_permuted_by_gathering(v, axis_name, perm)],
        ctx.avals_in,
        DebugInfo(None, "ppermute"),
        ctx.module.replica_axes,
    )
    (out,) = ctx.lower_sub_jaxpr(ctx.block, closed, [x])
    return out


lowering_rules[ppermute_p] = within_or_across(ppermute_p, _ppermute_lowering)
batch_rules[ppermute_p] = vectorized_batch_rule(ppermute_p)


def _ppermute_collective(trace, value, dim, *, axis_name, perm):
    if len(axis_name) > 1:
        return _on_trace(trace, value, dim, lambda v: _permuted_by_gathering(v, axis_name, perm))
    members = batch_at_front(value, dim, trace.axis_size)
    source_of = {d: s for s, d in perm}
    zeros = None
    rows = []
    for member in range(trace.axis_size):
        if member in source_of:
            rows.append(slicing.index_in_dim(members, source_of[member], 0, keepdims=True))
            continue
        if zeros is None:
            row_shape = (1, *members.shape[1:])
            zero = np.zeros((), members.dtype)
            zeros = shapes.broadcast_in_dim(zero, row_shape, ())
        rows.append(zeros)
    return shapes.concatenate(rows, 0), 0


collective_rules[ppermute_p] = _ppermute_collective
