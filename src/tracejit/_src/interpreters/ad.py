"""Forward-mode automatic differentiation: the JVP trace.

A `JVPTracer` carries a primal value and its tangent. Binding a primitive on JVP tracers runs
the primitive's JVP rule on the *parent* trace, which computes both the primal output and the
tangent output:

    sin(x + εt) = sin(x) + ε cos(x) t        jvp_rules[sin_p]: (x,), (t,) -> sin(x), cos(x) * t

Tangents that are known to be zero are kept symbolic (`Zero(aval)`) and never materialized,
so differentiating with respect to one argument costs nothing for the others. Integer and
boolean values have `float0` tangents, which are always symbolic zeros.

Rules (registered in each primitive's block, `lax/<family>.py`):

- `jvp_rules[p](primals, tangents, **params) -> (primal_out, tangent_out)`; tangents may be
  `Zero`. The helpers below build the common cases: `defjvp` from one function per operand
  (`lambda t, x: mul(t, cos(x))`), `deflinear` for linear primitives, `defjvp_zero` for
  outputs that have no derivative (comparisons, integer-valued results).
- A primitive linear in some operands needs a transpose rule (`transpose.py`): `deflinear` and
  `defjvp_linear_in` declare it so; a primitive with a JVP rule of its own declares it with
  `mark_linear`. One with no derivative at all declares `not_differentiable` instead of a rule.
  `tests/test_rule_coverage.py` checks every primitive against these declarations.

- `transpose_rules[p](ct, *operands, **params) -> list`: the rule `transpose.backward_pass`
  applies to a linear primitive (contract in `transpose.py`). Its registry lives here, beside
  `jvp_rules`, so that the primitives autodiff itself introduces (`add_any`) are defined whole in
  this module.

Reverse mode is this trace run under partial evaluation (`partial_eval.py`), then transposed
(`transpose.py`).
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api_util import as_array
from tracejit._src.array import Array
from tracejit._src.core import (
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    current_trace,
    declarations,
    get_aval,
    new_trace,
    rule_registries,
    set_current_trace,
    shape_of,
    weak_if_all_weak,
)
from tracejit._src.interpreters import structural
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, move_batch_dim
from tracejit._src.interpreters.staging import DebugInfo, StagingTracer, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, eval_jaxpr
from tracejit._src.lowering.lower import lowering_rules

# --------------------------------------------------------------------------------------------
# Symbolic zeros and tangent types


def tangent_dtype(dtype) -> np.dtype:
    """Inexact values have tangents of their own dtype; integers and booleans have float0."""
    return np.dtype(dtype) if dtypes.is_inexact(dtype) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return aval.to_tangent_aval()


class Zero:
    """A tangent (or cotangent) known to be zero, kept symbolic. Made from a primal value, its
    aval is only computed if asked for: most zeros are just skipped."""

    __slots__ = ("_aval", "_primal")

    def __init__(self, aval: ShapedArray):
        self._aval = aval

    @staticmethod
    def from_primal_value(x) -> Zero:
        zero = object.__new__(Zero)
        zero._aval = None
        zero._primal = x
        return zero

    @property
    def aval(self) -> ShapedArray:
        if self._aval is None:
            self._aval = tangent_aval(get_aval(self._primal))
            self._primal = None
        return self._aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def zeros_like_aval(aval: ShapedArray):
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    zero = np.zeros((), aval.dtype)
    return structural.broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def instantiate_zeros(tangent):
    return zeros_like_aval(tangent.aval) if type(tangent) is Zero else tangent


def add_tangents(x, y):
    """Sum of two tangents, symbolic zeros included (`add_any`: no promotion, no broadcasting)."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


# --------------------------------------------------------------------------------------------
# Rule registry and helpers

jvp_rules: dict[Primitive, object] = {}
transpose_rules: dict[Primitive, object] = {}
linear_operands: dict[Primitive, tuple[int, ...]] = {}
not_differentiable_reasons: dict[Primitive, str] = {}
rule_registries["jvp"] = jvp_rules
rule_registries["transpose"] = transpose_rules
declarations["linear in operands"] = linear_operands
declarations["not differentiable"] = not_differentiable_reasons


def mark_linear(primitive: Primitive, *argnums: int) -> None:
    """Declares `primitive` linear in the operands `argnums` (none given: in any operand, as
    variadic and call primitives are, whose params or bodies say which), so that it needs a
    transpose rule. `deflinear` and `defjvp_linear_in` declare it themselves."""
    linear_operands[primitive] = argnums


def not_differentiable(primitive: Primitive, reason: str) -> None:
    """Declares that `primitive` has no derivative, in place of a JVP rule: differentiating
    through it raises JAX's error, with `reason`."""
    not_differentiable_reasons[primitive] = reason


