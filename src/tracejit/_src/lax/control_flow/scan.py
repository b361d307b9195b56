"""`scan`: a loop of static length that threads a carry and stacks per-iteration outputs.

    lax.scan(lambda c, x: (c + x, c * x), 0., xs)

    c:f32[] d:f32[5] = scan[
      jaxpr={ lambda ; e:f32[] f:f32[]. let ... in (h, j) }
      length=5 num_carry=1 num_consts=0 reverse=False unroll=1
    ] a b

The operands are grouped: `num_consts` constants (read by every iteration), `num_carry`
carries, then the arrays scanned over (`xs`, sliced along their leading axis); the body maps
[consts, carry, x] to [carry, y], and the ys come out stacked along a new leading axis.

Because its length is static, scan is what reverse mode can differentiate through: partial
evaluation splits the body into a known scan, which runs now and also stacks the residuals each
iteration leaves (so a scan of length T keeps O(T) residuals), and a staged scan of the tangents
that reads them; transposing that runs the transposed body backwards over the residuals. A
residual that is a loop constant or a scanned input is handed over as it is, never stacked.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.api_util import shaped_abstractify
from tracejit._src.core import (
    Primitive,
    ShapedArray,
    mapped_aval,
    set_current_trace,
    shape_of,
    unmapped_aval,
)
from tracejit._src.interpreters import ad, batching, partial_eval, transpose
from tracejit._src.interpreters.batching import batch_at_front, move_batch_dim
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import shapes
from tracejit._src.lax.control_flow.common import (
    check_carry,
    fixed_point,
    merge_by_mask,
    promote_weak_carries,
    reorder_jaxpr,
    runs_python,
    split_list,
    stage_function,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import aval_type, lowering_rules, physical_aval
from tracejit._src.tree_util import tree_flatten, tree_unflatten

# --- scan -------------------------------------------------------------------------------------
scan_p = Primitive("scan", multiple_results=True)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops `carry, y = f(carry, x)` over the leading axis of `xs` (pytrees), returning the
    final carry and the stacked ys. With `reverse=True` the loop runs from the end."""
    return scan_with_carry_name(f, init, xs, length, reverse, unroll, "c")


