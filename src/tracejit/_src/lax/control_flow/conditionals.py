"""`cond` and `switch`: run one of several branches, chosen by a traced index.

Both become one primitive, `cond`, whose operands are the branch index (int32, clamped into
range by the wrappers) and the branches' shared operands, and whose `branches` are closed
jaxprs of equal input and output types:

    lax.cond(x >= 0., lambda a: a + 3., lambda a: a - 3., x)

    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sub e 3.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 3.0:f32[] in (h,) }
      )
    ] c a

(`False` picks branch 0.) Its transformations act on every branch alike: the JVP of a cond is
a cond of the branches' JVPs; partial evaluation splits each branch into a known part, which
also returns the residuals any branch needs, and a staged part reading them; the transpose is a
cond of the transposed branches. vmap keeps one cond while the index is unbatched; a batched
index runs every branch on the whole batch and selects each member's result.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api_util import shaped_abstractify
from tracejit._src.core import Primitive, ShapedArray, Tracer, set_current_trace, shape_of
from tracejit._src.interpreters import ad, batching, partial_eval, transpose
from tracejit._src.interpreters.batching import batch_at_front
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from tracejit._src.lax import comparison, conversions, selection, shapes
from tracejit._src.lax.control_flow.common import (
    example_tree,
    function_name,
    leaf_paths,
    runs_python,
    stage_function,
    structure_difference,
    type_difference,
    with_leading_inputs,
)
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import keystr, tree_flatten, tree_unflatten

# --- cond -------------------------------------------------------------------------------------
cond_p = Primitive("cond", multiple_results=True)


_no_operand = object()


def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, staged so that `pred` may be
    traced. Both functions are traced; their outputs must agree in structure and types.
    (`operand=x`, JAX's older form, is `cond(pred, true_fun, false_fun, x)`.)"""
    if operand is not _no_operand:
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed"
            )
        operands = (operand,)
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    aval = shaped_abstractify(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if aval.dtype != np.bool_ and not (
        dtypes.issubdtype(aval.dtype, np.integer) or dtypes.issubdtype(aval.dtype, np.floating)
    ):
        raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype}.")
    if runs_python():
        return (true_fun if bool(pred) else false_fun)(*operands)
    if isinstance(pred, Tracer):
        if aval.dtype != np.bool_:
            pred = comparison.ne(pred, np.zeros((), aval.dtype))
        index = conversions.convert_element_type(pred, np.int32)
    else:
        index = np.int32(bool(np.asarray(pred)))
    return _bind_cond(index, (false_fun, true_fun), operands, "cond", ("false_fun", "true_fun"))


def switch(index, branches, *operands, operand=_no_operand):
    """`branches[index](*operands)`, the index clamped into range, staged so that `index` may be
    traced. (`operand=x`, JAX's older form, is `switch(index, branches, x)`.)"""
    if operand is not _no_operand:
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be passed"
            )
        operands = (operand,)
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    aval = shaped_abstractify(index)
    if aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {aval.shape}.")
    if not dtypes.issubdtype(aval.dtype, np.integer):
        raise TypeError(f"Index type must be an integer, got {index} as {aval.dtype}")
    if len(branches) == 1:
        return branches[0](*operands)
    if runs_python():
        return branches[min(max(operator.index(np.asarray(index)), 0), len(branches) - 1)](
            *operands
        )
    if isinstance(index, Tracer):
        index = conversions.convert_element_type(index, np.int32)
    else:
        index = np.int32(min(max(operator.index(np.asarray(index)), 0), len(branches) - 1))
    index = selection.clamp(np.int32(0), index, np.int32(len(branches) - 1))  # (staged, as JAX)
    # JAX names them so in its errors (sic: "branch1").
    names = ("branch 0", *(f"branch{i}" for i in range(1, len(branches))))
    return _bind_cond(index, branches, operands, "switch", names)