def _no_jvp_rule_error(primitive: Primitive) -> NotImplementedError:
    reason = not_differentiable_reasons.get(primitive)
    because = f": {reason}" if reason else ""
    return NotImplementedError(
        f"[jvp] Differentiation rule for '{primitive.name}' not implemented{because}"
    )


def defjvp(primitive: Primitive, *tangent_contributions) -> None:
    """JVP rule from one function per operand, `g(t, *primals, **params)`, giving that
    operand's contribution to the output tangent (None: the output does not depend on it
    differentiably). The contributions are summed; zero tangents contribute nothing."""

    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        tangent_out = None
        for contribution, t in zip(tangent_contributions, tangents, strict=True):
            if contribution is not None and type(t) is not Zero:
                term = contribution(t, *primals, **params)
                tangent_out = term if tangent_out is None else add_tangents(tangent_out, term)
        if tangent_out is None:
            tangent_out = Zero.from_primal_value(primal_out)
        return primal_out, tangent_out

    jvp_rules[primitive] = rule


def defjvp_zero(primitive: Primitive) -> None:
    """The output is piecewise constant (a comparison, a rounding, an index): zero tangent."""

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return out, [Zero.from_primal_value(o) for o in out]
        return out, Zero.from_primal_value(out)

    jvp_rules[primitive] = rule


def deflinear(primitive: Primitive) -> None:
    """The primitive is linear in all its operands: its JVP is itself applied to the tangents,
    with zero tangents instantiated only if some operand has a nonzero one."""

    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            zero = Zero.from_primal_value
            return primal_out, (
                [zero(o) for o in primal_out] if primitive.multiple_results else zero(primal_out)
            )
        return primal_out, primitive.bind(*map(instantiate_zeros, tangents), **params)

    jvp_rules[primitive] = rule
    mark_linear(primitive)


def defjvp_linear_in(primitive: Primitive, *linear_argnums: int) -> None:
    """The primitive is linear in the operands `linear_argnums` jointly and takes the others
    (indices, say) as non-differentiable: its JVP applies it to those operands' tangents."""

    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        if all(type(tangents[i]) is Zero for i in linear_argnums):
            return primal_out, Zero.from_primal_value(primal_out)
        args = [
            instantiate_zeros(tangents[i]) if i in linear_argnums else x
            for i, x in enumerate(primals)
        ]
        return primal_out, primitive.bind(*args, **params)

    jvp_rules[primitive] = rule
    mark_linear(primitive, *linear_argnums)


# --------------------------------------------------------------------------------------------
# add_any: the sum of tangents/cotangents that JVP rules and transposition produce

add_any_p = Primitive("add_any")


def _add_any_abstract_eval(x, y):
    if (x.shape, x.dtype) != (y.shape, y.dtype):
        raise TypeError(f"add_any: operands differ: {x.str_short()} and {y.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _add_any_batch(values, dims):
    """Equal shapes, no broadcasting: the batch dims are made to agree (an unbatched operand
    is broadcast along the batch, which add_any needs)."""
    x, y = values
    dx, dy = dims
    if dx is not None and dy is not None:
        return add_any_p.bind(x, move_batch_dim(y, dy, dx)), dx
    dim = dx if dx is not None else dy
    size = shape_of(values[0 if dx is not None else 1])[dim]
    x = x if dx is not None else move_batch_dim(batch_at_front(x, None, size), 0, dim)
    y = y if dy is not None else move_batch_dim(batch_at_front(y, None, size), 0, dim)
    return add_any_p.bind(x, y), dim


add_any_p.def_impl(np.add)
add_any_p.def_abstract_eval(_add_any_abstract_eval)
add_any_p.def_weak_type_rule(weak_if_all_weak)
deflinear(add_any_p)
transpose_rules[add_any_p] = lambda ct, x, y: [ct, ct]
batch_rules[add_any_p] = _add_any_batch
lowering_rules[add_any_p] = lambda ctx, x, y: ctx.op("stablehlo.add", [x, y])

# --------------------------------------------------------------------------------------------
# The JVP trace


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")
    carries_derivative = True  # float(x), np.asarray(x) of it raise (see Tracer)

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def to_concrete_value(self):
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value()
        return np.asarray(primal._value) if type(primal) is Array else np.asarray(primal)

    def __repr__(self):
        """As JAX 0.10.2 shows them: `GradTracer` when the tangent is being linearized (grad,
        vjp, linearize), `JVPTracer` in forward mode (jvp, jacfwd)."""
        tangent = self.tangent
        if isinstance(tangent, StagingTracer) and tangent._trace.linearizes:
            return f"GradTracer(primal={self.primal}, typeof(tangent)={tangent.aval.str_short()})"
        return f"JVPTracer(primal={self.primal}, tangent={tangent})"


class JVPTrace(Trace):
    def to_primal_tangent(self, x):
        """(primal, tangent) of an operand: values this trace does not own are constants."""
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, primitive, args, params):
        primals, tangents = zip(*map(self.to_primal_tangent, args)) if args else ((), ())
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return primitive.bind(*primals, **params)
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise _no_jvp_rule_error(primitive)
        with set_current_trace(self.parent):
            primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.new_tracer(primal_out, tangent_out)

    def new_tracer(self, primal, tangent):
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def process_custom_jvp_call(self, primitive, call, args):
        """A custom-derivative call: its rule computes the output tangents (a custom_vjp
        call's rule is fwd, with `custom_lin` standing for the tangents bwd will transpose)."""
        primals, tangents = zip(*map(self.to_primal_tangent, args)) if args else ((), ())
        if all(type(t) is Zero for t in tangents):
            with set_current_trace(self.parent):
                return primitive.bind_call(call, primals)
        if not call.symbolic_zeros:
            tangents = [instantiate_zeros(t) for t in tangents]
        with set_current_trace(self.parent):
            primals_out, tangents_out = call.jvp(primals, tangents)
        return [self.new_tracer(p, t) for p, t in zip(primals_out, tangents_out, strict=True)]

    process_custom_vjp_call = process_custom_jvp_call

    def describe(self):
        return "while differentiating (jvp)"


