"""`with_sharding_constraint` and `reshard`: where a partitioned program's values are laid out.

In a program XLA partitions over a mesh (`jit` of sharded arrays, `spmd.PartitionedProgram`)
the constraint lowers to the `@Sharding` annotation its partitioner reads; everywhere else
(eagerly, in a single-device program) it is the identity, as the values are the same.

    b:f32[8] = sharding_constraint[layout=None sharding=NamedSharding(...) ...] a

`reshard` also changes the value's type on Explicit mesh axes (`b:f32[8@i] = reshard a`).
"""

from __future__ import annotations

from tracejit._src.array import ShardedArray
from tracejit._src.core import Primitive, ShapedArray, Tracer, current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.lax.standard import weak_if_all_weak
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.sharding import (
    NamedSharding,
    PartitionSpec,
    Sharding,
    get_mesh,
    hlo_sharding,
)
from tracejit._src.sharding_types import suspended_sharding_rules
from tracejit._src.tree_util import tree_flatten, tree_leaves, tree_unflatten

# --- sharding_constraint --------------------------------------------------------------------
sharding_constraint_p = Primitive("sharding_constraint")


def with_sharding_constraint(x, shardings):
    """`x` itself, laid out as `shardings` says (a Sharding, a PartitionSpec under `set_mesh`,
    or a pytree prefix of `x` of them) where XLA partitions the program; elsewhere a no-op."""
    leaves, tree = tree_flatten(x)
    out = [
        leaf if sharding is None else _constrain(leaf, sharding)
        for leaf, sharding in zip(leaves, flat_shardings(shardings, leaves, tree), strict=True)
    ]
    return tree_unflatten(tree, out)


