"""Scatters: `updates` windows written into `operand` at many run-time start indices at once.

The mirror of `gather` (see `gather.py`, which holds the dimension numbers, modes and index
arithmetic they share): `update_window_dims`, `inserted_window_dims` and
`scatter_dims_to_operand_dims` play the roles of gather's `offset_dims`, `collapsed_slice_dims`
and `start_index_map`. `scatter-add` adds the windows (its transpose is a gather, gather's
is a scatter-add into zeros), `scatter` writes them, and `scatter-sub`, `scatter-mul`,
`scatter-min` and `scatter-max` combine them by difference, product, minimum and maximum. As in
JAX, `mode=None` means FILL_OR_DROP: an update window that does not fit is dropped.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src.core import Primitive, ShapedArray, Tracer, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_jaxpr,
    batch_rules,
    move_batch_dim,
)
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import binary, comparison, conversions, elementwise, gather, selection
from tracejit._src.lax.standard import static_ints
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules


# --- scatter_add and scatter: shared rules ---------------------------------------------------
def _window_sizes(operand_shape, updates_shape, dn: gather.ScatterDimensionNumbers) -> tuple:
    """The update window's size along each operand dimension (1 where inserted/batching)."""
    sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    skipped = dn.inserted_window_dims + dn.operand_batching_dims
    return tuple(1 if d in skipped else next(sizes) for d in range(len(operand_shape)))


def _scatter_impl(combine):
    def impl(operand, indices, updates, *, dimension_numbers, mode, **_):
        dn = dimension_numbers
        sizes = _window_sizes(operand.shape, updates.shape, dn)
        index, in_bounds, _windows = gather.operand_index(
            operand.shape, indices, dn[1:], sizes, mode
        )
        rank = updates.ndim  # updates to (batch..., window...) order
        batch_dims = [d for d in range(rank) if d not in dn.update_window_dims]
        updates = updates.transpose(batch_dims + list(dn.update_window_dims))
        index = np.broadcast_arrays(*index, updates)[:-1]
        if in_bounds is not None:  # FILL_OR_DROP: updates of windows that do not fit dropped
            keep = np.broadcast_to(
                in_bounds.reshape(in_bounds.shape + (1,) * len(dn.update_window_dims)),
                updates.shape,
            )
            index, updates = tuple(i[keep] for i in index), updates[keep]
        out = operand.copy()
        combine(out, index, updates)
        return out

    return impl


def _scatter_abstract_eval(name):
    def abstract_eval(operand, indices, updates, *, dimension_numbers, **_):
        dn, rank = dimension_numbers, operand.ndim
        if updates.dtype != operand.dtype:
            raise TypeError(
                f"{name}: updates dtype {updates.dtype.name} must be the operand's, "
                f"{operand.dtype.name}"
            )
        gather.check_dims(name, "inserted_window_dims", dn.inserted_window_dims, rank, sorted_=True)
        gather.check_dims(
            name, "operand_batching_dims", dn.operand_batching_dims, rank, sorted_=True
        )
        gather.check_dims(
            name, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, rank
        )
        gather.check_indices(
            name,
            indices,
            len(dn.scatter_dims_to_operand_dims),
            dn.scatter_indices_batching_dims,
            operand,
            dn.operand_batching_dims,
        )
        windows = rank - len(dn.inserted_window_dims) - len(dn.operand_batching_dims)
        if len(dn.update_window_dims) != windows or updates.ndim != indices.ndim - 1 + windows:
            raise TypeError(
                f"{name}: updates of shape {updates.shape} must have the {indices.ndim - 1} "
                f"batch dimensions of the indices (shape {indices.shape}) and {windows} window "
                f"dimensions, named by update_window_dims {dn.update_window_dims}"
            )
        gather.check_dims(name, "update_window_dims", dn.update_window_dims, updates.ndim, True)
        batch = [updates.shape[d] for d in range(updates.ndim) if d not in dn.update_window_dims]
        # (inserted and batching dims have windows of 1, which fit even a dim of size 0)
        sizes = _window_sizes(operand.shape, updates.shape, dn)
        unit = {*dn.inserted_window_dims, *dn.operand_batching_dims}
        if batch != list(indices.shape[:-1]) or any(
            s > n
            for d, (s, n) in enumerate(zip(sizes, operand.shape, strict=True))
            if d not in unit
        ):
            raise TypeError(
                f"{name}: updates of shape {updates.shape} do not fit operand shape "
                f"{operand.shape} and indices shape {indices.shape}"
            )
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type and updates.weak_type)

    return abstract_eval


