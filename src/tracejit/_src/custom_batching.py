"""`custom_vmap`: a function with its own batching rule (`jax.custom_batching`).

The function is staged as one `custom_vmap_call` equation holding its jaxpr and the user's
rule. Evaluated, compiled or differentiated, it is its jaxpr; batched, it is the rule, called
with the batch size, which arguments are batched (a pytree of bools like the arguments) and the
arguments, batched ones with their batch dimension first; the rule returns the outputs and
which of them are batched (a pytree of bools like the outputs, or one bool for all).

    f = custom_vmap(lambda x: jnp.sin(x))
    f.def_vmap(lambda axis_size, in_batched, x: (jnp.cos(x), in_batched[0]))
    vmap(f)(xs)  # cos(xs)

Under differentiation the rule is not used: the JVP is that of the jaxpr, whose batching is
then the ordinary one (the rule does not say how to batch derivatives).
"""

from __future__ import annotations

import functools

from tracejit._src.api_util import shaped_abstractify
from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad, batching
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lax.control_flow.mapping import map as lax_map
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_map, tree_unflatten

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)


class custom_vmap:
    """A function whose batching is the rule given with `def_vmap`."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self.__name__}: a custom_vmap function takes positional arguments")
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {self.__name__} using def_vmap."
            )
        leaves, in_tree = tree_flatten(args)
        out_trees = []

        def flat_fun(*flat):
            out_leaves, out_tree = tree_flatten(self.fun(*tree_unflatten(in_tree, flat)))
            out_trees.append(out_tree)
            return out_leaves

        call = trace_to_jaxpr(
            flat_fun, [shaped_abstractify(x) for x in leaves], DebugInfo(self.fun, "custom_vmap")
        )
        outs = custom_vmap_call_p.bind(
            *leaves, call=call, rule=self.vmap_rule, in_tree=in_tree, out_tree=out_trees[0]
        )
        return tree_unflatten(out_trees[0], outs)


def sequential_vmap(f):
    """`f`, batched by mapping it over the batch one member at a time (`lax.map`)."""
    fun = custom_vmap(f)

    def rule(axis_size, in_batched, *args):
        batched_args = [a for a, b in zip(args, in_batched, strict=True) if b]

        def member(batched):
            batched = iter(batched)
            return f(*(next(batched) if b else a for a, b in zip(args, in_batched, strict=True)))

        return lax_map(member, batched_args), True

    fun.def_vmap(rule)
    return fun


@custom_vmap_call_p.def_abstract_eval
def _custom_vmap_call_abstract_eval(*avals, call, **params):
    return call.out_avals


@custom_vmap_call_p.def_impl
def _custom_vmap_call_impl(*args, call, **params):
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _custom_vmap_call_jvp(primals, tangents, *, call, **params):
    def evaluate(jvp_bodies, nonzero_tangents):
        (body,) = jvp_bodies
        return eval_jaxpr(body.jaxpr, body.consts, *primals, *nonzero_tangents)

    return ad.call_jvp(evaluate, [call], primals, tangents)


ad.jvp_rules[custom_vmap_call_p] = _custom_vmap_call_jvp


def _custom_vmap_call_batch(values, dims, *, call, rule, in_tree, out_tree, axis_size, **_):
    """The user's rule on the arguments with their batch dimension first."""
    args = [batching.batch_at_front(v, d, axis_size) if d is not None else v for v, d in
            zip(values, dims, strict=True)]  # fmt: skip
    in_batched = tree_unflatten(in_tree, [d is not None for d in dims])
    outs, out_batched = rule(axis_size, list(in_batched), *tree_unflatten(in_tree, args))
    out_leaves, found_tree = tree_flatten(outs)
    if found_tree != out_tree:
        raise ValueError(
            f"The vmap rule of a custom_vmap function returned outputs of structure "
            f"{found_tree}, but the function returns {out_tree}"
        )
    if isinstance(out_batched, bool):
        out_batched = tree_map(lambda _: out_batched, outs)
    batched_leaves = tree_flatten(out_batched)[0]
    return out_leaves, [0 if b else None for b in batched_leaves]


batching.batch_rules[custom_vmap_call_p] = _custom_vmap_call_batch
batching.axis_rules.add(custom_vmap_call_p)

lowering_rules[custom_vmap_call_p] = lambda ctx, *args, call, **_: ctx.lower_sub_jaxpr(
    ctx.block, call, list(args)
)
