"""Collectives that exchange blocks between the members of named axes: `all_to_all` (and
`pswapaxes`), `ppermute` (and `pshuffle`), `ragged_all_to_all`, `pbroadcast`, and `pcast`.

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

from tracejit._src.core import Primitive, ShapedArray, current_trace, get_aval, set_current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    bound_axis_size,
    collective_rules,
    move_batch_dim,
)
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import (
    binary,
    bitwise,
    comparison,
    conversions,
    gather,
    reductions,
    selection,
    shapes,
    slicing,
)
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


# --- ragged_all_to_all ----------------------------------------------------------------------
ragged_all_to_all_p = Primitive("ragged_all_to_all")
_RAGGED_INDEX_OPERANDS = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


def ragged_all_to_all(
    operand,
    output,
    input_offsets,
    send_sizes,
    output_offsets,
    recv_sizes,
    *,
    axis_name,
    axis_index_groups=None,
):
    """Ragged slices of every member's `operand` sent to the others, as mixture-of-experts
    layers exchange tokens. The four index arrays have K entries, K/members per member: entry
    i sends the `send_sizes[i]` rows from `input_offsets[i]` to member i // (K/members), which
    writes them into its `output` at `output_offsets[i]`; a member's own entry i says how many
    rows it receives (`recv_sizes[i]`) from member i // (K/members). Rows that no slice
    reaches keep `output`'s values."""
    names = names_of(axis_name)
    groups = checked_groups(axis_index_groups, names, equal_sizes=True)
    return ragged_all_to_all_p.bind(
        operand,
        output,
        input_offsets,
        send_sizes,
        output_offsets,
        recv_sizes,
        axis_index_groups=groups,
        axis_name=names,
    )


@ragged_all_to_all_p.def_impl
def _ragged_all_to_all_impl(*args, axis_name, axis_index_groups):
    raise _outside_mapped_context()


def _outside_mapped_context() -> RuntimeError:
    return RuntimeError(
        "ragged_all_to_all must be used within a mapped context like vmap or shard_map."
    )


@ragged_all_to_all_p.def_abstract_eval
def _ragged_all_to_all_abstract_eval(operand, output, *indices, axis_name, axis_index_groups):
    """JAX checks the index operands' dtypes and ranks; the other checks (its XLA's, when it
    compiles the program) are made here, where the shapes are known."""
    size = _group_size(axis_name, axis_index_groups)
    for what, aval in zip(_RAGGED_INDEX_OPERANDS, indices, strict=True):
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
        if len(aval.shape) != 1 or aval.shape[0] == 0:
            raise ValueError(
                f"ragged_all_to_all {what} must be rank 1 with positive dimension size, but "
                f"got shape {aval.shape}"
            )
    if operand.dtype != output.dtype:
        raise TypeError(
            "ragged_all_to_all operand and output must have the same dtype, got "
            f"{operand.dtype} and {output.dtype}"
        )
    if (
        not operand.shape
        or len(output.shape) != len(operand.shape)
        or (operand.shape[1:] != output.shape[1:])
    ):
        raise ValueError(
            "ragged_all_to_all operand and output must have rank at least 1 and the same "
            f"dimensions but the first, got shapes {operand.shape} and {output.shape}"
        )
    lengths = {aval.shape[0] for aval in indices}
    if len(lengths) > 1 or next(iter(lengths)) % size:
        shapes_ = ", ".join(
            f"{what} {aval.shape}"
            for what, aval in zip(_RAGGED_INDEX_OPERANDS, indices, strict=True)
        )
        raise ValueError(
            f"ragged_all_to_all offsets and sizes must have one length, a multiple of the "
            f"{size} members of axis {axis_name}, got {shapes_}"
        )
    return ShapedArray(output.shape, output.dtype, output.weak_type)