def _scatter_weak_type(weak_types, params):
    return weak_types[0] and weak_types[2]


def _gather_of_updates(ct, indices, updates_aval, dn: gather.ScatterDimensionNumbers, params):
    """The cotangent of a scatter's updates: the windows of `ct` they went to."""
    gather_dn = gather.GatherDimensionNumbers(*dn)  # the same fields, renamed
    sizes = _window_sizes(ad.get_aval(ct).shape, updates_aval.shape, dn)
    return gather.gather_p.bind(
        ct,
        indices,
        dimension_numbers=gather_dn,
        slice_sizes=sizes,
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
        mode=params["mode"],
        fill_value=0,
    )


def _scatter_batch(primitive):
    """Operand and updates get the batch in front (broadcast if unbatched); then it is a window
    dimension (indices unbatched) or a pair of batching dimensions (indices batched)."""

    def rule(values, dims, *, dimension_numbers, **params):
        (operand, indices, updates), (operand_bd, indices_bd, updates_bd) = values, dims
        size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
        operand = batch_at_front(operand, operand_bd, size)
        updates = batch_at_front(updates, updates_bd, size)
        if indices_bd is not None:
            indices = move_batch_dim(indices, indices_bd, 0)
        new = gather.batched_dnums(dimension_numbers, True, indices_bd is not None)
        out = primitive.bind(operand, indices, updates, dimension_numbers=new, **params)
        return out, 0

    return rule


def _scatter_lowering(combiner):
    """stablehlo.scatter, which drops update windows that do not fit (FILL_OR_DROP); CLIP
    clamps the indices first. `combiner` (None: the update replaces) fills the region."""

    def lowering(ctx, operand, indices, updates, **params):
        scalar = hlo.tensor_type((), ctx.avals_in[0].dtype)
        region = ctx.block.region([scalar, scalar])
        if combiner is None:
            region.ret([region.args[1]])
        else:
            (combined,) = region.op(combiner, region.args, [scalar])
            region.ret([combined])
        return _emit_scatter(ctx, operand, indices, updates, ctx.avals_in[2], region, **params)

    return lowering


def _emit_scatter(
    ctx,
    operand,
    indices,
    updates,
    updates_aval,
    region,
    *,
    dimension_numbers,
    mode,
    indices_are_sorted,
    unique_indices,
    **_,
):
    dn = dimension_numbers
    operand_aval, indices_aval = ctx.avals_in[:2]
    if mode is not gather.GatherScatterMode.FILL_OR_DROP and dn.scatter_dims_to_operand_dims:
        sizes = _window_sizes(operand_aval.shape, updates_aval.shape, dn)
        low, high = gather.index_bounds(ctx.block, indices_aval, operand_aval.shape,
                                  dn.scatter_dims_to_operand_dims, sizes)  # fmt: skip
        idx_type = hlo.tensor_type(indices_aval.shape, indices_aval.dtype)
        indices = ctx.block.op1("stablehlo.clamp", [low, indices, high], idx_type)
    fields = [
        ("update_window_dims", dn.update_window_dims),
        ("inserted_window_dims", dn.inserted_window_dims),
        ("input_batching_dims", dn.operand_batching_dims),
        ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
        ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims),
        ("index_vector_dim", indices_aval.ndim - 1),
    ]
    attributes = {
        "scatter_dimension_numbers": gather.dims_attr("scatter", fields),
        "indices_are_sorted": "true" if indices_are_sorted else "false",
        "unique_indices": "true" if unique_indices else "false",
    }
    return ctx.op("stablehlo.scatter", [operand, indices, updates], attributes, [region])