def flat_shardings(shardings, leaves, tree) -> list:
    """One NamedSharding (or None) per leaf from a Sharding, a PartitionSpec (of the current
    mesh, `set_mesh`) or a pytree prefix of them, each checked against its leaf's shape."""
    is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))
    if is_leaf(shardings):
        given = [shardings] * len(leaves)
    else:
        spec_leaves, spec_tree = tree_flatten(shardings, is_leaf=is_leaf)
        subtrees = spec_tree.flatten_up_to(tree_unflatten(tree, [0] * len(leaves)))
        given = [s for s, sub in zip(spec_leaves, subtrees, strict=True) for _ in tree_leaves(sub)]
    out = []
    for leaf, sharding in zip(leaves, given, strict=True):
        if isinstance(sharding, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise ValueError(
                    "with_sharding_constraint requires a non-empty mesh in context when a "
                    f"PartitionSpec is given: {sharding!r}. Use jax.set_mesh or pass a "
                    "NamedSharding."
                )
            sharding = NamedSharding(mesh, sharding)
        if isinstance(sharding, NamedSharding):
            sharding.shard_shape(getattr(leaf, "shape", ()))  # (JAX's error if indivisible)
        out.append(sharding)
    return out


def _constrain(x, sharding):
    return sharding_constraint_p.bind(
        x, layout=None, sharding=sharding, unconstrained_dims=frozenset()
    )


sharding_constraint_p.def_impl(lambda x, **params: x)
sharding_constraint_p.def_abstract_eval(lambda x, **params: x)
sharding_constraint_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(sharding_constraint_p)
transpose_rules[sharding_constraint_p] = lambda ct, x, *, sharding, **params: [
    _constrain(ct, sharding)
]


def _sharding_constraint_lowering(ctx, x, *, sharding, **params):
    """An annotation XLA's partitioner reads (`@Sharding`); nothing in an unpartitioned one."""
    if ctx.module.num_partitions == 1:
        return x
    attributes = {
        "call_target_name": '"Sharding"',
        "mhlo.sharding": f'"{hlo_sharding(sharding, len(ctx.avals_in[0].shape))}"',
    }
    return ctx.op("stablehlo.custom_call", [x], attributes=attributes)


lowering_rules[sharding_constraint_p] = _sharding_constraint_lowering


def _sharding_constraint_batch(values, dims, *, sharding, **params):
    """The batch dimension is not constrained: None at its place in the spec."""
    (x,), (dim,) = values, dims
    spec = list(sharding.spec) + [None] * max(0, dim - len(sharding.spec))
    spec.insert(dim, None)
    batched = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return _constrain(x, batched), dim


batch_rules[sharding_constraint_p] = _sharding_constraint_batch


# --- reshard --------------------------------------------------------------------------------
class ReshardPrimitive(Primitive):
    """Eagerly, the value is moved onto the devices (`eager_reshard`, which `shard_map.py`
    installs: placing arrays is the compilation layer's)."""

    def bind(self, x, **params):
        if type(current_trace()) is EvalTrace:
            return eager_reshard[0](x, params["dst_sharding"])
        return super().bind(x, **params)


eager_reshard = [lambda x, sharding: x]
reshard_p = ReshardPrimitive("reshard")
"""`reshard` under a trace: the value laid out as `dst_sharding` says, its type saying so on
Explicit mesh axes (`lax/sharding_in_types.py`); a sharding of a mesh whose axes are not
Explicit leaves the type unsharded (`auto_axes`). Printed `b:f32[8,4@i] = reshard a`, its
params hidden, as JAX prints it; lowered as a sharding constraint."""


def reshard(x, sharding):
    return reshard_p.bind(x, dst_sharding=sharding)


reshard_p.def_impl(lambda x, **params: x)
reshard_p.def_abstract_eval(
    lambda x, *, dst_sharding: ShapedArray(x.shape, x.dtype, x.weak_type, sharding=dst_sharding)
)
reshard_p.def_weak_type_rule(weak_if_all_weak)
reshard_p.params_to_print = lambda params: {}
ad.deflinear(reshard_p)


def _reshard_transpose(ct, x, *, dst_sharding):
    """The cotangent laid out as the operand was (its type's sharding), or as XLA chooses."""
    sharding = x.aval._sharding
    return [ct if sharding is None else reshard(ct, sharding)]


transpose_rules[reshard_p] = _reshard_transpose
lowering_rules[reshard_p] = lambda ctx, x, *, dst_sharding: _sharding_constraint_lowering(
    ctx, x, sharding=dst_sharding
)


def _reshard_batch(values, dims, *, dst_sharding):
    (x,), (dim,) = values, dims
    spec = list(dst_sharding.spec) + [None] * max(0, dim - len(dst_sharding.spec))
    spec.insert(dim, None)
    return reshard(x, NamedSharding(dst_sharding.mesh, PartitionSpec(*spec))), dim


batch_rules[reshard_p] = _reshard_batch


def laid_out_as(aval, compute):
    """`compute()`, laid out as `aval`'s type says on Explicit mesh axes: computed untyped (no
    sharding rule refuses it), then resharded. The cotangents of products take their operand's
    type so, as JAX passes the operand's sharding as the transposed product's `out_sharding`
    (their contracted dimensions, as a batch split over devices, may be split on both sides)."""
    typed = aval._sharding
    if typed is None:
        return compute()
    with suspended_sharding_rules():
        out = compute()
    return reshard(out, typed)


def laid_out_like(x, prototype):
    """`x`, made like `prototype` (`jnp.full_like` and friends), laid out as `prototype` is, as
    JAX lays it out: eagerly, as the array `prototype` is spread over devices (Auto, Explicit
    or pmap's mesh); under a trace, as its type says on Explicit mesh axes."""
    if type(current_trace()) is EvalTrace:
        return eager_reshard[0](x, prototype.sharding) if isinstance(prototype, ShardedArray) else x
    if isinstance(prototype, (ShardedArray, Tracer)) and prototype.aval._sharding is not None:
        return reshard(x, prototype.aval._sharding)
    return x
