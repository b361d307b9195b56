"""`shard_map(check_vma=True)`: which manual mesh axes each value of the body varies along.

A value in a shard_map body is either the same on every member of a manual axis (an argument
whose in_spec does not name the axis, a constant, a `psum` over it) or may differ between
them (an argument split over it, `axis_index`). Its type records the axes it varies along,
its *vma*: `f32[4]{V:i}`. An output whose out_spec does not name an axis is claimed equal on
all members of that axis; JAX refuses a body whose output may vary along it (the program would
silently keep member 0's value), and so does this check.

The body is traced as usual, then typed by one pass over its jaxpr (`type_body`): an equation
gives its results the union of its operands' vmas, after turning operands that vary along
fewer axes into varying ones with a `pvary` equation, as JAX stages it:

    { lambda ; c:f32[4,2]{V:(i,j)}. let
        d:f32[]{V:(i,j)} = pvary[axes=('i', 'j')] 2.0:f32[]
        e:f32[4,2]{V:(i,j)} = mul c d
      in (e,) }

Collectives change vmas: a reduction over an axis (`psum`, staged as JAX's `psum_invariant`)
leaves a value the same along it,
`axis_index` varies along its axis, and exchanges (`ppermute`, `all_gather`, ...) keep their
operand varying along theirs. The bodies of `jit`, `cond`, `while` and `scan` are typed the
same way from their operands' vmas (a loop's carry must come out of its body varying as it
went in, JAX's TypeError otherwise; cond's branches are made to vary alike); an equation with
another kind of body gives every result the union of its operands' vmas.
"""

from __future__ import annotations

from tracejit._src import jit
from tracejit._src.core import MeshAxes
from tracejit._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from tracejit._src.lax import parallel, parallel_exchanges
from tracejit._src.lax.control_flow import conditionals, loops, scan

_REDUCTIONS = {parallel.psum_p, parallel.pmax_p, parallel.pmin_p}
_EXCHANGES = {
    parallel.all_gather_p,
    parallel.reduce_scatter_p,
    parallel_exchanges.ppermute_p,
    parallel_exchanges.all_to_all_p,
}


def _names(axes) -> tuple:
    """The mesh axis names among a collective's axes (positional ones are ints)."""
    axes = axes if isinstance(axes, tuple) else (axes,)
    return tuple(a for a in axes if isinstance(a, str))


class _Typing:
    """One pass over a body: new variables typed with their vmas, and the equations reading
    them (pvarys inserted)."""

    def __init__(self, mesh_names: tuple):
        self.mesh_names = mesh_names
        self.env = {}  # old Var -> new Var
        self.eqns = []

    def axes(self, names) -> MeshAxes:
        return MeshAxes(names, self.mesh_names)

    def new_var(self, old: Var, vma) -> Var:
        aval = old.aval.update(vma=self.axes(vma))
        new = DropVar(aval) if isinstance(old, DropVar) else Var(aval)
        if not isinstance(old, DropVar):
            self.env[old] = new
        return new

    def read(self, atom):
        return atom if isinstance(atom, Literal) else self.env[atom]

    def varying(self, atom, vma):
        """`atom` made to vary along `vma` (a pvary of the missing axes), or itself."""
        missing = [n for n in self.mesh_names if n in vma and n not in atom.aval.vma]
        if not missing:
            return atom
        out = Var(atom.aval.update(vma=self.axes(atom.aval.vma | set(missing))))
        pvary = parallel_exchanges.pvary_p
        self.eqns.append(JaxprEqn([atom], [out], pvary, {"axes": tuple(missing)}))
        return out

    def equation(self, eqn: JaxprEqn) -> None:
        invars = [self.read(a) for a in eqn.invars]
        union = frozenset().union(*(a.aval.vma for a in invars))
        p, params = eqn.primitive, eqn.params
        if p in _REDUCTIONS:
            axes = set(_names(eqn.params["axes"]))
            (x,) = invars
            if axes & x.aval.vma and not axes <= x.aval.vma:
                raise _mixed_states(p.name, x, eqn.params["axes"])
            invars = [self.varying(x, axes)]
            out_vma = union - axes
            if p is parallel.psum_p and eqn.params["axis_index_groups"] is None:
                p, params = parallel.psum_invariant_p, {"axes": eqn.params["axes"]}
        elif p in _EXCHANGES:
            axes = set(_names(eqn.params["axis_name"]))
            invars = [self.varying(x, axes) for x in invars]
            out_vma = union | axes
        elif p is parallel_exchanges.pvary_p:  # (a pcast's)
            axes = set(eqn.params["axes"])
            (x,) = invars
            if axes <= x.aval.vma:
                raise ValueError("Unsupported pcast from=varying, to='varying'")
            if axes & x.aval.vma:
                raise _mixed_states("pcast", x, eqn.params["axes"])
            out_vma = union | axes
        elif p is parallel.axis_index_p:
            out_vma = union | set(_names(eqn.params["axis_name"]))
        elif p in _BODY_RULES:
            _BODY_RULES[p](self, eqn, invars)
            return
        elif _holds_body(eqn.params):
            out_vma = union
        else:
            invars = [self.varying(a, union) for a in invars]
            out_vma = union
        outvars = [self.new_var(v, out_vma) for v in eqn.outvars]
        self.eqns.append(JaxprEqn(invars, outvars, p, params, eqn.source_info))

    def body(self, closed: ClosedJaxpr, in_vmas) -> ClosedJaxpr:
        """A body held by an equation, typed with its inputs varying along `in_vmas`."""
        return type_body(closed, in_vmas, self.mesh_names)

    def staged(self, eqn: JaxprEqn, invars, out_vmas, params) -> None:
        """`eqn` with typed operands, results varying along `out_vmas` and new `params`."""
        outvars = [self.new_var(v, vma) for v, vma in zip(eqn.outvars, out_vmas, strict=True)]
        self.eqns.append(JaxprEqn(invars, outvars, eqn.primitive, params, eqn.source_info))


