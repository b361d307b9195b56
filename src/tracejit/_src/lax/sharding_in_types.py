"""Shardings in types: how each primitive's result is sharded over a mesh's Explicit axes.

On a mesh whose axes are `Explicit` (`jax.make_mesh`'s default), an array's type says how it
is split: `f32[8@i,4]` is split along its first dimension over mesh axis `i`. Tracing keeps
these types through every operation (`sharding_types.apply_sharding_rules` calls the rule of the
primitive, given the operands' types), so that `make_jaxpr` prints them and `jit` lays its
results out as their types say. A rule answers with one `PartitionSpec` per result, as JAX's
rule for that operation does, and raises `ShardingTypeError` where JAX's does: where the
operands' shardings conflict, or where the result's layout would be the user's choice.

    { lambda ; a:f32[8@i,4@j]. let
        b:f32[4@j] = reduce_sum[axes=(0,) out_sharding=None] a
      in (b,) }

The rules live here, one table for the primitives of many families, because they were added
after those families; a primitive not in the table has no rule (an error on sharded operands).
"""

from __future__ import annotations

from tracejit._src import dtypes
from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad
from tracejit._src.lax import (
    barriers,
    binary,
    bitwise,
    comparison,
    conversions,
    convolution,
    cumulative,
    dot,
    elementwise,
    gather,
    reductions,
    scatter,
    selection,
    shapes,
    sharding_constraints,
    slicing,
    sort,
    special,
    stacking,
    trigonometric,
    window_selection,
    windowed_reductions,
)
from tracejit._src.sharding import NamedSharding, PartitionSpec, ShardingTypeError, typed_sharding
from tracejit._src.sharding_types import sharding_rules


def _spec(aval) -> tuple:
    """Per dimension, the Explicit mesh axes splitting it (a tuple, empty: not split)."""
    sharding = aval._sharding
    return tuple(() if sharding is None else sharding.spec.axes_of(d) for d in range(aval.ndim))


def _entries(axes_per_dim) -> PartitionSpec:
    return PartitionSpec(*(axes if axes else None for axes in axes_per_dim))


def _spec_text(axes_per_dim) -> tuple:
    return tuple(_entries(axes_per_dim))


def _type_text(aval, axes_per_dim) -> str:
    """`f32[8@i,4]`: the type of a result of `aval`'s shape and dtype split as given."""
    dims = [
        f"{size}@{axes[0]}"
        if len(axes) == 1
        else f"{size}@({','.join(axes)})"
        if axes
        else str(size)
        for size, axes in zip(aval.shape, axes_per_dim, strict=True)
    ]
    return f"{dtypes.short_dtype_name(aval.dtype)}[{','.join(dims)}]"


def _check_axes_once(name: str, in_avals, out_aval, axes_per_dim) -> None:
    """A mesh axis splits at most one dimension of a value."""
    used = [n for axes in axes_per_dim for n in axes]
    if len(set(used)) != len(used):
        shown = ", ".join(a.str_short() for a in in_avals)
        raise ShardingTypeError(
            f"{name} operation with inputs: {shown} produces an illegally sharded result: "
            f"{_type_text(out_aval, axes_per_dim)}"
        )


def _merge(name: str, operands, out_shape) -> list:
    """Per result dimension, the axes of the operands that are not broadcast along it (rank-0
    operands are broadcast whole); operands split differently along one dimension conflict."""
    merged = []
    for dim, size in enumerate(out_shape):
        found = ()
        for aval in operands:
            if aval.ndim == 0 or aval.shape[dim] != size:
                continue
            axes = _spec(aval)[dim]
            if axes and found and axes != found:
                shown = ", ".join(str(_spec_text(_spec(a))) for a in operands if a.ndim)
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {shown}."
                )
            found = axes or found
        merged.append(found)
    return merged


# --- element-wise -----------------------------------------------------------------------------


