"""Collectives over named axes: psum, pmax, pmin (and pmean), all_gather, axis_index.

A collective names a mapped axis (`vmap(f, axis_name='i')`); the batching trace that maps that
axis carries it out (`BatchTrace.process_collective`), turning the named reduction into a
positional one over its batch dimension:

    vmap(lambda x: x / psum(x, 'i'), axis_name='i')
        b:f32[] = psum[axes=(0,) axis_index_groups=None] a
        c:f32[4] = div a b

A collective whose axis no enclosing transformation maps raises NameError (unbound axis name).
Staged inside a control-flow body under that vmap, a collective is typed with the axis size the
enclosing vmap gives it (`bound_axis_size`), and carried out when the vmap batches the body.

The same primitives run across devices: `pmap` and `shard_map` compile their per-device body
as a program of several replicas, whose named axes (`Module.replica_axes`, row-major in the
replica ids) the lowering rules turn into StableHLO collectives over replica groups
(`all_reduce`, `all_gather`, `all_to_all`, `collective_permute`, `reduce_scatter`,
`replica_id`). Without devices (the NumPy platform, and every
transformation of a shard_map but its JVP) the body runs under `vmap` over the mesh axes, and
the rules above carry the collectives out.

The collectives that exchange blocks between members (`all_to_all`, `ppermute`, and
`pbroadcast`, `pcast` over them) are in `parallel_exchanges.py`; the helpers both use
(named axes, `axis_index_groups`, replica groups) are here.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive, ShapedArray
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    bound_axis_size,
    collective_rules,
    move_batch_dim,
    no_batched_operands,
)
from tracejit._src.lax import reductions, shapes, slicing
from tracejit._src.lax.standard import weak_if_all_weak
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_map


def names_of(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def checked_groups(axis_index_groups, names, *, equal_sizes: bool) -> tuple | None:
    """`axis_index_groups` as tuples, checked: groups of members of one axis that each reduce
    (gather, ...) among themselves, every member in exactly one (equal in size where the
    result's shape depends on it)."""
    if axis_index_groups is None:
        return None
    if len(names) != 1:
        raise NotImplementedError("axis_index_groups over several axes at once is not built yet")
    size = bound_axis_size(names[0])
    groups = tuple(tuple(int(i) for i in group) for group in axis_index_groups)
    if sorted(i for group in groups for i in group) != list(range(size)):
        raise ValueError(
            f"axis_index_groups {groups} must hold each of the {size} members of axis "
            f"{names[0]!r} exactly once"
        )
    if equal_sizes and len({len(group) for group in groups}) > 1:
        raise ValueError(f"axis_index_groups {groups} must all have the same size")
    return groups


def by_group(members, groups, per_group):
    """The members' results (stacked first) where each group's (`per_group` of the stack of
    its members' values: one result per member, in the group's order) are computed apart."""
    rows = [None] * members.shape[0]
    for group in groups:
        stack = shapes.concatenate(
            [slicing.index_in_dim(members, k, 0, keepdims=True) for k in group], 0
        )
        for k, out in zip(group, per_group(stack), strict=True):
            rows[k] = shapes.expand_dims(out, (0,))
    return shapes.concatenate(rows, 0)


def _unbound(axes):
    for axis in axes:
        if not isinstance(axis, int):
            bound_axis_size(axis)


def _bind_over_leaves(primitive, x, axis_name, axis_index_groups):
    axes = names_of(axis_name)
    groups = checked_groups(axis_index_groups, axes, equal_sizes=False)
    return tree_map(lambda v: primitive.bind(v, axes=axes, axis_index_groups=groups), x)


def _positional_reduction(np_reduce):
    """impl and abstract eval of a collective over positional axes (what vmap turns it into)."""

    def impl(x, *, axes, axis_index_groups):
        return np_reduce(x, axis=axes).astype(x.dtype, copy=False)

    def abstract_eval(x, *, axes, axis_index_groups):
        _unbound(axes)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    return impl, abstract_eval


def _collective_batch(primitive, size_scaling):
    """Carries out a reduction collective over the trace's axis: a positional reduction of the
    batch dimension (with any positional axes already there); an unbatched operand is the same
    in every member (`size_scaling`). Other axis names are left to enclosing traces. Over
    `axis_index_groups` (one axis), each group reduces apart."""

    def rule(trace, value, dim, *, axes, axis_index_groups):
        if axis_index_groups is not None:
            members = batch_at_front(value, dim, trace.axis_size)
            reduce = lambda stack: [primitive.bind(stack, axes=(0,), axis_index_groups=None)]
            return by_group(members, axis_index_groups, lambda st: reduce(st) * st.shape[0]), 0
        named = tuple(a for a in axes if not isinstance(a, int) and a != trace.axis_name)
        positional = tuple(a for a in axes if isinstance(a, int))
        if dim is None:
            out = size_scaling(value, trace.axis_size)
            if positional:
                out = primitive.bind(out, axes=positional, axis_index_groups=axis_index_groups)
        else:
            shifted = tuple(sorted((dim, *(a + (a >= dim) for a in positional))))
            out = primitive.bind(value, axes=shifted, axis_index_groups=axis_index_groups)
        if named:
            out = primitive.bind(out, axes=named, axis_index_groups=axis_index_groups)
        return out, None

    return rule


def _collective_batch_rule(primitive):
    """Batching of a collective over another trace's axis: positional axes move past the batch
    dimension, named ones pass through."""

    def rule(values, dims, *, axes, axis_index_groups):
        (x,), (dim,) = values, dims
        positional = [a + (a >= dim) for a in axes if isinstance(a, int)]
        named = [a for a in axes if not isinstance(a, int)]
        out = primitive.bind(x, axes=(*positional, *named), axis_index_groups=axis_index_groups)
        return out, dim - sum(a < dim for a in positional)

    return rule


def unbound_impl(*args, axis_name, **params):
    raise NameError(f"unbound axis name: {axis_name}")


# A program whose replicas are one process's share of an axis spanning several processes
# (`ctx.module.process_span`, see `_src/distributed.py`) lowers each collective over that axis
# as its part among the process's replicas (the rule below, `local_lowering_rules`) and then
# an exchange between the processes: `distributed_collectives.py` fills `cross_process_rules`,
# whose rules take the local rule as their first argument after `ctx`.
cross_process_rules: dict[Primitive, object] = {}
local_lowering_rules: dict[Primitive, object] = {}


def within_or_across(primitive, rule):
    """The lowering rule of a collective: `rule` within one process, and across processes
    the rule `cross_process_rules` holds for it."""
    local_lowering_rules[primitive] = rule

    def lowering(ctx, *args, **params):
        if ctx.module.process_span is None:
            return rule(ctx, *args, **params)
        if params.get("axis_index_groups") is not None:
            raise NotImplementedError(
                f"[lowering] {primitive.name} with axis_index_groups in a program spanning "
                "several processes is not built yet"
            )
        return cross_process_rules[primitive](ctx, rule, *args, **params)

    return lowering


def replica_groups(ctx, names, axis_index_groups=None) -> list:
    """The replica groups of a collective over the named axes `names` (in that order): the
    replicas that differ only along them, each group ordered by their position along them;
    with `axis_index_groups`, each such group cut into those."""
    span = ctx.module.process_span
    if span is not None and span.name in names and ctx.eqn.primitive not in cross_process_rules:
        raise NotImplementedError(
            f"[lowering] {ctx.eqn.primitive.name} over an axis spanning several processes is "
            "not built yet"
        )
    axes = ctx.module.replica_axes
    order = [name for name, _ in axes]
    for name in names:
        if name not in order:
            raise NameError(f"unbound axis name: {name}")
    ids = np.arange(int(np.prod([size for _, size in axes], dtype=np.int64))).reshape(
        [size for _, size in axes]
    )
    moved = [i for i, n in enumerate(order) if n not in names] + [order.index(n) for n in names]
    size = int(np.prod([dict(axes)[n] for n in names], dtype=np.int64))
    rows = ids.transpose(moved).reshape(-1, size).tolist()
    if axis_index_groups is None:
        return rows
    return [[row[i] for i in group] for row in rows for group in axis_index_groups]


def dense_i64(rows) -> str:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`: replica groups, source-target pairs
    (shorter rows padded with -1, StableHLO's filler in replica groups of unequal sizes)."""
    width = max((len(row) for row in rows), default=0)
    rows = [[int(v) for v in row] + [-1] * (width - len(row)) for row in rows]
    shape = (len(rows), width)
    return f"dense<{rows}> : {hlo.tensor_type(shape, np.int64)}"


def collective_attributes(ctx, names, axis_index_groups=None) -> dict:
    """`replica_groups` over `names`. No channel: a channel makes this plugin's XLA treat
    all_gather, all_to_all and reduce_scatter as exchanges between partitions, and these
    programs are replicas (cross-replica collectives need none)."""
    return {"replica_groups": dense_i64(replica_groups(ctx, names, axis_index_groups))}


def _combiner_region(ctx, combiner: str, dtype):
    scalar = hlo.tensor_type((), dtype)
    region = ctx.block.region([scalar, scalar])
    (combined,) = region.op(combiner, region.args, [scalar])
    region.ret([combined])
    return region


def _lower_like(reduction_p, combiner):
    """The positional axes reduce as the reduction the collective is over them; the named ones
    (a program of replicas) are an `all_reduce` over their replica groups."""

    def lowering(ctx, x, *, axes, axis_index_groups):
        positional = tuple(a for a in axes if isinstance(a, int))
        named = tuple(a for a in axes if not isinstance(a, int))
        if positional:
            x = lowering_rules[reduction_p](ctx, x, axes=positional)
        if not named:
            return x
        dtype = ctx.avals_out[0].dtype
        return ctx.op(
            "stablehlo.all_reduce",
            [x],
            attributes=collective_attributes(ctx, named, axis_index_groups),
            regions=[_combiner_region(ctx, combiner, dtype)],
        )

    return lowering


# --- psum -----------------------------------------------------------------------------------
psum_p = Primitive("psum")


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` over the members of the mapped axis `axis_name` (a name or a tuple)."""
    return _bind_over_leaves(psum_p, x, axis_name, axis_index_groups)


_psum_impl, _psum_abstract_eval = _positional_reduction(np.sum)
psum_p.def_impl(_psum_impl)
psum_p.def_abstract_eval(_psum_abstract_eval)
psum_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(psum_p)


def _psum_transpose(ct, x, *, axes, axis_index_groups):
    """Over positional axes, a broadcast; over named ones a psum, as JAX transposes psum in
    per-member code (`pmap`, `shard_map(check_vma=False)`, `vmap`): each member's operand
    reaches every member's result."""
    named = tuple(a for a in axes if not isinstance(a, int))
    if named:
        ct = psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [shapes.broadcast_in_dim(ct, shape, kept)]


transpose_rules[psum_p] = _psum_transpose
lowering_rules[psum_p] = within_or_across(
    psum_p, _lower_like(reductions.reduce_sum_p, "stablehlo.add")
)
batch_rules[psum_p] = _collective_batch_rule(psum_p)
collective_rules[psum_p] = _collective_batch(psum_p, lambda x, n: x * n)

# --- psum_invariant -------------------------------------------------------------------------
psum_invariant_p = Primitive("psum_invariant")
"""psum as a `shard_map(check_vma=True)` body stages it (`shard_map_vma.py` turns its psums
into these), its result the same on every member: `psum_invariant[axes=('i',)]`, as JAX prints
it. The same values as psum: every rule is psum's."""


def _as_psum(rule):
    return lambda *args, axes: rule(*args, axes=axes, axis_index_groups=None)


psum_invariant_p.def_impl(_as_psum(_psum_impl))
psum_invariant_p.def_abstract_eval(_as_psum(_psum_abstract_eval))
psum_invariant_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(psum_invariant_p)
transpose_rules[psum_invariant_p] = _as_psum(_psum_transpose)
lowering_rules[psum_invariant_p] = lambda ctx, x, *, axes: lowering_rules[psum_p](
    ctx, x, axes=axes, axis_index_groups=None
)
batch_rules[psum_invariant_p] = _as_psum(batch_rules[psum_p])
collective_rules[psum_invariant_p] = _as_psum(collective_rules[psum_p])

# --- pmax -----------------------------------------------------------------------------------
pmax_p = Primitive("pmax")


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` over the members of the mapped axis `axis_name`."""
    return _bind_over_leaves(pmax_p, x, axis_name, axis_index_groups)


_pmax_impl, _pmax_abstract_eval = _positional_reduction(np.max)
pmax_p.def_impl(_pmax_impl)
pmax_p.def_abstract_eval(_pmax_abstract_eval)
pmax_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(
    pmax_p, "JAX defines none either; jnp.max of all_gather(x, axis_name) has one"
)
lowering_rules[pmax_p] = within_or_across(
    pmax_p, _lower_like(reductions.reduce_max_p, "stablehlo.maximum")
)
batch_rules[pmax_p] = _collective_batch_rule(pmax_p)
collective_rules[pmax_p] = _collective_batch(pmax_p, lambda x, n: x)

# --- pmin -----------------------------------------------------------------------------------
pmin_p = Primitive("pmin")


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` over the members of the mapped axis `axis_name`."""
    return _bind_over_leaves(pmin_p, x, axis_name, axis_index_groups)


_pmin_impl, _pmin_abstract_eval = _positional_reduction(np.min)
pmin_p.def_impl(_pmin_impl)
pmin_p.def_abstract_eval(_pmin_abstract_eval)
pmin_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(
    pmin_p, "JAX defines none either; jnp.min of all_gather(x, axis_name) has one"
)
lowering_rules[pmin_p] = within_or_across(
    pmin_p, _lower_like(reductions.reduce_min_p, "stablehlo.minimum")
)
batch_rules[pmin_p] = _collective_batch_rule(pmin_p)
collective_rules[pmin_p] = _collective_batch(pmin_p, lambda x, n: x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the members of the mapped axis `axis_name`: the psum divided by
    the number of members, known when tracing (over groups, each member's group's size)."""
    if axis_index_groups is None:
        size = member_count(names_of(axis_name))
    else:
        size = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda v: v / size, psum(x, axis_name, axis_index_groups=axis_index_groups))


