"""Windowed reductions: `lax.reduce_window` and its primitives.

Each result element reduces the elements of one window of the operand (the geometry, with
dilations and padding, is in `windows.py`):

    lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'VALID')      # 2x2 max pooling
    b:f32[2,3] = reduce_window_max[base_dilation=(1, 1) padding=((0, 0), (0, 0))
        window_dilation=(1, 1) window_dimensions=(2, 2) window_strides=(2, 2)] a

lax.add, lax.max and lax.min from their identity become `reduce_window_sum`, `_max` and `_min`,
as in JAX; any other computation is staged into a jaxpr on scalars and held by the generic
`reduce_window` primitive (params `jaxpr` and `consts`, as JAX prints them), over several
operands at once. Holes and padding are not elements: XLA skips them. For the sum, max and min
that is the same as filling them with the identity; the generic primitive folds each window's
elements into the initial values in row-major order, skipping them, as XLA's CPU backend does
(an initial value that is not the identity counts once per window).

Derivatives, as JAX defines them: reduce_window_sum is linear, its transpose a reduce_window_sum
of the cotangent spread over the padded operand; the tangent of a max (min) window is that of
the element `select_and_gather_add` selects (`window_selection.py`: the first of equal ones);
the generic reduce_window's JVP is a reduce_window of the computation's JVP, which has no
transpose (JAX's neither). Batching adds the batch axis as a window dimension of size 1.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, Tracer, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_jaxpr, batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, eval_jaxpr
from tracejit._src.lax import (
    binary,
    comparison,
    reduce,
    reductions,
    shapes,
    slicing,
    window_selection,
    windows,
)
from tracejit._src.lax.standard import (
    check_dtype,
    is_any,
    is_numeric,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_unflatten


def _window_reduction_impl(reduce_impl, identity):
    """The impl of reduce_window_sum/max/min: holes and padding hold the identity, each window
    reduced by the reduction primitive's impl (its dtype, NaN and signed-zero rules)."""

    def impl(operand, **params):
        out_shape = windows.reduce_window_shape_tuple(operand.shape, **params)
        if 0 in out_shape:
            return np.zeros(out_shape, operand.dtype)
        padded = windows.padded(
            operand, identity(operand.dtype), params["padding"], params["base_dilation"]
        )
        view = windows.window_view(
            padded,
            out_shape,
            params["window_dimensions"],
            params["window_strides"],
            params["window_dilation"],
        )
        return reduce_impl(view, axes=tuple(range(operand.ndim, view.ndim)))

    return impl


def _window_abstract_eval(name: str, accepts):
    def abstract_eval(operand, **params):
        check_dtype(name, operand, accepts)
        return ShapedArray(
            windows.window_shape(name, operand, **params), operand.dtype, operand.weak_type
        )

    return abstract_eval


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
            windows.geometry_attributes(**params),
            [reductions.combiner_region(block, combiner, dtype)],
        )
        return block.convert(out, aval.dtype) if dtype != aval.dtype else out

    return rule


def _zero(dtype):
    return 0


def _window_batch_rule(primitive: Primitive):
    def rule(values, dims, **params):
        (x,), (bdim,) = values, dims
        return primitive.bind(x, **windows.with_batch_window(params, bdim)), bdim

    return rule


# --- reduce_window_sum ----------------------------------------------------------------------
reduce_window_sum_p = Primitive("reduce_window_sum")
reduce_window_sum_p.def_impl(_window_reduction_impl(reductions.reduce_sum_p.impl, _zero))
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
        extent = windows.dilated(w, d) - 1
        padded = windows.dilated(size, b) + lo + hi
        config.append((extent - lo, padded - windows.dilated(n, s) - hi, s - 1))
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
    "stablehlo.add", _zero, accumulate=True
)
batch_rules[reduce_window_sum_p] = _window_batch_rule(reduce_window_sum_p)


# --- reduce_window_max, reduce_window_min -----------------------------------------------------
reduce_window_max_p = Primitive("reduce_window_max")
reduce_window_min_p = Primitive("reduce_window_min")


def _chooser_jvp(select_prim: Primitive):
    """The tangent of the element the window's fold with `select_prim` picks."""

    def tangent(t, operand, **params):
        return window_selection.select_and_gather_add_p.bind(
            t, operand, select_prim=select_prim, **params
        )

    return tangent