def _elementwise_rule(name: str):
    """Every result is split as the operands are (those of rank 0 broadcast whole)."""

    def rule(in_avals, out_avals, **params):
        out_shape = out_avals[0].shape
        for aval in in_avals:
            if aval.ndim not in (0, len(out_shape)):
                raise NotImplementedError(
                    f"{name}: the sharding of operands of ranks {[a.ndim for a in in_avals]} "
                    "is not built yet"
                )
        merged = _entries(_merge(name, in_avals, out_shape))
        return [merged] * len(out_avals)

    return rule


def _primitives_of(module) -> list:
    """The primitives a family module defines (its `*_p` names)."""
    return [v for k, v in vars(module).items() if k.endswith("_p") and isinstance(v, Primitive)]


# These families hold element-wise primitives only (`lax/<family>.py`).
for _family in (elementwise, trigonometric, special, binary, bitwise, comparison, selection):
    for _p in _primitives_of(_family):
        sharding_rules[_p] = _elementwise_rule(_p.name)


def _bitcast_rule(in_avals, out_avals, **params):
    """A wider or narrower element type adds or removes a last dimension, which is whole."""
    spec = _spec(in_avals[0])
    ndim = out_avals[0].ndim
    if ndim > len(spec):
        return [_entries((*spec, ()))]
    if ndim < len(spec) and spec[-1]:
        raise NotImplementedError(
            f"bitcast_convert_type merging the last dimension of {in_avals[0].str_short()}, "
            f"which mesh axes {spec[-1]} split: not built yet"
        )
    return [_entries(spec[:ndim])]


sharding_rules[conversions.bitcast_convert_type_p] = _bitcast_rule
for _p in (
    conversions.convert_element_type_p,
    conversions.reduce_precision_p,
    ad.add_any_p,
    shapes.copy_p,
    shapes.stop_gradient_p,
):
    sharding_rules[_p] = _elementwise_rule(_p.name)


def _each_as_its_operand(in_avals, out_avals, **params):
    return [_entries(_spec(a)) for a in in_avals]


sharding_rules[barriers.optimization_barrier_p] = _each_as_its_operand
sharding_rules[shapes.rev_p] = _each_as_its_operand  # (as JAX: reversed blocks stay split)


def _divisible_rule(what: str, operand_index: int = 0):
    """The result is split as its operand (at `operand_index`), which `what` (slicing,
    windowing) keeps in place: each split dimension's new size must still divide over its
    axes."""

    def rule(in_avals, out_avals, **params):
        operand = in_avals[operand_index]
        shape = operand._sharding.mesh.shape
        for out in out_avals:
            for axes, size in zip(_spec(operand), out.shape, strict=True):
                ways = 1
                for name in axes:
                    ways *= shape[name]
                if size % ways:
                    raise ShardingTypeError(
                        f"{what} on sharded dims where out dim ({size}) is not divisible by "
                        f"mesh axes ({ways}) with spec ({','.join(axes)}) is not implemented. "
                        f"Got input type={operand.str_short()} and output shape={out.shape}"
                    )
        return [_entries(_spec(operand))] * len(out_avals)

    return rule


sharding_rules[slicing.slice_p] = _divisible_rule("slicing")


def _sharding_constraint_rule(in_avals, out_avals, *, sharding, **params):
    """The value takes the sharding asked for over Explicit axes; one of a mesh without
    Explicit axes leaves it unsharded in type (the layout is then XLA's, as in `auto_axes`)."""
    return [typed_sharding(sharding, in_avals[0].ndim)]


def _reshard_rule(in_avals, out_avals, *, dst_sharding):
    return _sharding_constraint_rule(in_avals, out_avals, sharding=dst_sharding)


sharding_rules[sharding_constraints.sharding_constraint_p] = _sharding_constraint_rule
sharding_rules[sharding_constraints.reshard_p] = _reshard_rule


def _pad_rule(in_avals, out_avals, **params):
    return [_entries(_spec(in_avals[0]))]


sharding_rules[shapes.pad_p] = _pad_rule

# --- reductions and scans ---------------------------------------------------------------------


def _reduction_rule(in_avals, out_avals, *, axes, **params):
    """The reduced dimensions go, with their axes (the result is summed over devices)."""
    spec = _spec(in_avals[0])
    return [_entries(a for d, a in enumerate(spec) if d not in axes)] * len(out_avals)


