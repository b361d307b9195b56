"""`shard_map`: a per-device function over blocks of global arrays, with collectives.

`shard_map(f, mesh=, in_specs=, out_specs=)` cuts each argument into the blocks its
`PartitionSpec` lays over the mesh, runs `f` on every device's blocks (`f` sees block shapes,
and the mesh axes are named axes its collectives reduce over), and puts the outputs' blocks
together as `out_specs` says. It stages as one equation holding the per-device body:

    shard_map[check_vma=False in_specs=(P('i',),) jaxpr={ lambda ; c:f32[2]. let
        d:f32[2] = psum[axes=('i',) axis_index_groups=None] c  in (d,) }
      mesh=Mesh('i': 4, axis_types=(Auto,)) newly_manual_axes=frozenset({'i'})
      out_specs=(P(),)] a

What an equation means:
- eagerly on a PJRT platform, one program of `mesh.size` replicas runs the body on every
  device (`spmd.py`); a `jit` of nothing but a shard_map (which `pmap` is) runs it the same way;
- everywhere else (the NumPy platform, JVP, vmap, and inside a larger compiled program) it is
  its *global form*: the body under one `vmap` per mesh axis, named as the axis, over the
  blocks stacked along new leading axes, whose batching rules carry out the collectives. It
  computes the same values on one device, and every transformation of it is a transformation
  of ordinary primitives (`grad` of a shard_map included). Inside a larger compiled program
  XLA partitions the program over the mesh (`spmd.partition_shardings`), the stacked members
  laid out one per device.

Every mesh axis is manual in the body unless `axis_names=` names fewer: the others stay
global in the body (its blocks are whole along them, and collectives cannot name them), so
the devices along them compute the same blocks. `check_vma=True` types the body with the
manual axes each value varies along and checks `out_specs` against them (`shard_map_vma.py`).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import dispatch, shard_map_vma, spmd
from tracejit._src.api import jvp as jvp_fun
from tracejit._src.core import Primitive, ShapedArray, current_trace, get_aval
from tracejit._src.interpreters import ad, batching
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lax import shapes, sharding_constraints, slicing
from tracejit._src.lax.sharding_constraints import flat_shardings
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    get_mesh,
    set_mesh,
)
from tracejit._src.sharding_types import suspended_sharding_rules
from tracejit._src.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten
from tracejit._src.vmap import _flat_in_axes, vmap


# --- the primitive ----------------------------------------------------------------------------
class ShardMapPrimitive(Primitive):
    """(Not a call for the printer: its body works on blocks, and JAX names its variables
    afresh, `{ lambda ; c:f32[1,3]. let d:f32[3] = ...`.)"""

    def bind(self, *args, **params):
        trace = current_trace()
        if type(trace) is EvalTrace:  # the Arrays themselves, not their NumPy values
            return _shard_map_impl(*args, **params)
        return trace.process_primitive(self, args, params)


shard_map_p = ShardMapPrimitive("shard_map", multiple_results=True)


def _block_aval(aval, spec, mesh) -> ShapedArray:
    shape = tuple(
        size // math.prod(mesh.shape[name] for name in spec.axes_of(dim))
        for dim, size in enumerate(aval.shape)
    )
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, **params):
    return [
        spmd.global_aval(aval, spec, mesh)
        for aval, spec in zip(jaxpr.out_avals, out_specs, strict=True)
    ]


def _to_members(x, spec, mesh):
    """`x`'s blocks stacked along new leading axes, one per mesh axis the spec names (in mesh
    order), and the names of those axes."""
    shape = list(np.shape(x))
    split_shape, order = [], []  # the shape with each split dim cut, and where its axes went
    for dim, size in enumerate(shape):
        axes = spec.axes_of(dim)
        ways = [mesh.shape[name] for name in axes]
        for name, ways_of in zip(axes, ways, strict=True):
            order.append((name, len(split_shape)))
            split_shape.append(ways_of)
        split_shape.append(size // math.prod(ways))
    cut = shapes.reshape(x, tuple(split_shape))
    present = [name for name in mesh.axis_names if name in dict(order)]
    positions = dict(order)
    front = [positions[name] for name in present]
    rest = [d for d in range(len(split_shape)) if d not in front]
    return shapes.transpose(cut, tuple(front + rest)), present


def _from_members(out, spec, mesh, manual):
    """The global array of a body output given for all members (manual mesh axes leading, in
    mesh order): members along the axes the spec leaves out are taken as equal (member 0)."""
    names = [name for name in mesh.axis_names if name in manual]
    named = spec.mesh_axes()
    for position in reversed(range(len(names))):
        if names[position] not in named:
            out = slicing.index_in_dim(out, 0, position, keepdims=False)
            del names[position]
    block = tuple(out.shape[len(names) :])
    perm, merged = [], []
    for dim, size in enumerate(block):
        axes = spec.axes_of(dim)
        perm += [names.index(name) for name in axes] + [len(names) + dim]
        merged.append(size * math.prod(mesh.shape[name] for name in axes))
    return shapes.reshape(shapes.transpose(out, tuple(perm)), tuple(merged))


def _global_form(*args, laid_out=False, **params):
    """The shard_map computed on one device (see the module docstring), or (`laid_out`) in a
    program XLA partitions over its mesh, each member's blocks on its own device. Its values
    carry no sharding in their types (its blocks stacked along new axes are no arrays of
    JAX's)."""
    with suspended_sharding_rules():
        return _stacked_members_form(*args, laid_out=laid_out, **params)


def _stacked_members_form(
    *args, jaxpr, mesh, in_specs, out_specs, newly_manual_axes, laid_out, **params
):
    members = [_to_members(x, spec, mesh) for x, spec in zip(args, in_specs, strict=True)]
    body = lambda *blocks: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *blocks)
    present = [list(names) for _, names in members]
    manual = [name for name in mesh.axis_names if name in newly_manual_axes]
    for name in reversed(manual):
        in_axes = [0 if name in names else None for names in present]
        body = vmap(body, in_axes=in_axes, out_axes=0, axis_name=name, axis_size=mesh.shape[name])
    place = _placed if laid_out else lambda x, mesh, spec: x
    outs = body(*[place(value, mesh, PartitionSpec(*names)) for value, names in members])
    return [
        place(
            _from_members(place(out, mesh, PartitionSpec(*manual)), spec, mesh, manual), mesh, spec
        )
        for out, spec in zip(outs, out_specs, strict=True)
    ]