_COMBINERS = {
    "scatter-add": binary.add,
    "scatter-sub": binary.sub,
    "scatter-mul": binary.mul,
    "scatter-min": binary.min,
    "scatter-max": binary.max,
}


@functools.cache
def _combiner_jaxpr(primitive_name: str, dtype: np.dtype):
    """The scalar function that combines an element with its update, a jaxpr printed as JAX's
    `update_jaxpr` param (None for `scatter`, whose update replaces). One per dtype, so that
    equal params stay equal (eager caches, shared jaxprs in printouts)."""
    combine = _COMBINERS.get(primitive_name)
    if combine is None:
        return None
    scalar = ShapedArray((), dtype)
    return trace_to_jaxpr(
        lambda x, y: [combine(x, y)], [scalar, scalar], DebugInfo(combine, primitive_name)
    ).jaxpr


def _update_params(primitive, operand) -> dict:
    """`update_jaxpr` and `update_consts`, which JAX records on every scatter; the lowering and
    the rules go by the primitive and never read them."""
    dtype = np.dtype(ad.get_aval(operand).dtype)
    return {"update_jaxpr": _combiner_jaxpr(primitive.name, dtype), "update_consts": ()}


def _bind(primitive, operand, indices, updates, **params):
    """`primitive.bind` with the update params of `primitive` and `operand`'s dtype (rules that
    bind one scatter with another's params)."""
    params.update(_update_params(primitive, operand))
    return primitive.bind(operand, indices, updates, **params)


def _scatter_params(name, dimension_numbers, indices_are_sorted, unique_indices, mode) -> dict:
    return {
        "dimension_numbers": gather.canonical_dnums(
            gather.ScatterDimensionNumbers, name, dimension_numbers
        ),
        "indices_are_sorted": bool(indices_are_sorted),
        "unique_indices": bool(unique_indices),
        "mode": gather.GatherScatterMode.from_any(mode),
    }


# --- scatter_add ----------------------------------------------------------------------------
scatter_add_p = Primitive("scatter-add")


def scatter_add(
    operand,
    scatter_indices,
    updates,
    dimension_numbers,
    *,
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
):
    """`operand` with the windows of `updates` added at each index vector (last dimension) of
    `scatter_indices`, as `dimension_numbers` (a `ScatterDimensionNumbers`) lays them out;
    overlapping windows all add. `mode` says what happens to windows that do not fit: dropped
    (FILL_OR_DROP, the default) or moved inside (CLIP)."""
    params = _scatter_params(
        "scatter_add", dimension_numbers, indices_are_sorted, unique_indices, mode
    )
    return _bind(scatter_add_p, operand, scatter_indices, updates, **params)


scatter_add_p.def_impl(_scatter_impl(lambda out, index, updates: np.add.at(out, index, updates)))
scatter_add_p.def_abstract_eval(_scatter_abstract_eval("scatter_add"))
scatter_add_p.def_weak_type_rule(_scatter_weak_type)
ad.defjvp_linear_in(scatter_add_p, 0, 2)  # linear in operand and updates jointly


def _additive_scatter_transpose(negate: bool):
    """The transpose of scatter-add (scatter-sub, `negate`): the operand's cotangent passes
    through; the updates' is the cotangent gathered at their windows (negated)."""

    def transpose(ct, operand, indices, updates, *, dimension_numbers, **params):
        updates_aval = updates.aval if is_undefined_primal(updates) else ad.get_aval(updates)
        ct_operand = ct if is_undefined_primal(operand) else None
        ct_updates = None
        if is_undefined_primal(updates):
            ct_updates = _gather_of_updates(ct, indices, updates_aval, dimension_numbers, params)
            ct_updates = elementwise.neg(ct_updates) if negate else ct_updates
        return [ct_operand, None, ct_updates]

    return transpose


