"""`lax.composite`: a function staged as one named operation whose meaning is its decomposition.

`composite(f, name)(*args, **attributes)` traces `f(*args, **attributes)` into a jaxpr and binds
the `composite` primitive with it, so that a jaxpr shows the operation by name, as JAX prints it:

    b:f32[] = composite[attributes=(('scale', 2.0),) jaxpr={ lambda ; c:f32[]. let
        d:f32[] = mul c 2.0:f32[] in (d,) } name=my.scale version=0] a

It evaluates, compiles and batches as its decomposition. As in JAX it has no derivative
(`custom_jvp` gives it one). The decomposition's closure constants are its leading operands.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src.core import Primitive, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_at_front, batch_jaxpr, batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_unflatten

# --- composite ------------------------------------------------------------------------------
composite_p = Primitive("composite", multiple_results=True)


def composite(decomposition, name, version=0):
    """`decomposition` as a function staged into one `composite` operation named `name`; its
    keyword arguments are static attributes of the operation."""

    @functools.wraps(decomposition)
    def staged(*args, **attributes):
        leaves, in_tree = tree_flatten(args)
        out_trees = []

        def flat(*xs):
            out = decomposition(*tree_unflatten(in_tree, xs), **attributes)
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        avals = [get_aval(leaf) for leaf in leaves]
        closed = trace_to_jaxpr(flat, avals, DebugInfo(decomposition, "composite"))
        jaxpr = closed.jaxpr
        hoisted = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
        outs = composite_p.bind(
            *closed.consts,
            *leaves,
            name=name,
            attributes=tuple((key, _static(value)) for key, value in attributes.items()),
            version=version,
            jaxpr=ClosedJaxpr(hoisted, []),
        )
        return tree_unflatten(out_trees[0], outs)

    return staged


def _static(value):
    """A hashable form of an attribute (params are hashable): arrays as nested tuples."""
    return tuple(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else value


composite_p.def_impl(
    lambda *args, jaxpr, **_: eval_jaxpr_numpy(jaxpr.jaxpr, jaxpr.consts, list(args))
)
composite_p.def_abstract_eval(lambda *avals, jaxpr, **_: list(jaxpr.out_avals))
composite_p.def_weak_type_rule(lambda weak_types, params: all(weak_types))
ad.not_differentiable(
    composite_p,
    "JAX defines none: JVP rule for composite not implemented; jax.custom_jvp adds one",
)
lowering_rules[composite_p] = lambda ctx, *args, jaxpr, **_: ctx.lower_sub_jaxpr(
    ctx.block, jaxpr, list(args)
)


def _composite_batch(values, dims, *, jaxpr, **params):
    """The decomposition batched, every operand with its batch dimension in front."""
    size = next(v.shape[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
    batched, _ = batch_jaxpr(jaxpr, size, [0] * len(operands), [True] * len(jaxpr.out_avals))
    outs = composite_p.bind(*operands, jaxpr=batched, **params)
    return outs, [0] * len(outs)


batch_rules[composite_p] = _composite_batch
