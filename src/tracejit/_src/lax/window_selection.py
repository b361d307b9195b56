"""The selections of max and min pooling: `select_and_gather_add`, `select_and_scatter_add`
(the JVP and VJP of `reduce_window_max`/`_min`, as JAX defines them) and the generic
`select_and_scatter` (any selection and scatter computation, as jaxprs).

A window's selection folds its elements with a comparison `select(acc, element)`, keeping the
accumulated element where it holds: with `ge` (max) or `le` (min), the first of equal elements
wins. `select_and_gather_add` (a reduce_window over (operand, tangent) pairs) gives the tangent
of the element so selected, starting from (identity, 0) and skipping holes and padding, as XLA's
reduce_window does; `select_and_scatter_add` adds each window's cotangent to the element XLA's
`select_and_scatter` selects: the window's first element, then each next one where the
comparison fails. JAX pads the operand with the identity for it, so padding can be selected
(and its cotangent dropped) only where every element equals the identity. The two are each
other's transposes; batching adds the batch axis as a window of one element.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_jaxpr, batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr
from tracejit._src.lax import comparison, reductions, shapes, slicing, windows
from tracejit._src.lax.standard import check_dtype, is_int_or_float
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

# select_prim -> (its NumPy comparison, the identity it selects against, its direction)
_SELECT = {
    comparison.ge_p: (np.greater_equal, reductions._lowest, "GE"),
    comparison.le_p: (np.less_equal, reductions._highest, "LE"),
}

# --- select_and_gather_add ------------------------------------------------------------------
select_and_gather_add_p = Primitive("select_and_gather_add")


def _select_and_gather_add_impl(tangents, operand, *, select_prim, **params):
    """Folds each window's (element, tangent) pairs from (identity, 0), skipping holes and
    padding, keeping the accumulated pair where `select_prim(acc, element)` holds."""
    keep_first, identity, _ = _SELECT[select_prim]
    out_shape = windows.reduce_window_shape_tuple(operand.shape, **params)
    fill = identity(operand.dtype)
    value, chosen = np.full(out_shape, fill, operand.dtype), np.zeros(out_shape, tangents.dtype)
    if 0 in out_shape:
        return chosen
    padding, base = params["padding"], params["base_dilation"]
    padded = [
        windows.padded(operand, fill, padding, base),
        windows.padded(tangents, 0, padding, base),
        windows.padded(np.ones(operand.shape, bool), False, padding, base),
    ]
    strides, dilation = params["window_strides"], params["window_dilation"]
    for offset in np.ndindex(*params["window_dimensions"]):
        v, t, valid = (windows.at_offset(p, offset, out_shape, strides, dilation) for p in padded)
        take = valid & ~keep_first(value, v)
        value, chosen = np.where(take, v, value), np.where(take, t, chosen)
    return chosen


@select_and_gather_add_p.def_abstract_eval
def _select_and_gather_add_abstract_eval(tangents, operand, *, select_prim, **params):
    check_dtype("select_and_gather_add", operand, is_int_or_float)
    if tangents.shape != operand.shape:
        raise TypeError(
            "select_and_gather_add tangents and operand shapes must match, got "
            f"{tangents.shape} and {operand.shape}."
        )
    shape = windows.window_shape("select_and_gather_add", operand, **params)
    return ShapedArray(shape, tangents.dtype, tangents.weak_type)


select_and_gather_add_p.def_impl(_select_and_gather_add_impl)
select_and_gather_add_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])
ad.defjvp_linear_in(select_and_gather_add_p, 0)


def _select_and_gather_add_transpose(
    ct,
    tangents,
    operand,
    *,
    select_prim,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    """Each cotangent goes back to the element its window selected (select_and_scatter_add
    over the operand dilated with the identity, then the holes dropped)."""
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
            f"window_dilation={window_dilation}."
        )
    if type(ct) is Zero:
        return [Zero(tangents.aval), None]
    dilated = any(b != 1 for b in base_dilation)
    if dilated:
        fill = np.asarray(_SELECT[select_prim][1](np.dtype(get_aval(operand).dtype)))
        fill = fill.astype(get_aval(operand).dtype)
        operand = shapes.pad(operand, fill, [(0, 0, b - 1) for b in base_dilation])
    out = select_and_scatter_add_p.bind(
        ct,
        operand,
        select_prim=select_prim,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
    )
    if dilated:
        out = slicing.slice(out, (0,) * len(base_dilation), shape_of(out), base_dilation)
    return [out, None]


def _select_and_gather_add_lowering(ctx, tangents, operand, *, select_prim, **params):
    """A variadic reduce_window over (operand, tangents) whose region keeps the pair its
    comparison selects."""
    t_aval, x_aval = ctx.avals_in
    _, identity, direction = _SELECT[select_prim]
    x_type, t_type = hlo.tensor_type((), x_aval.dtype), hlo.tensor_type((), t_aval.dtype)
    region = ctx.block.region([x_type, t_type, x_type, t_type])
    acc_value, acc_tangent, value, tangent = region.args
    keep = region.compare(acc_value, value, direction)
    region.ret(
        [
            region.op1("stablehlo.select", [keep, acc_value, value], x_type),
            region.op1("stablehlo.select", [keep, acc_tangent, tangent], t_type),
        ]
    )
    out_aval = ctx.avals_out[0]
    inits = [
        ctx.constant(identity(np.dtype(x_aval.dtype)), x_aval.dtype),
        ctx.constant(0, t_aval.dtype),
    ]
    _, out = ctx.op_results(
        "stablehlo.reduce_window",
        [operand, tangents, *inits],
        windows.geometry_attributes(**params),
        [region],
        result_avals=[ShapedArray(out_aval.shape, x_aval.dtype), out_aval],
    )
    return out


def _both_batched_rule(primitive: Primitive):
    """For (tangents or source, operand) pairs: both batched at the front, the batch a window
    of one element."""

    def rule(values, dims, **params):
        size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
        values = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
        return primitive.bind(*values, **windows.with_batch_window(params, 0)), 0

    return rule


transpose_rules[select_and_gather_add_p] = _select_and_gather_add_transpose
lowering_rules[select_and_gather_add_p] = _select_and_gather_add_lowering
batch_rules[select_and_gather_add_p] = _both_batched_rule(select_and_gather_add_p)


# --- select_and_scatter_add -----------------------------------------------------------------
select_and_scatter_add_p = Primitive("select_and_scatter_add")


def _selected(keep, values, valid, window_dimensions, window_strides, out_shape):
    """The flat index into `values` (the padded operand) of the element each window selects,
    -1 where it has none: the first `valid` element, replaced by each next valid one (in
    row-major order) where `keep(selected value, element)` fails. `valid` None: every
    position is an element."""
    positions = np.arange(values.size).reshape(values.shape)
    ones = (1,) * values.ndim
    value = np.zeros(out_shape, values.dtype)
    selected = np.full(out_shape, -1)
    for offset in np.ndindex(*window_dimensions):
        v = windows.at_offset(values, offset, out_shape, window_strides, ones)
        take = (selected < 0) | ~keep(value, v)
        if valid is not None:
            take &= windows.at_offset(valid, offset, out_shape, window_strides, ones)
        value = np.where(take, v, value)
        at = windows.at_offset(positions, offset, out_shape, window_strides, ones)
        selected = np.where(take, at, selected)
    return selected


def _select_and_scatter_add_impl(
    source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    """Each source value is added to the element XLA's select_and_scatter selects in its
    window; padding holds the identity and can be selected (then dropped)."""
    keep_first, identity, _ = _SELECT[select_prim]
    padded = windows.padded(operand, identity(operand.dtype), padding)
    out = np.zeros(padded.size, source.dtype)
    if source.size:
        selected = _selected(
            keep_first,
            padded,
            None,
            window_dimensions,
            window_strides,
            source.shape,
        )
        np.add.at(out, selected.ravel(), source.ravel())
    return windows.padded(out.reshape(padded.shape), 0, [(-lo, -hi) for lo, hi in padding])


@select_and_scatter_add_p.def_abstract_eval
def _select_and_scatter_add_abstract_eval(source, operand, *, select_prim, **params):
    check_dtype("select_and_scatter_add", operand, is_int_or_float)
    ndim = len(params["window_dimensions"])
    geometry = dict(params, base_dilation=(1,) * ndim, window_dilation=(1,) * ndim)
    expected = windows.window_shape("select_and_scatter_add", operand, **geometry)
    if source.shape != expected or source.dtype != operand.dtype:
        raise TypeError(
            f"select_and_scatter_add source {source.str_short()} must have the dtype of the "
            f"operand {operand.str_short()} and the shape of its windows, {expected}"
        )
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


select_and_scatter_add_p.def_impl(_select_and_scatter_add_impl)
select_and_scatter_add_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])
ad.defjvp_linear_in(select_and_scatter_add_p, 0)


def _select_and_scatter_add_transpose(
    ct, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    if type(ct) is Zero:
        return [Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    out = select_and_gather_add_p.bind(
        ct,
        operand,
        select_prim=select_prim,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
        base_dilation=ones,
        window_dilation=ones,
    )
    return [out, None]


def _pad_lowering(block, x, value, low, high):
    shape, dtype = hlo.parse_tensor_type(x.type)
    out_shape = [n + lo + hi for n, lo, hi in zip(shape, low, high, strict=True)]
    attributes = {
        "edge_padding_low": hlo.i64_array(low),
        "edge_padding_high": hlo.i64_array(high),
        "interior_padding": hlo.i64_array([0] * len(shape)),
    }
    return block.op1("stablehlo.pad", [x, value], hlo.tensor_type(out_shape, dtype), attributes)


def _select_and_scatter_add_lowering(
    ctx, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    """As JAX: the operand padded with the identity, select_and_scatter without padding,
    the padding cropped off again."""
    s_aval, x_aval = ctx.avals_in
    block = ctx.block
    _, identity, direction = _SELECT[select_prim]
    low, high = [lo for lo, _ in padding], [hi for _, hi in padding]
    padded = any(low) or any(high)
    if padded:
        fill = ctx.constant(identity(np.dtype(x_aval.dtype)), x_aval.dtype)
        operand = _pad_lowering(block, operand, fill, low, high)
    x_type, s_type = hlo.tensor_type((), x_aval.dtype), hlo.tensor_type((), s_aval.dtype)
    select = block.region([x_type, x_type])
    select.ret([select.compare(*select.args, direction)])
    scatter = block.region([s_type, s_type])
    scatter.ret([scatter.op1("stablehlo.add", scatter.args, s_type)])
    shape, _ = hlo.parse_tensor_type(operand.type)
    zeros = ((0, 0),) * len(window_dimensions)
    out = block.op1(
        "stablehlo.select_and_scatter",
        [operand, source, ctx.constant(0, s_aval.dtype)],
        hlo.tensor_type(shape, s_aval.dtype),
        windows.geometry_attributes(window_dimensions, window_strides, zeros),
        [select, scatter],
    )
    if padded:
        zero = ctx.constant(0, s_aval.dtype)
        out = _pad_lowering(block, out, zero, [-lo for lo in low], [-hi for hi in high])
    return out


transpose_rules[select_and_scatter_add_p] = _select_and_scatter_add_transpose
lowering_rules[select_and_scatter_add_p] = _select_and_scatter_add_lowering
batch_rules[select_and_scatter_add_p] = _both_batched_rule(select_and_scatter_add_p)


# --- select_and_scatter ---------------------------------------------------------------------
select_and_scatter_p = Primitive("select_and_scatter")


def select_and_scatter(
    operand, select, window_dimensions, window_strides, padding, source, init_value, scatter
):
    """Scatters each window's `source` value onto the element of `operand` it selects with
    `select(a, b) -> bool` (keep `a`), combined by `scatter(output, value)` into a result of
    `init_value`s. JAX exports the primitive only (`lax.select_and_scatter_p`); this binds it
    as JAX's own internal helper does."""
    scalar = ShapedArray((), get_aval(operand).dtype)
    value = ShapedArray((), get_aval(init_value).dtype)
    select_jaxpr = trace_to_jaxpr(
        lambda a, b: [select(a, b)], [scalar, scalar], DebugInfo(select, "select_and_scatter")
    )
    scatter_jaxpr = trace_to_jaxpr(
        lambda a, b: [scatter(a, b)], [value, value], DebugInfo(scatter, "select_and_scatter")
    )
    return select_and_scatter_p.bind(
        operand,
        source,
        init_value,
        select_jaxpr=select_jaxpr.jaxpr,
        select_consts=tuple(select_jaxpr.consts),
        scatter_jaxpr=scatter_jaxpr.jaxpr,
        scatter_consts=tuple(scatter_jaxpr.consts),
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=windows.padding_pairs(padding, len(window_dimensions)),
    )