transpose_rules[scatter_add_p] = _additive_scatter_transpose(negate=False)
batch_rules[scatter_add_p] = _scatter_batch(scatter_add_p)
lowering_rules[scatter_add_p] = _scatter_lowering("stablehlo.add")


# --- scatter_sub ----------------------------------------------------------------------------
scatter_sub_p = Primitive("scatter-sub")


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """`operand` with the windows of `updates` subtracted at the index vectors of
    `scatter_indices`, laid out as in `scatter_add`; overlapping windows all subtract."""
    params = _scatter_params("scatter_sub", dimension_numbers, indices_are_sorted,
                             unique_indices, mode)  # fmt: skip
    return _bind(scatter_sub_p, operand, scatter_indices, updates, **params)


scatter_sub_p.def_impl(
    _scatter_impl(lambda out, index, updates: np.subtract.at(out, index, updates))
)
scatter_sub_p.def_abstract_eval(_scatter_abstract_eval("scatter_sub"))
scatter_sub_p.def_weak_type_rule(_scatter_weak_type)
ad.defjvp_linear_in(scatter_sub_p, 0, 2)  # linear in operand and updates jointly


transpose_rules[scatter_sub_p] = _additive_scatter_transpose(negate=True)
batch_rules[scatter_sub_p] = _scatter_batch(scatter_sub_p)
lowering_rules[scatter_sub_p] = _scatter_lowering("stablehlo.subtract")


# --- scatter --------------------------------------------------------------------------------
scatter_p = Primitive("scatter")


def scatter(
    operand,
    scatter_indices,
    updates,
    dimension_numbers,
    *,
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
):
    """`operand` with the windows of `updates` written at each index vector (last dimension) of
    `scatter_indices`, as `dimension_numbers` lays them out. Where windows overlap, which one
    is written is unspecified (XLA's choice), so reverse-mode derivatives need
    `unique_indices=True`. `mode` as for `scatter_add`."""
    params = _scatter_params("scatter", dimension_numbers, indices_are_sorted, unique_indices, mode)
    return _bind(scatter_p, operand, scatter_indices, updates, **params)


def _assign(out, index, updates):
    out[index] = updates


scatter_p.def_impl(_scatter_impl(_assign))
scatter_p.def_abstract_eval(_scatter_abstract_eval("scatter"))
scatter_p.def_weak_type_rule(_scatter_weak_type)


def _scatter_jvp(primals, tangents, *, dimension_numbers, unique_indices, **params):
    """Linear in operand and updates jointly. Where windows overlap, XLA picks which one is
    written; so that the primal and tangent outputs agree on it (and reverse mode can send each
    cotangent to the update that won), a scatter of per-element ids finds the winners first,
    and both outputs become scatter-adds of the winning updates into what they did not
    overwrite."""
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    params = dict(params, dimension_numbers=dimension_numbers, unique_indices=unique_indices)
    if type(t_operand) is ad.Zero and type(t_updates) is ad.Zero:
        out = scatter_p.bind(*primals, **params)
        return out, ad.Zero.from_primal_value(out)
    t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
    if unique_indices:
        tangent_out = scatter_p.bind(t_operand, indices, t_updates, **params)
        return scatter_p.bind(*primals, **params), tangent_out
    updates_aval = ad.get_aval(updates)
    ids = np.arange(1, updates_aval.size + 1, dtype=np.int32).reshape(updates_aval.shape)
    unwritten = np.zeros(ad.get_aval(operand).shape, np.int32)
    winners = _bind(scatter_p, unwritten, indices, ids, **params)
    won = comparison.eq(
        _gather_of_updates(winners, indices, updates_aval, dimension_numbers, params), ids
    )
    kept = comparison.eq(winners, np.int32(0))

    def combine(x, u):
        x_kept = selection.select_n(kept, ad.zeros_like_aval(ad.get_aval(x)), x)
        u_won = selection.select_n(won, ad.zeros_like_aval(ad.get_aval(u)), u)
        return _bind(scatter_add_p, x_kept, indices, u_won, **params)

    return combine(operand, updates), combine(t_operand, t_updates)