def member_count(names) -> int:
    """The number of members of the named axes `names` together."""
    return int(np.prod([bound_axis_size(name) for name in names], dtype=np.int64))


def _single_name(name, primitive: str) -> str:
    names = names_of(name)
    if len(names) != 1:
        raise NotImplementedError(f"{primitive} over several axes at once is not built yet")
    return names[0]


def merge(x, dim: int):
    """`x` with dimensions `dim` and `dim + 1` merged into one."""
    shape = tuple(x.shape)
    return shapes.reshape(x, (*shape[:dim], shape[dim] * shape[dim + 1], *shape[dim + 2 :]))


def split_dim(x, dim: int, parts: int):
    """`x` with dimension `dim` split into (`parts`, size / parts)."""
    shape = tuple(x.shape)
    return shapes.reshape(x, (*shape[:dim], parts, shape[dim] // parts, *shape[dim + 1 :]))


# --- all_gather -----------------------------------------------------------------------------
all_gather_p = Primitive("all_gather")


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every member's `x`, stacked along a new axis `axis` (`tiled=True`: concatenated along
    `axis`), in the members' order; several axis names gather over all of them, the first
    slowest-varying. `to` is JAX's placement of the result (only its default, 'varying', is
    built: the result is held by every member)."""
    names = names_of(axis_name)
    groups = checked_groups(axis_index_groups, names, equal_sizes=True)
    if to != "varying":
        raise NotImplementedError(f"all_gather(to={to!r}) is not built yet")

    def gather(v):
        rank = len(getattr(v, "shape", ()))
        dim = axis + (rank + (not tiled) if axis < 0 else 0)
        if not 0 <= dim <= rank - tiled:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
        out = v
        for k, name in enumerate(reversed(names)):
            out = all_gather_p.bind(
                out,
                all_gather_dimension=dim,
                axis_index_groups=groups,
                axis_name=(name,),
                axis_size=len(groups[0]) if groups else bound_axis_size(name),
                tiled=tiled or k > 0,
            )
        return out

    return tree_map(gather, x)


all_gather_p.def_impl(unbound_impl)


def _gathered_shape(shape, dim, size, tiled) -> tuple:
    if tiled:
        return (*shape[:dim], shape[dim] * size, *shape[dim + 1 :])
    return (*shape[:dim], size, *shape[dim:])


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(
    x, *, all_gather_dimension, axis_index_groups, axis_name, axis_size, tiled
):
    bound_axis_size(axis_name[0])
    shape = _gathered_shape(x.shape, all_gather_dimension, axis_size, tiled)
    return ShapedArray(shape, x.dtype, x.weak_type)


all_gather_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(all_gather_p)


def _all_gather_transpose(
    ct, x, *, all_gather_dimension, axis_index_groups, axis_name, axis_size, tiled
):
    """Each member's operand is block `axis_index` of every member's result, so its cotangent
    is the sum of that block over the members: a reduce-scatter."""
    summed = reduce_scatter_p.bind(
        ct,
        scatter_dimension=all_gather_dimension,
        axis_index_groups=axis_index_groups,
        axis_name=axis_name,
        axis_size=axis_size,
        tiled=True,
    )
    return [summed if tiled else shapes.reshape(summed, x.aval.shape)]


transpose_rules[all_gather_p] = _all_gather_transpose


def _all_gather_lowering(
    ctx, x, *, all_gather_dimension, axis_index_groups, axis_name, axis_size, tiled
):
    dim = all_gather_dimension
    if not tiled:  # gathered along a unit axis inserted first
        aval = ctx.avals_in[0]
        shape = (*aval.shape[:dim], 1, *aval.shape[dim:])
        x = ctx.block.op1("stablehlo.reshape", [x], hlo.tensor_type(shape, aval.dtype))
    attributes = {
        "all_gather_dim": f"{dim} : i64",
        **collective_attributes(ctx, axis_name, axis_index_groups),
    }
    return ctx.op("stablehlo.all_gather", [x], attributes=attributes)


lowering_rules[all_gather_p] = within_or_across(all_gather_p, _all_gather_lowering)


def _all_gather_batch(values, dims, *, all_gather_dimension, **params):
    (x,), (dim,) = values, dims
    gather = all_gather_dimension
    out = all_gather_p.bind(x, all_gather_dimension=gather + (dim <= gather), **params)
    return out, dim + (not params["tiled"] and dim > gather)


batch_rules[all_gather_p] = _all_gather_batch


def _all_gather_collective(
    trace, value, dim, *, all_gather_dimension, axis_index_groups, axis_name, axis_size, tiled
):
    """Every member's value, the members' axis moved to `all_gather_dimension` (merged into
    it when tiled): the same for every member (over `axis_index_groups`, for every member of
    a group)."""
    members = batch_at_front(value, dim, trace.axis_size)
    if axis_index_groups is None:
        out = move_batch_dim(members, 0, all_gather_dimension)
        return (merge(out, all_gather_dimension) if tiled else out), None
    gathered = by_group(members, axis_index_groups, lambda stack: [stack] * stack.shape[0])
    out = move_batch_dim(gathered, 1, all_gather_dimension + 1)
    return (merge(out, all_gather_dimension + 1) if tiled else out), 0


collective_rules[all_gather_p] = _all_gather_collective

# --- psum_scatter (reduce_scatter) ----------------------------------------------------------
reduce_scatter_p = Primitive("reduce_scatter")


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The psum of `x`, of which member j keeps block j along `scatter_dimension` (`tiled=False`:
    that dimension's size is the number of members and is dropped)."""
    name = _single_name(axis_name, "psum_scatter")
    groups = checked_groups(axis_index_groups, (name,), equal_sizes=True)
    size = len(groups[0]) if groups else bound_axis_size(name)

    def scatter(v):
        shape = tuple(v.shape)
        dim = scatter_dimension % max(len(shape), 1)
        if not tiled and (len(shape) <= dim or shape[dim] != size):
            raise ValueError(
                f"psum_scatter requires the size of the mapped axis {name} to equal "
                f"x.shape[scatter_dimension], but they are {size} and "
                f"{shape[dim] if len(shape) > dim else None} respectively."
            )
        out = reduce_scatter_p.bind(
            v,
            scatter_dimension=dim,
            axis_index_groups=groups,
            axis_name=(name,),
            axis_size=size,
            tiled=True,
        )
        return out if tiled else shapes.squeeze(out, (dim,))

    return tree_map(scatter, x)