def _placed(x, mesh, spec):
    return sharding_constraints.with_sharding_constraint(x, NamedSharding(mesh, spec))


def _shard_map_impl(*args, jaxpr, mesh, **params):
    """Eagerly: on the mesh's devices, or (the NumPy platform) its global form."""
    if dispatch.backend() == "pjrt" and isinstance(mesh, Mesh):
        program = spmd.mesh_program(jaxpr, mesh, params["in_specs"], params["out_specs"], "fun")
        return program(args)
    return _global_form(*args, jaxpr=jaxpr, mesh=mesh, **params)


shard_map_p.def_impl(_shard_map_impl)


def _shard_map_jvp(primals, tangents, **params):
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    return jvp_fun(lambda *xs: _global_form(*xs, **params), list(primals), tangents)


ad.jvp_rules[shard_map_p] = _shard_map_jvp


def _shard_map_batch(values, dims, *, axis_size, axis_name, **params):
    """(The vmap keeps its axis name, which the body's collectives may name besides the mesh's:
    `vmap(pmap(f, 'i'), axis_name='j')` with `psum(x, ('i', 'j'))` in `f`.)"""
    global_form = lambda *xs: _global_form(*xs, **params)
    outs = vmap(
        global_form, in_axes=list(dims), out_axes=0, axis_name=axis_name, axis_size=axis_size
    )(*values)
    return outs, [0] * len(outs)


batching.axis_rules.add(shard_map_p)
batching.batch_rules[shard_map_p] = _shard_map_batch