# --- equations holding bodies: typed inside, as JAX traces them ----------------------------


def _vmas(atoms) -> list:
    return [a.aval.vma for a in atoms]


def _type_jit(typing: _Typing, eqn: JaxprEqn, invars) -> None:
    body = typing.body(eqn.params["jaxpr"], _vmas(invars))
    typing.staged(eqn, invars, _vmas(body.jaxpr.outvars), dict(eqn.params, jaxpr=body))


def _type_cond(typing: _Typing, eqn: JaxprEqn, invars) -> None:
    """Branches typed with the operands; an output varies along the axes of any branch's (the
    others made to vary so at their end) and, after the cond, of the index."""
    index, operands = invars[0], invars[1:]
    branches = [typing.body(b, _vmas(operands)) for b in eqn.params["branches"]]
    joins = [
        frozenset().union(*(a.vma for a in avals))
        for avals in zip(*(b.out_avals for b in branches), strict=True)
    ]
    branches = tuple(_outputs_varying(b, joins, typing.mesh_names) for b in branches)
    outvars = [
        Var(v.aval.update(vma=typing.axes(vma))) for v, vma in zip(eqn.outvars, joins, strict=True)
    ]
    typing.eqns.append(
        JaxprEqn(
            invars, outvars, eqn.primitive, dict(eqn.params, branches=branches), eqn.source_info
        )
    )
    for old, out in zip(eqn.outvars, outvars, strict=True):
        if not isinstance(old, DropVar):
            typing.env[old] = typing.varying(out, index.aval.vma)


def _outputs_varying(closed: ClosedJaxpr, vmas, mesh_names) -> ClosedJaxpr:
    """`closed` (typed) with each output made to vary along its entry of `vmas`."""
    typing = _Typing(tuple(mesh_names))
    typing.eqns = list(closed.jaxpr.eqns)
    outvars = [
        a if isinstance(a, Literal) else typing.varying(a, vma)
        for a, vma in zip(closed.jaxpr.outvars, vmas, strict=True)
    ]
    jaxpr = closed.jaxpr
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, typing.eqns), closed.consts)


def _type_scan(typing: _Typing, eqn: JaxprEqn, invars) -> None:
    params = eqn.params
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    body = typing.body(params["jaxpr"], _vmas(invars))
    carry_in = _vmas(invars[num_consts : num_consts + num_carry])
    _check_carry("scan", eqn, carry_in, body.jaxpr.outvars[:num_carry], typing.mesh_names)
    typing.staged(eqn, invars, _vmas(body.jaxpr.outvars), dict(params, jaxpr=body))


def _type_while(typing: _Typing, eqn: JaxprEqn, invars) -> None:
    params = eqn.params
    cond_n, body_n = params["cond_nconsts"], params["body_nconsts"]
    carry = invars[cond_n + body_n :]
    cond = typing.body(params["cond_jaxpr"], _vmas(invars[:cond_n] + carry))
    predicate = cond.out_avals[0].vma
    if not all(predicate <= vma for vma in _vmas(carry)):
        raise NotImplementedError(
            f"while_loop in a shard_map(check_vma=True) body whose predicate varies along "
            f"{sorted(predicate)} but whose carry does not: its types are not built yet"
        )
    body = typing.body(params["body_jaxpr"], _vmas(invars[cond_n : cond_n + body_n] + carry))
    _check_carry("while_loop", eqn, _vmas(carry), body.jaxpr.outvars, typing.mesh_names)
    params = dict(params, cond_jaxpr=cond, body_jaxpr=body)
    typing.staged(eqn, invars, _vmas(carry), params)


