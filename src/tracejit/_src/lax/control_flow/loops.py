"""`while_loop` and `fori_loop`: loops whose trip count is decided while they run.

    lax.while_loop(lambda c: c < 10., lambda c: c * 2., x)

    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] a

The operands are the predicate's constants, the body's constants, then the carry. Forward mode
differentiates the body and carries the tangents along; vmap with a batched predicate keeps
looping while any member's predicate holds and freezes the members that are done. Reverse mode
would need every iteration's residuals, whose number is unknown when the loop is staged, so it
is refused, as in JAX: `fori_loop` with a static trip count is a `scan` instead, and
`while_loop(..., max_iterations=N)` (not in JAX) is a scan of N guarded steps.
"""

from __future__ import annotations

import itertools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api_util import shaped_abstractify
from tracejit._src.core import Primitive, Tracer, set_current_trace, shape_of
from tracejit._src.interpreters import ad, batching, partial_eval
from tracejit._src.interpreters.batching import batch_at_front, move_batch_dim
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lax import binary, comparison, conversions, reductions, selection, shapes
from tracejit._src.lax.control_flow.common import (
    check_carry,
    fixed_point,
    merge_by_mask,
    promote_weak_carries,
    reorder_jaxpr,
    runs_python,
    split_list,
    stage_function,
    with_leading_inputs,
)
from tracejit._src.lax.control_flow.conditionals import cond
from tracejit._src.lax.control_flow.scan import scan, scan_with_carry_name
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_unflatten

# --- while ------------------------------------------------------------------------------------
while_p = Primitive("while", multiple_results=True)