reduce_scatter_p.def_impl(unbound_impl)


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_abstract_eval(x, *, scatter_dimension, axis_name, axis_size, **params):
    bound_axis_size(axis_name[0])
    dim, shape = scatter_dimension, list(x.shape)
    if shape[dim] % axis_size:
        raise ValueError(
            f"psum_scatter: dimension {dim} of shape {tuple(shape)} does not divide over the "
            f"{axis_size} members of axis {axis_name[0]}"
        )
    shape[dim] //= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


reduce_scatter_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(reduce_scatter_p)


def _reduce_scatter_transpose(
    ct, x, *, scatter_dimension, axis_index_groups, axis_name, axis_size, **params
):
    """Member j's block reached every member's operand: the transpose gathers the blocks."""
    out = all_gather_p.bind(
        ct,
        all_gather_dimension=scatter_dimension,
        axis_index_groups=axis_index_groups,
        axis_name=axis_name,
        axis_size=axis_size,
        tiled=True,
    )
    return [out]


transpose_rules[reduce_scatter_p] = _reduce_scatter_transpose


def _reduce_scatter_lowering(ctx, x, *, scatter_dimension, axis_index_groups, axis_name, **params):
    attributes = {"scatter_dimension": f"{scatter_dimension} : i64"}
    attributes.update(collective_attributes(ctx, axis_name, axis_index_groups))
    region = _combiner_region(ctx, "stablehlo.add", ctx.avals_in[0].dtype)
    return ctx.op("stablehlo.reduce_scatter", [x], attributes=attributes, regions=[region])


