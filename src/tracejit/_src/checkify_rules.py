"""What `checkify` does at each primitive: the automatic checks, and the error carried through
the primitives with bodies.

Automatic checks are computed from an equation's operands and results on the current trace,
beside the primitive, and merged into the error when their category is enabled:

- `nan_checks`: a floating result of one of the primitives JAX lists (floating math, not data
  movement) holding a NaN, as `reduce_or(ne(y, y))`;
- `div_checks`: a `div` whose divisor holds a zero;
- `index_checks`: a `gather` or scatter (in any mode, as JAX), `dynamic_slice` or `dynamic_update_slice` whose window start leaves the operand; the payload
  is the first such index (row-major), its operand axis and that axis' size. Under checkify
  these are caught eagerly too: the checks run on whatever trace is current.

Primitives with bodies (`checkify_rules`) carry the error as extra leading inputs and outputs of
their bodies: `jit` and `remat2` once, every branch of `cond`, the carry of `scan`, and the
carry of `while`, whose body also runs the predicate's checks on the new carry (the predicate
itself returns only a bool), after they ran once on the initial carry. Custom-derivative calls
whose bodies check something carry it too, keeping their rules. A `shard_map` (and `pmap`,
which is one) is checked in its global form, the body under a `vmap` per mesh axis on one
device, each device's blocks from the error so far: the error comes out stacked over the
devices, as JAX's, which reports the failure of each (`at mapped index 1: ...`).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import core, dtypes, shard_map
from tracejit._src.api_util import ShapeDtypeStruct
from tracejit._src.checkify import (
    Checkify,
    DivisionByZeroError,
    ErrorEffect,
    NaNError,
    OOBError,
    automatic_checks_of,
    checkify_rules,
    error_leaves,
    eval_checked,
    settled,
    stage_checked,
    unflatten_error,
)
from tracejit._src.checkpoint import remat_p
from tracejit._src.custom_derivatives import (
    CustomJVPCall,
    CustomVJPCall,
    custom_jvp_call_p,
    custom_vjp_call_p,
)
from tracejit._src.interpreters.ad import Zero
from tracejit._src.jit import jit_p
from tracejit._src.lax import (
    binary,
    bitwise,
    comparison,
    conversions,
    reductions,
    shapes,
    slicing,
)
from tracejit._src.lax.control_flow.common import reorder_jaxpr
from tracejit._src.lax.control_flow.conditionals import cond_p
from tracejit._src.lax.control_flow.loops import while_p
from tracejit._src.lax.control_flow.scan import scan_p
from tracejit._src.tree_util import tree_flatten, tree_map
from tracejit._src.vmap import vmap

# --------------------------------------------------------------------------------------------
# nan_checks

# The primitives whose NaN results JAX's checkify reports (by name; those tracejit lacks yet
# are checked once they exist).
NAN_PRIMITIVES = frozenset(
    [
        "acos",
        "acosh",
        "add",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "bessel_i0e",
        "bessel_i1e",
        "cbrt",
        "conv_general_dilated",
        "cos",
        "cosh",
        "cumlogsumexp",
        "cummax",
        "cummin",
        "cumprod",
        "cumsum",
        "digamma",
        "div",
        "dot_general",
        "erf",
        "erf_inv",
        "erfc",
        "exp",
        "expm1",
        "fft",
        "igamma",
        "igamma_grad_a",
        "igammac",
        "integer_pow",
        "lgamma",
        "linear_solve",
        "log",
        "log1p",
        "logistic",
        "mul",
        "pad",
        "pow",
        "reduce",
        "reduce_prod",
        "reduce_sum",
        "reduce_window",
        "reduce_window_sum",
        "regularized_incomplete_beta",
        "rem",
        "rng_uniform",
        "rsqrt",
        "sin",
        "sinh",
        "sqrt",
        "sub",
        "tan",
        "tanh",
    ]
)


def _where(eqn) -> str:
    return str(eqn.source_info or "<unknown location>")


def _any(x):
    return reductions.reduce_or(x, tuple(range(len(core.shape_of(x)))))


def _nan_check(ctx: Checkify, eqn, error, values, outs):
    if NaNError not in ctx.enabled:
        return error
    for out in outs:
        if dtypes.is_inexact(core.get_aval(out).dtype):
            pred = _any(conversions.convert_element_type(comparison.ne(out, out), np.bool_))
            exception = NaNError(_where(eqn), eqn.primitive.name)
            code = ctx.code(eqn, NaNError)
            error = ctx.add(error, ErrorEffect(NaNError, ()), pred, code, [], exception)
    return error


def _div_check(ctx: Checkify, eqn, error, values, outs):
    if DivisionByZeroError in ctx.enabled:
        divisor = values[1]
        zero = np.zeros((), core.get_aval(divisor).dtype)
        pred = _any(comparison.eq(divisor, zero))
        exception = DivisionByZeroError(_where(eqn))
        code = ctx.code(eqn, DivisionByZeroError)
        error = ctx.add(error, ErrorEffect(DivisionByZeroError, ()), pred, code, [], exception)
    return _nan_check(ctx, eqn, error, values, outs)


for _name in NAN_PRIMITIVES:
    automatic_checks_of[_name] = _nan_check
automatic_checks_of["div"] = _div_check


# --------------------------------------------------------------------------------------------
# index_checks

_OOB_EFFECT = ErrorEffect(OOBError, (ShapeDtypeStruct((3,), np.int32),))


def _oob_error(ctx: Checkify, eqn, error, indices, dims, operand_shape, window):
    """Merges the check that every index vector (last axis of `indices`; component k starts
    operand axis `dims[k]`) starts a window of sizes `window` inside `operand_shape`."""
    if OOBError not in ctx.enabled or np.prod(core.shape_of(indices)) == 0:
        return error
    indices = conversions.convert_element_type(indices, np.int32)
    shape = core.shape_of(indices)
    uppers = np.array([operand_shape[d] - window[d] for d in dims], np.int32)
    uppers = shapes.broadcast_in_dim(uppers, shape, (len(shape) - 1,))
    outside = bitwise.bitwise_or(
        comparison.lt(indices, np.zeros(shape, np.int32)), comparison.gt(indices, uppers)
    )
    count = int(np.prod(shape))
    flat_outside = shapes.reshape(outside, (count,))
    first = reductions.argmax(conversions.convert_element_type(flat_outside, np.int32), 0, np.int32)
    index = slicing.dynamic_index_in_dim(shapes.reshape(indices, (count,)), first, 0, keepdims=True)
    component = binary.rem(first, np.int32(len(dims)))
    axes = np.array(dims, np.int32)
    sizes = np.array([operand_shape[d] for d in dims], np.int32)
    axis = slicing.dynamic_index_in_dim(axes, component, 0, keepdims=True)
    size = slicing.dynamic_index_in_dim(sizes, component, 0, keepdims=True)
    payload = shapes.concatenate([index, axis, size], 0)
    exception = OOBError(
        _where(eqn), eqn.primitive.name, tuple(operand_shape), np.zeros(3, np.int32)
    )
    code = ctx.code(eqn, OOBError)
    return ctx.add(error, _OOB_EFFECT, _any(flat_outside), code, [payload], exception)


def _gather_check(ctx, eqn, error, values, outs):
    params = eqn.params
    operand, indices = values
    dims = params["dimension_numbers"].start_index_map
    window = params["slice_sizes"]
    return _oob_error(ctx, eqn, error, indices, dims, core.shape_of(operand), window)


def _scatter_check(ctx, eqn, error, values, outs):
    operand, indices, updates = values[:3]
    dn = eqn.params["dimension_numbers"]
    operand_shape = core.shape_of(operand)
    updates_shape = core.shape_of(updates)
    not_windowed = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    window = [1 if d in not_windowed else next(window_sizes) for d in range(len(operand_shape))]
    dims = dn.scatter_dims_to_operand_dims
    return _oob_error(ctx, eqn, error, indices, dims, operand_shape, window)


def _start_indices(scalars):
    return shapes.concatenate(
        [shapes.reshape(conversions.convert_element_type(i, np.int32), (1,)) for i in scalars], 0
    )


def _dynamic_slice_check(ctx, eqn, error, values, outs):
    operand, *indices = values
    if not indices:
        return error
    window = eqn.params["slice_sizes"]
    dims = tuple(range(len(indices)))
    shape = core.shape_of(operand)
    return _oob_error(ctx, eqn, error, _start_indices(indices), dims, shape, window)


def _dynamic_update_slice_check(ctx, eqn, error, values, outs):
    operand, update, *indices = values
    if not indices:
        return error
    window = core.shape_of(update)
    dims = tuple(range(len(indices)))
    shape = core.shape_of(operand)
    return _oob_error(ctx, eqn, error, _start_indices(indices), dims, shape, window)


automatic_checks_of["gather"] = _gather_check
for _name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min"):
    automatic_checks_of[_name] = _scatter_check
automatic_checks_of["scatter-max"] = _scatter_check
automatic_checks_of["scatter_apply"] = _scatter_check
automatic_checks_of["dynamic_slice"] = _dynamic_slice_check
automatic_checks_of["dynamic_update_slice"] = _dynamic_update_slice_check


# --------------------------------------------------------------------------------------------
# Primitives with bodies


def _call_body(ctx, closed):
    """`(error, *args) -> (error, outs)` evaluating `closed` with checks."""

    def body(error, *args):
        return eval_checked(ctx, closed, error, args)

    return body


def _call_rule(primitive, param):
    """`jit` and `remat2`: the error as leading inputs and outputs of the called body."""

    def rule(ctx, error, values, **params):
        closed = params[param]
        staged, out_tree = stage_checked(ctx, _call_body(ctx, closed), error, closed.in_avals)
        n = out_tree.num_leaves
        outs = primitive.bind(*error_leaves(error), *values, **{**params, param: staged})
        return unflatten_error(out_tree, outs[:n]), outs[n:]

    return rule


checkify_rules[jit_p] = _call_rule(jit_p, "jaxpr")
checkify_rules[remat_p] = _call_rule(remat_p, "jaxpr")


def _custom_call_rule(primitive):
    """A custom-derivative call whose body checks nothing is bound as it is. Otherwise it
    becomes a custom_jvp call of the checked body, (error, args) -> (error, outs), whose rule
    is the original one for the outputs (the errors get zero tangents, computed by running
    the checked body on the primals once more), so that derivatives taken outside checkify
    still use the custom rule."""

    def rule(ctx, error, values, *, name, call_jaxpr, num_consts, symbolic_zeros, **rules):
        before = ctx.num_checks
        _, out_tree = stage_checked(ctx, _call_body(ctx, call_jaxpr), error, call_jaxpr.in_avals)
        if ctx.num_checks == before:
            params = {"name": name, "call_jaxpr": call_jaxpr, "num_consts": num_consts}
            return error, primitive.bind(*values, symbolic_zeros=symbolic_zeros, **params, **rules)
        consts, args = values[:num_consts], values[num_consts:]
        leaves, in_tree = tree_flatten(error)
        n = len(leaves)
        if "jvp" in rules:
            original_jvp = rules["jvp"]
        else:
            original_jvp = CustomVJPCall(None, rules["fwd"], rules["bwd"], symbolic_zeros, name).jvp

        def fun(*flat):
            err = unflatten_error(in_tree, flat[:n])
            err, outs = eval_checked(ctx, call_jaxpr, err, [*consts, *flat[n:]])
            return [*error_leaves(err), *outs]

        def jvp(primals, tangents):
            errors = fun(*primals)[: out_tree.num_leaves]
            outs, out_tangents = original_jvp(list(primals[n:]), list(tangents[n:]))
            zeros = [Zero.from_primal_value(e) for e in errors]
            return [*errors, *outs], [*zeros, *out_tangents]

        call = CustomJVPCall(fun, jvp, symbolic_zeros, name)
        outs = custom_jvp_call_p.bind_call(call, [*leaves, *args])
        return unflatten_error(out_tree, outs[: out_tree.num_leaves]), outs[out_tree.num_leaves :]

    return rule


checkify_rules[custom_jvp_call_p] = _custom_call_rule(custom_jvp_call_p)
checkify_rules[custom_vjp_call_p] = _custom_call_rule(custom_vjp_call_p)


def _cond_rule(ctx, error, values, *, branches):
    index, operands = values[0], values[1:]

    def stage(err):
        staged = [stage_checked(ctx, _call_body(ctx, b), err, b.in_avals) for b in branches]
        return [jaxpr for jaxpr, _ in staged], [tree for _, tree in staged]

    error, new_branches, out_tree = settled(stage, error)
    n = len(error_leaves(error))
    outs = cond_p.bind(index, *error_leaves(error), *operands, branches=tuple(new_branches))
    return unflatten_error(out_tree, outs[:n]), outs[n:]


checkify_rules[cond_p] = _cond_rule


def _consts_first(staged, n: int, num_consts: int, out_order=None):
    """`staged`, which takes (error, consts, carry, ...), taking (consts, error, carry, ...):
    the error leads the carry of a loop, whose constants come first."""
    total = len(staged.in_avals)
    order = [*range(n, n + num_consts), *range(n), *range(n + num_consts, total)]
    return reorder_jaxpr(staged, order, out_order)


def _scan_rule(ctx, error, values, *, jaxpr, num_consts, num_carry, **params):
    body = _call_body(ctx, jaxpr)

    def stage(err):
        staged, tree = stage_checked(ctx, body, err, jaxpr.in_avals)
        return staged, [tree]

    error, staged, out_tree = settled(stage, error)
    n = len(error_leaves(error))
    outs = scan_p.bind(
        *values[:num_consts],
        *error_leaves(error),
        *values[num_consts:],
        jaxpr=_consts_first(staged, n, num_consts),
        num_consts=num_consts,
        num_carry=n + num_carry,
        **params,
    )
    return unflatten_error(out_tree, outs[:n]), outs[n:]


checkify_rules[scan_p] = _scan_rule


def _while_rule(ctx, error, values, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = values[:cond_nconsts]
    body_consts = values[cond_nconsts : cond_nconsts + body_nconsts]
    init = values[cond_nconsts + body_nconsts :]
    carry_avals = body_jaxpr.in_avals[body_nconsts:]

    def body(err, *args):
        c_consts, b_consts, carry = (
            args[:cond_nconsts],
            args[cond_nconsts : cond_nconsts + body_nconsts],
            args[cond_nconsts + body_nconsts :],
        )
        err, carry = eval_checked(ctx, body_jaxpr, err, [*b_consts, *carry])
        err, _ = eval_checked(ctx, cond_jaxpr, err, [*c_consts, *carry])
        return err, carry

    def stage(err):
        avals = [
            *cond_jaxpr.in_avals[:cond_nconsts],
            *body_jaxpr.in_avals[:body_nconsts],
            *carry_avals,
        ]
        staged, tree = stage_checked(ctx, body, err, avals)
        return staged, [tree]

    error, _ = eval_checked(ctx, cond_jaxpr, error, [*cond_consts, *init])
    error, staged_body, out_tree = settled(stage, error)
    n = len(error_leaves(error))
    # The predicate itself ignores the error: its checks run in the body, on the new carry.
    predicate = _call_body(Checkify(frozenset()), cond_jaxpr)
    new_cond = _consts_first(
        stage_checked(ctx, predicate, error, cond_jaxpr.in_avals)[0], n, cond_nconsts, [n]
    )
    nc = cond_nconsts + body_nconsts
    outs = while_p.bind(
        *cond_consts,
        *cond_consts,
        *body_consts,
        *error_leaves(error),
        *init,
        cond_jaxpr=new_cond,
        body_jaxpr=_consts_first(staged_body, n, nc),
        cond_nconsts=cond_nconsts,
        body_nconsts=nc,
    )
    return unflatten_error(out_tree, outs[:n]), outs[n:]


checkify_rules[while_p] = _while_rule


def _shard_map_rule(
    ctx, error, values, *, jaxpr, mesh, in_specs, out_specs, newly_manual_axes, **params
):
    members = [
        shard_map._to_members(x, spec, mesh) for x, spec in zip(values, in_specs, strict=True)
    ]

    def body(err, *blocks):
        return eval_checked(ctx, jaxpr, err, blocks)

    manual = [name for name in mesh.axis_names if name in newly_manual_axes]
    for name in reversed(manual):
        in_axes = [None] + [0 if name in names else None for _, names in members]
        body = vmap(body, in_axes=in_axes, out_axes=0, axis_name=name, axis_size=mesh.shape[name])
    error, outs = body(error, *[blocks for blocks, _ in members])
    n, count = len(manual), math.prod(mesh.shape[name] for name in manual)
    error = tree_map(lambda leaf: shapes.reshape(leaf, (count, *leaf.shape[n:])), error)
    outs = [
        shard_map._from_members(x, s, mesh, newly_manual_axes)
        for x, s in zip(outs, out_specs, strict=True)
    ]
    return error, outs


checkify_rules[shard_map.shard_map_p] = _shard_map_rule