ad.jvp_rules[scatter_p] = _scatter_jvp
ad.mark_linear(scatter_p, 0, 2)  # in operand and updates jointly


def _scatter_transpose(ct, operand, indices, updates, *, dimension_numbers, **params):
    """What the updates overwrote gets no cotangent; each update gets its window's (exact
    only when no two windows overlap, hence `unique_indices`)."""
    if not params["unique_indices"]:
        raise NotImplementedError(
            "scatter: transposing (reverse-mode differentiation) is only implemented for "
            "unique_indices=True"
        )
    updates_aval = updates.aval if is_undefined_primal(updates) else ad.get_aval(updates)
    ct_operand = ct_updates = None
    if is_undefined_primal(operand):
        zeros = ad.zeros_like_aval(ad.tangent_aval(updates_aval))
        ct_operand = scatter_p.bind(
            ct, indices, zeros, dimension_numbers=dimension_numbers, **params
        )
    if is_undefined_primal(updates):
        ct_updates = _gather_of_updates(ct, indices, updates_aval, dimension_numbers, params)
    return [ct_operand, None, ct_updates]


transpose_rules[scatter_p] = _scatter_transpose
batch_rules[scatter_p] = _scatter_batch(scatter_p)
lowering_rules[scatter_p] = _scatter_lowering(None)


# --- scatter_apply --------------------------------------------------------------------------
scatter_apply_p = Primitive("scatter_apply")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """`operand` with `func` (a function of one scalar) applied to the elements of its windows
    at the index vectors of `scatter_indices`, windows laid out as those of updates of shape
    `update_shape` in `scatter_add`; an element in k windows gets `func` applied k times, as
    XLA applies it. (JAX stages a `scatter` whose update computation ignores its updates.)"""
    params = _scatter_params("scatter_apply", dimension_numbers, indices_are_sorted,
                             unique_indices, mode)  # fmt: skip
    scalar = ShapedArray((), ad.get_aval(operand).dtype)
    jaxpr = trace_to_jaxpr(lambda x: [func(x)], [scalar], DebugInfo(func, "scatter_apply"))
    if any(isinstance(c, Tracer) for c in jaxpr.consts):
        raise NotImplementedError(
            "scatter_apply: func can't close over Tracers: pass traced values as operands"
        )
    update_shape = static_ints("scatter_apply", "update_shape", update_shape)
    return scatter_apply_p.bind(
        operand, scatter_indices, update_shape=update_shape, func_jaxpr=jaxpr, **params
    )


def _applied_in_rounds(jaxpr):
    """The combine of `_scatter_impl` for scatter_apply: round r applies `func` (batched over
    the whole operand) where an element has more than r windows."""

    def combine(out, index, updates):
        counts = np.zeros(out.shape, np.int64)
        np.add.at(counts, index, 1)
        if not counts.any():
            return
        batched, _ = batch_jaxpr(jaxpr, out.size, [0], [True])
        flat, flat_counts = out.reshape(-1), counts.reshape(-1)
        for r in range(int(flat_counts.max())):
            (applied,) = eval_jaxpr_numpy(batched.jaxpr, batched.consts, [flat])
            flat = np.where(flat_counts > r, applied, flat)
        out[...] = flat.reshape(out.shape)

    return combine


@scatter_apply_p.def_impl
def _scatter_apply_impl(operand, indices, *, update_shape, func_jaxpr, **params):
    updates = np.zeros(update_shape, operand.dtype)
    apply = _scatter_impl(_applied_in_rounds(func_jaxpr))
    return apply(operand, indices, updates, **params)