def while_loop(cond_fun, body_fun, init_val, *, max_iterations=None):
    """`val = init_val; while cond_fun(val): val = body_fun(val)`, staged so that the predicate
    may depend on traced values.

    `max_iterations` (an extension of JAX's API) makes the loop reverse-differentiable: it
    becomes a scan of that many steps, each running `body_fun` only while `cond_fun` holds,
    so a loop that has not finished after `max_iterations` steps stops there. Reverse mode
    then keeps the residuals of every one of the `max_iterations` steps, finished or not:
    memory grows linearly with `max_iterations`.
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if runs_python():
        val = init_val
        for _ in itertools.count() if max_iterations is None else range(int(max_iterations)):
            if not cond_fun(val):
                break
            val = body_fun(val)
        return val
    if max_iterations is not None:
        return _bounded_while_loop(cond_fun, body_fun, init_val, int(max_iterations))
    return _while_loop(cond_fun, body_fun, init_val, "c")


def _while_loop(cond_fun, body_fun, init_val, carry_name: str):
    init_leaves, init_tree = tree_flatten(init_val)
    init_avals = [shaped_abstractify(x) for x in init_leaves]

    def stage(avals):
        cond_jaxpr, cond_consts, cond_tree = stage_function(
            cond_fun, tree_flatten((init_val,))[1], avals, "while_loop"
        )
        _check_predicate(cond_jaxpr, cond_tree)
        body_jaxpr, body_consts, body_tree = stage_function(
            body_fun, tree_flatten((init_val,))[1], avals, "while_loop"
        )
        return cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree

    cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = stage(init_avals)
    promoted = None
    if body_tree == init_tree:
        promoted = promote_weak_carries(init_leaves, init_avals, body_jaxpr.out_avals)
    if promoted is not None:
        init_leaves = promoted
        init_avals = [shaped_abstractify(x) for x in init_leaves]
        cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = stage(init_avals)
    check_carry("while_loop", init_tree, init_avals, body_tree, body_jaxpr.out_avals, carry_name)
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *init_leaves,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        cond_nconsts=len(cond_consts),
        body_nconsts=len(body_consts),
    )
    return tree_unflatten(init_tree, outs)


def _check_predicate(cond_jaxpr, cond_tree):
    avals = cond_jaxpr.out_avals
    if cond_tree.num_leaves != 1 or avals[0].shape != () or avals[0].dtype != np.bool_:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got output type(s) {list(avals)}."
        )


def _bounded_while_loop(cond_fun, body_fun, init_val, max_iterations: int):
    def step(val, _):
        return cond(cond_fun(val), body_fun, lambda v: v, val), None

    return scan(step, init_val, None, length=max_iterations)[0]


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`val = init_val; for i in range(lower, upper): val = body_fun(i, val)`. With a static
    trip count (Python or concrete bounds) it is a `scan`, which reverse mode differentiates;
    with traced bounds, a `while_loop`."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_aval, upper_aval = shaped_abstractify(lower), shaped_abstractify(upper)
    for name, aval in (("lower", lower_aval), ("upper", upper_aval)):
        if aval.shape != ():
            raise TypeError(f"fori_loop {name} bound must be a scalar, got {aval.str_short()}.")
    if not (lower_aval.weak_type or upper_aval.weak_type) and lower_aval.dtype != upper_aval.dtype:
        raise TypeError(
            "lower and upper arguments to fori_loop must have equal types, got "
            f"{lower_aval.dtype.name} and {upper_aval.dtype.name}"
        )
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        # Concrete bounds (of any numeric type, as JAX takes them): the index is a Python int
        # (weakly typed), so it combines with a carry of any integer type without promoting it.
        lower, upper = int(lower), int(upper)

        def step(carry, _):
            i, val = carry
            return (binary.add(i, 1), body_fun(i, val)), None

        unroll = 1 if unroll is None else unroll
        init = (lower, init_val)
        length = max(upper - lower, 0)
        (_, val), _ = scan_with_carry_name(step, init, None, length, False, unroll, "loop_carry")
        return val
    dtype = dtypes.result_type(lower, upper)

    def as_bound(x, aval):  # converted only if the bounds' dtypes differ (weak ints stay weak)
        if aval.dtype == dtype:
            return x
        if isinstance(x, Tracer):
            return conversions.convert_element_type(x, dtype)
        return np.asarray(x, dtype)

    lower, upper = as_bound(lower, lower_aval), as_bound(upper, upper_aval)
    if unroll not in (None, 1, False):
        raise ValueError("fori_loop: unroll needs a static trip count (Python int bounds).")

    def body(carry):
        i, n, val = carry
        return binary.add(i, np.asarray(1, dtype)), n, body_fun(i, val)

    def cond_fun(carry):
        return comparison.lt(carry[0], carry[1])

    _, _, val = _while_loop(cond_fun, body, (lower, upper, init_val), "loop_carry")
    return val


def _split_while(values, cond_nconsts, body_nconsts):
    return split_list(values, [cond_nconsts, body_nconsts])


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = _split_while(avals, cond_nconsts, body_nconsts)

    def same(a, b):
        return [(x.shape, x.dtype) for x in a] == [(x.shape, x.dtype) for x in b]

    if not same([*cond_consts, *carry], cond_jaxpr.in_avals) or not same(
        [*body_consts, *carry], body_jaxpr.in_avals
    ):
        raise TypeError(
            f"while: operands {[a.str_short() for a in avals]} do not match the predicate's "
            f"inputs {[a.str_short() for a in cond_jaxpr.in_avals]} and the body's "
            f"{[a.str_short() for a in body_jaxpr.in_avals]}"
        )
    return list(body_jaxpr.out_avals)


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Eagerly, a Python loop evaluating the predicate and the body on NumPy values."""
    cond_consts, body_consts, carry = _split_while(args, cond_nconsts, body_nconsts)
    predicate, body = cond_jaxpr.jaxpr, body_jaxpr.jaxpr
    while eval_jaxpr_numpy(predicate, cond_jaxpr.consts, [*cond_consts, *carry])[0]:
        carry = eval_jaxpr_numpy(body, body_jaxpr.consts, [*body_consts, *carry])
    return carry


while_p.def_abstract_eval(_while_abstract_eval)
while_p.def_impl(_while_impl)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """A while loop of the body's JVP, carrying the tangents of the carries that have them;
    the predicate ignores the tangents."""
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    _, bconst_nz, init_nz = _split_while(nonzeros, cond_nconsts, body_nconsts)
    carry_nz = fixed_point(
        init_nz, lambda c: ad.jvp_jaxpr(body_jaxpr, [*bconst_nz, *c], [False] * len(c))[1]
    )
    jvp_body, _ = ad.jvp_jaxpr(body_jaxpr, [*bconst_nz, *carry_nz], carry_nz)
    num_carry, n_bct, n_ct = len(init_nz), sum(bconst_nz), sum(carry_nz)
    # jvp_body takes [body consts, carry, their tangents]: regroup as while needs.
    n_in = body_nconsts + num_carry
    in_order = [
        *range(body_nconsts), *range(n_in, n_in + n_bct),
        *range(body_nconsts, n_in), *range(n_in + n_bct, n_in + n_bct + n_ct),
    ]  # fmt: skip
    body = reorder_jaxpr(jvp_body, in_order)
    tangent_avals = [ad.tangent_aval(a) for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    cond_with_tangents = with_leading_inputs(cond_jaxpr, tangent_avals, len(cond_jaxpr.in_avals))
    cond_consts, body_consts, init = _split_while(primals, cond_nconsts, body_nconsts)
    _, body_const_t, init_t = _split_while(tangents, cond_nconsts, body_nconsts)
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *[t for t in body_const_t if type(t) is not ad.Zero],
        *init,
        *[ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz],
        cond_jaxpr=cond_with_tangents,
        body_jaxpr=body,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts + n_bct,
    )
    carry, carry_t = outs[:num_carry], outs[num_carry:]
    zeros = [ad.Zero.from_primal_value(c) for c in carry]
    return carry, merge_by_mask(carry_nz, carry_t, zeros)


