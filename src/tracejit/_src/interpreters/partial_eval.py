"""Partial evaluation: compute what is known now, stage what is not into a jaxpr.

A `PartialEvalTrace` is a staging trace that only stages equations with at least one *unknown*
operand (one of its own tracers); everything else is computed at once on the parent trace. Run
a JVP under it with known primals and unknown tangents, and the primal computation happens
immediately while the tangent computation, which is linear in the tangents, is staged:

    linearize(sin, x):   known:   y = sin x; c = cos x          (computed now)
                         staged:  { lambda c; t. let u = mul t c in (u,) }

The known values the staged jaxpr reads (`c` above) are its constvars: the *residuals* that
reverse mode keeps from the forward pass to the backward one. Transposing that linear jaxpr
(`transpose.py`) gives the VJP, so reverse mode is JVP + partial evaluation + transposition.

A primitive whose operands are partly known is staged whole, unless it has a rule that splits
it. Control-flow primitives have one: a scan over primal and tangent carries becomes a known
scan, run now, that also emits the residuals its iterations produce, and a staged scan over the
tangents alone that reads them (`partial_eval_jaxpr` does the splitting of their bodies).

- `partial_eval_rules[p](trace, args, unknowns, **params) -> outputs`: called when some but
  not all operands are unknown; binds the known part on `trace.parent` and stages the rest with
  `trace.stage(primitive, operands, params)`, whose known operands become residuals.
"""

from __future__ import annotations

from typing import NamedTuple

from tracejit._src import core, dtypes
from tracejit._src.core import Primitive, Tracer, current_trace, new_trace, set_current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.staging import (
    DebugInfo,
    StagingTrace,
    StagingTracer,
    trace_to_jaxpr,
)
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr

partial_eval_rules: dict[Primitive, object] = {}
core.rule_registries["partial eval"] = partial_eval_rules


class PartialEvalTrace(StagingTrace):
    linearizes = True
    stage_everything = False  # set while building values that belong in the staged jaxpr
    records_source_lines = False  # linear jaxprs are transposed at once, never lowered alone
    checks_leaks = False  # as JAX's grad, which checks none

    def is_unknown(self, x) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self

    def process_primitive(self, primitive, args, params):
        if self.stage_everything:
            return self.stage(primitive, args, params)
        unknowns = [self.is_unknown(x) for x in args]
        if not any(unknowns):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = partial_eval_rules.get(primitive)
        if rule is not None and not all(unknowns):
            return rule(self, args, unknowns, **params)
        return self.stage(primitive, args, params)

    def stage(self, primitive, args, params):
        """Records one equation; its known operands become residuals."""
        return super().process_primitive(primitive, args, params)

    def process_custom_jvp_call(self, primitive, call, args):
        if any(map(self.is_unknown, args)):
            return super().process_custom_jvp_call(primitive, call, args)
        with set_current_trace(self.parent):
            return primitive.bind_call(call, args)

    def process_custom_vjp_call(self, primitive, call, args):
        if any(map(self.is_unknown, args)):
            return super().process_custom_vjp_call(primitive, call, args)
        with set_current_trace(self.parent):
            return primitive.bind_call(call, args)

    def instantiate_zeros(self, tangent):
        """A symbolic zero output tangent made an array inside the staged (linear) jaxpr, not
        on the parent trace where nothing would read it."""
        if type(tangent) is not ad.Zero:
            return tangent
        self.stage_everything = True
        try:
            return ad.zeros_like_aval(tangent.aval)
        finally:
            self.stage_everything = False

    def describe(self):
        return f"while linearizing the function {self.debug_info.fun_name}"


