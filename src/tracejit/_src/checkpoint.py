"""`checkpoint` (`remat`): trade computation for memory in reverse mode.

Reverse mode normally keeps, from the forward pass, every residual the backward pass reads.
A checkpointed function keeps only its inputs: the backward pass recomputes the rest. The
function is staged as one `remat2` equation holding its jaxpr, and partial evaluation is where
the trade happens: the known (forward) part runs inline and saves nothing, and the staged part
is the whole JVP of the body, reading only the inputs; its transpose recomputes the forward
pass before running backwards:

    grad(checkpoint(lambda x: sin(sin(x))))

        b:f32[] = sin a
        _:f32[] = sin b
        c:f32[] = remat2[differentiated=True jaxpr={ lambda ; d e. let
            f = sin d; g = cos d; h = cos f; i = mul e h; j = mul i g in (j,) } ...] a 1.0

Compiled, the recomputation is guarded by `stablehlo.optimization_barrier` (`prevent_cse`), so
that XLA does not merge it with the forward pass and undo the saving.
"""

from __future__ import annotations

import functools
import types

from tracejit._src.api_util import argnums_and_argnames, shaped_abstractify
from tracejit._src.core import Primitive, set_current_trace
from tracejit._src.interpreters import ad, batching, partial_eval, transpose
from tracejit._src.interpreters.eval import to_numpy
from tracejit._src.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, without_dead_equations
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_map, tree_unflatten

remat_p = Primitive("remat2", multiple_results=True)


_DEPRECATED = object()


def checkpoint(
    fun=None,
    *,
    prevent_cse=True,
    policy=None,
    static_argnums=(),
    static_argnames=(),
    concrete=_DEPRECATED,
):
    """`fun`, whose reverse-mode residuals are recomputed in the backward pass instead of kept
    (JAX's `jax.checkpoint`, also `jax.remat`). Usable as a decorator. Static arguments (by
    position or name) are passed to `fun` as they are, not traced."""
    if concrete is not _DEPRECATED:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
            "removed in JAX v0.10.0. In its place please use `static_argnums`."
        )
    if fun is None:
        return functools.partial(
            checkpoint,
            prevent_cse=prevent_cse,
            policy=policy,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
        )
    static_nums, static_names = argnums_and_argnames(fun, static_argnums, static_argnames, "static")

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        n = len(args)
        static = {i % n: args[i] for i in static_nums if -n <= i < n}
        static_kwargs = {k: v for k, v in kwargs.items() if k in static_names}
        dynamic = (
            [a for i, a in enumerate(args) if i not in static],
            {k: v for k, v in kwargs.items() if k not in static_names},
        )
        leaves, in_tree = tree_flatten(dynamic)
        out_trees = []

        def flat_fun(*flat):
            positional, keywords = tree_unflatten(in_tree, flat)
            values = iter(positional)
            full = [static[i] if i in static else next(values) for i in range(n)]
            out_leaves, out_tree = tree_flatten(fun(*full, **keywords, **static_kwargs))
            out_trees.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(
            flat_fun, [shaped_abstractify(x) for x in leaves], DebugInfo(fun, "checkpoint")
        )
        closed, closure = hoist_tracer_consts(closed)
        outs = remat_p.bind(
            *closure,
            *leaves,
            jaxpr=closed,
            prevent_cse=bool(prevent_cse),
            differentiated=False,
            policy=policy,
        )
        return tree_unflatten(out_trees[0], outs)

    return remat_fun


def remat(
    fun=None,
    *,
    prevent_cse=True,
    policy=None,
    static_argnums=(),
    concrete=_DEPRECATED,
):
    """`checkpoint` under its older name (which takes no `static_argnames`)."""
    return checkpoint(
        fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
        concrete=concrete,
    )  # fmt: skip


@remat_p.def_abstract_eval
def _remat_abstract_eval(*avals, jaxpr, **params):
    return jaxpr.out_avals


@remat_p.def_impl
def _remat_impl(*args, jaxpr, **params):
    return [to_numpy(x)[0] for x in eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)]