@scatter_apply_p.def_abstract_eval
def _scatter_apply_abstract_eval(operand, indices, *, update_shape, func_jaxpr, **params):
    out = func_jaxpr.out_avals[0]
    if out.shape or out.dtype != operand.dtype:
        raise TypeError(
            f"scatter_apply: func must map a scalar of {operand.dtype.name} to one, got "
            f"{out.str_short()}"
        )
    updates = ShapedArray(update_shape, operand.dtype, operand.weak_type)
    return _scatter_abstract_eval("scatter_apply")(operand, indices, updates, **params)


scatter_apply_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])
ad.not_differentiable(scatter_apply_p, "JAX defines none: scatter_apply JVP not implemented")


def _scatter_apply_lowering(ctx, operand, indices, *, update_shape, func_jaxpr, **params):
    """stablehlo.scatter of unused zero updates, its region `func` of the operand's element."""
    dtype = ctx.avals_in[0].dtype
    scalar = hlo.tensor_type((), dtype)
    region = ctx.block.region([scalar, scalar])
    region.ret(ctx.lower_sub_jaxpr(region, func_jaxpr, region.args[:1]))
    updates = ctx.block.constant(np.zeros(update_shape, dtype))
    updates_aval = ShapedArray(update_shape, dtype)
    return _emit_scatter(ctx, operand, indices, updates, updates_aval, region, **params)


def _scatter_apply_batch(values, dims, *, update_shape, dimension_numbers, **params):
    """As the other scatters: the batch in front of the operand (and of the unused updates)."""
    (operand, indices), (operand_bd, indices_bd) = values, dims
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operand = batch_at_front(operand, operand_bd, size)
    if indices_bd is not None:
        indices = move_batch_dim(indices, indices_bd, 0)
    new = gather.batched_dnums(dimension_numbers, True, indices_bd is not None)
    out = scatter_apply_p.bind(
        operand, indices, update_shape=(size, *update_shape), dimension_numbers=new, **params
    )
    return out, 0


lowering_rules[scatter_apply_p] = _scatter_apply_lowering
batch_rules[scatter_apply_p] = _scatter_apply_batch


# --- scatter_mul ----------------------------------------------------------------------------
scatter_mul_p = Primitive("scatter-mul")


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """`operand` with its windows at the index vectors of `scatter_indices` multiplied by those
    of `updates`, laid out as in `scatter_add`; overlapping windows all multiply."""
    params = _scatter_params("scatter_mul", dimension_numbers, indices_are_sorted,
                             unique_indices, mode)  # fmt: skip
    return _bind(scatter_mul_p, operand, scatter_indices, updates, **params)


scatter_mul_p.def_impl(
    _scatter_impl(lambda out, index, updates: np.multiply.at(out, index, updates))
)
scatter_mul_p.def_abstract_eval(_scatter_abstract_eval("scatter_mul"))
scatter_mul_p.def_weak_type_rule(_scatter_weak_type)


def _scatter_mul_jvp(primals, tangents, **params):
    """Linear in the operand. In the updates only where each element meets at most one update
    (`unique_indices`): there d(x * u) = x * du, an update's tangent spread by scatter_add
    times the operand. With overlaps JAX raises too."""
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    tangent = ad.Zero.from_primal_value(out)
    if type(t_operand) is not ad.Zero:
        tangent = scatter_mul_p.bind(t_operand, indices, updates, **params)
    if type(t_updates) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        zeros = ad.zeros_like_aval(ad.tangent_aval(ad.get_aval(operand)))
        spread = _bind(scatter_add_p, zeros, indices, t_updates, **params)
        tangent = ad.add_tangents(tangent, binary.mul(operand, spread))
    return out, tangent


ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.mark_linear(scatter_mul_p, 0)  # in the operand


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    """Linear in the operand only: its cotangent is multiplied as the operand was."""
    if is_undefined_primal(updates):
        raise NotImplementedError("scatter_mul is not linear in its updates: cannot transpose")
    ct_operand = scatter_mul_p.bind(ct, indices, updates, **params)
    return [ct_operand if is_undefined_primal(operand) else None, None, None]


