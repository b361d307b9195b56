"""Jaxprs: the typed, first-order IR that tracing produces and transformations consume.

    { lambda c:f32[3]; a:f32[3]. let
        b:f32[3] = sin a
        d:f32[3] = mul b c
      in (d,) }

A `Jaxpr` has constvars (`c`, values supplied by a `ClosedJaxpr`), invars (`a`), a list of
equations (`JaxprEqn`: a primitive applied to atoms, with static params), and outvars. Atoms are
`Var`s (typed by an aval) or `Literal`s (scalar constants inlined into the equation that uses
them). Names like `a`, `b`, `ba` are given at print time, in order of appearance.

`check_jaxpr` type-checks a jaxpr against the primitives' abstract evaluation rules (the tests run
it on every jaxpr they build); `eval_jaxpr` interprets one by binding its primitives on the
current trace, which makes it the building block of every jaxpr-to-jaxpr transformation.
"""

from __future__ import annotations

import collections
import functools
import itertools

import numpy as np

from tracejit._src import pretty_printer as pp
from tracejit._src.array import make_array
from tracejit._src.core import Primitive, ShapedArray, get_aval, python_scalar_types
from tracejit._src.errors import JaxprTypeError

_var_ids = itertools.count()


class Var:
    __slots__ = ("_id", "aval")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self._id = next(_var_ids)

    def __repr__(self):
        return f"Var(id={self._id}):{self.aval.str_short()}"


class DropVar(Var):
    """An output nobody reads; printed `_`."""

    def __repr__(self):
        return f"_:{self.aval.str_short()}"


class Literal:
    """A scalar constant inlined into an equation: printed `2.0:f32[]`."""

    __slots__ = ("aval", "val")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"{self.val}:{self.aval.str_short()}"


Atom = Var | Literal  # what an equation reads: a variable or a literal (`jax.core.Atom`)


class JaxprEqn:
    __slots__ = ("invars", "outvars", "params", "primitive", "source_info")

    def __init__(self, invars, outvars, primitive: Primitive, params: dict, source_info=None):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.primitive = primitive
        self.params = params
        self.source_info = source_info

    def __repr__(self):
        return pp_eqn(self, _Names()).format()


class Jaxpr:
    __slots__ = ("constvars", "eqns", "invars", "outvars")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def pretty_print(self, width: int = pp.DEFAULT_WIDTH) -> str:
        return pp_toplevel_jaxpr(self).format(width)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("consts", "jaxpr")

    def __init__(self, jaxpr: Jaxpr, consts):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def literals(self):
        return self.consts

    def pretty_print(self, width: int = pp.DEFAULT_WIDTH) -> str:
        return self.jaxpr.pretty_print(width)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__


# --------------------------------------------------------------------------------------------
# Printing