lowering_rules[reduce_scatter_p] = within_or_across(reduce_scatter_p, _reduce_scatter_lowering)


def _reduce_scatter_batch(values, dims, *, scatter_dimension, **params):
    (x,), (dim,) = values, dims
    out = reduce_scatter_p.bind(
        x, scatter_dimension=scatter_dimension + (dim <= scatter_dimension), **params
    )
    return out, dim


batch_rules[reduce_scatter_p] = _reduce_scatter_batch


def _reduce_scatter_collective(
    trace, value, dim, *, scatter_dimension, axis_index_groups, **params
):
    """The sum over the members, cut into blocks along `scatter_dimension`: member j's is
    block j (the blocks' axis is the batch dimension); over `axis_index_groups`, the sum over
    its group and its position there."""
    if axis_index_groups is not None:

        def scatter(stack):
            summed = reductions.reduce_sum(stack, (0,))
            blocks = split_dim(summed, scatter_dimension, stack.shape[0])
            return [
                slicing.index_in_dim(blocks, p, scatter_dimension, keepdims=False)
                for p in range(stack.shape[0])
            ]

        members = batch_at_front(value, dim, trace.axis_size)
        return by_group(members, axis_index_groups, scatter), 0
    if dim is None:
        summed = value * trace.axis_size
    else:
        summed = reductions.reduce_sum(value, (dim,))
    return split_dim(summed, scatter_dimension, trace.axis_size), scatter_dimension


