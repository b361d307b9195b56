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
"""

from __future__ import annotations

from tracejit._src import dtypes
from tracejit._src.core import current_trace, new_trace, set_current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.staging import DebugInfo, StagingTrace, StagingTracer
from tracejit._src.jaxpr import ClosedJaxpr


class PartialEvalTrace(StagingTrace):
    stage_everything = False  # set while building values that belong in the staged jaxpr
    records_source_lines = False  # linear jaxprs are transposed at once, never lowered alone

    def is_unknown(self, x) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self

    def process_primitive(self, primitive, args, params):
        if self.stage_everything or any(map(self.is_unknown, args)):
            return super().process_primitive(primitive, args, params)
        with set_current_trace(self.parent):
            return primitive.bind(*args, **params)

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