def _remat_jvp(primals, tangents, *, jaxpr, **params):
    def bind_call(jvp_bodies, nonzero_tangents):
        return remat_p.bind(*primals, *nonzero_tangents, jaxpr=jvp_bodies[0], **params)

    return ad.call_jvp(bind_call, [jaxpr], primals, tangents)


ad.jvp_rules[remat_p] = _remat_jvp
ad.mark_linear(remat_p)  # in the operands its body is linear in


def _remat_partial_eval(trace, args, unknowns, *, jaxpr, policy, **params):
    """The known outputs computed inline; the unknown ones by the body, staged with the known
    inputs as residuals, and with the values the `policy` saves (None: none), whose equations
    the staged body then does not recompute."""
    (split,) = partial_eval.split_call([jaxpr], unknowns)
    num_known = len(split.out_unknowns) - sum(split.out_unknowns)
    known = split.known
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    known = without_dead_equations(
        ClosedJaxpr(
            Jaxpr(
                known.jaxpr.constvars,
                known.jaxpr.invars,
                known.jaxpr.outvars[:num_known],
                known.jaxpr.eqns,
            ),
            known.consts,
        )
    )  # fmt: skip  (the residuals are what checkpointing does not keep, unless saved below)
    with set_current_trace(trace.parent):
        known_outs = eval_jaxpr(known.jaxpr, known.consts, *known_args)
        jaxpr, residuals = _saved_by_policy(jaxpr, unknowns, policy, known_args)
    staged_params = dict(params, jaxpr=jaxpr, policy=policy, differentiated=True)
    staged = trace.stage(remat_p, [*args, *residuals], staged_params)
    known_iter = iter(known_outs)
    return [
        out if u else next(known_iter) for out, u in zip(staged, split.out_unknowns, strict=True)
    ]


def _saved_by_policy(closed: ClosedJaxpr, unknowns, policy, known_args):
    """(body to stage, residuals): the values `policy` saves, computed now from the known
    inputs, and the body reading them as extra inputs instead of recomputing them.

    Saveable are the outputs of known equations (reading no unknown value) that the policy
    accepts; saved are those the staged body still reads once it takes them as inputs (what
    only they needed is then not recomputed)."""
    if policy is None:
        return closed, []
    body = closed.jaxpr
    unknown_vars = {v for v, u in zip(body.invars, unknowns, strict=True) if u}
    known_eqns, saveable = [], []
    for eqn in body.eqns:
        if any(not isinstance(v, Literal) and v in unknown_vars for v in eqn.invars):
            unknown_vars.update(eqn.outvars)
            continue
        known_eqns.append(eqn)
        if _saves(policy, eqn):
            saveable += eqn.outvars
    saveable_set = set(saveable)
    eqns = [eqn for eqn in body.eqns if not saveable_set.intersection(eqn.outvars)]
    staged = without_dead_equations(
        ClosedJaxpr(Jaxpr(body.constvars, body.invars, body.outvars, eqns), closed.consts)
    )
    read = {v for eqn in staged.jaxpr.eqns for v in eqn.invars} | set(body.outvars)
    saved = [v for v in saveable if v in read]
    if not saved:
        return closed, []
    known_invars = [v for v, u in zip(body.invars, unknowns, strict=True) if not u]
    compute = without_dead_equations(
        ClosedJaxpr(Jaxpr(body.constvars, known_invars, saved, known_eqns), closed.consts)
    )
    residuals = eval_jaxpr(compute.jaxpr, compute.consts, *known_args)
    jaxpr = staged.jaxpr
    staged = ClosedJaxpr(
        Jaxpr(jaxpr.constvars, [*jaxpr.invars, *saved], jaxpr.outvars, jaxpr.eqns), staged.consts
    )
    return staged, residuals