@select_and_scatter_p.def_impl
def _select_and_scatter_impl(
    operand,
    source,
    init_value,
    *,
    select_jaxpr,
    select_consts,
    scatter_jaxpr,
    scatter_consts,
    window_dimensions,
    window_strides,
    padding,
):
    """Padding is no element here (XLA's select_and_scatter skips it); each window's elements
    are visited in row-major order, as XLA's CPU backend does without padding. (With padding
    it visits them in an order that depends on which dimensions are padded, which only
    matters where a strict selection meets ties.) Source values reach their elements in
    window order: round r combines each element's r-th value, all elements at once."""
    size = source.size
    out = np.full(operand.size, init_value, source.dtype)
    if not size:
        return out.reshape(operand.shape)
    select = _batched_computation(select_jaxpr, select_consts, size)
    values = windows.padded(operand, np.zeros((), operand.dtype), padding)
    valid = windows.padded(np.ones(operand.shape, bool), False, padding)
    index = windows.padded(np.arange(operand.size).reshape(operand.shape), -1, padding)
    picked = _selected(select, values, valid, window_dimensions, window_strides, source.shape)
    target = np.where(picked >= 0, index.ravel()[picked], -1).ravel()
    order = np.argsort(target, kind="stable")
    starts = np.searchsorted(target[order], target[order])  # first of each equal run
    rank = np.empty(size, np.int64)
    rank[order] = np.arange(size) - starts
    combine = _batched_computation(scatter_jaxpr, scatter_consts, size)
    src, safe = source.ravel(), np.maximum(target, 0)
    for r in range(int(rank[target >= 0].max(initial=-1)) + 1):
        hit = (target >= 0) & (rank == r)
        out[target[hit]] = combine(out[safe], src)[hit]
    return out.reshape(operand.shape)