collective_rules[reduce_scatter_p] = _reduce_scatter_collective

# --- axis_index -----------------------------------------------------------------------------
axis_index_p = Primitive("axis_index")


def axis_index(axis_name):
    """The position of the current member along the mapped axis `axis_name` (int32); over
    several names, the position in their product, the first slowest-varying."""
    names = names_of(axis_name)
    index = axis_index_p.bind(axis_name=names[0])
    for name in names[1:]:
        index = index * np.int32(bound_axis_size(name)) + axis_index_p.bind(axis_name=name)
    return index


def axis_size(axis_name):
    """The number of members of the mapped axis `axis_name` (the product, for several)."""
    return int(np.prod([bound_axis_size(name) for name in names_of(axis_name)], dtype=np.int64))


axis_index_p.def_impl(unbound_impl)


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
    bound_axis_size(axis_name)
    return ShapedArray((), np.int32)


ad.defjvp_zero(axis_index_p)


def _axis_index_lowering(ctx, *, axis_name):
    """The replica's coordinate along `axis_name`: (replica_id // stride) % size."""
    axes = ctx.module.replica_axes
    names = [name for name, _ in axes]
    if axis_name not in names:
        raise NameError(f"unbound axis name: {axis_name}")
    position = names.index(axis_name)
    stride = int(np.prod([size for _, size in axes[position + 1 :]], dtype=np.int64))
    block = ctx.block
    replica = block.op1("stablehlo.replica_id", [], hlo.tensor_type((), np.uint32))
    index = block.convert(replica, np.int32)
    index = block.op1("stablehlo.divide", [index, block.constant(np.int32(stride))], index.type)
    size = block.constant(np.int32(axes[position][1]))
    return block.op1("stablehlo.remainder", [index, size], index.type)


lowering_rules[axis_index_p] = within_or_across(axis_index_p, _axis_index_lowering)


def _axis_index_collective(trace, *, axis_name):
    return shapes.iota(np.int32, trace.axis_size), 0


collective_rules[axis_index_p] = _axis_index_collective
no_batched_operands(axis_index_p)
