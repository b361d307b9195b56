"""Rules for primitives defined outside tracejit, registered in JAX's spelling.

Libraries built on JAX (equinox's primitives, for one) define a `Primitive` and then write its
rules into `jax.interpreters.ad.primitive_jvps`, `primitive_transposes`,
`batching.primitive_batchers` and `batching.axis_primitive_batchers`, and lower it with
`mlir.register_lowering(p, mlir.lower_fun(impl))`. The first three have tracejit's contracts
already, and are tracejit's registries themselves (`tracejit.interpreters`). What differs is
here: a batcher that also takes the axis (`axis_primitive_batchers`, called with the axis size
and name first), and lowering, which in JAX hands a rule MLIR objects while tracejit's rules
emit StableHLO text. A rule written by hand against MLIR cannot run here; one made by
`lower_fun` (a traceable function, lowered as its jaxpr inline) can.
"""

from __future__ import annotations

from tracejit._src.core import Primitive
from tracejit._src.interpreters import batching
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lowering.lower import lowering_rules


class AxisPrimitiveBatchers:
    """`batching.axis_primitive_batchers`: `batcher(axis_size, axis_name, trace_type, values,
    batch_dims, **params) -> (out, out_batch_dims)`, registered as a tracejit batching rule of
    a primitive that receives the axis (`batching.axis_rules`)."""

    def __setitem__(self, primitive: Primitive, batcher) -> None:
        def rule(values, dims, *, axis_size, axis_name, **params):
            return batcher(axis_size, axis_name, None, values, dims, **params)

        batching.batch_rules[primitive] = rule
        batching.axis_rules.add(primitive)

    def __contains__(self, primitive) -> bool:
        return primitive in batching.axis_rules and primitive in batching.batch_rules


axis_primitive_batchers = AxisPrimitiveBatchers()


def lower_fun(fun, multiple_results: bool = True):
    """A lowering rule computing a primitive as `fun(*operands, **params)` would: `fun` is traced
    on the equation's operand types and its jaxpr lowered in place of the equation."""

    def rule(ctx, *operands, **params):
        def body(*args):
            out = fun(*args, **params)
            return list(out) if multiple_results else [out]

        closed = trace_to_jaxpr(body, ctx.avals_in, DebugInfo(fun, "lower_fun"))
        outs = ctx.lower_sub_jaxpr(ctx.block, closed, list(operands))
        return outs if multiple_results else outs[0]

    rule.made_by_lower_fun = True
    return rule


def register_lowering(primitive: Primitive, rule, platform=None, **_) -> None:
    """Lowers `primitive` with `rule`. A rule made by `lower_fun` runs; one written against
    JAX's MLIR objects is kept as what it is, a rule tracejit cannot run: libraries register
    such rules when imported, and compiling the primitive then raises NotImplementedError."""
    if platform not in (None, "cpu"):
        return  # a rule for another platform is never asked for here
    if not getattr(rule, "made_by_lower_fun", False):
        rule = _mlir_rule(primitive)
    lowering_rules[primitive] = rule


def _mlir_rule(primitive: Primitive):
    def rule(ctx, *operands, **params):
        raise NotImplementedError(
            f"[lowering] primitive '{primitive.name}' has a lowering rule written against "
            "JAX's MLIR objects, which tracejit cannot run (it emits StableHLO text): only "
            "rules made by mlir.lower_fun(...) lower"
        )

    return rule
