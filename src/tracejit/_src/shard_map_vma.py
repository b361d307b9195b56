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
operand varying along theirs. An equation with a body of its own (`jit`, `cond`, `scan`)
gives every result the union of its operands' vmas; its body is not typed.
"""

from __future__ import annotations

from tracejit._src.core import MeshAxes
from tracejit._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from tracejit._src.lax import parallel, parallel_exchanges

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
        elif _holds_body(eqn.params):
            out_vma = union
        else:
            invars = [self.varying(a, union) for a in invars]
            out_vma = union
        outvars = [self.new_var(v, out_vma) for v in eqn.outvars]
        self.eqns.append(JaxprEqn(invars, outvars, p, params, eqn.source_info))


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
                f"* {where} is {spec!r} which implies that the corresponding output value is "
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