def _alphabetic_name(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba: base 26 with `a` as the zero digit, as JAX prints."""
    letters = []
    while True:
        n, digit = divmod(n, 26)
        letters.append(chr(ord("a") + digit))
        if n == 0:
            return "".join(reversed(letters))


class _Names:
    """Gives each Var a name the first time the printer meets it; variables nothing reads are
    printed `_`, as JAX prints them. `shared` maps the jaxprs listed apart (`let f = ... in`)
    to their names, which variables do not take."""

    def __init__(self, shared: dict | None = None):
        self._names = {}
        self._count = 0
        self.unused = set()
        self.shared = shared or {}
        self._taken = set(self.shared.values())

    def _next_name(self) -> str:
        while (name := _alphabetic_name(self._count)) in self._taken:
            self._count += 1
        self._count += 1
        return name

    def __call__(self, var) -> str:
        if isinstance(var, Literal):
            return repr(var)
        if isinstance(var, DropVar) or var in self.unused:
            return "_"
        name = self._names.get(var)
        if name is None:
            name = self._names[var] = self._next_name()
        return name

    def alias_call(self, eqn: JaxprEqn, inner: Jaxpr) -> None:
        """Names a call's body after the call, as JAX prints `jit`: each input of the body as
        the operand it receives (literals and repeated operands aside), each output computed
        inside the body as the result it becomes (`_` if that is unused)."""
        aliased = set()  # (an operand passed twice names only the first input)
        for var, operand in zip(inner.invars, eqn.invars, strict=True):
            if not isinstance(operand, Literal) and operand not in aliased:
                aliased.add(operand)
                self._names[var] = self(operand)
        inputs = set(inner.invars)
        for var, result in zip(inner.outvars, eqn.outvars, strict=True):
            if isinstance(var, Literal) or var in inputs or var in self._names:
                continue
            if isinstance(result, DropVar) or result in self.unused:
                self.unused.add(var)
            else:
                self._names[var] = self(result)


def _pp_binder(var, names: _Names) -> pp.Doc:
    return pp.text(f"{names(var)}:{var.aval.str_short()}")


def _pp_binders(variables, names: _Names) -> pp.Doc:
    return pp.nest(4, pp.join(pp.group(pp.brk()), [_pp_binder(v, names) for v in variables]))


def _pp_param_value(value, names: _Names) -> pp.Doc:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        shared_name = names.shared.get(value)
        return pp.text(shared_name) if shared_name else pp_jaxpr(value, names)
    if isinstance(value, tuple) and value and isinstance(value[0], (Jaxpr, ClosedJaxpr)):
        items = [_pp_param_value(v, names) for v in value]
        return pp.group(
            pp.text("(")
            + pp.nest(2, pp.brk("") + pp.join(pp.brk(), items))
            + (pp.brk("") + pp.text(")"))
        )
    if isinstance(value, np.dtype):
        return pp.text(value.name)
    if isinstance(value, type) and issubclass(value, np.generic):
        return pp.text(np.dtype(value).name)
    return pp.text(str(value))


def _unused_eqn_outputs(jaxpr: Jaxpr) -> set:
    read = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        read.update(v for v in eqn.invars if isinstance(v, Var))
    return {v for eqn in jaxpr.eqns for v in eqn.outvars if v not in read}


def pp_eqn(eqn: JaxprEqn, names: _Names) -> pp.Doc:
    call_param = eqn.primitive.call_jaxpr_param
    if call_param is not None and eqn.params[call_param].jaxpr not in names.shared:
        # As JAX names a call printed with its body: the results computed in the body first,
        # then the body's other variables, then the results passed through from an input.
        names.alias_call(eqn, eqn.params[call_param].jaxpr)
        rhs = _pp_rhs(eqn, names)
        lhs = pp.join(pp.text(" "), [_pp_binder(v, names) for v in eqn.outvars])
    else:
        lhs = pp.join(pp.text(" "), [_pp_binder(v, names) for v in eqn.outvars])
        rhs = _pp_rhs(eqn, names)
    if not eqn.outvars:  # an effect without results (`debug_print[...] a`, `dce_sink`)
        return rhs
    return lhs + pp.text(" = ") + rhs


def _pp_rhs(eqn: JaxprEqn, names: _Names) -> pp.Doc:
    params = eqn.primitive.params_to_print(eqn.params)
    rhs = pp.text(eqn.primitive.name)
    if params:
        keys = sorted(params, key=lambda k: (k != "name", k))  # JAX prints `name` first
        items = [pp.text(f"{key}=") + _pp_param_value(params[key], names) for key in keys]
        rhs = rhs + pp.group(
            pp.text("[")
            + pp.nest(2, pp.brk("") + pp.join(pp.brk(), items))
            + pp.brk("")
            + pp.text("]")
        )
    # JAX prints the space before the operands even when there are none (`iota[...] `).
    args = [pp.text(names(v)) for v in eqn.invars]
    return rhs + pp.text(" ") + pp.nest(2, pp.join(pp.group(pp.brk()), args))


def _jaxprs_in(value):
    """The jaxprs an equation's param holds (a jaxpr, a closed one, or a tuple of them)."""
    if isinstance(value, ClosedJaxpr):
        return [value.jaxpr]
    if isinstance(value, Jaxpr):
        return [value]
    if isinstance(value, tuple):
        return [inner for v in value for inner in _jaxprs_in(v)]
    return []


def _shared_name(eqn: JaxprEqn, param: str) -> str:
    if param != eqn.primitive.call_jaxpr_param or "name" not in eqn.params:
        return "jaxpr"
    return "".join(c for c in eqn.params["name"] if c.isalnum() or c == "_") or "jaxpr"


def _shared_jaxprs(jaxpr: Jaxpr) -> dict:
    """The jaxprs inside `jaxpr` that a printout lists apart, before it, as JAX 0.10.2 does:
    those used more than once (counting the uses inside each use of another) and those of
    more than ten equations, in order of first use (those a jaxpr calls before those inside
    them: level by level). Each is named after the `jit` that calls
    it (`<lambda>` as `lambda`) or else `jaxpr`, numbered from 1 when a name repeats (`f`,
    `f1`)."""
    names = {}  # jaxpr -> its name, in order of first use, level by level (as JAX numbers)
    level = [jaxpr]
    while level:
        inners = [
            (inner, _shared_name(eqn, key))
            for outer in level
            for eqn in outer.eqns
            for key, value in eqn.params.items()
            for inner in _jaxprs_in(value)
        ]
        level = []
        for inner, name in inners:
            if inner not in names:
                names[inner] = name
                level.append(inner)
    uses_inside = {}  # jaxpr -> Counter of the jaxprs used inside it, transitively

    def uses(outer: Jaxpr) -> collections.Counter:
        if outer in uses_inside:
            return uses_inside[outer]
        counts = collections.Counter()
        for eqn in outer.eqns:
            for value in eqn.params.values():
                for inner in _jaxprs_in(value):
                    counts[inner] += 1
                    counts.update(uses(inner))
        uses_inside[outer] = counts
        return counts

    total = uses(jaxpr)
    shared = {}
    for inner, name in names.items():
        if total[inner] > 1 or len(inner.eqns) > 10:
            taken = set(shared.values())
            shared[inner] = next(
                f"{name}{n or ''}" for n in itertools.count() if f"{name}{n or ''}" not in taken
            )
    return shared


def pp_toplevel_jaxpr(jaxpr: Jaxpr) -> pp.Doc:
    """`jaxpr` preceded by the jaxprs it shares, each as `let name = { lambda ... } in`."""
    shared = _shared_jaxprs(jaxpr)
    names = _Names(shared)
    lets = [
        pp.text(f"let {name} = ") + pp_jaxpr(inner, names) + pp.text(" in")
        for inner, name in shared.items()
    ]
    # As JAX: the outputs nothing reads print `_` in the jaxpr printed, not in those inside
    # it (unless a call's `_` result names them).
    names.unused |= _unused_eqn_outputs(jaxpr)
    return pp.join(pp.brk(), [*lets, pp_jaxpr(jaxpr, names)])


def pp_jaxpr(jaxpr: Jaxpr, names: _Names) -> pp.Doc:
    header = (
        pp.text("{ lambda ")
        + _pp_binders(jaxpr.constvars, names)
        + pp.text("; ")
        + _pp_binders(jaxpr.invars, names)
        + pp.text(". let")
    )
    eqns = pp.join(pp.brk("; "), [pp_eqn(eqn, names) for eqn in jaxpr.eqns])
    outs = pp.join(pp.text(",") + pp.group(pp.brk()), [pp.text(names(v)) for v in jaxpr.outvars])
    trailing_comma = pp.text(",") if len(jaxpr.outvars) == 1 else pp.text("")
    body = pp.nest(4, pp.brk() + eqns)
    tail = pp.nest(
        2, pp.brk() + pp.text("in (") + pp.nest(2, outs) + trailing_comma + pp.text(") }")
    )
    return pp.group(header + body + tail)


# --------------------------------------------------------------------------------------------
# Type checking


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Raises JaxprTypeError unless every variable is bound once before use and every equation's
    output types are what its primitive's abstract evaluation says."""
    bound = set()

    def bind(var):
        if var in bound:
            raise JaxprTypeError(f"variable {var!r} is bound twice")
        bound.add(var)

    def read(atom, where):
        if isinstance(atom, Literal):
            if atom.aval.shape != () or get_aval(atom.val).dtype != atom.aval.dtype:
                raise JaxprTypeError(f"literal {atom!r} in {where} does not match its type")
            return atom.aval
        if atom not in bound:
            raise JaxprTypeError(f"variable {atom!r} used in {where} before it is bound")
        return atom.aval

    for var in (*jaxpr.constvars, *jaxpr.invars):
        bind(var)
    for eqn in jaxpr.eqns:
        where = f"equation `{eqn!r}`"
        in_avals = [read(atom, where) for atom in eqn.invars]
        try:
            out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except (TypeError, ValueError) as err:
            raise JaxprTypeError(f"{where} is ill-typed: {err}") from err
        out_avals = out if eqn.primitive.multiple_results else [out]
        if len(out_avals) != len(eqn.outvars):
            raise JaxprTypeError(
                f"{where} binds {len(eqn.outvars)} outputs but its primitive gives {len(out_avals)}"
            )
        for var, aval in zip(eqn.outvars, out_avals, strict=True):
            if not _types_match(var.aval, aval):
                raise JaxprTypeError(
                    f"{where}: output typed {var.aval.str_short()} but its primitive gives "
                    f"{aval.str_short()}"
                )
            if not isinstance(var, DropVar):
                bind(var)
    for atom in jaxpr.outvars:
        read(atom, "the outputs")


# --------------------------------------------------------------------------------------------
# Evaluation


def literal_operand(literal: Literal):
    """A literal as an operand to bind again: a weakly typed literal held as a NumPy scalar
    (staged from a weak Array) becomes a weak Array, so that re-evaluating a jaxpr gives the
    weak types that staging it gave."""
    value = literal.val
    if literal.aval.weak_type and type(value) not in python_scalar_types:
        return make_array(np.asarray(value), True)
    return value


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, propagate_source_info=True):
    """Binds the jaxpr's primitives on the current trace: evaluation under the eval trace,
    re-tracing under any other. Returns the list of outputs. (Equations staged again record
    the user's line where they are staged; `propagate_source_info` is JAX's switch for
    keeping the original lines, accepted for its callers.)"""
    env = {}

    def read(atom):
        return literal_operand(atom) if isinstance(atom, Literal) else env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    if len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}"
        )
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    return [read(atom) for atom in jaxpr.outvars]


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args):
    """`closed_jaxpr` as a function of its inputs (JAX's curried form: the arguments given
    here come first): `jaxpr_as_fun(closed)(*args)` evaluates it on the current trace."""
    return functools.partial(_call_closed, closed_jaxpr, *args)