def _bind_cond(index, branch_funs, operands, api: str, names):
    """Stages every branch on the operands' types, gives them one operand list (the closure
    constants of all of them, then the operands) and binds `cond`."""
    leaves, in_tree = tree_flatten(operands)
    in_avals = [shaped_abstractify(x) for x in leaves]
    # A function given for several branches is staged once: they share one jaxpr, as in JAX.
    staged_once = {}
    for fun in branch_funs:
        if id(fun) not in staged_once:
            staged_once[id(fun)] = stage_function(fun, in_tree, in_avals, api)
    staged = [staged_once[id(fun)] for fun in branch_funs]
    # Errors compare the first-named branch (cond's true_fun, switch's branch 0) with each other.
    order = [1, 0] if api == "cond" else range(len(branch_funs))
    _check_branch_outputs(api, [(names[i], branch_funs[i], staged[i]) for i in order])
    # The branches share one list of closure constants, each value once.
    all_consts, position = [], {}
    for _, consts, _ in staged:
        for c in consts:
            if id(c) not in position:
                position[id(c)] = len(all_consts)
                all_consts.append(c)
    taking_consts = {
        id(fun): _taking_consts(jaxpr, consts, all_consts, position)
        for fun, (jaxpr, consts, _) in zip(branch_funs, staged, strict=True)
    }
    branches = [taking_consts[id(fun)] for fun in branch_funs]
    outs = cond_p.bind(index, *all_consts, *leaves, branches=tuple(branches))
    return tree_unflatten(staged[0][2], outs)


def _taking_consts(closed, consts, all_consts, position) -> ClosedJaxpr:
    """A branch staged with its own `consts` as leading inputs, made to take `all_consts`."""
    jaxpr = closed.jaxpr
    own = dict(zip((position[id(c)] for c in consts), jaxpr.invars, strict=False))
    const_vars = [own.get(k) or Var(shaped_abstractify(c)) for k, c in enumerate(all_consts)]
    invars = const_vars + jaxpr.invars[len(consts) :]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns), closed.consts)


def _check_branch_outputs(api: str, branches):
    """JAX's TypeErrors for branches whose outputs differ in structure or leaf types."""
    first_name, first_fun, (first_jaxpr, _, first_tree) = branches[0]
    for name, fun, (jaxpr, _, out_tree) in branches[1:]:
        header = f"{first_name} is {function_name(first_fun)}\n{name} is {function_name(fun)}\n\n"
        revise = f"Revise {first_name} and/or {name} so that"
        if out_tree != first_tree:
            path, a, b, why = structure_difference(example_tree(first_tree), example_tree(out_tree))
            at = f" at path {keystr(path)}" if path else ""
            raise TypeError(
                f"{api} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{header}{first_name} output{at} is {a} but {name} output{at} is {b}, so "
                f"{why}.\n\n{revise} they have the same pytree structure."
            )
        paths = leaf_paths(first_tree, len(first_jaxpr.out_avals))
        found = type_difference(paths, first_jaxpr.out_avals, jaxpr.out_avals)
        if found is not None:
            path, a, b, why = found
            at = f" at path {keystr(path)}" if path else ""
            raise TypeError(
                f"{api} branches must have equal output types but they differ.\n\n{header}The "
                f"output of {first_name}{at} has type {a} but the corresponding output of {name} "
                f"has type {b}, so {why}.\n\n{revise} all output types match."
            )


