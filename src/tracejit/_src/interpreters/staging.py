"""The staging trace: records every primitive applied to its tracers as a jaxpr equation.

`trace_to_jaxpr(f, in_avals)` runs `f` on fresh tracers, one per input aval. Each `bind` on
those tracers appends an equation and returns new tracers for its outputs; whatever `f` computes
from values that do not depend on its inputs is staged too (`lax.log(2.)` becomes `log 2.0:f32[]`;
XLA folds such constants when it compiles). Inputs that are not this trace's tracers become
constants: scalars are inlined as `Literal`s, arrays become constvars whose values travel with
the `ClosedJaxpr`, and tracers of an enclosing transformation are captured the same way.

Python control flow on shapes works while tracing, since avals carry shapes; on values, the
tracer has no concrete value and `bool()` raises (see `core.concretization_error`).
"""

from __future__ import annotations

from tracejit._src.array import Array
from tracejit._src.config import config
from tracejit._src.core import (
    ShapedArray,
    Trace,
    Tracer,
    check_result_sizes,
    current_trace,
    escaped_tracer_error,
    get_aval,
    new_trace,
    python_scalar_types,
)
from tracejit._src.errors import user_location
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, check_jaxpr
from tracejit._src.sharding import sharding_in_types
from tracejit._src.sharding_types import apply_sharding_rules


class StagingTracer(Tracer):
    __slots__ = ("_aval", "creation_site", "jaxpr_var")

    def __init__(self, trace: StagingTrace, aval: ShapedArray, var: Var, creation_site=None):
        self._trace = trace
        self._aval = aval
        self.jaxpr_var = var
        self.creation_site = creation_site

    @property
    def aval(self):
        return self._aval

    def __repr__(self):  # as JAX 0.10.2 shows its jit tracers (`~` for a weak type)
        aval = self._aval
        return f"JitTracer({'~' if aval.weak_type else ''}{aval.str_short(short_dtypes=False)})"


class DebugInfo:
    """What the staged function is, for messages: `tracing the function f for make_jaxpr`."""

    __slots__ = ("fun_name", "transformation")

    def __init__(self, fun, transformation: str):
        self.fun_name = getattr(fun, "__name__", None) or type(fun).__name__
        self.transformation = transformation


class StagingTrace(Trace):
    records_source_lines = True  # for error messages that point at the user's line
    linearizes = False  # stages the tangents of a JVP (partial evaluation, for grad)
    checks_leaks = True

    def __init__(self, parent: Trace, debug_info: DebugInfo, axis_env=()):
        super().__init__(parent)
        self.debug_info = debug_info
        # Named axes that collectives may use though no vmap inside binds them (`make_jaxpr`'s
        # `axis_env`): name -> size, read by `batching.bound_axis_size`.
        self.axis_sizes = dict(axis_env)
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.constvars: dict[int, Var] = {}  # id(value) -> constvar
        self.consts: list = []

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, aval, var)

    def to_atom(self, x):
        """The jaxpr atom standing for `x`: its Var, a Literal, or a new constvar."""
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.jaxpr_var
        if isinstance(x, Tracer) and not x._trace.is_valid:
            raise escaped_tracer_error(x)
        if not isinstance(x, Tracer) and _is_scalar(x):
            return _literal(x)
        var = self.constvars.get(id(x))
        if var is None:
            var = self.constvars[id(x)] = Var(get_aval(x))
            self.consts.append(x)
        return var

    def process_primitive(self, primitive, args, params):
        in_atoms = [self.to_atom(x) for x in args]
        in_avals = [atom.aval for atom in in_atoms]
        out = primitive.abstract_eval(*in_avals, **params)
        if sharding_in_types[0]:
            out = apply_sharding_rules(primitive, in_avals, out, params)
        out_avals = out if primitive.multiple_results else [out]
        check_result_sizes(primitive, out_avals)
        source = user_location() if self.records_source_lines else None
        out_vars = [Var(aval) for aval in out_avals]
        self.eqns.append(JaxprEqn(in_atoms, out_vars, primitive, params, source))
        tracers = [StagingTracer(self, v.aval, v, source) for v in out_vars]
        return tracers if primitive.multiple_results else tracers[0]

    def process_custom_jvp_call(self, primitive, call, args):
        return self.stage_call(primitive, call, args, jvp=call.jvp)

    def process_custom_vjp_call(self, primitive, call, args):
        return self.stage_call(primitive, call, args, fwd=call.fwd, bwd=call.bwd)

    def stage_call(self, primitive, call, args, **rules):
        """Stages a call of `call.fun` as one equation holding its jaxpr (closure-converted:
        values the function closes over become leading operands, `num_consts` of them)."""
        in_avals = [self.to_atom(x).aval for x in args]
        closed = trace_to_jaxpr(call.fun, in_avals, DebugInfo(call.fun, primitive.name))
        inner = closed.jaxpr
        converted = Jaxpr([], inner.constvars + inner.invars, inner.outvars, inner.eqns)
        params = dict(
            name=call.name,
            call_jaxpr=ClosedJaxpr(converted, []),
            num_consts=len(closed.consts),
            symbolic_zeros=call.symbolic_zeros,
            **rules,
        )
        return self.process_primitive(primitive, [*closed.consts, *args], params)

    def to_jaxpr(self, outputs) -> ClosedJaxpr:
        outvars = [self.to_atom(x) for x in outputs]
        constvars = list(self.constvars.values())
        jaxpr = Jaxpr(constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)

    def describe(self):
        info = self.debug_info
        return f"while tracing the function {info.fun_name} for {info.transformation}"

    def __repr__(self):
        return "StagingTrace"


def _is_scalar(x) -> bool:
    if type(x) in python_scalar_types:
        return True
    return getattr(x, "shape", None) == ()


def _literal(x) -> Literal:
    aval = get_aval(x)
    if type(x) in python_scalar_types:
        aval.dtype.type(x)  # raises OverflowError for an int too large for the default int type
        return Literal(x, aval)
    if isinstance(x, Array):
        x = x._value
    return Literal(aval.dtype.type(x), aval)


def trace_to_jaxpr(fun, in_avals, debug_info: DebugInfo, axis_env=()) -> ClosedJaxpr:
    """Stages `fun(*tracers) -> list of outputs` into a closed jaxpr; `axis_env` lists
    (name, size) of the named axes its collectives may use beyond those of its own vmaps."""
    trace = StagingTrace(current_trace(), debug_info, axis_env)
    with new_trace(trace):
        args = [trace.new_arg(aval) for aval in in_avals]
        outputs = fun(*args)
        closed = trace.to_jaxpr(outputs)
    if config.enable_checks:
        check_jaxpr(closed.jaxpr)
    return closed


def hoist_tracer_consts(closed: ClosedJaxpr):
    """(jaxpr, tracers): a function staged inside another transformation may close over that
    transformation's tracers, which land among the consts; call primitives (`jit`, `remat2`)
    take them as leading inputs instead, passed as operands, so that the enclosing
    transformation sees them (a JVP differentiates through them, staging reads them)."""
    jaxpr = closed.jaxpr
    pairs = list(zip(jaxpr.constvars, closed.consts, strict=True))
    tracers = [(v, c) for v, c in pairs if isinstance(c, Tracer)]
    if not tracers:
        return closed, ()
    consts = [(v, c) for v, c in pairs if not isinstance(c, Tracer)]
    hoisted = Jaxpr(
        [v for v, _ in consts], [v for v, _ in tracers] + jaxpr.invars, jaxpr.outvars, jaxpr.eqns
    )
    return ClosedJaxpr(hoisted, [c for _, c in consts]), tuple(c for _, c in tracers)