def _shard_map_lowering(ctx, *args, mesh, **params):
    """Inside a larger program: its global form, on the program's one device, or laid out
    over the mesh's devices where XLA partitions the program over them (a jit calling a
    pmap: `spmd.partition_shardings`)."""
    laid_out = isinstance(mesh, Mesh) and ctx.module.num_partitions == mesh.size
    closed = trace_to_jaxpr(
        lambda *xs: _global_form(*xs, mesh=mesh, laid_out=laid_out, **params),
        ctx.avals_in,
        DebugInfo(None, "shard_map"),
    )
    return ctx.lower_sub_jaxpr(ctx.block, closed, args)


lowering_rules[shard_map_p] = _shard_map_lowering


def _compile_mesh_call(eqn, name: str, donated):
    """(A jitted shard_map's results are laid out as their types say, a spec naming each
    dimension, as JAX's jit gives them on Explicit mesh axes.)"""
    params = eqn.params
    out_specs = tuple(
        spec
        if var.aval._sharding is None
        else PartitionSpec(*(spec.axes_of(d) or None for d in range(var.aval.ndim)))
        for spec, var in zip(params["out_specs"], eqn.outvars, strict=True)
    )
    return spmd.mesh_program(
        params["jaxpr"], params["mesh"], params["in_specs"], out_specs, name, donated
    )


dispatch.device_call_compilers[shard_map_p] = _compile_mesh_call

# --- the API ----------------------------------------------------------------------------------


def _flat_specs(specs, tree, what: str, fun_name: str) -> list:
    """A spec per leaf of `tree` from `specs`, a PartitionSpec or a pytree prefix of them (or
    `pmap`'s specs, which give their flat list once its body is traced)."""
    if callable(getattr(specs, "flat", None)):
        return specs.flat()
    if isinstance(specs, PartitionSpec):
        return [specs] * tree.num_leaves
    is_spec = lambda x: isinstance(x, PartitionSpec) or x is None
    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=is_spec)
    try:
        subtrees = spec_tree.flatten_up_to(tree_unflatten(tree, [0] * tree.num_leaves))
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"shard_map {what} specification must be a tree prefix of the corresponding value, "
            f"got specification {specs!r} for value tree {tree} (function {fun_name})."
        ) from err
    return [
        PartitionSpec() if spec is None else spec
        for spec, sub in zip(spec_leaves, subtrees, strict=True)
        for _ in range(tree_structure(sub).num_leaves)
    ]


def _check_specs(specs, manual, what: str) -> None:
    for spec in specs:
        for name in spec.mesh_axes():
            if name not in manual:
                raise ValueError(
                    f"shard_map {what} argument must refer to an axis marked as manual "
                    f"({manual}), but:\n\n  {what} refers to {name!r}\n\n"
                    f"Check the {what} values passed to shard_map."
                )


def _check_divisible(fun_name, leaves, specs, mesh) -> None:
    for i, (x, spec) in enumerate(zip(leaves, specs, strict=True)):
        aval = get_aval(x)
        for dim in range(len(spec)):
            ways = math.prod(mesh.shape[name] for name in spec.axes_of(dim))
            if dim >= len(aval.shape) or aval.shape[dim] % ways:
                raise ValueError(
                    f"shard_map applied to the function '{fun_name}' was given argument arrays "
                    "with axis sizes that are not evenly divisible by the corresponding mesh "
                    f"axis sizes:\n\nThe mesh given has shape {mesh.axis_sizes} with "
                    f"corresponding axis names {mesh.axis_names}.\n\nthe argument {i} of shape "
                    f"{aval.dtype.name}{list(aval.shape)} corresponds to in_specs of value "
                    f"{spec!r}, which maps array axis {dim} to mesh axes {spec.axes_of(dim)} "
                    f"(total size {ways})"
                )