def _cond_abstract_eval(index, *avals, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got {index.str_short()}")
    for i, branch in enumerate(branches):
        got = [(a.shape, a.dtype) for a in avals]
        want = [(a.shape, a.dtype) for a in branch.in_avals]
        if got != want:
            raise TypeError(
                f"cond: branch {i} takes {[a.str_short() for a in branch.in_avals]}, got "
                f"operands {[a.str_short() for a in avals]}"
            )
    outs = branches[0].out_avals
    return [
        ShapedArray(a.shape, a.dtype, all(b.out_avals[k].weak_type for b in branches))
        for k, a in enumerate(outs)
    ]


def _cond_impl(index, *args, branches):
    branch = branches[int(np.clip(index, 0, len(branches) - 1))]
    return eval_jaxpr_numpy(branch.jaxpr, branch.consts, args)


cond_p.def_abstract_eval(_cond_abstract_eval)
cond_p.def_impl(_cond_impl)


def _cond_jvp(primals, tangents, *, branches):
    """A cond of the branches' JVPs, each giving the tangents any branch gives."""
    index, operands = primals[0], primals[1:]

    def bind_call(jvp_branches, nonzero_tangents):
        return cond_p.bind(index, *operands, *nonzero_tangents, branches=tuple(jvp_branches))

    return ad.call_jvp(bind_call, branches, operands, tangents[1:])


ad.jvp_rules[cond_p] = _cond_jvp
ad.mark_linear(cond_p)  # in the operands its branches are linear in


def _cond_partial_eval(trace, args, unknowns, *, branches):
    """Known operands, unknown ones (tangents, under linearize): a known cond computes the
    known outputs and the residuals, a staged cond the rest. Each branch's residuals differ, so
    every known branch returns the residuals of all (zeros for the others')."""
    if unknowns[0]:  # an unknown index: nothing can be decided now
        return trace.stage(cond_p, args, {"branches": branches})
    unknowns = unknowns[1:]
    splits = partial_eval.split_call(branches, unknowns)
    out_unknowns = splits[0].out_unknowns
    num_outs = len(out_unknowns)
    num_known_outs = num_outs - sum(out_unknowns)
    residual_avals = [split.known.out_avals[num_known_outs:] for split in splits]
    all_residual_avals = [a for avals in residual_avals for a in avals]

    def joined_known(i, known):
        def fun(*known_args):
            outs = eval_jaxpr(known.jaxpr, known.consts, *known_args)
            before = [ad.zeros_like_aval(a) for avals in residual_avals[:i] for a in avals]
            after = [ad.zeros_like_aval(a) for avals in residual_avals[i + 1 :] for a in avals]
            return [*outs[:num_known_outs], *before, *outs[num_known_outs:], *after]

        return trace_to_jaxpr(fun, known.in_avals, DebugInfo(fun, "partial evaluation"))

    known_branches, unknown_branches, offset = [], [], 0
    for i, (known, unknown, _, num_res, _) in enumerate(splits):
        known_branches.append(joined_known(i, known))
        unknown = with_leading_inputs(unknown, all_residual_avals[:offset], 0)
        rest = all_residual_avals[offset + num_res :]
        unknown_branches.append(with_leading_inputs(unknown, rest, offset + num_res))
        offset += num_res
    index, operands = args[0], args[1:]
    known_operands = [x for x, u in zip(operands, unknowns, strict=True) if not u]
    unknown_operands = [x for x, u in zip(operands, unknowns, strict=True) if u]
    with set_current_trace(trace.parent):
        known_outs = cond_p.bind(index, *known_operands, branches=tuple(known_branches))
    residuals = known_outs[num_known_outs:]
    staged = trace.stage(
        cond_p, [index, *residuals, *unknown_operands], {"branches": tuple(unknown_branches)}
    )
    known_iter, staged_iter = iter(known_outs[:num_known_outs]), iter(staged)
    return [next(staged_iter) if u else next(known_iter) for u in out_unknowns]


partial_eval.partial_eval_rules[cond_p] = _cond_partial_eval


def _cond_transpose(cts, index, *operands, branches):
    """A cond of the transposed branches, on the known operands and the output cotangents."""
    if transpose.is_undefined_primal(index):
        raise NotImplementedError("[transpose] cond with a linear branch index")
    linear = [transpose.is_undefined_primal(x) for x in operands]
    known = [x for x, lin in zip(operands, linear, strict=True) if not lin]
    ct_avals = [ad.tangent_aval(a) for a in branches[0].out_avals]
    cts = [ad.instantiate_zeros(ct) for ct in cts]

    def transposed(branch):
        def fun(*args):
            known_iter, cts_out = iter(args[: len(known)]), list(args[len(known) :])
            primals = [x if lin else next(known_iter) for x, lin in zip(operands, linear)]
            cts_in = transpose.backward_pass(branch.jaxpr, branch.consts, cts_out, primals)
            return [ad.instantiate_zeros(ct) for ct, lin in zip(cts_in, linear, strict=True) if lin]

        avals = [shaped_abstractify(x) for x in known] + ct_avals
        return trace_to_jaxpr(fun, avals, DebugInfo(fun, "transpose"))

    cts_in = iter(cond_p.bind(index, *known, *cts, branches=tuple(transposed(b) for b in branches)))
    return [None] + [next(cts_in) if lin else None for lin in linear]


ad.transpose_rules[cond_p] = _cond_transpose


def _cond_batch(values, dims, *, branches, axis_size, axis_name):
    index, index_dim = values[0], dims[0]
    operand_dims = list(dims[1:])
    size = axis_size
    num_outs = len(branches[0].out_avals)
    if index_dim is not None:
        return _cond_batched_index(values, dims, branches, size, axis_name)
    out_batched = [False] * num_outs
    for b in branches:
        _, found = batching.batch_jaxpr(
            b, size, operand_dims, [False] * num_outs, axis_name=axis_name
        )
        out_batched = [x or y for x, y in zip(out_batched, found, strict=True)]
    batched = tuple(
        batching.batch_jaxpr(b, size, operand_dims, out_batched, axis_name=axis_name)[0]
        for b in branches
    )
    outs = cond_p.bind(index, *values[1:], branches=batched)
    return outs, [0 if b else None for b in out_batched]


def _cond_batched_index(values, dims, branches, size, axis_name):
    """Each member may take another branch: every branch runs on the whole batch, then each
    member's outputs are selected from the branch it takes. A branch sees the operands of the
    members that do not take it through `stop_gradient`, so that its derivative there (say,
    sqrt's at 0) cannot reach their cotangents as `0 * inf`."""
    index = batch_at_front(values[0], dims[0], size)
    operands = [batch_at_front(v, d, size) for v, d in zip(values[1:], dims[1:], strict=True)]
    num_outs = len(branches[0].out_avals)
    outs = []
    for i, branch in enumerate(branches):
        taken = comparison.eq(index, np.int32(i))
        guarded = [
            _stop_gradient_unless(taken, x) if dtypes.is_inexact(shaped_abstractify(x).dtype) else x
            for x in operands
        ]
        batched, _ = batching.batch_jaxpr(
            branch, size, [0] * len(operands), [True] * num_outs, axis_name=axis_name
        )
        outs.append(eval_jaxpr(batched.jaxpr, batched.consts, *guarded))
    selected = [
        selection.select_n(_per_member(index, cases[0]), *cases)
        for cases in zip(*outs, strict=True)
    ]
    return selected, [0] * num_outs


def _stop_gradient_unless(taken, x):
    """`x` for the members that take the branch, `stop_gradient(x)` for the others."""
    stopped = shapes.stop_gradient(x)
    return selection.select_n(_per_member(taken, x), stopped, x)


def _per_member(which, x):
    """The per-member `which` (batched at the front) broadcast to the shape of `x`."""
    shape = tuple(shape_of(x))
    return shapes.broadcast_in_dim(which, shape, (0,)) if len(shape) > 1 else which


batching.axis_rules.add(cond_p)
batching.batch_rules[cond_p] = _cond_batch


def _cond_lowering(ctx, index, *operands, branches):
    """`stablehlo.case`: one region per branch, reading the operands from the enclosing
    block."""
    regions = []
    for branch in branches:
        region = ctx.block.region([])
        outs = ctx.lower_sub_jaxpr(region, branch, operands)
        region.ret(outs)
        regions.append(region)
    return ctx.op_results("stablehlo.case", [index], regions=regions)


lowering_rules[cond_p] = _cond_lowering