def scan_with_carry_name(f, init, xs, length, reverse, unroll, carry_name: str):
    """`scan`, its errors naming the carry `carry_name` (`fori_loop`'s is `loop_carry`)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    if runs_python() and length:
        return _python_scan(f, init, xs_leaves, xs_tree, length, reverse)
    init_leaves, init_tree = tree_flatten(init)
    init_avals = [shaped_abstractify(x) for x in init_leaves]
    x_avals = [_slice_aval(shaped_abstractify(x)) for x in xs_leaves]

    in_tree = tree_flatten(
        (tree_unflatten(init_tree, init_leaves), tree_unflatten(xs_tree, xs_leaves))
    )[1]

    def stage(carry_avals):
        jaxpr, consts, out_tree = stage_function(f, in_tree, [*carry_avals, *x_avals], "scan")
        out = tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair, got {out_tree}.")
        carry_tree = tree_flatten(out[0])[1]
        return jaxpr, consts, carry_tree, tree_flatten(out[1])[1]

    jaxpr, consts, carry_tree, ys_tree = stage(init_avals)
    num_carry = len(init_leaves)
    carry_out_avals = jaxpr.out_avals[:num_carry] if carry_tree == init_tree else None
    promoted = None
    if carry_out_avals is not None:
        promoted = promote_weak_carries(init_leaves, init_avals, carry_out_avals)
    if promoted is not None:
        init_leaves = promoted
        init_avals = [shaped_abstractify(x) for x in init_leaves]
        jaxpr, consts, carry_tree, ys_tree = stage(init_avals)
    check_carry("scan", init_tree, init_avals, carry_tree, jaxpr.out_avals[:num_carry], carry_name)
    unroll = length if unroll is True else max(int(unroll), 1)  # False means 1, too
    outs = scan_p.bind(
        *consts,
        *init_leaves,
        *xs_leaves,
        jaxpr=jaxpr,
        length=length,
        reverse=bool(reverse),
        num_consts=len(consts),
        num_carry=num_carry,
        unroll=unroll,
    )
    carry, ys = outs[:num_carry], outs[num_carry:]
    return tree_unflatten(init_tree, carry), tree_unflatten(ys_tree, ys)


def _python_scan(f, carry, xs_leaves, xs_tree, length: int, reverse: bool):
    """`scan` as a Python loop calling `f` (under `disable_jit`)."""
    ys = []
    for i in reversed(range(length)) if reverse else range(length):
        carry, y = f(carry, tree_unflatten(xs_tree, [x[i] for x in xs_leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    y_leaves = [tree_flatten(y)[0] for y in ys]
    stacked = [
        shapes.concatenate([shapes.expand_dims(leaf, (0,)) for leaf in column], 0)
        for column in zip(*y_leaves, strict=True)
    ]
    return carry, tree_unflatten(tree_flatten(ys[0])[1], stacked)


def _scan_length(xs_leaves, length) -> int:
    lengths = []
    for x in xs_leaves:
        shape = shape_of(x)
        if not shape:
            raise ValueError(
                f"scan got value with no leading axis to scan over: {shaped_abstractify(x)}."
            )
        lengths.append(shape[0])
    if length is not None:
        length = int(length)
        if any(n != length for n in lengths):
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {sorted(set(lengths))}."
            )
        return length
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        raise ValueError(
            f"scan got values with different leading axis sizes: {', '.join(map(str, lengths))}."
        )
    return lengths[0]


def _slice_aval(aval: ShapedArray) -> ShapedArray:
    """(Its type's sharding too, without the scanned dimension.)"""
    return mapped_aval(aval.shape[0], 0, aval)


def _stacked_aval(aval: ShapedArray, length: int) -> ShapedArray:
    return unmapped_aval(length, 0, aval)


def _split_operands(values, num_consts, num_carry):
    return split_list(values, [num_consts, num_carry])


def _scan_abstract_eval(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, carry, xs = _split_operands(avals, num_consts, num_carry)
    expected = jaxpr.in_avals
    got = [*consts, *carry, *[_slice_aval(x) for x in xs]]
    if any(x.shape[:1] != (length,) for x in xs) or [(a.shape, a.dtype) for a in got] != [
        (a.shape, a.dtype) for a in expected
    ]:
        raise TypeError(
            f"scan: the body takes {[a.str_short() for a in expected]} but the operands are "
            f"{[a.str_short() for a in avals]} (length {length})"
        )
    out = jaxpr.out_avals
    return [*out[:num_carry], *[_stacked_aval(a, length) for a in out[num_carry:]]]


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """Eagerly, a Python loop evaluating the body on NumPy values."""
    consts, carry, xs = _split_operands(args, num_consts, num_carry)
    ys = [np.empty((length, *a.shape), a.dtype) for a in jaxpr.out_avals[num_carry:]]
    body, body_consts = jaxpr.jaxpr, jaxpr.consts
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = eval_jaxpr_numpy(body, body_consts, [*consts, *carry, *(x[i] for x in xs)])
        carry = outs[:num_carry]
        for buffer, y in zip(ys, outs[num_carry:], strict=True):
            buffer[i] = y
    return [*carry, *ys]


scan_p.def_abstract_eval(_scan_abstract_eval)
scan_p.def_impl(_scan_impl)
scan_p.params_to_print = lambda params: {
    k: v for k, v in params.items() if k in ("jaxpr", "length", "num_carry", "num_consts",
                                             "reverse", "unroll")
}  # fmt: skip


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    const_nz, init_nz, xs_nz = _split_operands(nonzeros, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    no_outs = [False] * (num_carry + num_ys)
    carry_nz = fixed_point(
        init_nz, lambda c: ad.jvp_jaxpr(jaxpr, [*const_nz, *c, *xs_nz], no_outs)[1]
    )
    jvp_jaxpr, out_nz = ad.jvp_jaxpr(
        jaxpr, [*const_nz, *carry_nz, *xs_nz], carry_nz + [False] * num_ys
    )
    ys_nz = out_nz[num_carry:]
    # jvp_jaxpr takes [consts, carry, xs, their nonzero tangents]: regroup as scan needs.
    n_ct, n_carry_t, n_xs = sum(const_nz), sum(carry_nz), len(xs_nz)
    n_in = num_consts + num_carry + n_xs
    tangent_in = iter(range(n_in, n_in + n_ct + n_carry_t + sum(xs_nz)))
    ct_idx = [next(tangent_in) for _ in range(n_ct)]
    carry_t_idx = [next(tangent_in) for _ in range(n_carry_t)]
    xs_t_idx = list(tangent_in)
    in_order = [
        *range(num_consts), *ct_idx, *range(num_consts, num_consts + num_carry), *carry_t_idx,
        *range(num_consts + num_carry, n_in), *xs_t_idx,
    ]  # fmt: skip
    n_out = num_carry + num_ys
    out_order = [
        *range(num_carry), *range(n_out, n_out + n_carry_t),
        *range(num_carry, n_out), *range(n_out + n_carry_t, n_out + n_carry_t + sum(ys_nz)),
    ]  # fmt: skip
    body = reorder_jaxpr(jvp_jaxpr, in_order, out_order)
    consts, init, xs = _split_operands(primals, num_consts, num_carry)
    const_t, init_t, xs_t = _split_operands(tangents, num_consts, num_carry)
    outs = scan_p.bind(
        *consts,
        *[t for t in const_t if type(t) is not ad.Zero],
        *init,
        *[ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz],
        *xs,
        *[t for t in xs_t if type(t) is not ad.Zero],
        jaxpr=body,
        length=length,
        reverse=reverse,
        num_consts=num_consts + n_ct,
        num_carry=num_carry + n_carry_t,
        unroll=unroll,
    )
    carry, carry_t, ys, ys_t = split_list(outs, [num_carry, n_carry_t, num_ys])
    zero = ad.Zero.from_primal_value
    carry_t = merge_by_mask(carry_nz, carry_t, [zero(c) for c in carry])
    ys_t = merge_by_mask(ys_nz, ys_t, [zero(y) for y in ys])
    return [*carry, *ys], [*carry_t, *ys_t]


ad.jvp_rules[scan_p] = _scan_jvp
ad.mark_linear(scan_p)  # in the operands its body is linear in


def _scan_partial_eval(trace, args, unknowns, *, jaxpr, length, reverse, num_consts, num_carry,
                       unroll):  # fmt: skip
    """A known scan computing the known carries and ys and stacking the residuals, and a
    staged scan of the rest reading them."""
    loop = {"length": length, "reverse": reverse, "unroll": unroll}
    split, (const_uk, carry_uk, xs_uk) = _split_scan_body(jaxpr, unknowns, num_consts, num_carry)
    ys_uk = split.out_unknowns[num_carry:]
    known_counts = (num_consts - sum(const_uk), num_carry - sum(carry_uk))
    kinds = _residual_kinds(split.forwarded, *known_counts)
    operands = _split_operands(args, num_consts, num_carry)
    masks = (const_uk, carry_uk, xs_uk)
    known = [
        [x for x, u in zip(xs, m, strict=True) if not u]
        for xs, m in zip(operands, masks, strict=True)
    ]
    unknown = [
        [x for x, u in zip(xs, m, strict=True) if u] for xs, m in zip(operands, masks, strict=True)
    ]
    num_known_ys = len(ys_uk) - sum(ys_uk)
    with set_current_trace(trace.parent):
        known_carry, known_ys, residuals = _known_scan(split, kinds, *known, num_known_ys, loop)
    staged_carry, staged_ys = _staged_scan(trace, split, kinds, residuals, *unknown, loop)
    return [
        *merge_by_mask(carry_uk, staged_carry, known_carry),
        *merge_by_mask(ys_uk, staged_ys, known_ys),
    ]


def _split_scan_body(jaxpr, unknowns, num_consts, num_carry):
    """(the body's `JaxprSplit`, the unknown flags of consts, carries and xs): a carry is
    unknown if its initial value is or the body makes it so, found by iterating to a fixed
    point; ys are unknown as the body makes them."""
    const_uk, init_uk, xs_uk = _split_operands(unknowns, num_consts, num_carry)
    no_outs = [False] * len(jaxpr.out_avals)
    carry_uk = fixed_point(
        init_uk,
        lambda c: (
            partial_eval.partial_eval_jaxpr(jaxpr, [*const_uk, *c, *xs_uk], no_outs).out_unknowns
        ),
    )
    num_ys = len(jaxpr.out_avals) - num_carry
    in_uk = [*const_uk, *carry_uk, *xs_uk]
    split = partial_eval.partial_eval_jaxpr(jaxpr, in_uk, carry_uk + [False] * num_ys)
    return split, (const_uk, carry_uk, xs_uk)


def _residual_kinds(forwarded, num_known_consts, num_known_carry) -> list:
    """Where each residual comes from: a known const ("const") or x ("xs") that the body
    merely forwards, handed to the staged scan as it is, or computed by each step
    ("stacked"), which the known scan stacks along the loop."""
    kinds = []
    for source in forwarded:
        if source is not None and source < num_known_consts:
            kinds.append("const")
        elif source is not None and source >= num_known_consts + num_known_carry:
            kinds.append("xs")
        else:
            kinds.append("stacked")
    return kinds


def _known_scan(split, kinds, consts, init, xs, num_known_ys, loop):
    """Runs the known scan: (known carries, known ys, every residual in order)."""
    num_known_outs = len(init) + num_known_ys
    stacked = [num_known_outs + r for r, kind in enumerate(kinds) if kind == "stacked"]
    known_body = reorder_jaxpr(split.known, out_order=[*range(num_known_outs), *stacked])
    outs = scan_p.bind(
        *consts, *init, *xs, jaxpr=known_body, num_consts=len(consts), num_carry=len(init), **loop
    )
    carry, ys, stacked_residuals = split_list(outs, [len(init), num_known_ys])
    known_inputs, stacked_iter = [*consts, *init, *xs], iter(stacked_residuals)
    residuals = [
        next(stacked_iter) if kind == "stacked" else known_inputs[source]
        for source, kind in zip(split.forwarded, kinds, strict=True)
    ]
    return carry, ys, residuals


def _staged_scan(trace, split, kinds, residuals, consts, init, xs, loop):
    """Stages the scan of the unknown rest, whose operands are [residual consts, unknown
    consts | unknown carries | residual xs, unknown xs]: (staged carries, staged ys)."""
    num_res = split.num_residuals
    const_res = [r for r, kind in enumerate(kinds) if kind == "const"]
    xs_res = [r for r, kind in enumerate(kinds) if kind != "const"]
    n_front = num_res + len(consts) + len(init)
    in_order = [
        *const_res, *range(num_res, n_front), *xs_res, *range(n_front, len(split.unknown.in_avals))
    ]  # fmt: skip
    operands = [
        *(residuals[r] for r in const_res), *consts, *init, *(residuals[r] for r in xs_res), *xs
    ]  # fmt: skip
    params = {
        "jaxpr": reorder_jaxpr(split.unknown, in_order),
        "num_consts": len(const_res) + len(consts),
        "num_carry": len(init),
        **loop,
    }
    staged = trace.stage(scan_p, operands, params)
    return staged[: len(init)], staged[len(init) :]


partial_eval.partial_eval_rules[scan_p] = _scan_partial_eval


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """The transposed body run backwards: it carries the cotangents of the carry and sums
    those of the linear consts, reading the known consts and scanning over the known xs (the
    residuals) and the ys' cotangents."""
    consts, init, xs = _split_operands(args, num_consts, num_carry)
    is_linear = transpose.is_undefined_primal
    const_lin = [is_linear(c) for c in consts]
    xs_lin = [is_linear(x) for x in xs]
    known_consts = [c for c, lin in zip(consts, const_lin, strict=True) if not lin]
    known_xs = [x for x, lin in zip(xs, xs_lin, strict=True) if not lin]
    const_avals = _split_operands(jaxpr.in_avals, num_consts, num_carry)[0]
    acc_avals = [ad.tangent_aval(a) for a, lin in zip(const_avals, const_lin, strict=True) if lin]
    # Zero cotangents of ys stay symbolic: the transposed body does not scan over them.
    ys_ct_nz = [type(ct) is not ad.Zero for ct in cts[num_carry:]]
    body = _transposed_scan_body(jaxpr, consts, xs, num_carry, ys_ct_nz)
    outs = scan_p.bind(
        *known_consts,
        *(ad.zeros_like_aval(a) for a in acc_avals),
        *(ad.instantiate_zeros(ct) for ct in cts[:num_carry]),
        *known_xs,
        *(ct for ct in cts[num_carry:] if type(ct) is not ad.Zero),
        jaxpr=body,
        length=length,
        reverse=not reverse,
        num_consts=len(known_consts),
        num_carry=len(acc_avals) + num_carry,
        unroll=unroll,
    )
    ct_consts, ct_init, ct_xs = split_list(outs, [len(acc_avals), num_carry])
    ct_consts_iter, ct_xs_iter = iter(ct_consts), iter(ct_xs)
    return [
        *(next(ct_consts_iter) if lin else None for lin in const_lin),
        *(ct if is_linear(c) else None for ct, c in zip(ct_init, init, strict=True)),
        *(next(ct_xs_iter) if lin else None for lin in xs_lin),
    ]


def _transposed_scan_body(jaxpr, consts, xs, num_carry, ys_ct_nz):
    """The body of the transposed scan, as a closed jaxpr: [known consts | cotangent sums of
    the linear consts, carry cotangents | known xs, nonzero ys' cotangents] -> [new sums,
    carry cotangents in | linear xs' cotangents]. `consts`/`xs` are the forward scan's
    operands, `UndefinedPrimal` where linear."""
    is_linear = transpose.is_undefined_primal
    const_lin, xs_lin = [is_linear(c) for c in consts], [is_linear(x) for x in xs]
    known_consts = [c for c, lin in zip(consts, const_lin, strict=True) if not lin]
    known_xs = [x for x, lin in zip(xs, xs_lin, strict=True) if not lin]
    const_avals, carry_avals, x_avals = _split_operands(jaxpr.in_avals, len(consts), num_carry)
    acc_avals = [ad.tangent_aval(a) for a, lin in zip(const_avals, const_lin, strict=True) if lin]
    y_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals[num_carry:]]
    sizes = [len(known_consts), len(acc_avals), num_carry, len(known_xs)]

    def transposed_body(*values):
        kc, acc, ct_c, kx, ct_y = split_list(values, sizes)
        ct_y = merge_by_mask(ys_ct_nz, ct_y, [ad.Zero(a) for a in y_avals])
        kc_iter, kx_iter = iter(kc), iter(kx)
        primals = [
            *(c if lin else next(kc_iter) for c, lin in zip(consts, const_lin, strict=True)),
            *(transpose.UndefinedPrimal(a) for a in carry_avals),
            *(
                transpose.UndefinedPrimal(a) if lin else next(kx_iter)
                for a, lin in zip(x_avals, xs_lin, strict=True)
            ),
        ]
        cts_in = transpose.backward_pass(jaxpr.jaxpr, jaxpr.consts, [*ct_c, *ct_y], primals)
        ct_consts, ct_carry_in, ct_xs = _split_operands(cts_in, len(consts), num_carry)
        lin_ct_consts = [ct for ct, lin in zip(ct_consts, const_lin, strict=True) if lin]
        new_acc = [
            a if type(ct) is ad.Zero else ad.add_tangents(a, ct)
            for a, ct in zip(acc, lin_ct_consts, strict=True)
        ]
        return [
            *new_acc,
            *map(ad.instantiate_zeros, ct_carry_in),
            *(ad.instantiate_zeros(ct) for ct, lin in zip(ct_xs, xs_lin, strict=True) if lin),
        ]

    body_avals = [
        *(shaped_abstractify(c) for c in known_consts), *acc_avals,
        *(ad.tangent_aval(a) for a in carry_avals),
        *(_slice_aval(shaped_abstractify(x)) for x in known_xs),
        *(a for a, nz in zip(y_avals, ys_ct_nz, strict=True) if nz),
    ]  # fmt: skip
    return trace_to_jaxpr(transposed_body, body_avals, DebugInfo(transposed_body, "transpose"))


ad.transpose_rules[scan_p] = _scan_transpose


def _scan_batch(
    values, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll, axis_size, axis_name
):
    """One scan of the batched body: consts and carries batched at the front, xs just after
    their scanned axis (so that each slice is batched at its front), ys likewise."""
    size = axis_size
    const_dims, init_dims, xs_dims = _split_operands(dims, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    const_b = [d is not None for d in const_dims]
    xs_b = [d is not None for d in xs_dims]

    def body_dims(carry_b):
        return [0 if b else None for b in (*const_b, *carry_b, *xs_b)]

    carry_b = fixed_point(
        [d is not None for d in init_dims],
        lambda c: batching.batch_jaxpr(
            jaxpr, size, body_dims(c), [False] * (num_carry + num_ys), axis_name=axis_name
        )[1],
    )
    body, out_b = batching.batch_jaxpr(
        jaxpr, size, body_dims(carry_b), carry_b + [False] * num_ys, axis_name=axis_name
    )
    consts, init, xs = _split_operands(values, num_consts, num_carry)
    consts = [c if d is None else move_batch_dim(c, d, 0) for c, d in zip(consts, const_dims)]
    init = [
        batch_at_front(c, d, size) if b else c
        for c, d, b in zip(init, init_dims, carry_b, strict=True)
    ]
    xs = [x if d is None else move_batch_dim(x, d, 1) for x, d in zip(xs, xs_dims, strict=True)]
    outs = scan_p.bind(
        *consts,
        *init,
        *xs,
        jaxpr=body,
        length=length,
        reverse=reverse,
        num_consts=num_consts,
        num_carry=num_carry,
        unroll=unroll,
    )
    out_dims = [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[num_carry:]]
    return outs, out_dims


batching.axis_rules.add(scan_p)
batching.batch_rules[scan_p] = _scan_batch


def _scan_lowering(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """A `stablehlo.while` over an iteration counter, its state the counter, the consts, the
    carries, the xs and the ys being filled: each iteration slices its x out of the xs and
    writes its y into the ys with dynamic slicing. With `unroll=u`, each iteration applies the
    body u times, and the `length % u` steps left over follow the loop."""
    consts, init, xs = _split_operands(args, num_consts, num_carry)
    y_avals = [_stacked_aval(a, length) for a in jaxpr.out_avals[num_carry:]]
    ys = [ctx.block.constant(np.zeros(a.shape, a.dtype)) for a in map(physical_aval, y_avals)]
    if length == 0:  # nothing to slice: the body never runs
        return [*init, *ys]
    unroll = max(1, min(unroll, length))
    trips, leftover = divmod(length, unroll)

    def step(region, step_index, consts, carry, xs, ys):
        return _lower_scan_step(
            ctx, region, jaxpr, num_carry, length if reverse else None, step_index,
            consts, carry, xs, ys,
        )  # fmt: skip

    carry = init
    if trips:
        carry, ys = _lower_scan_loop(ctx.block, step, trips, unroll, consts, init, xs, ys)
    for k in range(leftover):
        position = ctx.block.constant(np.int32(trips * unroll + k))
        carry, ys = step(ctx.block, position, consts, carry, xs, ys)
    return [*carry, *ys]


def _lower_scan_step(ctx, region, jaxpr, num_carry, reverse_length, step_index, consts, carry,
                     xs, ys):  # fmt: skip
    """One application of the body at scan step `step_index` (an i32 Value; counted from the
    end when `reverse_length` is given): its x sliced out of each xs, its y written into each
    ys. Returns (new carries, new ys)."""
    i32 = hlo.tensor_type((), np.int32)
    index = step_index
    if reverse_length is not None:
        last = region.constant(np.int32(reverse_length - 1))
        index = region.op1("stablehlo.subtract", [last, step_index], i32)
    zero = region.constant(np.int32(0))
    x_slices = []
    for x, aval in zip(xs, jaxpr.in_avals[len(jaxpr.in_avals) - len(xs) :], strict=True):
        aval = physical_aval(aval)
        piece = region.op1(
            "stablehlo.dynamic_slice",
            [x, index, *[zero] * aval.ndim],
            hlo.tensor_type((1, *aval.shape), aval.dtype),
            {"slice_sizes": hlo.i64_array((1, *aval.shape))},
        )
        x_slices.append(region.op1("stablehlo.reshape", [piece], aval_type(aval)))
    outs = ctx.lower_sub_jaxpr(region, jaxpr, [*consts, *carry, *x_slices])
    new_ys = []
    for buffer, y, aval in zip(ys, outs[num_carry:], jaxpr.out_avals[num_carry:], strict=True):
        aval = physical_aval(aval)
        piece = region.op1("stablehlo.reshape", [y], hlo.tensor_type((1, *aval.shape), aval.dtype))
        new_ys.append(
            region.op1(
                "stablehlo.dynamic_update_slice",
                [buffer, piece, index, *[zero] * aval.ndim],
                buffer.type,
            )
        )
    return outs[:num_carry], new_ys


def _lower_scan_loop(block, step, trips, unroll, consts, init, xs, ys):
    """The `stablehlo.while` running `trips` iterations of `unroll` steps each: (carries,
    ys) after it."""
    i32 = hlo.tensor_type((), np.int32)
    state = [block.constant(np.int32(0)), *consts, *init, *xs, *ys]
    types = [v.type for v in state]
    cond = block.region(types)
    cond.ret([cond.compare(cond.args[0], cond.constant(np.int32(trips)), "LT")])
    body = block.region(types)
    sizes = [1, len(consts), len(init), len(xs)]
    (trip,), b_consts, b_carry, b_xs, b_ys = split_list(body.args, sizes)
    first = trip
    if unroll > 1:
        first = body.op1("stablehlo.multiply", [trip, body.constant(np.int32(unroll))], i32)
    for k in range(unroll):
        position = first
        if k:
            position = body.op1("stablehlo.add", [first, body.constant(np.int32(k))], i32)
        b_carry, b_ys = step(body, position, b_consts, b_carry, b_xs, b_ys)
    next_trip = body.op1("stablehlo.add", [trip, body.constant(np.int32(1))], i32)
    body.ret([next_trip, *b_consts, *b_carry, *b_xs, *b_ys])
    results = block.op("stablehlo.while", state, types, regions=[cond, body])
    _, _, carry, _, ys = split_list(results, sizes)
    return carry, ys


lowering_rules[scan_p] = _scan_lowering