def _group_size(names, groups) -> int:
    """The number of members that exchange with each other, with JAX's errors for an unbound
    axis name: eagerly a RuntimeError, when tracing a NameError."""
    for name in names:
        try:
            bound_axis_size(name)
        except NameError:
            if isinstance(current_trace(), EvalTrace):
                raise _outside_mapped_context() from None
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call "
                "ragged_all_to_all under `jax.shard_map`."
            ) from None
    return len(groups[0]) if groups is not None else member_count(names)


ragged_all_to_all_p.def_weak_type_rule(lambda weak_types, params: weak_types[1])  # output's
ad.defjvp_linear_in(ragged_all_to_all_p, 0, 1)  # linear in operand and output jointly


def _ragged_all_to_all_transpose(ct, operand, output, *indices, axis_name, axis_index_groups):
    """The operand's cotangent comes back the way its rows went (the same exchange with the
    senders' and receivers' roles swapped, as JAX transposes it); the output's is `ct` where
    no received slice overwrote it."""
    input_offsets, send_sizes, output_offsets, recv_sizes = indices
    exchange = _index_exchange(axis_name, axis_index_groups)
    received_at = exchange(output_offsets)
    ct_operand = ct_output = None
    if is_undefined_primal(operand):
        zeros = ad.zeros_like_aval(ad.tangent_aval(operand.aval))
        ct_operand = ragged_all_to_all_p.bind(
            ct,
            zeros,
            received_at,
            recv_sizes,
            exchange(input_offsets),
            send_sizes,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
        )
    if is_undefined_primal(output):
        covered = reductions.reduce_or(_covered(received_at, recv_sizes, ct.shape[0]), (0,))
        zeros = shapes.broadcast_in_dim(np.zeros((), ct.dtype), ct.shape, ())
        ct_output = selection.select(_rows_mask(covered, ct.shape), zeros, ct)
    return [ct_operand, ct_output, None, None, None, None]


transpose_rules[ragged_all_to_all_p] = _ragged_all_to_all_transpose


def _index_exchange(names, groups):
    """Entry i of every member's index array goes to member i // (K/members): afterwards,
    a receiver's entry s * (K/members) + t describes the t-th slice member s sends it."""
    return lambda v: all_to_all(v, names, 0, 0, axis_index_groups=groups, tiled=True)


def _covered(starts, sizes, rows: int):
    """(entries, rows): whether output row p lies in entry e's slice [start, start + size)."""
    starts = conversions.convert_element_type(starts, np.int32)
    ends = binary.add(starts, conversions.convert_element_type(sizes, np.int32))
    shape = (starts.shape[0], rows)
    row = shapes.broadcasted_iota(np.int32, shape, 1)
    after_start = comparison.le(shapes.broadcast_in_dim(starts, shape, (0,)), row)
    before_end = comparison.lt(row, shapes.broadcast_in_dim(ends, shape, (0,)))
    return bitwise.bitwise_and(after_start, before_end)


def _rows_mask(rows, shape):
    return shapes.broadcast_in_dim(rows, shape, (0,))


