"""Transposition of linear jaxprs: the backward pass of reverse mode.

A linear jaxpr (what `partial_eval.linearize_flat` stages) maps input tangents to output
tangents through linear primitives, reading its constvars (residuals) as fixed values. Its
transpose maps output cotangents to input cotangents: walk the equations backwards, and for
each one hand the cotangent of its output to the primitive's transpose rule, which returns the
cotangents of its linear operands; cotangents reaching one variable are summed.

    y = mul t c      transposes to      ct_t = mul ct_y c

Rules (registered in each primitive's block, `lax/<family>.py`):

- `transpose_rules[p](ct, *operands, **params) -> list` with one cotangent per operand: the
  linear operands arrive as `UndefinedPrimal(aval)`, the others as values; return None for
  non-linear operands. `ct` may be a symbolic `Zero`; for `multiple_results` primitives it is a
  list.
"""

from __future__ import annotations

from tracejit._src.core import Primitive, ShapedArray, rule_registries
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, add_tangents, custom_lin_p
from tracejit._src.jaxpr import Jaxpr, Literal, literal_operand

transpose_rules: dict[Primitive, object] = {}
rule_registries["transpose"] = transpose_rules


class UndefinedPrimal:
    """A linear operand of an equation being transposed: its value is what we solve for."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr: Jaxpr, consts, cotangents_out, primals_in=None) -> list:
    """Cotangents of the jaxpr's invars given those of its outvars (which may be `Zero`).

    Every equation is linear in the variables it reads that derive from the invars; constvars,
    literals and what equations compute from them alone are fixed values. Runs on the current
    trace, so a backward pass can itself be differentiated or staged. `primals_in`, if given,
    holds a value for each invar that is not linear (and an `UndefinedPrimal` for each that is).
    """
    known = {v: c for v, c in zip(jaxpr.constvars, consts, strict=True)}
    for var, primal in zip(jaxpr.invars, primals_in or (), strict=False):
        if not is_undefined_primal(primal):
            known[var] = primal
    cotangents = {}

    def add_cotangent(var, ct):
        if isinstance(var, Literal) or var in known or type(ct) is Zero:
            return
        cotangents[var] = add_tangents(cotangents[var], ct) if var in cotangents else ct

    def pop_cotangent(var):
        ct = cotangents.pop(var, None)
        return Zero(var.aval) if ct is None else ct

    def read_operand(atom):
        if isinstance(atom, Literal):
            return literal_operand(atom)
        return known[atom] if atom in known else UndefinedPrimal(atom.aval)

    # Forward: equations that read no linear variable compute fixed values (an instantiated
    # zero, a residual computed inside the jaxpr); evaluate them now.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        operands = [read_operand(atom) for atom in eqn.invars]
        if any(map(is_undefined_primal, operands)):
            linear_eqns.append((eqn, operands))
            continue
        outs = eqn.primitive.bind(*operands, **eqn.params)
        for var, value in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            known[var] = value
    # Backward: the linear equations, in reverse.
    for var, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        add_cotangent(var, ct)
    for eqn, operands in reversed(linear_eqns):
        cts_out = [pop_cotangent(v) for v in eqn.outvars]
        if all(type(ct) is Zero for ct in cts_out):
            continue
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"[transpose] transpose rule for '{eqn.primitive.name}' is not implemented: it "
                "is either not linear or its rule is missing"
            )
        ct = cts_out if eqn.primitive.multiple_results else cts_out[0]
        cts_in = rule(ct, *operands, **eqn.params)
        for atom, operand, ct_in in zip(eqn.invars, operands, cts_in, strict=True):
            if is_undefined_primal(operand) and ct_in is not None:
                add_cotangent(atom, ct_in)
    return [pop_cotangent(v) for v in jaxpr.invars]


# --- rules of the primitives that autodiff itself introduces --------------------------------


def _add_any_transpose(ct, x, y):
    return [ct, ct]


transpose_rules[ad.add_any_p] = _add_any_transpose
ad.deflinear(ad.add_any_p)


def _custom_lin_transpose(cts, *operands, num_res, bwd, out_avals, in_avals):
    residuals = operands[:num_res]
    cts = [ad.zeros_like_aval(ad.tangent_aval(a)) if type(c) is Zero else c
           for c, a in zip(cts, out_avals, strict=True)]  # fmt: skip
    cts_in = [Zero(ad.tangent_aval(a)) if c is None else c
              for c, a in zip(bwd(residuals, cts), in_avals, strict=True)]  # fmt: skip
    return [None] * num_res + cts_in


transpose_rules[custom_lin_p] = _custom_lin_transpose


def transposed_call_body(closed, cts, args):
    """What call primitives (`jit`, `remat2`) transpose into: another call, of the transposed
    body. Returns (that body as a closed jaxpr, its operands): it takes the call's known
    operands and its nonzero cotangents and gives the cotangents of the linear operands."""
    from tracejit._src.core import get_aval
    from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr

    linear = [is_undefined_primal(a) for a in args]
    known = [a for a, lin in zip(args, linear, strict=True) if not lin]
    nonzero = [type(ct) is not Zero for ct in cts]
    ct_avals = [ad.tangent_aval(a) for a in closed.out_avals]

    def transposed_body(*values):
        known_values, ct_values = iter(values[: len(known)]), iter(values[len(known) :])
        primals = [a if lin else next(known_values) for a, lin in zip(args, linear, strict=True)]
        cts_out = [
            next(ct_values) if nz else Zero(aval)
            for nz, aval in zip(nonzero, ct_avals, strict=True)
        ]
        cts_in = backward_pass(closed.jaxpr, closed.consts, cts_out, primals)
        return [ad.instantiate_zeros(ct) for ct, lin in zip(cts_in, linear, strict=True) if lin]

    avals = [get_aval(a) for a in known]
    avals += [a for a, nz in zip(ct_avals, nonzero, strict=True) if nz]
    body = trace_to_jaxpr(transposed_body, avals, DebugInfo(transposed_body, "transpose"))
    return body, [*known, *(ct for ct in cts if type(ct) is not Zero)]


def call_cotangents(cts_in, args) -> list:
    """The cotangents a transposed call gives back, one per operand of the original call
    (None for the known ones)."""
    cts_in = iter(cts_in)
    return [next(cts_in) if is_undefined_primal(a) else None for a in args]