def _call_closed(closed_jaxpr: ClosedJaxpr, *args):
    return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


# --------------------------------------------------------------------------------------------
# Dead code


def jaxprs_in_params(params) -> list[Jaxpr]:
    """The jaxprs an equation's params hold (a loop's body, the branches of `cond`), open."""
    found = []
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, ClosedJaxpr):
                found.append(item.jaxpr)
            elif isinstance(item, Jaxpr):
                found.append(item)
    return found


def has_side_effects(eqn: JaxprEqn) -> bool:
    """Whether `eqn` must run although nothing reads its outputs: its primitive declares
    `has_side_effects` (host callbacks with effects), or a jaxpr in its params (a call's
    body, a loop's) holds such an equation."""
    if getattr(eqn.primitive, "has_side_effects", False):
        return True
    for param in eqn.params.values():
        items = param if isinstance(param, tuple) else (param,)
        for item in items:
            inner = item.jaxpr if isinstance(item, ClosedJaxpr) else item
            if isinstance(inner, Jaxpr) and any(has_side_effects(e) for e in inner.eqns):
                return True
    return False


def live_equations(jaxpr: Jaxpr) -> tuple[list[bool], list[int]]:
    """(whether each equation is live, the indices of the live inputs): an equation is live if
    an output depends on it (or it `has_side_effects`), an input if a live
    equation or an output reads it. Dead equations are not lowered (e.g. the forward value
    `grad` computes and drops), and with `keep_unused=False` an input only they read is no
    parameter, as JAX prunes after the same dead-code elimination."""
    live_vars = {id(v) for v in jaxpr.outvars if not isinstance(v, Literal)}
    live = [False] * len(jaxpr.eqns)
    for k in range(len(jaxpr.eqns) - 1, -1, -1):
        eqn = jaxpr.eqns[k]
        if any(id(v) in live_vars for v in eqn.outvars) or has_side_effects(eqn):
            live[k] = True
            live_vars.update(id(v) for v in eqn.invars if not isinstance(v, Literal))
    return live, [i for i, v in enumerate(jaxpr.invars) if id(v) in live_vars]


def used_inputs(jaxpr: Jaxpr) -> list[int]:
    """Indices of the inputs that a live equation or an output reads."""
    return live_equations(jaxpr)[1]


def without_dead_equations(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` without the equations no output depends on: what transformations that stage
    more than they need (a backward pass recomputing a forward one) tidy their results with."""
    live, _ = live_equations(closed.jaxpr)
    if all(live):
        return closed
    jaxpr = closed.jaxpr
    eqns = [eqn for eqn, keep in zip(jaxpr.eqns, live, strict=True) if keep]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns), closed.consts)