def _ragged_received(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *,
                     axis_name, axis_index_groups):  # fmt: skip
    """`ragged_all_to_all` made of collectives this plugin's XLA runs (its CPU backend has no
    ragged all-to-all; JAX's program fails to compile there): every member gathers every
    member's operand and, by an all_to_all of the offsets, learns where each slice sent to it
    starts in its sender's operand and where it goes. Each output row then takes its row of
    the last entry whose slice covers it, as the entries are written in order."""
    rows, sent_rows = output.shape[0], operand.shape[0]
    if rows == 0 or sent_rows == 0:  # nothing to receive, or nothing to send
        return output
    exchange = _index_exchange(axis_name, axis_index_groups)
    entries = input_offsets.shape[0]
    per_member = entries // _group_size(axis_name, axis_index_groups)
    received_at = conversions.convert_element_type(exchange(output_offsets), np.int32)
    covered = _covered(received_at, recv_sizes, rows)
    entry = shapes.broadcasted_iota(np.int32, covered.shape, 0)
    none = shapes.broadcast_in_dim(np.int32(-1), covered.shape, ())
    writer = reductions.reduce_max(selection.select(covered, entry, none), (0,))
    is_writer = comparison.eq(entry, shapes.broadcast_in_dim(writer, covered.shape, (1,)))

    def of_writer(per_entry):  # each row's writer's value of `per_entry` (0 for no writer)
        spread = shapes.broadcast_in_dim(per_entry, covered.shape, (0,))
        zeros = shapes.broadcast_in_dim(np.int32(0), covered.shape, ())
        return reductions.reduce_sum(selection.select(is_writer, spread, zeros), (0,))

    starts = conversions.convert_element_type(exchange(input_offsets), np.int32)
    row = shapes.iota(np.int32, rows)
    in_sender = binary.add(row, of_writer(binary.sub(starts, received_at)))
    in_sender = selection.clamp(np.int32(0), in_sender, np.int32(sent_rows - 1))
    sender = of_writer(np.arange(entries, dtype=np.int32) // np.int32(per_member))
    source_row = binary.add(in_sender, binary.mul(sender, np.int32(sent_rows)))
    gathered = all_gather(operand, axis_name, axis_index_groups=axis_index_groups, tiled=True)
    received = _rows_of(gathered, source_row)
    written = comparison.ge(writer, shapes.broadcast_in_dim(np.int32(0), writer.shape, ()))
    return selection.select(_rows_mask(written, output.shape), received, output)


def _rows_of(x, rows):
    """`x[rows]`: the rows (leading-axis slices) of `x` at the int32 vector `rows`."""
    rank = len(x.shape)
    dnums = gather.GatherDimensionNumbers(
        offset_dims=tuple(range(1, rank)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    indices = shapes.reshape(rows, (rows.shape[0], 1))
    return gather.gather(x, indices, dnums, (1, *x.shape[1:]), mode="clip")


def _ragged_all_to_all_lowering(ctx, *args, **params):
    """The composite, staged with the axes' sizes over every process (those of the program's
    replicas, but for an axis spanning several processes): its collectives lower themselves,
    within one process or across processes."""
    span = ctx.module.process_span
    axis_env = [
        (name, span.size if span is not None and name == span.name else size)
        for name, size in ctx.module.replica_axes
    ]
    closed = trace_to_jaxpr(
        lambda *values: [_ragged_received(*values, **params)],
        ctx.avals_in,
        DebugInfo(None, "ragged_all_to_all"),
        axis_env,
    )
    (out,) = ctx.lower_sub_jaxpr(ctx.block, closed, list(args))
    return out


lowering_rules[ragged_all_to_all_p] = _ragged_all_to_all_lowering


def _ragged_all_to_all_batch(values, dims, **params):
    raise NotImplementedError(
        "[vmap] ragged_all_to_all over a batch dimension that is not a named axis is not built "
        "(JAX 0.10.2 has no such batching rule either); vmap with axis_name= over the axis it "
        "exchanges along works"
    )


batch_rules[ragged_all_to_all_p] = _ragged_all_to_all_batch


def _ragged_all_to_all_collective(trace, *pairs, axis_name, axis_index_groups):
    """Carried out by its composite of collectives under `trace`, whose rules carry those out."""
    values, dims = pairs[0::2], pairs[1::2]
    with set_current_trace(trace):
        tracers = [trace.new_tracer(v, d) for v, d in zip(values, dims, strict=True)]
        avals = [get_aval(t) for t in tracers]  # (the abstract eval's checks)
        _ragged_all_to_all_abstract_eval(
            *avals, axis_name=axis_name, axis_index_groups=axis_index_groups
        )
        out = _ragged_received(*tracers, axis_name=axis_name, axis_index_groups=axis_index_groups)
    return trace.to_batch_info(out)


collective_rules[ragged_all_to_all_p] = _ragged_all_to_all_collective