reduce_window_max_p.def_impl(
    _window_reduction_impl(reductions.reduce_max_p.impl, reductions._lowest)
)
reduce_window_max_p.def_abstract_eval(_window_abstract_eval("reduce_window_max", is_any))
reduce_window_max_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(reduce_window_max_p, _chooser_jvp(comparison.ge_p))
lowering_rules[reduce_window_max_p] = _lower_window_reduction(
    "stablehlo.maximum", reductions._lowest
)
batch_rules[reduce_window_max_p] = _window_batch_rule(reduce_window_max_p)

reduce_window_min_p.def_impl(
    _window_reduction_impl(reductions.reduce_min_p.impl, reductions._highest)
)
reduce_window_min_p.def_abstract_eval(_window_abstract_eval("reduce_window_min", is_any))
reduce_window_min_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(reduce_window_min_p, _chooser_jvp(comparison.le_p))
lowering_rules[reduce_window_min_p] = _lower_window_reduction(
    "stablehlo.minimum", reductions._highest
)
batch_rules[reduce_window_min_p] = _window_batch_rule(reduce_window_min_p)


# --- reduce_window: any computation ---------------------------------------------------------
reduce_window_p = Primitive("reduce_window", multiple_results=True)

# computation -> (its primitive, its identity for a dtype), where JAX dispatches to one
_MONOIDS = {
    binary.add: (reduce_window_sum_p, _zero),
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
    params = windows.window_params(
        "reduce_window",
        shape_of(flat_operands[0]),
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    monoid = _monoid_primitive(computation, flat_inits)
    if monoid is not None:
        return tree_unflatten(operand_tree, [monoid.bind(flat_operands[0], **params)])
    closed = reduce.staged_computation(
        computation, init_tree, flat_inits, "reduce_window", _structure_error
    )
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


def _structure_error(tree, result_tree) -> ValueError:
    return ValueError(
        "reduce_window output must have the same tree structure as the operands "
        f"{tree} vs. {result_tree}"
    )


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
    shape = windows.window_shape("reduce_window", operands[0], **params)
    return [ShapedArray(shape, x.dtype, x.weak_type) for x in operands]


@reduce_window_p.def_impl
def _reduce_window_impl(*args, jaxpr, consts, **params):
    """Each window folds its elements into the initial values in row-major order, skipping
    holes and padding: the computation batched over all windows, once per window offset."""
    half = len(args) // 2
    operands, inits = args[:half], args[half:]
    shape = operands[0].shape
    out_shape = windows.reduce_window_shape_tuple(shape, **params)
    size = math.prod(out_shape)
    acc = [np.full(size, init, x.dtype) for x, init in zip(operands, inits, strict=True)]
    if size:
        batched, _ = batch_jaxpr(
            ClosedJaxpr(jaxpr, list(consts)), size, [0] * len(args), [True] * half
        )
        padding, base = params["padding"], params["base_dilation"]
        padded = [windows.padded(x, np.zeros((), x.dtype), padding, base) for x in operands]
        valid = windows.padded(np.ones(shape, bool), False, padding, base)
        strides, dilation = params["window_strides"], params["window_dilation"]
        for offset in np.ndindex(*params["window_dimensions"]):
            mask = windows.at_offset(valid, offset, out_shape, strides, dilation).reshape(size)
            if not mask.any():
                continue
            xs = [
                windows.at_offset(p, offset, out_shape, strides, dilation).reshape(size)
                for p in padded
            ]
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
        "stablehlo.reduce_window", list(args), windows.geometry_attributes(**params), [region]
    )


def _reduce_window_batch(values, dims, *, jaxpr, consts, **params):
    half = len(values) // 2
    if any(d is not None for d in dims[half:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values[:half], dims[:half], strict=True)]
    outs = reduce_window_p.bind(
        *operands,
        *values[half:],
        jaxpr=jaxpr,
        consts=consts,
        **windows.with_batch_window(params, 0),
    )
    return outs, [0] * len(outs)


ad.jvp_rules[reduce_window_p] = _reduce_window_jvp
lowering_rules[reduce_window_p] = _reduce_window_lowering
batch_rules[reduce_window_p] = _reduce_window_batch