# --------------------------------------------------------------------------------------------
# Entry point


def jvp_flat(fun, primals, tangents):
    """Runs `fun(*tracers) -> list of outputs` under a new JVP trace; returns the primal and
    tangent outputs (tangents may be symbolic zeros)."""
    trace = JVPTrace(parent=current_trace())
    primals = [as_array(p) for p in primals]
    with new_trace(trace):
        tracers = [trace.new_tracer(p, t) for p, t in zip(primals, tangents, strict=True)]
        outs = fun(*tracers)
        pairs = [trace.to_primal_tangent(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros, instantiate):
    """The JVP of a jaxpr, as a jaxpr: [primals, tangents of the `nonzeros` inputs] ->
    [primal outputs, tangents of the nonzero outputs]. An output tangent is nonzero when it
    depends on a nonzero input tangent or `instantiate` (a list of bools) asks for it.
    Returns (jvp jaxpr, out_nonzeros). Control-flow rules use it on their bodies."""
    in_avals = closed.in_avals
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros, strict=True) if nz]
    found = {}

    def jvp_fun(*args):
        primals, nonzero_tangents = args[: len(in_avals)], iter(args[len(in_avals) :])
        tangents = [
            next(nonzero_tangents) if nz else Zero(tangent_aval(a))
            for a, nz in zip(in_avals, nonzeros, strict=True)
        ]
        outs, tangents_out = jvp_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents
        )
        out_nonzeros = [
            type(t) is not Zero or inst for t, inst in zip(tangents_out, instantiate, strict=True)
        ]
        found["out_nonzeros"] = out_nonzeros
        kept = [t for t, nz in zip(tangents_out, out_nonzeros, strict=True) if nz]
        return [*outs, *map(instantiate_zeros, kept)]

    jaxpr = trace_to_jaxpr(jvp_fun, [*in_avals, *tangent_avals], DebugInfo(jvp_fun, "jvp"))
    return jaxpr, found["out_nonzeros"]


def call_jvp(bind_call, bodies, primals, tangents):
    """JVP of a primitive that calls jaxprs (`jit`, `remat2`, `cond`'s branches): the same
    primitive calling the bodies' JVPs, so that it stays one call (one compiled program, one
    branch) under differentiation. An output tangent is nonzero if any body makes it so.

    `bind_call(jvp_bodies, nonzero_tangents)` binds the primitive on the JVP bodies, whose
    inputs are the primals then the nonzero tangents. Returns (primal outs, tangent outs)."""
    nonzeros = [type(t) is not Zero for t in tangents]
    num_outs = len(bodies[0].out_avals)
    jvp_bodies, out_nonzeros = [], [False] * num_outs
    for body in bodies:
        jvp_body, found = jvp_jaxpr(body, nonzeros, [False] * num_outs)
        jvp_bodies.append(jvp_body)
        out_nonzeros = [a or b for a, b in zip(out_nonzeros, found, strict=True)]
    if len(bodies) > 1:  # every body must give the tangents any one of them gives
        jvp_bodies = [jvp_jaxpr(body, nonzeros, out_nonzeros)[0] for body in bodies]
    outs = bind_call(jvp_bodies, [t for t in tangents if type(t) is not Zero])
    primals_out, nonzero_out = outs[:num_outs], iter(outs[num_outs:])
    tangents_out = [
        next(nonzero_out) if nz else Zero.from_primal_value(p)
        for p, nz in zip(primals_out, out_nonzeros, strict=True)
    ]
    return primals_out, tangents_out