ad.jvp_rules[while_p] = _while_jvp
ad.mark_linear(while_p)  # in its tangent carries; the transpose rule raises JAX's error


def _while_partial_eval(trace, args, unknowns, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                        body_nconsts):  # fmt: skip
    """The carries that never depend on unknown values are computed now by a while loop of
    their own; the whole loop is staged for the others (their iterations' residuals could not
    be kept), which is why reverse mode stops at its transpose."""
    params = {"cond_jaxpr": cond_jaxpr, "body_jaxpr": body_jaxpr, "cond_nconsts": cond_nconsts,
                  "body_nconsts": body_nconsts}  # fmt: skip
    cconst_uk, bconst_uk, init_uk = _split_while(unknowns, cond_nconsts, body_nconsts)
    num_carry = len(init_uk)
    carry_uk = fixed_point(
        init_uk,
        lambda c: (
            partial_eval.partial_eval_jaxpr(
                body_jaxpr, [*bconst_uk, *c], [False] * num_carry
            ).out_unknowns
        ),
    )
    cond_split = partial_eval.partial_eval_jaxpr(cond_jaxpr, [*cconst_uk, *carry_uk], [False])
    if all(carry_uk) or cond_split.out_unknowns[0]:
        return trace.stage(while_p, args, params)
    body_split = partial_eval.partial_eval_jaxpr(body_jaxpr, [*bconst_uk, *carry_uk], carry_uk)
    num_known = num_carry - sum(carry_uk)
    known_cond = reorder_jaxpr(cond_split.known, out_order=[0])
    known_body = reorder_jaxpr(body_split.known, out_order=list(range(num_known)))
    cond_consts, body_consts, init = _split_while(args, cond_nconsts, body_nconsts)

    def known_values(values, flags):
        return [v for v, u in zip(values, flags, strict=True) if not u]

    known_cconsts = known_values(cond_consts, cconst_uk)
    known_bconsts = known_values(body_consts, bconst_uk)
    with set_current_trace(trace.parent):
        known_outs = while_p.bind(
            *known_cconsts,
            *known_bconsts,
            *known_values(init, carry_uk),
            cond_jaxpr=known_cond,
            body_jaxpr=known_body,
            cond_nconsts=len(known_cconsts),
            body_nconsts=len(known_bconsts),
        )
    staged = trace.stage(while_p, args, params)
    return merge_by_mask(
        carry_uk, [s for s, u in zip(staged, carry_uk, strict=True) if u], known_outs
    )


partial_eval.partial_eval_rules[while_p] = _while_partial_eval


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop, or pass max_iterations= to lax.while_loop."
    )


ad.transpose_rules[while_p] = _while_transpose