def shard_map(
    f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(), check_vma=True
):
    """`f` over the blocks of its arguments on every device of `mesh` (see the module
    docstring); usable as a decorator with the keyword arguments alone."""
    if f is None:
        return lambda g: shard_map(
            g,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=mesh,
            axis_names=axis_names,
            check_vma=check_vma,
        )
    if mesh is None:  # the mesh of the call's context (`set_mesh`)
        return lambda *args: shard_map(
            f,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=_context_mesh(),
            axis_names=axis_names,
            check_vma=check_vma,
        )(*args)
    manual = frozenset(axis_names) if axis_names else frozenset(mesh.axis_names)
    if not manual <= set(mesh.axis_names):
        raise ValueError(
            f"jax.shard_map requires axis_names={manual} to be a subset of "
            f"mesh.axis_names={frozenset(mesh.axis_names)}"
        )
    manual_env = tuple((n, size) for n, size in mesh.shape_tuple if n in manual)
    name = getattr(f, "__name__", "fun")

    explicit = _explicit_axes(mesh)

    def mapped(*args):
        leaves, in_tree = tree_flatten(args)
        if in_specs is None and explicit:
            specs = [_type_spec(x, manual) for x in leaves]
        else:
            given = in_specs if in_specs is not None else PartitionSpec()
            specs = _flat_specs(given, in_tree, "in_specs", name)
        _check_specs(specs, manual, "in_specs")
        if explicit:
            _check_types(leaves, specs, manual & explicit, explicit - manual)
        _check_divisible(name, leaves, specs, mesh)
        blocks = [_block_aval(get_aval(x), s, mesh) for x, s in zip(leaves, specs, strict=True)]
        out_trees = []

        def flat_body(*flat):
            out_leaves, out_tree = tree_flatten(f(*tree_unflatten(in_tree, flat)))
            out_trees.append(out_tree)
            return out_leaves

        body = trace_to_jaxpr(flat_body, blocks, DebugInfo(f, "shard_map"), axis_env=manual_env)
        body, closure = hoist_tracer_consts(body)
        if closure:
            raise NotImplementedError(
                "shard_map of a function closing over traced values is not built yet: pass "
                "them as arguments"
            )
        outs_specs = _flat_specs(out_specs, out_trees[0], "out_specs", name)
        _check_specs(outs_specs, manual, "out_specs")
        if check_vma:
            in_vmas = [[n for n in spec.mesh_axes() if n in manual] for spec in specs]
            body = shard_map_vma.type_body(body, in_vmas, mesh.axis_names)
            shard_map_vma.check_out_specs(name, mesh, body, outs_specs, manual)
        else:
            body = shard_map_vma.without_pvary(body)
        outs = shard_map_p.bind(
            *leaves,
            jaxpr=body,
            mesh=mesh,
            in_specs=tuple(specs),
            out_specs=tuple(outs_specs),
            check_vma=bool(check_vma),
            newly_manual_axes=manual,
        )
        return tree_unflatten(out_trees[0], outs)

    mapped.__name__ = name
    return mapped


def _explicit_axes(mesh) -> frozenset:
    return frozenset(
        n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t == AxisType.Explicit
    )


def _type_spec(x, axes) -> PartitionSpec:
    """The spec of `x`'s type (its sharding over Explicit mesh axes) over `axes` only."""
    aval = get_aval(x)
    return PartitionSpec(
        *(
            tuple(n for n in aval.sharding.spec.axes_of(d) if n in axes) or None
            for d in range(aval.ndim)
        )
    )


