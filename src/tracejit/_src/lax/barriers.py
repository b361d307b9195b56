"""Barriers: `optimization_barrier` (values XLA may not move computations across) and
`dce_sink` (a use of values, so that dead-code elimination keeps what computes them).

The primitive is the identity on any number of operands; compiled, `stablehlo.optimization_barrier`
keeps XLA from fusing or reordering work through it (to bound memory in rematerialization, say).
Eagerly there is nothing to prevent, so it returns its operands. Its derivatives put the
tangents (cotangents) through a barrier of their own, as JAX does.

`dce_sink` has no outputs: an equation that only reads its operands, as JAX's, which its
derivatives and batching keep on the primal values; compiled, it emits nothing.
"""

from __future__ import annotations

from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import instantiate_zeros, transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_leaves, tree_unflatten

# --- optimization_barrier -------------------------------------------------------------------
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


def optimization_barrier(operand, /):
    """`operand` (a pytree of arrays) unchanged, as a barrier XLA does not optimize across."""
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


optimization_barrier_p.def_impl(lambda *operands: list(operands))
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))
optimization_barrier_p.def_weak_type_rule(lambda weak_types, params: all(weak_types))


def _optimization_barrier_jvp(primals, tangents):
    outs = optimization_barrier_p.bind(*primals)
    return outs, optimization_barrier_p.bind(*map(instantiate_zeros, tangents))


def _optimization_barrier_transpose(cts, *operands):
    return optimization_barrier_p.bind(*map(instantiate_zeros, cts))


ad.jvp_rules[optimization_barrier_p] = _optimization_barrier_jvp
ad.mark_linear(optimization_barrier_p)
transpose_rules[optimization_barrier_p] = _optimization_barrier_transpose
lowering_rules[optimization_barrier_p] = lambda ctx, *xs: ctx.op_results(
    "stablehlo.optimization_barrier", list(xs)
)
batch_rules[optimization_barrier_p] = lambda values, dims: (
    optimization_barrier_p.bind(*values),
    list(dims),
)

# --- dce_sink -------------------------------------------------------------------------------
dce_sink_p = Primitive("dce_sink", multiple_results=True)


def dce_sink(val, *, prevent_mlir_dce=False):
    """Uses the arrays of the pytree `val` (returns None), so that they count as used."""
    dce_sink_p.bind(*tree_leaves(val), prevent_mlir_dce=bool(prevent_mlir_dce))


dce_sink_p.def_impl(lambda *values, prevent_mlir_dce: [])
dce_sink_p.def_abstract_eval(lambda *avals, prevent_mlir_dce: [])
dce_sink_p.def_weak_type_rule(lambda weak_types, params: False)
ad.jvp_rules[dce_sink_p] = lambda primals, tangents, **params: (
    dce_sink_p.bind(*primals, **params),
    [],
)
lowering_rules[dce_sink_p] = lambda ctx, *values, prevent_mlir_dce: []
batch_rules[dce_sink_p] = lambda values, dims, **params: (dce_sink_p.bind(*values, **params), [])