def _while_batch(
    values, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, axis_size, axis_name
):
    """A while of the batched bodies. With a batched predicate, members finish at different
    times: the loop runs while any member's predicate holds (`_while_any_member`)."""
    size = axis_size
    cconst_dims, bconst_dims, init_dims = _split_while(dims, cond_nconsts, body_nconsts)
    num_carry = len(init_dims)
    cconst_b = [d is not None for d in cconst_dims]
    bconst_b = [d is not None for d in bconst_dims]

    def as_dims(flags):
        return [0 if b else None for b in flags]

    carry_b = fixed_point(
        [d is not None for d in init_dims],
        lambda c: batching.batch_jaxpr(
            body_jaxpr, size, as_dims([*bconst_b, *c]), [False] * num_carry, axis_name=axis_name
        )[1],
    )
    _, (pred_batched,) = batching.batch_jaxpr(
        cond_jaxpr, size, as_dims([*cconst_b, *carry_b]), [False], axis_name=axis_name
    )
    if pred_batched:  # members finish at different times: every carry is batched
        carry_b = [True] * num_carry
    cond_consts, body_consts, init = _split_while(values, cond_nconsts, body_nconsts)
    cond_consts = [c if d is None else move_batch_dim(c, d, 0)
                   for c, d in zip(cond_consts, cconst_dims, strict=True)]  # fmt: skip
    body_consts = [c if d is None else move_batch_dim(c, d, 0)
                   for c, d in zip(body_consts, bconst_dims, strict=True)]  # fmt: skip
    init = [batch_at_front(c, d, size) if b else c
            for c, d, b in zip(init, init_dims, carry_b, strict=True)]  # fmt: skip
    batched_cond, _ = batching.batch_jaxpr(
        cond_jaxpr, size, as_dims([*cconst_b, *carry_b]), [pred_batched], axis_name=axis_name
    )
    batched_body, _ = batching.batch_jaxpr(
        body_jaxpr, size, as_dims([*bconst_b, *carry_b]), carry_b, axis_name=axis_name
    )
    if pred_batched:
        outs = _while_any_member(batched_cond, batched_body, cond_consts, body_consts, init)
        return outs, [0] * num_carry
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *init,
        cond_jaxpr=batched_cond,
        body_jaxpr=batched_body,
        cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts,
    )
    return outs, as_dims(carry_b)


def _while_any_member(batched_cond, batched_body, cond_consts, body_consts, init):
    """A while that loops while any member's predicate holds; members whose predicate fails
    keep their carry (every carry batched at the front)."""
    n_cc, n_bc = len(cond_consts), len(body_consts)

    def any_cond(*xs):
        (pred,) = eval_jaxpr(batched_cond.jaxpr, batched_cond.consts, *xs)
        return [reductions.reduce_or(pred, (0,))]

    def guarded_body(*xs):
        cconsts, bconsts, carry = split_list(xs, [n_cc, n_bc])
        (pred,) = eval_jaxpr(batched_cond.jaxpr, batched_cond.consts, *cconsts, *carry)
        new = eval_jaxpr(batched_body.jaxpr, batched_body.consts, *bconsts, *carry)
        return [_select_members(pred, n, c) for n, c in zip(new, carry, strict=True)]

    cond_avals = [shaped_abstractify(x) for x in (*cond_consts, *init)]
    body_avals = [shaped_abstractify(x) for x in (*cond_consts, *body_consts, *init)]
    return while_p.bind(
        *cond_consts,
        *cond_consts,
        *body_consts,
        *init,
        cond_jaxpr=trace_to_jaxpr(any_cond, cond_avals, DebugInfo(any_cond, "vmap")),
        body_jaxpr=trace_to_jaxpr(guarded_body, body_avals, DebugInfo(guarded_body, "vmap")),
        cond_nconsts=n_cc,
        body_nconsts=n_cc + n_bc,
    )


def _select_members(pred, new, old):
    """`new` where the member's predicate holds, else `old` (batched at the front)."""
    shape = tuple(shape_of(new))
    which = shapes.broadcast_in_dim(pred, shape, (0,)) if len(shape) > 1 else pred
    return selection.select_n(which, old, new)


batching.axis_rules.add(while_p)
batching.batch_rules[while_p] = _while_batch


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """`stablehlo.while` whose state is every operand: the constants ride along unchanged."""
    block = ctx.block
    types = [v.type for v in args]
    cond_region = block.region(types)
    cconsts, _, carry = _split_while(cond_region.args, cond_nconsts, body_nconsts)
    cond_region.ret(ctx.lower_sub_jaxpr(cond_region, cond_jaxpr, [*cconsts, *carry]))
    body_region = block.region(types)
    cconsts, bconsts, carry = _split_while(body_region.args, cond_nconsts, body_nconsts)
    new_carry = ctx.lower_sub_jaxpr(body_region, body_jaxpr, [*bconsts, *carry])
    body_region.ret([*cconsts, *bconsts, *new_carry])
    results = block.op("stablehlo.while", list(args), types, regions=[cond_region, body_region])
    return results[cond_nconsts + body_nconsts :]


lowering_rules[while_p] = _while_lowering