def _check_types(leaves, specs, manual_explicit, other_explicit) -> None:
    """On Explicit mesh axes an argument's type says how it is split: JAX's ValueError where
    `in_specs` says otherwise over the manual axes (a value is not resharded implicitly)."""
    for x, spec in zip(leaves, specs, strict=True):
        aval = get_aval(x)
        padded = PartitionSpec(*(spec[d] if d < len(spec) else None for d in range(aval.ndim)))
        if _type_spec(x, manual_explicit) != _restricted(padded, manual_explicit):
            full = PartitionSpec(*(aval.sharding.spec.axes_of(d) or None for d in range(aval.ndim)))
            raise ValueError(
                f"in_specs passed to shard_map: {padded!r} does not match the specs of the "
                f"input: {full!r} for arg: {aval}. `in_specs` is an optional argument so you "
                "can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on "
                "the arguments and then pass those args to shard_map."
            )
        if _type_spec(x, other_explicit) != PartitionSpec(*([None] * aval.ndim)):
            raise NotImplementedError(
                f"shard_map of an argument typed {aval.str_short()} whose Explicit mesh axes "
                f"{sorted(other_explicit)} are not manual in the body (axis_names=): their "
                "types in the body are not built yet"
            )


def _restricted(spec: PartitionSpec, axes) -> PartitionSpec:
    return PartitionSpec(
        *(tuple(n for n in spec.axes_of(d) if n in axes) or None for d in range(len(spec)))
    )


def _context_mesh() -> Mesh:
    mesh = get_mesh()
    if mesh is None:
        raise ValueError(
            "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh "
            "context"
        )
    return mesh


class _Infer:
    """smap's default `in_axes`: inferred from the arguments' types (Explicit axes only)."""

    def __repr__(self):
        return "Infer"


Infer = _Infer()


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """`shard_map` over the one axis `axis_name` of the current mesh (`set_mesh`), each
    argument split along its axis `in_axes` (None: whole on every device) and each output put
    together along `out_axes`; the mesh's other axes stay global in `f`."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)

    def mapped(*args):
        mesh = _context_mesh()
        if in_axes is Infer:
            types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
            if types.get(axis_name) != AxisType.Explicit:
                raise TypeError(
                    f"in_axes was not specified when axis_name=frozenset({{{axis_name!r}}}) was "
                    "of type AxisType.Auto"
                )
            raise NotImplementedError("smap inferring in_axes from Explicit types is not built")
        leaves, in_tree = tree_flatten(args)
        specs = [
            PartitionSpec() if ax is None else _axis_spec(ax % max(np.ndim(x), 1), axis_name)
            for x, ax in zip(leaves, _flat_in_axes(in_axes, args, {}), strict=True)
        ]
        out_specs = tree_map(
            lambda ax: PartitionSpec() if ax is None else _axis_spec(ax, axis_name),
            out_axes,
            is_leaf=lambda ax: ax is None,
        )
        body = shard_map(
            lambda *flat: f(*tree_unflatten(in_tree, flat)),
            mesh=mesh,
            in_specs=tuple(specs),
            out_specs=out_specs,
            axis_names={axis_name},
        )
        return body(*leaves)

    return mapped


def _axis_spec(axis: int, name) -> PartitionSpec:
    if axis < 0:
        raise NotImplementedError(f"smap with a negative out_axes ({axis}) is not built yet")
    return PartitionSpec(*([None] * axis), name)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh of the first `prod(axis_shapes)` devices (or `devices`), row-major; its axes are
    `Explicit` unless `axis_types` says otherwise, as in JAX 0.10.2."""
    axis_shapes, axis_names = tuple(axis_shapes), tuple(axis_names)
    size = math.prod(axis_shapes)
    available = list(devices) if devices is not None else dispatch.devices()
    if size > len(available):
        raise ValueError(
            f"Number of devices {len(available)} must be >= the product of mesh_shape {axis_shapes}"
        )
    types = (AxisType.Explicit,) * len(axis_names) if axis_types is None else axis_types
    grid = np.empty(size, dtype=object)
    grid[:] = available[:size]
    return Mesh(grid.reshape(axis_shapes), axis_names, types)


def reshard(xs, out_shardings):
    """`xs` laid out as `out_shardings` (a Sharding, a PartitionSpec under `set_mesh`, or a
    pytree prefix of them): moved eagerly, a `reshard` equation inside a transformation (which
    types the value with the sharding over Explicit mesh axes)."""
    leaves, tree = tree_flatten(xs)
    shardings = flat_shardings(out_shardings, leaves, tree)
    if type(current_trace()) is EvalTrace:
        move = _put_as_typed
    else:
        move = sharding_constraints.reshard
    moved = [
        leaf if s is None else move(leaf, s) for leaf, s in zip(leaves, shardings, strict=True)
    ]
    return tree_unflatten(tree, moved)