def _check_carry(loop: str, eqn: JaxprEqn, carry_in, carry_out, mesh_names) -> None:
    """JAX's TypeError where a loop's carry comes out of the body varying along other manual
    axes than it went in (its leaves named as JAX names a tuple carry's)."""
    for k, (vma, out) in enumerate(zip(carry_in, carry_out, strict=True)):
        if out.aval.vma == vma:
            continue
        name = "input carry c" if len(carry_in) == 1 else f"input carry component c[{k}]"
        extra = [n for n in mesh_names if n in out.aval.vma and n not in vma]
        hint = (
            f"This might be fixed by applying `jax.lax.pcast(..., {tuple(extra)!r}, "
            f"to='varying')`, to the initial carry value corresponding to the {name}.\n"
            "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
            "information.\n\n"
            if extra
            else ""
        )
        typed_in = out.aval.update(vma=MeshAxes(vma, mesh_names))
        raise TypeError(
            f"{loop} body function carry input and carry output must have equal types, but "
            f"they differ:\n\nThe {name} has type {_long(typed_in)} but the corresponding "
            f"output carry component has type {_long(out.aval)}, so the manual axis types do "
            f"not match.\n\n{hint}Revise the function so that all output types match the "
            "corresponding input types."
        )


def _long(aval) -> str:
    """`float32[4]{V:b}`: a type with its dtype's full name, as JAX's loop errors print it."""
    return f"{aval}{_vma_text(aval)}"


def _holds_body(params: dict) -> bool:
    for value in params.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, (Jaxpr, ClosedJaxpr)):
                return True
    return False


def _mixed_states(name: str, x, axes) -> ValueError:
    return ValueError(
        f"jax.lax.{name} can only accept axis_name which corresponds to one of "
        "varying, unreduced, reduced or invarying state of the input. Got input type: "
        f"{x.aval}{_vma_text(x.aval)}, axes: {axes} and input state: {{'varying', 'invarying'}}"
    )


def _vma_text(aval) -> str:
    short = aval.str_short()
    return short[short.index("]") + 1 :]


_BODY_RULES = {
    jit.jit_p: _type_jit,
    conditionals.cond_p: _type_cond,
    scan.scan_p: _type_scan,
    loops.while_p: _type_while,
}


def type_body(body: ClosedJaxpr, in_vmas, mesh_names: tuple) -> ClosedJaxpr:
    """`body` with every variable typed with its vma (arguments varying along `in_vmas`)."""
    typing = _Typing(tuple(mesh_names))
    jaxpr = body.jaxpr
    constvars = [typing.new_var(v, ()) for v in jaxpr.constvars]
    invars = [typing.new_var(v, vma) for v, vma in zip(jaxpr.invars, in_vmas, strict=True)]
    for eqn in jaxpr.eqns:
        typing.equation(eqn)
    outvars = [typing.read(a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, invars, outvars, typing.eqns), body.consts)


def without_pvary(body: ClosedJaxpr) -> ClosedJaxpr:
    """`body` without `pcast`'s pvarys, which `check_vma=False` does not stage (as JAX)."""
    jaxpr = body.jaxpr
    alias = {}
    eqns = []
    for eqn in jaxpr.eqns:
        invars = [alias.get(a, a) if isinstance(a, Var) else a for a in eqn.invars]
        if eqn.primitive is parallel_exchanges.pvary_p:
            alias[eqn.outvars[0]] = invars[0]
        else:
            eqns.append(JaxprEqn(invars, eqn.outvars, eqn.primitive, eqn.params, eqn.source_info))
    if not alias:
        return body
    outvars = [alias.get(a, a) if isinstance(a, Var) else a for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns), body.consts)


def check_out_specs(fun_name: str, mesh, body: ClosedJaxpr, out_specs, manual) -> None:
    """JAX's ValueError where an out_spec claims an output the same along manual axes it may
    vary along."""
    problems = []
    many = len(out_specs) > 1
    for k, (aval, spec) in enumerate(zip(body.out_avals, out_specs, strict=True)):
        named = set(spec.mesh_axes())
        extra = [n for n in mesh.axis_names if n in aval.vma and n not in named and n in manual]
        if not extra:
            continue
        where = f"out_specs[{k}]" if many else "out_specs"
        if named:
            missing = [n for n in mesh.axis_names if n in manual and n not in named]
            problems.append(
                f"{'* ' if many else ''}{where} is {spec!r} which implies that the "
                "corresponding output value is "
                f"replicated across mesh axis {_quoted(missing)}, but could not infer "
                "replication over any axes"
            )
        else:
            problems.append(
                f"{'* ' if many else ''}{where} is {spec!r} which implies that the "
                "corresponding output value is only varying across mesh axes {} and not "
                f"{{{','.join(extra)}}}, but it was inferred to be possibly varying over "
                f"{{{','.join(extra)}}}"
            )
    if problems:
        raise ValueError(
            f"shard_map applied to the function '{fun_name}' was given out_specs which require "
            "replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names "
            f"{mesh.axis_names}.\n\n" + "\n\n".join(problems) + "\n\nCheck if these output "
            "values are meant to be replicated over those mesh axes. If not, consider revising "
            "the corresponding out_specs entries. If so, consider disabling the check by "
            "passing the check_vma=False argument to `jax.shard_map`."
        )


def _quoted(names) -> str:
    return ", ".join(f"'{n}'" for n in names)
