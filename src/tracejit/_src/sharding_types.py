"""Shardings in types: each result's sharding over Explicit mesh axes, from its operands'.

On a mesh whose axes are `Explicit`, an aval says how its value is split (`f32[8@i]`, see
`core.ShapedArray`). Every trace that computes avals (staging, and eager evaluation of arrays
so placed) passes the abstract evaluation's result through `apply_sharding_rules`, which asks
the primitive's rule in `sharding_rules` (registered by `lax/sharding_in_types.py`) how its
results are split. Programs without such meshes never get here: the traces test one flag
(`sharding.sharding_in_types`) first.
"""

from __future__ import annotations

from contextlib import contextmanager

from tracejit._src.core import Primitive, ShapedArray, rule_registries
from tracejit._src.sharding import NamedSharding, PartitionSpec, ShardingTypeError

sharding_rules: dict[Primitive, object] = {}
"""`rule(in_avals, out_avals, **params) -> specs`: per output, the `PartitionSpec` (over the
Explicit axes of the operands' mesh) its type carries, or its `NamedSharding` where the result
is typed on another mesh (a `reshard` to other axis types), or None where it is not typed (on
a mesh without Explicit axes), given operands of which some carry one;
raises `ShardingTypeError` where JAX's rule does. Registered for existing primitives by
`lax/sharding_in_types.py`."""
rule_registries["sharding"] = sharding_rules


sharding_rules_suspended = [0]
"""How many `suspended_sharding_rules` blocks are running: within them results are untyped."""


@contextmanager
def suspended_sharding_rules():
    """Within the block, results carry no sharding in their types: for computations that stand
    for another whose types are known (a shard_map's global form, a vmap over the mesh axes
    whose intermediates no rule of JAX's types)."""
    sharding_rules_suspended[0] += 1
    try:
        yield
    finally:
        sharding_rules_suspended[0] -= 1


def apply_sharding_rules(primitive: Primitive, in_avals, out, params):
    """`out` (abstract evaluation's result: an aval or a list) typed with the sharding of
    `primitive`'s rule, where an operand's type carries an Explicit mesh's sharding. A call of a
    body (`jit`, control flow) keeps the types its body gave; a primitive with no rule is fine
    on operands replicated over the mesh, and a NotImplementedError otherwise."""
    typed = [a._sharding for a in in_avals if getattr(a, "_sharding", None) is not None]
    if not typed or sharding_rules_suspended[0] or (primitive.multiple_results and not out):
        return out
    mesh = typed[0].mesh
    for sharding in typed:
        if sharding.mesh != mesh:
            raise ShardingTypeError(
                f"{primitive.name}: operands are sharded over different meshes: {mesh} and "
                f"{sharding.mesh}"
            )
    outs = out if primitive.multiple_results else [out]
    rule = sharding_rules.get(primitive)
    if rule is None and any(a._sharding is not None for a in outs):
        return out  # (typed by its abstract evaluation, as a shard_map's results are)
    if rule is None:
        body = _body_out_avals(params, len(outs))
        if body is not None:
            specs = [_spec_from_body(a, b) for a, b in zip(outs, body, strict=True)]
            return _typed_outputs(primitive, outs, specs, mesh)
        named = sorted({n for s in typed for n in s.spec.mesh_axes()})
        if named:
            raise NotImplementedError(
                f"{primitive.name} of operands typed {[a.str_short() for a in in_avals]}: its "
                f"sharding rule (for values sharded over Explicit mesh axes {named}) is not "
                "built yet; reshard them replicated (`jax.sharding.reshard(x, P())`) or use Auto "
                "mesh axes"
            )
        specs = [PartitionSpec(*([None] * len(a.shape))) for a in outs]
    else:
        specs = rule(in_avals, outs, **params)
    return _typed_outputs(primitive, outs, specs, mesh)


def _typed_outputs(primitive, outs, specs, mesh):
    typed_outs = [
        ShapedArray(
            a.shape,
            a.dtype,
            a.weak_type,
            sharding=spec
            if spec is None or isinstance(spec, NamedSharding)
            else NamedSharding(mesh, spec),
        )
        for a, spec in zip(outs, specs, strict=True)
    ]
    return typed_outs if primitive.multiple_results else typed_outs[0]


def _body_out_avals(params: dict, count: int):
    """The output avals of the body a primitive calls (a `jit`'s, `cond`'s first branch, a
    loop's), if it has `count` of them; None for a primitive holding no body. (`jaxpr.py`'s
    classes, known here by their fields since that module is built on this one.)"""
    found = None
    for value in params.values():
        for item in value if isinstance(value, tuple) else (value,):
            jaxpr = getattr(item, "jaxpr", item)
            if hasattr(jaxpr, "eqns"):
                avals = [v.aval for v in jaxpr.outvars]
                if len(avals) == count:
                    return avals
                found = [None] * count
    return found


def _spec_from_body(out: ShapedArray, body) -> PartitionSpec:
    """A result's spec from the body's output it is made of: the same, or stacked along a new
    leading dimension (`scan`'s); else unsharded."""
    spec = body.sharding.spec if body is not None and body._sharding is not None else None
    if spec is None:
        return PartitionSpec(*([None] * out.ndim))
    if body.shape == out.shape:
        return spec
    if out.shape[1:] == body.shape:
        return PartitionSpec(None, *spec)
    return PartitionSpec(*([None] * out.ndim))