for _p in _primitives_of(reductions):
    sharding_rules[_p] = _reduction_rule


def _along_axis_rule(what: str):
    """Operations along one dimension (cumulative sums, sorting) need it whole on a device."""

    def rule(in_avals, out_avals, **params):
        axis = params["axis"] if "axis" in params else params["dimension"]
        for aval in in_avals:
            if _spec(aval)[axis]:
                raise ShardingTypeError(what.format(aval=aval, axis=axis))
        return [_entries(_spec(in_avals[0]))] * len(out_avals)

    return rule


for _p in _primitives_of(cumulative):
    sharding_rules[_p] = _along_axis_rule(
        "Input should be unsharded over the axis being reduced. Got input type={aval} and "
        "axis={axis}"
    )
sharding_rules[sort.sort_p] = _along_axis_rule(
    "Arguments to sort must be unsharded over the sorting dimension. Got arg "
    "sharding={aval.sharding!r} and sorting dimension={axis}"
)

# --- shapes -----------------------------------------------------------------------------------


def _transpose_rule(in_avals, out_avals, *, permutation):
    spec = _spec(in_avals[0])
    return [_entries(spec[d] for d in permutation)]


sharding_rules[shapes.transpose_p] = _transpose_rule


def _broadcast_in_dim_rule(in_avals, out_avals, *, shape, broadcast_dimensions, **params):
    """Operand dimensions keep their axes where they are not broadcast; new ones are whole."""
    operand = in_avals[0]
    out = [()] * len(shape)
    for d, spec in zip(broadcast_dimensions, _spec(operand), strict=True):
        out[d] = spec if operand.shape[broadcast_dimensions.index(d)] == shape[d] else ()
    return [_entries(out)]


sharding_rules[shapes.broadcast_in_dim_p] = _broadcast_in_dim_rule


def _squeeze_rule(in_avals, out_avals, *, dimensions):
    return [_entries(a for d, a in enumerate(_spec(in_avals[0])) if d not in dimensions)]


sharding_rules[shapes.squeeze_p] = _squeeze_rule


def _concatenate_rule(in_avals, out_avals, *, dimension):
    """Every operand typed on the mesh must be split alike, the concatenated dimension too
    (untyped ones, constants, are laid out to match)."""
    typed = [a for a in in_avals if a._sharding is not None]
    specs = [_spec(a) for a in typed]
    if any(spec != specs[0] for spec in specs):
        shown = ", ".join(repr(NamedSharding(a._sharding.mesh, a._sharding.spec)) for a in typed)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}"
        )
    return [_entries(specs[0])]


sharding_rules[shapes.concatenate_p] = _concatenate_rule


sharding_rules[stacking.split_p] = _divisible_rule("split")


sharding_rules[slicing.dynamic_slice_p] = _divisible_rule("dynamic_slice")


def _reshape_groups(old, new) -> list:
    """The dimensions of `old` and `new` in the smallest groups of equal size, in order (a
    dimension of size 1 alone, where it starts a group)."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1 and (j == len(new) or new[j] != 1):
            groups.append(([i], []))
            i += 1
            continue
        if j < len(new) and new[j] == 1 and (i == len(old) or old[i] != 1):
            groups.append(([], [j]))
            j += 1
            continue
        ins, outs = [i], [j]
        size_in, size_out = old[i], new[j]
        i, j = i + 1, j + 1
        while size_in != size_out:
            if size_in < size_out:
                ins.append(i)
                size_in *= old[i]
                i += 1
            else:
                outs.append(j)
                size_out *= new[j]
                j += 1
        groups.append((ins, outs))
    return groups


def _reshape_rule(in_avals, out_avals, *, new_sizes, dimensions, **params):
    """JAX's cases: dimensions kept as they are keep their axes; dimensions merged into one
    take the axes of a leading run of split ones; one dimension split into several gives its
    axes, in order, to the first new dimensions they divide. Others need the user's sharding."""
    operand = in_avals[0]
    spec = _spec(operand)
    out = [()] * len(new_sizes)
    unsupported = ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        f"`out_sharding` argument of jax.lax.reshape. Got operand type: {operand}, new sizes: "
        f"{tuple(new_sizes)}"
    )
    if dimensions is not None and any(spec):
        raise unsupported
    mesh_shape = operand._sharding.mesh.shape
    for ins, outs in _reshape_groups(operand.shape, tuple(new_sizes)):
        axes = [spec[d] for d in ins]
        if not any(axes) or not outs:
            continue
        if len(outs) == 1:
            split = [k for k, a in enumerate(axes) if a]
            if split != list(range(len(split))):
                raise unsupported
            out[outs[0]] = tuple(n for a in axes for n in a)
        elif len(ins) == 1:
            pending = list(axes[0])
            for d in outs:
                ways = 1
                while pending and new_sizes[d] % (ways * mesh_shape[pending[0]]) == 0:
                    ways *= mesh_shape[pending[0]]
                    out[d] += (pending.pop(0),)
            if pending:
                raise unsupported
        else:
            raise unsupported
    return [_entries(out)]