def _batched_computation(jaxpr, consts, size: int):
    """A computation of two scalars as a NumPy function of two arrays of `size` elements."""
    batched, _ = batch_jaxpr(ClosedJaxpr(jaxpr, list(consts)), size, [0, 0], [True])

    def computation(a, b):
        (out,) = eval_jaxpr_numpy(batched.jaxpr, batched.consts, [a.ravel(), b.ravel()])
        return np.broadcast_to(out, (size,)).reshape(a.shape)

    return computation


@select_and_scatter_p.def_abstract_eval
def _select_and_scatter_abstract_eval(
    operand,
    source,
    init_value,
    *,
    select_jaxpr,
    select_consts,
    scatter_jaxpr,
    scatter_consts,
    window_dimensions,
    window_strides,
    padding,
):
    ndim = len(window_dimensions)
    geometry = {
        "window_dimensions": window_dimensions,
        "window_strides": window_strides,
        "padding": padding,
        "base_dilation": (1,) * ndim,
        "window_dilation": (1,) * ndim,
    }
    expected = windows.window_shape("select_and_scatter", operand, **geometry)
    if source.shape != expected or init_value.shape or source.dtype != init_value.dtype:
        raise TypeError(
            f"select_and_scatter source {source.str_short()} must have the shape of the "
            f"operand's windows {expected} and the dtype of the scalar initial value "
            f"{init_value.str_short()}"
        )
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