def _saves(policy, eqn) -> bool:
    """Whether `policy` (JAX's convention: called with the primitive, the operands' avals and
    the parameters) saves the outputs of `eqn` rather than have them recomputed. Equations
    with bodies (calls, control flow) are recomputed."""
    if any(isinstance(p, (ClosedJaxpr, Jaxpr)) for p in eqn.params.values()):
        return False
    return bool(policy(eqn.primitive, *(v.aval for v in eqn.invars), **eqn.params))


partial_eval.partial_eval_rules[remat_p] = _remat_partial_eval


def _remat_transpose(cts, *args, jaxpr, **params):
    """A `remat2` of the transposed body: it recomputes the forward values it reads from the
    known inputs, then runs backwards (what nothing reads backwards is dropped)."""
    body, operands = transpose.transposed_call_body(jaxpr, cts, args)
    outs = remat_p.bind(
        *operands, jaxpr=without_dead_equations(body), **dict(params, differentiated=True)
    )
    return transpose.call_cotangents(outs, args)


ad.transpose_rules[remat_p] = _remat_transpose


def _remat_batch(values, dims, *, jaxpr, axis_size, axis_name, **params):
    batched, _ = batching.batch_jaxpr(
        jaxpr, axis_size, list(dims), [True] * len(jaxpr.out_avals), axis_name=axis_name
    )
    outs = remat_p.bind(*values, jaxpr=batched, **params)
    return outs, [0] * len(outs)


batching.batch_rules[remat_p] = _remat_batch
batching.axis_rules.add(remat_p)


def _remat_lowering(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    """The body inlined; a recomputation (`differentiated`) reads its inputs through an
    optimization barrier, so that XLA cannot share it with the forward pass."""
    if differentiated and prevent_cse and args:
        args = ctx.block.op("stablehlo.optimization_barrier", list(args), [a.type for a in args])
    return ctx.lower_sub_jaxpr(ctx.block, jaxpr, args)


lowering_rules[remat_p] = _remat_lowering


# --- checkpoint_name --------------------------------------------------------------------------
name_p = Primitive("name")


def checkpoint_name(x, name):
    """`x` (a pytree) named `name`, for policies that save values by name; the identity
    otherwise."""
    return tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda aval, *, name: aval)
ad.jvp_rules[name_p] = lambda primals, tangents, *, name: (
    name_p.bind(primals[0], name=name),
    tangents[0],
)
batching.batch_rules[name_p] = lambda values, dims, *, name: (
    name_p.bind(values[0], name=name),
    dims[0],
)
lowering_rules[name_p] = lambda ctx, x, *, name: x


# --- policies ---------------------------------------------------------------------------------
# A policy is called with an equation's primitive, its operands' avals and its parameters, and
# says whether the equation's outputs are saved for the backward pass (else recomputed).


def everything_saveable(*_, **__) -> bool:
    return True


def nothing_saveable(*_, **__) -> bool:
    return False


class DotsSaveable:
    """Saves the results of matrix products (those without batch dimensions only, if asked)."""

    def __init__(self, only_if_no_batch_dims: bool = False):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *avals, **params) -> bool:
        if prim.name != "dot_general":
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, (lhs_batch, rhs_batch)) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"


def save_only_these_names(*names_which_can_be_saved):
    names = set(names_which_can_be_saved)
    return lambda prim, *_, **params: prim is name_p and params["name"] in names


def save_any_names_but_these(*names_not_to_save):
    names = set(names_not_to_save)
    return lambda prim, *_, **params: prim is name_p and params["name"] not in names


def save_anything_except_these_names(*names_not_to_save):
    names = set(names_not_to_save)
    return lambda prim, *_, **params: prim is not name_p or params["name"] not in names


def save_from_both_policies(policy_1, policy_2):
    return lambda prim, *avals, **params: bool(
        policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
    )


_dots = DotsSaveable()
_dots_without_batch_dims = DotsSaveable(only_if_no_batch_dims=True)
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=_dots,
    checkpoint_dots=_dots,
    dots_with_no_batch_dims_saveable=_dots_without_batch_dims,
    checkpoint_dots_with_no_batch_dims=_dots_without_batch_dims,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
)
