"""Windowed reductions (`lax.reduce_window`) and the selections behind max/min pooling.

A window slides over the operand: each result element reduces the elements its window covers.
The geometry is XLA's: the operand is first dilated (`base_dilation - 1` holes between
neighbours), then padded (`padding`, a (low, high) pair per dimension, negative to crop); a
window of `window_dimensions` elements, `window_dilation` apart, starts every `window_strides`:

    lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'VALID')      # 2x2 max pooling
    b:f32[2,3] = reduce_window_max[base_dilation=(1, 1) padding=((0, 0), (0, 0))
        window_dilation=(1, 1) window_dimensions=(2, 2) window_strides=(2, 2)] a

Holes and padding are not elements: XLA skips them. For the sum, max and min primitives that is
the same as filling them with the monoid's identity; the generic `reduce_window` (any
computation, given as a jaxpr on scalars, over several operands at once) folds each window's
elements into the initial values in row-major order, skipping them, as XLA's CPU backend does
(so even an initial value that is not the identity counts once per window).

Derivatives, as JAX defines them: reduce_window_sum is linear, its transpose a
reduce_window_sum of the cotangent spread over the padded operand. The tangent of a max (min)
window is the tangent of one element: `select_and_gather_add` picks it by folding the window
with `ge` (`le`) from the identity, so ties go to the first element in row-major order. Its
transpose, `select_and_scatter_add`, adds each cotangent to the element that XLA's
`select_and_scatter` selects (the same one; padding counts as the identity there). The generic
reduce_window's JVP is a reduce_window of the computation's JVP; it has no transpose (JAX's
neither). Batching adds the batch axis as a window dimension of size 1.

Eagerly, every reduction runs on strided views of the padded operand, one NumPy operation per
window offset at most, never a loop over result elements.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, Tracer, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_jaxpr, batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, eval_jaxpr
from tracejit._src.lax import binary, comparison, reductions, shapes, slicing
from tracejit._src.lax.standard import (
    check_dtype,
    is_int_or_float,
    is_numeric,
    static_ints,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_unflatten

# --- window geometry ------------------------------------------------------------------------


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The result shape of a windowed reduction: windows that fit in the dilated, padded
    operand (none where the window is larger)."""
    ndim = len(operand_shape)
    base_dilation = (1,) * ndim if base_dilation is None else base_dilation
    window_dilation = (1,) * ndim if window_dilation is None else window_dilation
    padding = _padding_pairs(padding, ndim)
    out = []
    for size, window, stride, (lo, hi), base, dilation in zip(
        operand_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = _dilated(size, base) + lo + hi
        out.append(max(0, (padded - _dilated(window, dilation)) // stride + 1))
    return tuple(out)


def _padding_pairs(padding, ndim: int) -> tuple:
    try:
        pairs = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            f"reduce_window padding must be a sequence of (low, high) integer pairs, got "
            f"{padding!r}"
        ) from None
    if len(pairs) != ndim:
        raise ValueError(
            f"reduce_window got {len(pairs)} padding pairs for an operand of rank {ndim}: {pairs}"
        )
    return pairs


def _string_padding(padding: str, shape, window, strides) -> tuple:
    """'VALID', 'SAME' or 'SAME_LOWER' as pairs: SAME pads so that there is a window for every
    `stride` elements, the odd element after (SAME_LOWER: before)."""
    kind = padding.upper()
    if kind == "VALID":
        return ((0, 0),) * len(shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
        )
    pairs = []
    for size, extent, stride in zip(shape, window, strides, strict=True):
        total = max((-(-size // stride) - 1) * stride + extent - size, 0)
        small, large = total // 2, total - total // 2
        pairs.append((small, large) if kind == "SAME" else (large, small))
    return tuple(pairs)


def _window_params(
    name, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> dict:
    """The params of a windowed reduction from user input: tuples of ints, padding as pairs
    (SAME computed from the operand's undilated shape and the dilated window, as JAX)."""
    ndim = len(window_dimensions)
    window = static_ints(name, "window_dimensions", window_dimensions)
    strides = (1,) * ndim if window_strides is None else window_strides
    strides = static_ints(name, "window_strides", strides)
    base = static_ints(
        name, "base_dilation", (1,) * ndim if base_dilation is None else base_dilation
    )
    dilation = (1,) * ndim if window_dilation is None else window_dilation
    dilation = static_ints(name, "window_dilation", dilation)
    if isinstance(padding, str):
        _check_geometry(name, shape, window, strides, ((0, 0),) * ndim, base, dilation)
        extents = [_dilated(w, d) for w, d in zip(window, dilation, strict=True)]
        padding = _string_padding(padding, shape, extents, strides)
    return {
        "window_dimensions": window,
        "window_strides": strides,
        "padding": _padding_pairs(padding, len(shape)),
        "base_dilation": base,
        "window_dilation": dilation,
    }


def _check_geometry(name, shape, window, strides, padding, base_dilation, window_dilation):
    if len(window) != len(shape):
        raise TypeError(
            f"{name} got the wrong number of window_dimensions for operand: got operand shape "
            f"{tuple(shape)} with window_dimensions {window}."
        )
    for what, values in [
        ("window_strides", strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ]:
        if len(values) != len(window):
            raise TypeError(
                f"{name} got inconsistent {what} and window_dimensions: got {what} {values} "
                f"and window_dimensions {window}."
            )
    if len(padding) != len(window):
        raise ValueError(
            f"{name} got inconsistent padding and window_dimensions: got padding {padding} "
            f"and window_dimensions {window}."
        )
    for what, values in [("window_dimensions", window), ("window_strides", strides)]:
        if any(v <= 0 for v in values):
            raise TypeError(
                f"{name} {what} must have every element be strictly positive, got {values}."
            )
    for values in (base_dilation, window_dilation):
        if any(v <= 0 for v in values):
            raise TypeError(f"All dilations must be positive, got {values}.")


def _window_shape(
    name, aval, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> tuple:
    _check_geometry(
        name,
        aval.shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    return reduce_window_shape_tuple(
        aval.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )


# --- eager windows: strided views of the dilated, padded operand ------------------------------


def _padded(x, fill, padding, base_dilation=None):
    """`x` dilated and padded (negative padding crops), holes and padding set to `fill`."""
    base_dilation = base_dilation or (1,) * x.ndim
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=True))
    return shapes.pad_p.impl(x, np.asarray(fill, x.dtype), padding_config=config)


def _at_offset(padded, offset, out_shape, strides, window_dilation):
    """The element at window position `offset` of every window: a strided view."""
    return padded[
        tuple(
            slice(k * d, k * d + (n - 1) * s + 1, s)
            for k, n, s, d in zip(offset, out_shape, strides, window_dilation, strict=True)
        )
    ]


def _windows(padded, out_shape, window_dimensions, strides, window_dilation):
    """A view of shape `out_shape + window_dimensions`: every window's elements."""
    extents = tuple(_dilated(w, d) for w, d in zip(window_dimensions, window_dilation, strict=True))
    view = sliding_window_view(padded, extents)
    index = tuple(slice(0, (n - 1) * s + 1, s) for n, s in zip(out_shape, strides, strict=True))
    return view[index + tuple(slice(None, None, d) for d in window_dilation)]


def _window_reduction_impl(reduce_impl, identity):
    """The impl of reduce_window_sum/max/min: holes and padding hold the identity, each window
    reduced by the reduction primitive's impl (its dtype, NaN and signed-zero rules)."""

    def impl(operand, **params):
        out_shape = reduce_window_shape_tuple(operand.shape, **params)
        if 0 in out_shape:
            return np.zeros(out_shape, operand.dtype)
        padded = _padded(
            operand, identity(operand.dtype), params["padding"], params["base_dilation"]
        )
        windows = _windows(
            padded,
            out_shape,
            params["window_dimensions"],
            params["window_strides"],
            params["window_dilation"],
        )
        return reduce_impl(windows, axes=tuple(range(operand.ndim, windows.ndim)))

    return impl


def _window_abstract_eval(name: str, accepts):
    def abstract_eval(operand, **params):
        check_dtype(name, operand, accepts)
        return ShapedArray(_window_shape(name, operand, **params), operand.dtype, operand.weak_type)

    return abstract_eval


def _geometry_attributes(
    window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
) -> dict:
    attributes = {
        "window_dimensions": hlo.i64_array(window_dimensions),
        "window_strides": hlo.i64_array(window_strides),
    }
    if base_dilation is not None:
        attributes["base_dilations"] = hlo.i64_array(base_dilation)
        attributes["window_dilations"] = hlo.i64_array(window_dilation)
    attributes["padding"] = hlo.dense_attribute(np.array(padding, np.int64).reshape(-1, 2))
    return attributes


def _lower_window_reduction(combiner: str, identity, accumulate: bool = False):
    """`stablehlo.reduce_window` with the combiner's region (NaN and signed-zero rules as
    reductions'); `accumulate`: float16/bfloat16 summed in float32 and rounded once."""

    def rule(ctx, x, **params):
        aval, out_aval = ctx.avals_in[0], ctx.avals_out[0]
        dtype = reductions.accumulation_dtype(aval.dtype) if accumulate else aval.dtype
        block = ctx.block
        if dtype != aval.dtype:
            x = block.convert(x, dtype)
        init = reductions.chooser_init(combiner, identity(np.dtype(dtype)), dtype)
        out = block.op1(
            "stablehlo.reduce_window",
            [x, ctx.constant(init, dtype)],
            hlo.tensor_type(out_aval.shape, dtype),
            _geometry_attributes(**params),
            [reductions.combiner_region(block, combiner, dtype)],
        )
        return block.convert(out, aval.dtype) if dtype != aval.dtype else out

    return rule


def _with_batch_window(params: dict, bdim: int) -> dict:
    """The params with the batch axis inserted at `bdim` as a window of one element."""
    out = dict(params)
    for key, value in [
        ("window_dimensions", 1),
        ("window_strides", 1),
        ("padding", (0, 0)),
        ("base_dilation", 1),
        ("window_dilation", 1),
    ]:
        if key in params:
            out[key] = params[key][:bdim] + (value,) + params[key][bdim:]
    return out


def _window_batch_rule(primitive: Primitive):
    def rule(values, dims, **params):
        (x,), (bdim,) = values, dims
        return primitive.bind(x, **_with_batch_window(params, bdim)), bdim

    return rule


# --- reduce_window_sum ----------------------------------------------------------------------
reduce_window_sum_p = Primitive("reduce_window_sum")


def _reduce_window_sum(operand, **params):
    return reduce_window_sum_p.bind(operand, **params)


reduce_window_sum_p.def_impl(
    _window_reduction_impl(reductions.reduce_sum_p.impl, reductions.additive_identity)
)
reduce_window_sum_p.def_abstract_eval(_window_abstract_eval("reduce_window_sum", is_numeric))
reduce_window_sum_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(reduce_window_sum_p)


def _reduce_window_sum_transpose(
    ct, operand, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Each padded-operand position p receives the cotangents of the windows covering it,
    the o with o * stride + k * dilation = p: a window sum (of the same window) over the
    cotangent spread `stride` apart and padded by the window's extent, cropped to the operand
    and taken every `base_dilation` elements."""
    aval = operand.aval
    if type(ct) is Zero:
        return [Zero(aval)]
    out_shape = shape_of(ct)
    config = []
    for size, n, w, s, (lo, hi), b, d in zip(
        aval.shape,
        out_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        extent = _dilated(w, d) - 1
        padded = _dilated(size, b) + lo + hi
        config.append((extent - lo, padded - _dilated(n, s) - hi, s - 1))
    ndim = len(out_shape)
    spread = shapes.pad(ct, np.zeros((), aval.dtype), config)
    summed = reduce_window_sum_p.bind(
        spread,
        window_dimensions=window_dimensions,
        window_strides=(1,) * ndim,
        padding=((0, 0),) * ndim,
        base_dilation=(1,) * ndim,
        window_dilation=window_dilation,
    )
    if any(b != 1 for b in base_dilation):
        summed = slicing.slice(summed, (0,) * ndim, shape_of(summed), base_dilation)
    return [summed]


transpose_rules[reduce_window_sum_p] = _reduce_window_sum_transpose
lowering_rules[reduce_window_sum_p] = _lower_window_reduction(
    "stablehlo.add", lambda dtype: 0, accumulate=True
)
batch_rules[reduce_window_sum_p] = _window_batch_rule(reduce_window_sum_p)


# --- reduce_window_max, reduce_window_min -----------------------------------------------------
reduce_window_max_p = Primitive("reduce_window_max")
reduce_window_min_p = Primitive("reduce_window_min")


def _chooser_jvp(select_prim: Primitive):
    """The tangent of the element the window's fold with `select_prim` picks."""

    def tangent(t, operand, **params):
        return select_and_gather_add_p.bind(t, operand, select_prim=select_prim, **params)

    return tangent


reduce_window_max_p.def_impl(
    _window_reduction_impl(reductions.reduce_max_p.impl, reductions._lowest)
)
reduce_window_max_p.def_abstract_eval(_window_abstract_eval("reduce_window_max", is_numeric))
reduce_window_max_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(reduce_window_max_p, _chooser_jvp(comparison.ge_p))
lowering_rules[reduce_window_max_p] = _lower_window_reduction(
    "stablehlo.maximum", reductions._lowest
)
batch_rules[reduce_window_max_p] = _window_batch_rule(reduce_window_max_p)

reduce_window_min_p.def_impl(
    _window_reduction_impl(reductions.reduce_min_p.impl, reductions._highest)
)
reduce_window_min_p.def_abstract_eval(_window_abstract_eval("reduce_window_min", is_numeric))
reduce_window_min_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(reduce_window_min_p, _chooser_jvp(comparison.le_p))
lowering_rules[reduce_window_min_p] = _lower_window_reduction(
    "stablehlo.minimum", reductions._highest
)
batch_rules[reduce_window_min_p] = _window_batch_rule(reduce_window_min_p)


# --- select_and_gather_add ------------------------------------------------------------------
# The selections of max (`ge`) and min (`le`) pooling: a window's fold keeps its accumulated
# element where `select(acc, element)` holds, so the first of equal elements wins.
_SELECT = {comparison.ge_p: (np.greater_equal, reductions._lowest, "GE")}
_SELECT[comparison.le_p] = (np.less_equal, reductions._highest, "LE")

select_and_gather_add_p = Primitive("select_and_gather_add")


def _select_and_gather_add_impl(tangents, operand, *, select_prim, **params):
    """Folds each window's (element, tangent) pairs from (identity, 0), skipping holes and
    padding, keeping the accumulated pair where `select_prim(acc, element)` holds."""
    keep_first, identity, _ = _SELECT[select_prim]
    out_shape = reduce_window_shape_tuple(operand.shape, **params)
    fill = identity(operand.dtype)
    value, chosen = np.full(out_shape, fill, operand.dtype), np.zeros(out_shape, tangents.dtype)
    if 0 in out_shape:
        return chosen
    padding, base = params["padding"], params["base_dilation"]
    padded = [
        _padded(operand, fill, padding, base),
        _padded(tangents, 0, padding, base),
        _padded(np.ones(operand.shape, bool), False, padding, base),
    ]
    strides, dilation = params["window_strides"], params["window_dilation"]
    for offset in np.ndindex(*params["window_dimensions"]):
        v, t, valid = (_at_offset(p, offset, out_shape, strides, dilation) for p in padded)
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
    shape = _window_shape("select_and_gather_add", operand, **params)
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
        _geometry_attributes(**params),
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
        return primitive.bind(*values, **_with_batch_window(params, 0)), 0

    return rule


transpose_rules[select_and_gather_add_p] = _select_and_gather_add_transpose
lowering_rules[select_and_gather_add_p] = _select_and_gather_add_lowering
batch_rules[select_and_gather_add_p] = _both_batched_rule(select_and_gather_add_p)


# --- select_and_scatter_add -----------------------------------------------------------------
select_and_scatter_add_p = Primitive("select_and_scatter_add")


def _select_and_scatter_add_impl(
    source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    """Each source value is added to the element XLA's select_and_scatter selects in its
    window: the first element, replaced by each next one for which `select_prim(selected,
    element)` fails; padding holds the identity and can be selected (then dropped)."""
    keep_first, identity, _ = _SELECT[select_prim]
    padded = _padded(operand, identity(operand.dtype), padding)
    out = np.zeros(padded.size, source.dtype)
    if source.size:
        positions = np.arange(padded.size).reshape(padded.shape)
        ones = (1,) * operand.ndim
        offsets = np.ndindex(*window_dimensions)
        first = next(offsets)
        value = _at_offset(padded, first, source.shape, window_strides, ones)
        selected = _at_offset(positions, first, source.shape, window_strides, ones)
        for offset in offsets:
            v = _at_offset(padded, offset, source.shape, window_strides, ones)
            take = ~keep_first(value, v)
            value = np.where(take, v, value)
            selected = np.where(
                take, _at_offset(positions, offset, source.shape, window_strides, ones), selected
            )
        np.add.at(out, selected.ravel(), source.ravel())
    return _padded(out.reshape(padded.shape), 0, [(-lo, -hi) for lo, hi in padding])


@select_and_scatter_add_p.def_abstract_eval
def _select_and_scatter_add_abstract_eval(source, operand, *, select_prim, **params):
    check_dtype("select_and_scatter_add", operand, is_int_or_float)
    ndim = len(params["window_dimensions"])
    geometry = dict(params, base_dilation=(1,) * ndim, window_dilation=(1,) * ndim)
    expected = _window_shape("select_and_scatter_add", operand, **geometry)
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
        _geometry_attributes(window_dimensions, window_strides, zeros),
        [select, scatter],
    )
    if padded:
        zero = ctx.constant(0, s_aval.dtype)
        out = _pad_lowering(block, out, zero, [-lo for lo in low], [-hi for hi in high])
    return out


transpose_rules[select_and_scatter_add_p] = _select_and_scatter_add_transpose
lowering_rules[select_and_scatter_add_p] = _select_and_scatter_add_lowering
batch_rules[select_and_scatter_add_p] = _both_batched_rule(select_and_scatter_add_p)


# --- reduce_window: any computation ---------------------------------------------------------
reduce_window_p = Primitive("reduce_window", multiple_results=True)

# computation -> (its primitive, its identity for a dtype), where JAX dispatches to one
_MONOIDS = {
    binary.add: (reduce_window_sum_p, lambda dtype: 0),
    binary.max: (reduce_window_max_p, reductions._lowest),
    binary.min: (reduce_window_min_p, reductions._highest),
}


def reduce_window(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides=None,
    padding="VALID",
    base_dilation=None,
    window_dilation=None,
):
    """Reduces each window of `operand` (an array or a pytree of arrays of one shape) with
    `computation`, a function of two pytrees like `init_value` (scalars) returning one, from
    `init_value`. `padding` is 'VALID', 'SAME', 'SAME_LOWER' or a (low, high) pair per
    dimension. lax.add, lax.max and lax.min from their identity become reduce_window_sum,
    _max and _min, as in JAX."""
    flat_operands, operand_tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if operand_tree != init_tree:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{operand_tree} vs. {init_tree}"
        )
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values")
    params = _window_params(
        "reduce_window",
        shape_of(flat_operands[0]),
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    monoid = _monoid_primitive(computation, flat_inits)
    if monoid is not None and len(flat_operands) == 1:
        return tree_unflatten(operand_tree, [monoid.bind(flat_operands[0], **params)])
    closed = _staged_computation(computation, init_tree, flat_inits)
    outs = reduce_window_p.bind(
        *flat_operands, *flat_inits, jaxpr=closed.jaxpr, consts=tuple(closed.consts), **params
    )
    return tree_unflatten(operand_tree, outs)


def _monoid_primitive(computation, flat_inits):
    """reduce_window_sum/max/min when `computation` is lax.add/max/min and the one initial
    value is concretely its identity (in the initial value's dtype, as JAX checks it)."""
    if len(flat_inits) != 1 or computation not in _MONOIDS:
        return None
    (init,) = flat_inits
    if isinstance(init, Tracer) or np.shape(init) != ():
        return None
    primitive, identity = _MONOIDS[computation]
    same = np.equal(np.asarray(init), identity(np.dtype(dtypes.dtype_of(init))))
    return primitive if same else None


def _staged_computation(computation, tree, flat_inits) -> ClosedJaxpr:
    avals = [get_aval(init).strip_weak_type() for init in flat_inits]
    out_trees = []

    def flat_computation(*args):
        half = len(args) // 2
        out = computation(tree_unflatten(tree, args[:half]), tree_unflatten(tree, args[half:]))
        leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return leaves

    closed = trace_to_jaxpr(
        flat_computation, avals + avals, DebugInfo(computation, "reduce_window")
    )
    if out_trees[0] != tree:
        raise ValueError(
            "reduce_window output must have the same tree structure as the operands "
            f"{tree} vs. {out_trees[0]}"
        )
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers: pass the traced values as "
            "operands instead"
        )
    return closed


@reduce_window_p.def_abstract_eval
def _reduce_window_abstract_eval(*args, jaxpr, consts, **params):
    half = len(args) // 2
    operands, inits = args[:half], args[half:]
    if any(x.shape != operands[0].shape for x in operands):
        got = ", ".join(str(x.shape) for x in operands)
        raise ValueError(f"reduce_window operands must all have the same shape, got {got}")
    if any(init.shape for init in inits):
        raise TypeError(
            "reduce_window expected init_values to be scalars but init_values have shapes "
            f"{[init.shape for init in inits]}."
        )
    if any(x.dtype != init.dtype for x, init in zip(operands, inits, strict=True)):
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and init_values: got operand "
            f"dtypes {[x.dtype for x in operands]} and init_value dtypes "
            f"{[init.dtype for init in inits]}."
        )
    outs = jaxpr.out_avals
    if [(o.shape, o.dtype) for o in outs] != [((), x.dtype) for x in operands]:
        raise TypeError(
            f"reduce_window computation must return scalars of the operands' dtypes "
            f"{[x.dtype for x in operands]}, got {[o.str_short() for o in outs]}"
        )
    shape = _window_shape("reduce_window", operands[0], **params)
    return [ShapedArray(shape, x.dtype, x.weak_type) for x in operands]


@reduce_window_p.def_impl
def _reduce_window_impl(*args, jaxpr, consts, **params):
    """Each window folds its elements into the initial values in row-major order, skipping
    holes and padding: the computation batched over all windows, once per window offset."""
    half = len(args) // 2
    operands, inits = args[:half], args[half:]
    shape = operands[0].shape
    out_shape = reduce_window_shape_tuple(shape, **params)
    size = math.prod(out_shape)
    acc = [np.full(size, init, x.dtype) for x, init in zip(operands, inits, strict=True)]
    if size:
        batched, _ = batch_jaxpr(
            ClosedJaxpr(jaxpr, list(consts)), size, [0] * len(args), [True] * half
        )
        padding, base = params["padding"], params["base_dilation"]
        padded = [_padded(x, np.zeros((), x.dtype), padding, base) for x in operands]
        valid = _padded(np.ones(shape, bool), False, padding, base)
        strides, dilation = params["window_strides"], params["window_dilation"]
        for offset in np.ndindex(*params["window_dimensions"]):
            mask = _at_offset(valid, offset, out_shape, strides, dilation).reshape(size)
            if not mask.any():
                continue
            xs = [_at_offset(p, offset, out_shape, strides, dilation).reshape(size) for p in padded]
            new = eval_jaxpr_numpy(batched.jaxpr, batched.consts, [*acc, *xs])
            acc = [np.where(mask, n, a).astype(a.dtype) for n, a in zip(new, acc, strict=True)]
    return [a.reshape(out_shape) for a in acc]


def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, **params):
    """A reduce_window of the computation's JVP over (operands, tangents of the inexact
    ones), the tangents starting from zero (JAX's rule: it has no transpose)."""
    half = len(primals) // 2
    operands, inits = primals[:half], primals[half:]
    if any(type(t) is not Zero for t in tangents[half:]):
        raise NotImplementedError("reduce_window jvp does not support non-zero init_value tangents")
    if all(type(t) is Zero for t in tangents[:half]):
        outs = reduce_window_p.bind(*primals, jaxpr=jaxpr, consts=consts, **params)
        return outs, [Zero.from_primal_value(o) for o in outs]
    inexact = [i for i, x in enumerate(operands) if dtypes.is_inexact(get_aval(x).dtype)]
    jvp = _jvp_computation(ClosedJaxpr(jaxpr, list(consts)), half, inexact)
    outs = reduce_window_p.bind(
        *operands,
        *(ad.instantiate_zeros(tangents[i]) for i in inexact),
        *inits,
        *(np.zeros((), get_aval(operands[i]).dtype) for i in inexact),
        jaxpr=jvp.jaxpr,
        consts=tuple(jvp.consts),
        **params,
    )
    primals_out, tangents_out = outs[:half], iter(outs[half:])
    return primals_out, [
        next(tangents_out) if i in inexact else Zero.from_primal_value(o)
        for i, o in enumerate(primals_out)
    ]


def _jvp_computation(closed: ClosedJaxpr, k: int, inexact: list) -> ClosedJaxpr:
    """The JVP of a k-operand computation as a computation of (operands, their tangents): its
    arguments (acc, acc tangents, element, element tangents), tangents of `inexact` only."""
    avals = closed.in_avals[:k]
    n = len(inexact)

    def with_zeros(tangents):
        full = [Zero(ad.tangent_aval(a)) for a in avals]
        for i, t in zip(inexact, tangents, strict=True):
            full[i] = t
        return full

    def jvp_computation(*args):
        acc, acc_t, x, x_t = args[:k], args[k : k + n], args[k + n : 2 * k + n], args[2 * k + n :]
        outs, outs_t = ad.jvp_flat(
            lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a),
            [*acc, *x],
            [*with_zeros(acc_t), *with_zeros(x_t)],
        )
        return [*outs, *(ad.instantiate_zeros(outs_t[i]) for i in inexact)]

    t_avals = [ad.tangent_aval(avals[i]) for i in inexact]
    in_avals = [*avals, *t_avals, *avals, *t_avals]
    return trace_to_jaxpr(jvp_computation, in_avals, DebugInfo(jvp_computation, "jvp"))


def _reduce_window_lowering(ctx, *args, jaxpr, consts, **params):
    half = len(args) // 2
    scalars = [hlo.tensor_type((), aval.dtype) for aval in ctx.avals_in[half:]]
    region = ctx.block.region(scalars + scalars)
    region.ret(ctx.lower_sub_jaxpr(region, ClosedJaxpr(jaxpr, list(consts)), region.args))
    return ctx.op_results(
        "stablehlo.reduce_window", list(args), _geometry_attributes(**params), [region]
    )


def _reduce_window_batch(values, dims, *, jaxpr, consts, **params):
    half = len(values) // 2
    if any(d is not None for d in dims[half:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values[:half], dims[:half], strict=True)]
    outs = reduce_window_p.bind(
        *operands, *values[half:], jaxpr=jaxpr, consts=consts, **_with_batch_window(params, 0)
    )
    return outs, [0] * len(outs)


def _reduce_window_weak_types(weak_types, params):
    return all(weak_types[: len(weak_types) // 2])


reduce_window_p.def_weak_type_rule(_reduce_window_weak_types)
ad.jvp_rules[reduce_window_p] = _reduce_window_jvp
lowering_rules[reduce_window_p] = _reduce_window_lowering
batch_rules[reduce_window_p] = _reduce_window_batch
