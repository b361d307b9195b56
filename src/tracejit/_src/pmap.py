"""`pmap`: map a function over an axis of its arguments, one member per device.

As in JAX 0.10.2, `pmap(f)` is `jit` of a `shard_map` over a one-axis mesh of as many
devices as the mapped size: each argument mapped along axis `a` has the spec that splits `a`
over the mesh axis (the body receives a block of size 1 there and squeezes it), unmapped ones
(`in_axes=None`) are replicated, and each output gets its mapped axis back at `out_axes`:

    jit[name=_fun jaxpr={ ... shard_map[in_specs=(P('i',),) jaxpr={ lambda ; c:f32[1,2]. let
        d:f32[2] = squeeze[dimensions=(0,)] c  ...  g:f32[1,2] = broadcast_in_dim[...] f
      in (g,) } mesh=Mesh('i': 4, axis_types=(Auto,)) ...] a }]

so one trace and one compile serve each signature, and a call is one launch for all devices.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src import dispatch, distributed, distributed_collectives, spmd
from tracejit._src.core import ShapedArray, current_trace, get_aval
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.interpreters.staging import (
    DebugInfo,
    StagingTrace,
    hoist_tracer_consts,
    trace_to_jaxpr,
)
from tracejit._src.jit import jit
from tracejit._src.lax import shapes
from tracejit._src.shard_map import shard_map
from tracejit._src.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec
from tracejit._src.tree_util import tree_flatten, tree_unflatten
from tracejit._src.vmap import _broadcast_prefix, _flat_in_axes

_DEFAULT_AXIS = "_internal_pmap_axis_name"


class IndivisibleError(ValueError):
    """A mapped size that does not fit the devices (JAX's `ValueError` subclass)."""


def pmap(
    fun=None,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums=(),
    devices=None,
    backend=None,
    axis_size=None,
    donate_argnums=(),
):
    """`fun` mapped over axis `in_axes` of its arguments, member i on device i; collectives
    inside reduce over `axis_name`. Results are Arrays spread over the devices."""
    options = {
        "in_axes": in_axes,
        "out_axes": out_axes,
        "static_broadcasted_argnums": static_broadcasted_argnums,
        "devices": devices,
        "backend": backend,
        "axis_size": axis_size,
        "donate_argnums": donate_argnums,
    }
    if fun is None:
        return lambda f: pmap(f, axis_name, **options)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    return PmappedFunction(fun, axis_name, **options)


def _argnums(value) -> tuple:
    return (value,) if isinstance(value, int) else tuple(value)


class PmappedFunction:
    """A pmapped function: keeps one jitted shard_map per signature (mapped size, static
    arguments, axes, argument tree, donations)."""

    def __init__(self, fun, axis_name, **options):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.axis_name = _DEFAULT_AXIS if axis_name is None else axis_name
        self.in_axes, self.out_axes = options["in_axes"], options["out_axes"]
        self.static = _argnums(options["static_broadcasted_argnums"])
        self.donate = _argnums(options["donate_argnums"])
        self.devices = options["devices"]
        self.backend = options["backend"]
        self.axis_size = options["axis_size"]
        self._jitted: dict = {}  # (argument tree, avals, statics, across) -> (function, size)

    def __call__(self, *args):
        static, dynamic, static_values = (), args, ()
        if self.static:
            static = {i % len(args) for i in self.static}
            dynamic = tuple(a for i, a in enumerate(args) if i not in static)
            static_values = tuple((i, args[i]) for i in sorted(static))
        leaves, in_tree = tree_flatten(dynamic)
        across = distributed.process_count() > 1 and type(current_trace()) is EvalTrace
        key = (in_tree, tuple(map(get_aval, leaves)), static_values, across)
        try:
            entry = self._jitted.get(key)
        except TypeError:
            raise ValueError("Non-hashable static arguments are not supported") from None
        if entry is None:
            entry = self._jitted[key] = self._new_signature(args, static, leaves, in_tree, across)
        jitted, size = entry
        if not across and type(current_trace()) is not EvalTrace:
            _refuse_inside_a_mapped_body(self.axis_name, size)
        return jitted(*leaves)

    def _new_signature(self, args, static, leaves, in_tree, across: bool):
        """The jitted shard_map for a new argument tree, avals or static values, and the mapped
        size; `across`: over every process's devices (`tracejit.distributed`), which JAX does
        only for a call at the top level. Under a transformation (jit, grad, vmap, make_jaxpr) JAX maps over
        this process's own devices instead, its collectives among them alone, and so does
        this: the same program in each process, without exchanges."""
        in_axes = self.in_axes
        if isinstance(in_axes, tuple) and static:
            in_axes = tuple(ax for i, ax in enumerate(in_axes) if i not in static)
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        flat_axes = [
            None if ax is None else ax % max(len(np.shape(x)), 1)
            for x, ax in zip(leaves, _flat_in_axes(in_axes, dynamic, {}), strict=True)
        ]
        size = self._mapped_size(leaves, flat_axes)
        static_values = tuple((i, args[i]) for i in sorted(static))
        donated = tuple(i for i in range(len(args)) if i in self.donate and i not in static)
        build = self._build_across_processes if across else self._build
        return build(size, static_values, flat_axes, in_tree, len(args), donated, leaves), size

    def _mapped_size(self, leaves, flat_axes) -> int:
        pairs = zip(leaves, flat_axes, strict=True)
        sizes = {get_aval(x).shape[ax] for x, ax in pairs if ax is not None}
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        size = max(sizes)
        available = self._devices()
        if self.axis_size is not None and self.axis_size != size:
            raise ValueError(
                f"pmap got axis_size={self.axis_size} but the mapped axes have size {size}"
            )
        if len(sizes) > 1 or size > len(available):
            ways = min(size, len(available))
            for x, ax in zip(leaves, flat_axes, strict=True):
                shape = get_aval(x).shape
                if ax is not None and shape[ax] != ways:
                    raise IndivisibleError(
                        f"Sharding NamedSharding(mesh=Mesh('{self.axis_name}': {ways}, "
                        f"axis_types=(Auto,)), spec={_spec(ax, self.axis_name)!r}, "
                        f"memory_kind=device) implies that array axis {ax} is partitioned "
                        f"{ways} times, but the dimension size is {shape[ax]} (full shape: "
                        f"{shape}): pmap maps one member per device, over "
                        f"{len(available)} devices"
                    )
        return size

    def _devices(self) -> list:
        if self.backend is not None and self.backend != dispatch.default_backend():
            raise RuntimeError(
                f"Unknown backend: '{self.backend}' requested, but no platforms that are "
                f"instances of {self.backend} are present."
            )
        return list(self.devices) if self.devices is not None else dispatch.devices()

    def _per_device(self, static_values, flat_axes, in_tree, num_args):
        """The body of one member, and a list that tracing it fills with its (output tree,
        output axes)."""
        out_axes_of = []  # filled once the output tree is known, while tracing

        def per_device(*blocks):
            leaves = [
                b if ax is None else shapes.squeeze(b, (ax,))
                for b, ax in zip(blocks, flat_axes, strict=True)
            ]
            dynamic = iter(tree_unflatten(in_tree, leaves))
            statics = dict(static_values)
            args = [statics[i] if i in statics else next(dynamic) for i in range(num_args)]
            out_leaves, out_tree = tree_flatten(self.fun(*args))
            outs = tree_unflatten(out_tree, out_leaves)
            axes = _broadcast_prefix(self.out_axes, outs, "out_axes")
            out_axes_of.append((out_tree, axes))
            return [
                out if ax is None else _unsqueezed(out, ax % (len(get_aval(out).shape) + 1))
                for out, ax in zip(out_leaves, axes, strict=True)
            ]

        return per_device, out_axes_of

    def _build(self, size, static_values, flat_axes, in_tree, num_args, donated, leaves):
        mesh = Mesh(self._devices()[:size], (self.axis_name,))
        in_specs = tuple(
            PartitionSpec() if ax is None else _spec(ax, self.axis_name) for ax in flat_axes
        )
        per_device, out_axes_of = self._per_device(static_values, flat_axes, in_tree, num_args)

        def out_specs_of():
            _, axes = out_axes_of[-1]
            return [PartitionSpec() if ax is None else ax for ax in axes]

        def _fun(*leaves):
            outs = shard_map(
                per_device,
                mesh=mesh,
                in_specs=in_specs,
                out_specs=_DeferredSpecs(out_specs_of, self.axis_name),
                check_vma=False,
            )(*leaves)
            out_tree, _ = out_axes_of[-1]
            return tree_unflatten(out_tree, outs)

        leaf_donations = self._donated_leaves(in_tree, donated, static_values, num_args)
        return jit(_fun, donate_argnums=leaf_donations)

    def _build_across_processes(
        self, size, static_values, flat_axes, in_tree, num_args, donated, leaves
    ):
        """pmap over every process's devices (`tracejit.distributed`): each process passes its
        own members (as many as its devices) and gets their results; the body, traced with the
        axis's global size, runs as a program of this process's replicas whose collectives
        exchange data with the other processes (`distributed_collectives.py`)."""
        local = dispatch.devices()
        if size != len(local):
            raise ValueError(
                f"pmap across {distributed.process_count()} processes maps one member per local "
                f"device: the mapped axes have size {size}, but this process has {len(local)} "
                "devices"
            )
        blocks = [
            ShapedArray(
                tuple(1 if d == ax else n for d, n in enumerate(aval.shape)),
                aval.dtype,
                aval.weak_type,
            )
            for aval, ax in zip(map(get_aval, leaves), flat_axes, strict=True)
        ]
        per_device, out_axes_of = self._per_device(static_values, flat_axes, in_tree, num_args)
        members = size * distributed.process_count()
        body = trace_to_jaxpr(
            per_device, blocks, DebugInfo(self.fun, "pmap"), axis_env=((self.axis_name, members),)
        )
        body, closure = hoist_tracer_consts(body)
        if closure:
            raise NotImplementedError(
                "pmap across processes of a function closing over traced values is not built"
            )
        # donated arguments' buffers: outputs reuse them, and so may exchanges (in place)
        donations = self._donated_leaves(in_tree, donated, static_values, num_args)
        flags = tuple(i in donations for i in range(len(leaves))) if donations else None
        _, aliases = dispatch.plan_parameters(body, flags, keep_unused=True, stacklevel=4)
        overwritable = distributed_collectives.overwritable(body.jaxpr, aliases)
        span = distributed_collectives.span_of(self.axis_name, size, overwritable)
        aliased = tuple(i in aliases for i in range(len(leaves))) if aliases else None
        out_tree, out_axes = out_axes_of[-1]
        out_specs = tuple(
            PartitionSpec() if ax is None else _spec(ax % len(aval.shape), self.axis_name)
            for ax, aval in zip(out_axes, body.out_avals, strict=True)
        )
        in_specs = tuple(
            PartitionSpec() if ax is None else _spec(ax, self.axis_name) for ax in flat_axes
        )
        mesh = Mesh(local, (self.axis_name,))
        name = getattr(self.fun, "__name__", "fun")
        program = spmd.mesh_program(
            body, mesh, in_specs, out_specs, name, donated=aliased, span=span
        )

        return lambda *leaves: tree_unflatten(out_tree, program(leaves))

    def _donated_leaves(self, in_tree, donated, static_values, num_args) -> tuple:
        """The flat positions of the leaves of the donated arguments."""
        if not donated:
            return ()
        statics = {i for i, _ in static_values}
        dynamic_positions = [i for i in range(num_args) if i not in statics]
        positions, offset = [], 0
        for i, subtree in zip(dynamic_positions, in_tree.children(), strict=True):
            if i in donated:
                positions += range(offset, offset + subtree.num_leaves)
            offset += subtree.num_leaves
        return tuple(positions)


def _refuse_inside_a_mapped_body(name, size: int) -> None:
    """JAX 0.10.2 runs no pmap inside the body of another pmap or shard_map (nested pmaps):
    the inner pmap's mesh is not the body's context mesh, whose axes are manual there. Its
    ValueError, raised before anything is traced."""
    trace = current_trace()
    while trace is not None:
        if isinstance(trace, StagingTrace) and trace.debug_info.transformation in (
            "pmap",
            "shard_map",
        ):
            outer = trace.axis_sizes
            device = dispatch.devices()[0]
            context = AbstractMesh(
                outer.values(),
                outer.keys(),
                AxisType.Manual,
                device_kind=device.device_kind,
                platform=device.platform,
            )
            inner = f"Mesh('{name}': {size}, axis_types=(Auto,))"
            raise ValueError(
                f"The context mesh {context!r} should match the mesh passed to shard_map {inner}"
            )
        trace = trace.parent


def _spec(axis: int, name) -> PartitionSpec:
    return PartitionSpec(*([None] * axis), name)


def _unsqueezed(x, axis: int):
    shape = tuple(get_aval(x).shape)
    new = (*shape[:axis], 1, *shape[axis:])
    dims = tuple(d + (d >= axis) for d in range(len(shape)))
    return shapes.broadcast_in_dim(x, new, dims)


class _DeferredSpecs:
    """pmap's out_specs: known only once the body is traced (its output tree and out_axes)."""

    def __init__(self, specs_of, name):
        self.specs_of = specs_of
        self.name = name

    def flat(self) -> list:
        return [
            spec if isinstance(spec, PartitionSpec) else _spec(spec, self.name)
            for spec in self.specs_of()
        ]


_REMOVED = ("device_put_sharded", "device_put_replicated")


def removed_attribute(name: str):
    """`tracejit.<name>` for the names JAX 0.10.2 removed: its AttributeError, pointing to
    `device_put` (the package's module `__getattr__`)."""
    if name in _REMOVED:
        raise AttributeError(
            f"jax.{name} is deprecated; use jax.device_put instead. See "
            "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a "
            "drop-in replacement."
        )
    raise AttributeError(f"module 'tracejit' has no attribute {name!r}")
