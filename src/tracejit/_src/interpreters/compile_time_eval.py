"""`ensure_compile_time_eval`: inside its block, operations on concrete values run now.

While a function is staged (`jit`, `make_jaxpr`), an operation whose operands are all concrete
is staged like any other (`jnp.sin(3.0)` becomes an equation). Inside
`with ensure_compile_time_eval():` a `CompileTimeEvalTrace` sits above the current trace and
sends such operations to the root (eager) trace instead, so their results are concrete arrays
that Python control flow can read. Operations on tracers go to the trace below, as before.
"""

from __future__ import annotations

import contextlib

from tracejit._src.core import Trace, Tracer, current_trace, set_current_trace
from tracejit._src.interpreters.eval import eval_trace


class CompileTimeEvalTrace(Trace):
    def _interpreter(self, args) -> Trace:
        return self.parent if any(isinstance(x, Tracer) for x in args) else eval_trace

    def process_primitive(self, primitive, args, params):
        trace = self._interpreter(args)
        with set_current_trace(trace):
            return trace.process_primitive(primitive, args, params)

    def process_custom_jvp_call(self, primitive, call, args):
        trace = self._interpreter(args)
        with set_current_trace(trace):
            return trace.process_custom_jvp_call(primitive, call, args)

    def process_custom_vjp_call(self, primitive, call, args):
        trace = self._interpreter(args)
        with set_current_trace(trace):
            return trace.process_custom_vjp_call(primitive, call, args)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluates the block's operations on concrete values eagerly, even while staging, so that
    their results can steer Python control flow (`if jnp.sin(3.0) > 0:` inside a jitted
    function). Operations on traced values are traced as usual."""
    with set_current_trace(CompileTimeEvalTrace(current_trace())):
        yield