sharding_rules[shapes.reshape_p] = _reshape_rule

# --- dot_general ------------------------------------------------------------------------------


def _dot_general_rule(in_avals, out_avals, *, dimension_numbers, **params):
    """Batch dimensions keep the axes of either operand, free ones their operand's; split
    contracting dimensions on both sides leave the result's layout to the user."""
    lhs, rhs = in_avals
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = _spec(lhs), _spec(rhs)
    if any(ls[d] for d in lc) and any(rs[d] for d in rc):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
            f"lhs_contracting_spec={tuple(_entries(ls[d] for d in lc))} and "
            f"rhs_contracting_spec={tuple(_entries(rs[d] for d in rc))}"
        )
    batch = []
    for dl, dr in zip(lb, rb, strict=True):
        if ls[dl] and rs[dr] and ls[dl] != rs[dr]:
            raise ShardingTypeError(
                "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {ls[dl]} and {rs[dr]}."
            )
        batch.append(ls[dl] or rs[dr])
    lhs_free = [ls[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    rhs_free = [rs[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    out = batch + lhs_free + rhs_free
    _check_axes_once("dot_general", in_avals, out_avals[0], out)
    return [_entries(out)]


sharding_rules[dot.dot_general_p] = _dot_general_rule


# --- convolutions -----------------------------------------------------------------------------


def _conv_rule(in_avals, out_avals, *, dimension_numbers, **params):
    """The image's batch and spatial dimensions keep their axes (a batch split over devices:
    data parallelism); split features (the image's or the kernel's) need the user's layout."""
    lhs, rhs = in_avals
    lhs_dims, _, out_dims = dimension_numbers
    ls = _spec(lhs)
    if any(_spec(rhs)) or ls[lhs_dims[1]]:
        raise ShardingTypeError(
            "Please specify the output sharding via `out_sharding` parameter of "
            "`conv_general_dilated`"
        )
    out = [()] * out_avals[0].ndim
    out[out_dims[0]] = ls[lhs_dims[0]]
    for lhs_dim, out_dim in zip(lhs_dims[2:], out_dims[2:], strict=True):
        out[out_dim] = ls[lhs_dim]
    return [_entries(out)]


sharding_rules[convolution.conv_general_dilated_p] = _conv_rule


def _dynamic_update_slice_rule(in_avals, out_avals):
    operand, update = in_avals[0], in_avals[1]
    if _spec(operand) != _spec(update):
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {_with_axis_types(operand)} and update sharding "
            f"{_with_axis_types(update)}."
        )
    return [_entries(_spec(operand))]


def _with_axis_types(aval) -> str:
    """`float32[8@i,4]({Explicit: ('i', 'j')})`: a type with its mesh's Explicit axes."""
    mesh = aval.sharding.mesh
    explicit = tuple(
        n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t.name == "Explicit"
    )
    return f"{aval}({{Explicit: {explicit}}})" if explicit else f"{aval}({{}})"


sharding_rules[slicing.dynamic_update_slice_p] = _dynamic_update_slice_rule


sharding_rules[sort.top_k_p] = _along_axis_rule(
    "The input should be unsharded over the axis along which to compute the top_k values. Got "
    "input type={aval} and axis={axis}"
)

# --- windows ----------------------------------------------------------------------------------

for _p in (
    windowed_reductions.reduce_window_sum_p,
    windowed_reductions.reduce_window_max_p,
    windowed_reductions.reduce_window_min_p,
    windowed_reductions.reduce_window_p,
    window_selection.select_and_gather_add_p,
):
    sharding_rules[_p] = _divisible_rule("reduce_window")
# (their results have the operand's shape, the source's windows scattered back onto it)
sharding_rules[window_selection.select_and_scatter_add_p] = _divisible_rule("reduce_window", 1)
sharding_rules[window_selection.select_and_scatter_p] = _divisible_rule("reduce_window")

# --- gather and scatter -----------------------------------------------------------------------


def _indexed_whole(operand, indices, batching, indices_batching, indexed_dims) -> bool:
    """Whether a gather or scatter can work on each device's block alone: the operand's
    indexed dimensions are whole, the index arrays split only along batching dimensions (a
    vmapped gather's), each as its operand's batching dimension is."""
    os_, is_ = _spec(operand), _spec(indices)
    if any(os_[d] for d in indexed_dims):
        return False
    if any(axes for d, axes in enumerate(is_) if d not in indices_batching):
        return False
    return all(os_[o] == is_[i] for o, i in zip(batching, indices_batching, strict=True))


def _gather_rule(in_avals, out_avals, *, dimension_numbers, slice_sizes, **params):
    """Windows keep the operand's axes, index batch dimensions the indices' ones (a vmapped
    gather's batching dimensions); indexing a split dimension would need the user's layout."""
    operand, indices = in_avals
    dn = dimension_numbers
    indexed = [
        d
        for d in range(operand.ndim)
        if d not in dn.operand_batching_dims
        and (
            d in dn.start_index_map
            or d in dn.collapsed_slice_dims
            or slice_sizes[d] != operand.shape[d]
        )
    ]
    if not _indexed_whole(
        operand, indices, dn.operand_batching_dims, dn.start_indices_batching_dims, indexed
    ):
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={operand!r}, indices={indices!r}"
        )
    os_, is_ = _spec(operand), _spec(indices)
    skipped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    windows = iter(os_[d] for d in range(operand.ndim) if d not in skipped)
    batch = iter(is_[:-1])
    out = [next(windows) if d in dn.offset_dims else next(batch) for d in range(out_avals[0].ndim)]
    return [_entries(out)]


sharding_rules[gather.gather_p] = _gather_rule


def _scatter_rule(in_avals, out_avals, *, dimension_numbers, **params):
    """The result is split as the operand, whose scattered-into dimensions must be whole on
    each device (and the indices split along batching dimensions only)."""
    operand, indices = in_avals[0], in_avals[1]
    dn = dimension_numbers
    update_shape = in_avals[2].shape if len(in_avals) > 2 else params["update_shape"]
    windows = [
        d
        for d in range(operand.ndim)
        if d not in dn.inserted_window_dims + dn.operand_batching_dims
    ]
    window_sizes = [update_shape[d] for d in dn.update_window_dims]
    partial = [d for d, size in zip(windows, window_sizes, strict=True) if size != operand.shape[d]]
    indexed = set(dn.inserted_window_dims) | set(dn.scatter_dims_to_operand_dims) | set(partial)
    batching = dn.operand_batching_dims
    if not _indexed_whole(operand, indices, batching, dn.scatter_indices_batching_dims, indexed):
        shown = [f"operand={operand!r}", f"indices={indices!r}"]
        shown += [f"updates={u!r}" for u in in_avals[2:3]]
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
            "the scatter update as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got {', '.join(shown)}"
        )
    return [_entries(_spec(operand))]


for _p in _primitives_of(scatter):
    sharding_rules[_p] = _scatter_rule