transpose_rules[scatter_mul_p] = _scatter_mul_transpose
batch_rules[scatter_mul_p] = _scatter_batch(scatter_mul_p)
lowering_rules[scatter_mul_p] = _scatter_lowering("stablehlo.multiply")


# --- scatter_min and scatter_max: shared rule -----------------------------------------------
def _scatter_extremum_jvp(primitive):
    """The tangent of whichever value won, shared evenly among ties, as in JAX: an element that
    equals its operand value and k of the updates at it gets the mean of their k + 1 tangents
    (the operand's only when no update reached it)."""

    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        out = primitive.bind(operand, indices, updates, **params)
        if all(type(t) is ad.Zero for t in tangents[::2]):
            return out, ad.Zero.from_primal_value(out)
        t_operand, t_updates = (ad.instantiate_zeros(t) for t in tangents[::2])
        dtype = ad.get_aval(t_operand).dtype
        won = _gather_of_updates(out, indices, ad.get_aval(updates),
                                 params["dimension_numbers"], params)  # fmt: skip
        from_operand = conversions.convert_element_type(comparison.eq(operand, out), dtype)
        from_updates = conversions.convert_element_type(comparison.eq(updates, won), dtype)
        zeros = ad.zeros_like_aval(ad.get_aval(t_operand))
        count = binary.add(
            from_operand, _bind(scatter_add_p, zeros, indices, from_updates, **params)
        )
        spread = _bind(scatter_add_p, zeros, indices, binary.mul(t_updates, from_updates), **params)
        return out, binary.div(binary.add(binary.mul(t_operand, from_operand), spread), count)

    return jvp


# --- scatter_min ----------------------------------------------------------------------------
scatter_min_p = Primitive("scatter-min")


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """`operand` with each element of its windows at the index vectors of `scatter_indices`
    replaced by the least of it and the updates at it, laid out as in `scatter_add`."""
    params = _scatter_params("scatter_min", dimension_numbers, indices_are_sorted,
                             unique_indices, mode)  # fmt: skip
    return _bind(scatter_min_p, operand, scatter_indices, updates, **params)


scatter_min_p.def_impl(
    _scatter_impl(lambda out, index, updates: np.minimum.at(out, index, updates))
)
scatter_min_p.def_abstract_eval(_scatter_abstract_eval("scatter_min"))
scatter_min_p.def_weak_type_rule(_scatter_weak_type)
ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
batch_rules[scatter_min_p] = _scatter_batch(scatter_min_p)
lowering_rules[scatter_min_p] = _scatter_lowering("stablehlo.minimum")


# --- scatter_max ----------------------------------------------------------------------------
scatter_max_p = Primitive("scatter-max")


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):  # fmt: skip
    """`operand` with each element of its windows at the index vectors of `scatter_indices`
    replaced by the greatest of it and the updates at it, laid out as in `scatter_add`."""
    params = _scatter_params("scatter_max", dimension_numbers, indices_are_sorted,
                             unique_indices, mode)  # fmt: skip
    return _bind(scatter_max_p, operand, scatter_indices, updates, **params)


scatter_max_p.def_impl(
    _scatter_impl(lambda out, index, updates: np.maximum.at(out, index, updates))
)
scatter_max_p.def_abstract_eval(_scatter_abstract_eval("scatter_max"))
scatter_max_p.def_weak_type_rule(_scatter_weak_type)
ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)
batch_rules[scatter_max_p] = _scatter_batch(scatter_max_p)
lowering_rules[scatter_max_p] = _scatter_lowering("stablehlo.maximum")