select_and_scatter_p.def_weak_type_rule(lambda weak_types, params: weak_types[1])
ad.not_differentiable(select_and_scatter_p, "JAX defines none")


def _select_and_scatter_lowering(
    ctx,
    operand,
    source,
    init_value,
    *,
    select_jaxpr,
    select_consts,
    scatter_jaxpr,
    scatter_consts,
    window_dimensions,
    window_strides,
    padding,
):
    x_aval, s_aval, _ = ctx.avals_in
    regions = []
    for jaxpr, consts, aval in [
        (select_jaxpr, select_consts, x_aval),
        (scatter_jaxpr, scatter_consts, s_aval),
    ]:
        scalar = hlo.tensor_type((), aval.dtype)
        region = ctx.block.region([scalar, scalar])
        region.ret(ctx.lower_sub_jaxpr(region, ClosedJaxpr(jaxpr, list(consts)), region.args))
        regions.append(region)
    return ctx.op(
        "stablehlo.select_and_scatter",
        [operand, source, init_value],
        windows.geometry_attributes(window_dimensions, window_strides, padding),
        regions,
    )


def _select_and_scatter_batch(values, dims, **params):
    if dims[2] is not None:
        raise NotImplementedError("select_and_scatter batching over initial values")
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operand, source = (
        batch_at_front(v, d, size) for v, d in zip(values[:2], dims[:2], strict=True)
    )
    return select_and_scatter_p.bind(
        operand, source, values[2], **windows.with_batch_window(params, 0)
    ), 0


lowering_rules[select_and_scatter_p] = _select_and_scatter_lowering
batch_rules[select_and_scatter_p] = _select_and_scatter_batch