def linearize_flat(fun, primals, debug_info: DebugInfo):
    """JVP of `fun(*args) -> list` at `primals`, its tangent part staged.

    Returns the primal outputs (values of the current trace) and a closed linear jaxpr from
    the input tangents to the output tangents, whose consts are the residuals.
    """
    trace = PartialEvalTrace(current_trace(), debug_info)
    with new_trace(trace):
        tangents_in = [trace.new_arg(ad.tangent_aval(ad.get_aval(p))) for p in primals]
        # Integer and boolean inputs have float0 tangents: inputs of the linear jaxpr, but
        # symbolic zeros to the JVP rules.
        jvp_tangents = [
            ad.Zero(t.aval) if t.aval.dtype == dtypes.float0 else t for t in tangents_in
        ]
        primals_out, tangents_out = ad.jvp_flat(fun, primals, jvp_tangents)
        tangents_out = [trace.instantiate_zeros(t) for t in tangents_out]
        linear_jaxpr: ClosedJaxpr = trace.to_jaxpr(tangents_out)
    return primals_out, linear_jaxpr


class JaxprSplit(NamedTuple):
    """A jaxpr split by `partial_eval_jaxpr`:

        known:    known inputs -> [known outputs, residuals]
        unknown:  [residuals, unknown inputs] -> unknown outputs

    `forwarded[i]` is the index among the known inputs of the one that residual i merely
    passes on (None if it is computed): a loop can hand such a residual over without storing
    it again."""

    known: ClosedJaxpr
    unknown: ClosedJaxpr
    out_unknowns: list
    num_residuals: int
    forwarded: list


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns, instantiate) -> JaxprSplit:
    """Splits a jaxpr whose inputs are partly `unknowns` into what can be computed now and what
    must wait, as control-flow rules need for their bodies. An output is unknown if it depends
    on an unknown input or `instantiate` says so (a list of bools, one per output)."""
    in_avals = closed.in_avals
    known_avals = [a for a, u in zip(in_avals, unknowns, strict=True) if not u]
    unknown_avals = [a for a, u in zip(in_avals, unknowns, strict=True) if u]
    split = {}

    def known_fun(*known_args):
        trace = PartialEvalTrace(current_trace(), DebugInfo(known_fun, "partial evaluation"))
        with new_trace(trace):
            unknown_args = [trace.new_arg(a) for a in unknown_avals]
            known_iter, unknown_iter = iter(known_args), iter(unknown_args)
            args = [next(unknown_iter) if u else next(known_iter) for u in unknowns]
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
            out_unknowns = [
                trace.is_unknown(o) or inst for o, inst in zip(outs, instantiate, strict=True)
            ]
            staged = trace.to_jaxpr([o for o, u in zip(outs, out_unknowns, strict=True) if u])
        # The staged jaxpr's constvars holding known tracers are the residuals, passed in as
        # its leading inputs; those holding constant arrays stay constants.
        residual_vars, residuals, const_vars, consts = [], [], [], []
        for var, value in zip(staged.jaxpr.constvars, staged.consts, strict=True):
            if isinstance(value, Tracer):
                residual_vars.append(var)
                residuals.append(value)
            else:
                const_vars.append(var)
                consts.append(value)
        inner = staged.jaxpr
        unknown_jaxpr = Jaxpr(const_vars, residual_vars + inner.invars, inner.outvars, inner.eqns)
        split["unknown"] = ClosedJaxpr(unknown_jaxpr, consts)
        split["out_unknowns"] = out_unknowns
        positions = {id(x): i for i, x in enumerate(known_args)}
        split["forwarded"] = [positions.get(id(r)) for r in residuals]
        known_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if not u]
        return [*known_outs, *residuals]

    known = trace_to_jaxpr(known_fun, known_avals, DebugInfo(known_fun, "partial evaluation"))
    forwarded = split["forwarded"]
    return JaxprSplit(known, split["unknown"], split["out_unknowns"], len(forwarded), forwarded)


def split_call(bodies, unknowns) -> list[JaxprSplit]:
    """`partial_eval_jaxpr` of the bodies a primitive calls (`jit`, `remat2`, `cond`'s
    branches) on operands of which `unknowns` are not known yet, all with the same unknown
    outputs: an output is unknown if it is in any body."""
    num_outs = len(bodies[0].out_avals)
    splits = [partial_eval_jaxpr(body, unknowns, [False] * num_outs) for body in bodies]
    out_unknowns = [any(found) for found in zip(*(s.out_unknowns for s in splits), strict=True)]
    if len(bodies) > 1:
        splits = [partial_eval_jaxpr(body, unknowns, out_unknowns) for body in bodies]
    return splits