def _put_as_typed(x, sharding):
    """`x` placed as `sharding`, whose spec names each dimension where the result's type does
    (as JAX's eager `reshard` gives it: `P('i', None)` for `P('i')` on a matrix). A sharding
    of an abstract mesh (a type's, as transposition gives) is the context mesh's; without one
    `x` stays where it is."""
    if isinstance(sharding, NamedSharding) and not isinstance(sharding.mesh, Mesh):
        mesh = get_mesh()
        if mesh is None or mesh.abstract_mesh != sharding.mesh:
            return x
        sharding = NamedSharding(mesh, sharding.spec)
    if isinstance(sharding, NamedSharding) and AxisType.Explicit in sharding.mesh.axis_types:
        ndim = len(np.shape(x))
        spec = PartitionSpec(*(sharding.spec.axes_of(d) or None for d in range(ndim)))
        sharding = NamedSharding(sharding.mesh, spec, memory_kind=sharding.memory_kind)
    return dispatch.device_put(x, sharding)


sharding_constraints.eager_reshard[0] = _put_as_typed


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` with the mesh's `axes` (default: all) turned Auto: its arguments' types forget
    their sharding over them (XLA lays them out, as its results), which are then laid out as
    `out_sharding` says. Within `f` the context mesh's axes are so too."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    def wrapped(*args, **kwargs):
        if out_sharding is None:
            raise TypeError("Missing required keyword argument: 'out_sharding'")
        leaves, tree = tree_flatten(args)
        untyped = [_auto_typed(x, axes) for x in leaves]
        with _context_retyped(axes, AxisType.Auto):
            out = f(*tree_unflatten(tree, untyped), **kwargs)
        return reshard(out, out_sharding)

    return wrapped


def _auto_typed(x, axes):
    """`x` laid out as it is, on its mesh with `axes` Auto (its type then forgets them)."""
    typed = get_aval(x)._sharding
    if typed is None:
        return x
    sharding = x.sharding if type(current_trace()) is EvalTrace else typed
    return reshard(x, _retyped(sharding, axes, AxisType.Auto))


def _retyped(sharding: NamedSharding, axes, axis_type) -> NamedSharding:
    """`sharding` on its mesh with `axes` (None: all) of `axis_type`."""
    return NamedSharding(_retyped_mesh(sharding.mesh, axes, axis_type), sharding.spec)


def _retyped_mesh(mesh, axes, axis_type):
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str) else axes)
    types = [
        axis_type if n in names else t
        for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
    ]
    if isinstance(mesh, Mesh):
        return Mesh(mesh.devices, mesh.axis_names, types)
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, types)


def _context_retyped(axes, axis_type):
    """A block within which the context mesh (if any) has `axes` of `axis_type`."""
    mesh = get_mesh()
    return set_mesh(None if mesh is None else _retyped_mesh(mesh, axes, axis_type))


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` with the mesh's `axes` (default: all) turned Explicit: its arguments laid out as
    `in_sharding` and typed so over those axes (as the context mesh is within `f`); its results'
    types forget them again, as on the Auto axes they were."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    def wrapped(*args, **kwargs):
        if in_sharding is None:
            raise TypeError("Missing required keyword argument: 'in_sharding'")
        leaves, tree = tree_flatten(args)
        shardings = flat_shardings(in_sharding, leaves, tree)
        typed = [
            x if s is None else reshard(x, _retyped(s, axes, AxisType.Explicit))
            for x, s in zip(leaves, shardings, strict=True)
        ]
        with _context_retyped(axes, AxisType.Explicit):
            out = f(*tree_unflatten(tree, typed), **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        return tree_unflatten(out_tree, [_auto_typed(x, axes) for x in out_leaves])

    return wrapped
