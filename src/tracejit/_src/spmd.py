"""Running one per-device program on every device of a mesh, in one launch.

`shard_map` (and `pmap`, built on it) hands over a per-device body, its mesh and the
`PartitionSpec`s of its inputs and outputs. The body is compiled once as a program of
`mesh.size` *replicas* (device assignment: the mesh's devices, row-major), whose collectives
exchange data over the mesh axes (`Module.replica_axes`, see `lax/parallel.py`). A call places
each argument's blocks on their devices (an Array already laid out so passes its buffers
as they are), runs the program once for all devices through PJRT's `[device][argument]`
table, and returns `ShardedArray`s: one buffer per device, gathered to the host only when
asked.

XLA's CPU collectives wait at a rendezvous for every participant. Two programs with
collectives launched back to back can interleave their devices' parts on the shared thread
pool and wait for each other for ever (two runs of the same program too: 200 back-to-back
calls of a pmapped psum over 2 devices hung on a 2-core machine); so before a program with
collectives starts, the last one that had collectives is waited for.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from tracejit._src import dispatch, distributed, dtypes, runtime
from tracejit._src.array import ShardedArray, make_array, make_sharded_array, mark_deleted
from tracejit._src.core import ShapedArray, get_aval
from tracejit._src.interpreters import eval as eval_module
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, jaxprs_in_params
from tracejit._src.lax import sharding_in_types  # noqa: F401  (the primitives' sharding rules)
from tracejit._src.lowering.lower import lower_jaxpr_to_module
from tracejit._src.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    get_mesh,
    hlo_sharding,
    named_sharding_of_tiles,
)
from tracejit._src.sharding_types import apply_sharding_rules, sharding_rules_suspended

_COLLECTIVE_OPS = ("stablehlo.all_", "stablehlo.collective_", "stablehlo.reduce_scatter")
_COLLECTIVE_OPCODES = (b"all-", b"collective-", b"reduce-scatter")  # (HLO's, in its proto)


def global_aval(block: ShapedArray, spec, mesh) -> ShapedArray:
    """The aval of the global array whose blocks (as `spec` lays them over `mesh`) are
    `block` (typed with the spec's Explicit mesh axes, if any)."""
    shape = tuple(
        size * math.prod(mesh.shape[name] for name in spec.axes_of(dim))
        for dim, size in enumerate(block.shape)
    )
    sharding = NamedSharding(mesh, spec)
    return ShapedArray(shape, block.dtype, block.weak_type, sharding=sharding)


def _eager_typed_sharding(trace, primitive, args, params):
    """An eager operation on arrays whose types carry an Explicit mesh's sharding: computed on
    the host like any other, its results placed on the mesh as their types say (as JAX's
    results of such operations are; untyped ones stay on one device)."""
    plain = [make_array(x._value, x.weak_type) if isinstance(x, ShardedArray) else x for x in args]
    outs = trace.process_primitive(primitive, plain, params)
    if sharding_rules_suspended[0]:
        return outs
    mesh = next(x.sharding.mesh for x in args if isinstance(x, ShardedArray) and x.aval._sharding)
    avals = [get_aval(x) for x in args]
    out_avals = apply_sharding_rules(
        primitive, avals, primitive.abstract_eval(*avals, **params), params
    )
    placed = [
        out
        if aval._sharding is None
        else dispatch.device_put(out, NamedSharding(mesh, aval._sharding.spec))
        for out, aval in zip(
            outs if primitive.multiple_results else [outs],
            out_avals if primitive.multiple_results else [out_avals],
            strict=True,
        )
    ]
    return placed if primitive.multiple_results else placed[0]


eval_module.eager_typed_sharding[0] = _eager_typed_sharding


def _compile(text: str, callbacks: list, **options):
    """The executable of a program over a mesh; one that calls back into Python keeps the
    callables alive (see `dispatch._compile_with_callbacks`)."""
    client = runtime.get_client()
    if callbacks:
        runtime.ensure_handler(client.plugin)
    executable = client.compile(text, **options)
    executable.host_callbacks = tuple(callbacks)
    return executable


def _plugin_ids(devices) -> list:
    """The plugin's ids of a mesh's devices, which must all be this process's."""
    ids = [getattr(d, "pjrt_id", None) for d in devices]
    if None in ids:
        raise NotImplementedError(
            "shard_map, and jit with shardings, over a mesh holding other processes' devices "
            "are not built yet: across processes (tracejit.distributed), pmap runs each "
            "process's share"
        )
    return ids


class _LaunchedOnMesh:
    """A program over every device of a mesh: `in_shardings`, `out_shardings`, `out_avals`
    (global), `order` (the executable's devices as positions in the mesh), `donated`."""

    def __call__(self, args) -> list:
        per_arg = [
            dispatch.device_buffers(x, sharding)
            for x, sharding in zip(args, self.in_shardings, strict=True)
        ]
        argument_lists = [[buffers[p] for buffers in per_arg] for p in self.order]
        outputs = _launch(self, argument_lists)
        if self.executable.host_callbacks:  # finished before its callables can be dropped
            for outs in outputs:
                runtime.block_until_ready(outs)
        for i in self.donated:  # the Array's buffers now belong to the outputs
            if isinstance(args[i], ShardedArray) and all(
                b.is_deleted() for b in args[i].placement.buffers
            ):
                mark_deleted(args[i])
        by_mesh = [None] * len(self.order)
        for p, outs in zip(self.order, outputs, strict=True):
            by_mesh[p] = outs
        return [
            make_sharded_array([outs[i] for outs in by_mesh], sharding, aval)
            for i, (sharding, aval) in enumerate(
                zip(self.out_shardings, self.out_avals, strict=True)
            )
        ]


class MeshProgram(_LaunchedOnMesh):
    """A per-device body compiled for every device of `mesh` (see the module docstring)."""

    def __init__(self, body, mesh, in_specs, out_specs, name: str, donated=None, span=None):
        self.mesh = mesh
        self.in_shardings = [NamedSharding(mesh, spec) for spec in in_specs]
        # (a result laid out as an argument shares its sharding: fed back in a loop, it is
        # recognized as placed by identity, the cheapest test)
        by_spec = dict(zip(in_specs, self.in_shardings, strict=True))
        self.out_shardings = [by_spec.get(spec) or NamedSharding(mesh, spec) for spec in out_specs]
        self.out_avals = [
            global_aval(aval, spec, mesh)
            for aval, spec in zip(body.out_avals, out_specs, strict=True)
        ]
        _, aliases = dispatch.plan_parameters(body, donated, keep_unused=True, stacklevel=4)
        self.donated = frozenset(aliases)
        callbacks: list = []
        self.text = lower_jaxpr_to_module(
            body,
            f"pmap_{name}",
            num_replicas=mesh.size,
            aliases=aliases,
            replica_axes=mesh.shape_tuple,
            process_span=span,
            callbacks=callbacks,
        )
        devices = list(mesh.devices.flat)
        self.executable = _compile(
            self.text,
            callbacks,
            num_replicas=mesh.size,
            device_assignment=[[i] for i in _plugin_ids(devices)],
        )
        position = {device.id: p for p, device in enumerate(devices)}
        # the executable's device order, as positions in the mesh's
        self.order = [position[device.id] for device in self.executable.devices]
        self.has_collectives = any(op in self.text for op in _COLLECTIVE_OPS)


class PartitionedProgram(_LaunchedOnMesh):
    """A jitted jaxpr over global arrays, partitioned by XLA (GSPMD): its parameters and
    results carry `mhlo.sharding` annotations from their shardings, and the program runs as
    `mesh.size` partitions, one per device, launched once for all of them. A result with no
    sharding given (None) is laid out as XLA's propagation decides, read back from the
    compiled program (`result_shardings`)."""

    def __init__(self, closed, name: str, in_shardings, out_shardings, donated=None):
        mesh = next(s for s in (*in_shardings, *out_shardings) if s is not None).mesh
        self.mesh = mesh
        _report_inspected(closed, name, mesh, in_shardings)
        self.in_shardings = list(in_shardings)
        self.out_avals = list(closed.out_avals)
        _, aliases = dispatch.plan_parameters(closed, donated, keep_unused=True, stacklevel=4)
        self.donated = frozenset(aliases)
        callbacks: list = []
        self.text = lower_jaxpr_to_module(
            closed,
            f"jit_{name}",
            aliases=aliases,
            callbacks=callbacks,
            num_partitions=mesh.size,
            arg_shardings=[
                hlo_sharding(s, len(a.shape))
                for s, a in zip(in_shardings, closed.in_avals, strict=True)
            ],
            result_shardings=[
                None if s is None else hlo_sharding(s, len(a.shape))
                for s, a in zip(out_shardings, closed.out_avals, strict=True)
            ],
        )
        devices = list(mesh.devices.flat)
        options = runtime.compile_options_proto(
            1,
            mesh.size,
            device_assignment=[_plugin_ids(devices)],
            propagate_to_outputs=[s is None for s in out_shardings],
        )
        self.executable = _compile(self.text, callbacks, compile_options=options)
        position = {device.id: p for p, device in enumerate(devices)}
        self.order = [position[device.id] for device in self.executable.devices]
        _, optimized = self.executable.optimized_program()  # (XLA's partitioner adds some)
        self.has_collectives = any(op in optimized for op in _COLLECTIVE_OPCODES)
        chosen = out_shardings
        if any(s is None for s in out_shardings):
            chosen = result_shardings(self.executable, mesh, self.out_avals)
        self.out_shardings = [
            given if given is not None else _as_argument_sharding(s, aval, in_shardings, closed)
            for given, s, aval in zip(out_shardings, chosen, self.out_avals, strict=True)
        ]


inspected_primitives: set = set()
"""Primitives whose equations ask for the sharding XLA chooses for their operand, calling back
`params["callback"]` with it when a partitioned program is compiled (`inspect_sharding`,
defined in `sharding_visualization.py`)."""


def _report_inspected(closed, name: str, mesh, in_shardings) -> None:
    """Compiles a probe of `closed` that also returns each inspected value, laid out as XLA
    chooses, and calls each inspection's callback with that layout."""
    jaxpr = closed.jaxpr
    inspections = [e for e in jaxpr.eqns if e.primitive in inspected_primitives]
    if any(_inspects_within(e) for e in jaxpr.eqns):
        raise NotImplementedError(
            "inspect_array_sharding inside a call, a loop or a branch of a program partitioned "
            "over several devices is not built yet: call it at the jitted function's top level"
        )
    if not inspections:
        return
    values = [e.invars[0] for e in inspections]
    probe = ClosedJaxpr(
        Jaxpr(jaxpr.constvars, jaxpr.invars, list(jaxpr.outvars) + values, jaxpr.eqns),
        closed.consts,
    )
    text = lower_jaxpr_to_module(
        probe,
        f"probe_{name}",
        num_partitions=mesh.size,
        arg_shardings=[
            hlo_sharding(s, len(a.shape))
            for s, a in zip(in_shardings, closed.in_avals, strict=True)
        ],
        result_shardings=[None] * len(probe.out_avals),
        callbacks=[],
    )
    options = runtime.compile_options_proto(
        1,
        mesh.size,
        device_assignment=[_plugin_ids(list(mesh.devices.flat))],
        propagate_to_outputs=[True] * len(probe.out_avals),
    )
    executable = _compile(text, [], compile_options=options)
    chosen = result_shardings(executable, mesh, probe.out_avals)[len(jaxpr.outvars) :]
    for eqn, sharding in zip(inspections, chosen, strict=True):
        eqn.params["callback"](sharding)


def _inspects_within(eqn) -> bool:
    """Whether an equation's bodies (a call's, a loop's) hold an inspection."""
    for value in eqn.params.values():
        for item in value if isinstance(value, tuple) else (value,):
            inner = getattr(item, "jaxpr", item)
            if isinstance(inner, Jaxpr) and any(
                e.primitive in inspected_primitives or _inspects_within(e) for e in inner.eqns
            ):
                return True
    return False


def result_shardings(executable, mesh, out_avals) -> list:
    """The NamedShardings over `mesh` XLA gave a partitioned executable's results."""
    out = []
    for i, (op, aval) in enumerate(
        zip(runtime.output_shardings(*executable.optimized_program()), out_avals, strict=True)
    ):
        sharding = None
        if op.kind == "replicated":
            sharding = NamedSharding(mesh, PartitionSpec())
        elif op.kind == "tiled" and not op.last_tile_kinds:
            sharding = named_sharding_of_tiles(
                mesh, len(aval.shape), op.tile_dims, op.partitions, op.replicate_last
            )
        if sharding is None:
            raise NotImplementedError(
                f"XLA laid result {i} ({aval.str_short()}) out as a {op.kind} sharding (tiles "
                f"{op.tile_dims} on partitions {op.partitions}) that no PartitionSpec of "
                f"{mesh} expresses; such results are not built yet"
            )
        out.append(sharding)
    return out


def _as_argument_sharding(sharding, aval, in_shardings, closed):
    """An argument's own sharding where it places the result's blocks the same (as JAX, which
    so keeps the spec the user wrote, trailing Nones included)."""
    ndim = len(aval.shape)
    for given, in_aval in zip(in_shardings, closed.in_avals, strict=True):
        if len(in_aval.shape) == ndim and given.is_equivalent_to(sharding, ndim):
            return given
    return sharding


_launch_lock = threading.Lock()
_last_collective_events: list = [()]  # the events of the last launch with collectives


def _launch(program: MeshProgram, argument_lists):
    if not program.has_collectives:
        return program.executable.execute(argument_lists)
    with _launch_lock:
        for event in _last_collective_events[0]:
            try:
                event.wait()
            except runtime.XlaRuntimeError:
                pass  # (that program's own results carry its error to its caller)
        outputs, _last_collective_events[0] = program.executable.execute_with_events(argument_lists)
    return outputs


_programs = dispatch.LRUCache()


def mesh_program(body, mesh, in_specs, out_specs, name: str, donated=None, span=None):
    """The compiled program of a shard_map's body (cached while the body lives); `span` (a
    `distributed.ProcessSpan`): `mesh` is this process's share of an axis over processes."""
    key = (body, mesh, in_specs, out_specs, donated, span)
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = MeshProgram(body, mesh, in_specs, out_specs, name, donated, span)
    return program


def partitioned_program(closed, name: str, in_shardings, out_shardings, donated=None):
    """The compiled partitioned program of a jitted jaxpr for these shardings (cached)."""
    key = (closed, tuple(in_shardings), tuple(out_shardings), donated)
    program = _programs.get(key)
    if program is None:
        program = _programs[key] = PartitionedProgram(
            closed, name, in_shardings, out_shardings, donated
        )
    return program


def partition_shardings(closed, arg_shardings, in_shardings, out_shardings):
    """(in, out) shardings of a jitted call that XLA partitions, or None when it runs on one
    device: every sharding given (`in_shardings`/`out_shardings` of jit, or the arguments'
    own, `arg_shardings`) on one mesh; an argument with none is replicated, a result with none
    is laid out as its type says (Explicit mesh axes), else stays None (XLA chooses:
    `PartitionedProgram`)."""
    given = [s for s in (*in_shardings, *out_shardings) if s is not None]
    given += [s for s in arg_shardings if isinstance(s, NamedSharding)]
    named = [s for s in given if isinstance(s, NamedSharding)]
    if not named:
        typed = [a for a in closed.out_avals if a._sharding is not None]
        if not typed:
            mesh = _device_call_mesh(closed.jaxpr) if distributed.process_count() == 1 else None
            if mesh is None:
                return None
            replicated = NamedSharding(mesh, PartitionSpec())
            return [replicated] * len(closed.in_avals), [None] * len(closed.out_avals)
        mesh = get_mesh()  # (results typed on a mesh no argument is on: the context's, as JAX)
        if mesh is None or mesh.abstract_mesh != typed[0]._sharding.mesh:
            aval = typed[0]
            explicit = tuple(
                n
                for n, t in zip(
                    aval._sharding.mesh.axis_names, aval._sharding.mesh.axis_types, strict=True
                )
                if t == AxisType.Explicit
            )
            raise ValueError(
                f"Length of device assignment 1 is not equal to the size of the mesh "
                f"{aval._sharding.mesh.size} of aval {aval.str_short()}({{Explicit: {explicit}}}). "
                "Please enter your `jit` into a mesh context via `jax.set_mesh`."
            )
        named = [NamedSharding(mesh, PartitionSpec())]
    mesh = named[0].mesh
    if any(s.mesh != mesh for s in named) or len(named) != len(given):
        raise NotImplementedError(
            "jit over arrays sharded on different meshes (or on a mesh and a single device) "
            "is not built yet"
        )
    replicated = NamedSharding(mesh, PartitionSpec())
    out_shardings = [
        given
        if given is not None or aval._sharding is None
        else NamedSharding(mesh, aval._sharding.spec)
        for given, aval in zip(out_shardings, closed.out_avals, strict=True)
    ]
    ins = [
        given if given is not None else (arg if isinstance(arg, NamedSharding) else replicated)
        for given, arg in zip(in_shardings, arg_shardings, strict=True)
    ]
    return ins, list(out_shardings)


def _device_call_mesh(jaxpr: Jaxpr):
    """The mesh of a program over several devices that `jaxpr` calls (a `shard_map`, so a
    `pmap`, among its equations or in their bodies), if any: JAX partitions a jit calling one
    over its mesh (`jit(lambda x: pmap(f)(x) * 2)`'s result is spread as the pmap's)."""
    for eqn in jaxpr.eqns:
        mesh = eqn.params.get("mesh")
        if eqn.primitive in dispatch.device_call_compilers and isinstance(mesh, Mesh):
            return mesh
        for inner in jaxprs_in_params(eqn.params):
            found = _device_call_mesh(inner)
            if found is not None:
                return found
    return None


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """A global Array of `shape` laid out as `sharding` says, each device's block being
    `data_callback(index)` (`index` a tuple of slices into the global array)."""
    shape = tuple(shape)
    indices = sharding.devices_indices_map(shape)
    blocks = [np.asarray(data_callback(indices[d])) for d in sharding._device_assignment]
    block_dtype = dtypes.canonicalize_dtype(blocks[0].dtype)
    if dtype is not None and dtypes.canonicalize_dtype(dtype) != block_dtype:
        raise ValueError(
            "If `dtype` is provided to `jax.make_array_from_callback`, it must match the dtype "
            f"of the addressable shards. Got dtype={np.dtype(dtype).name} and shard "
            f"dtype={block_dtype.name}`."
        )
    for block in blocks:
        _check_block_shape(shape, sharding, block_dtype, block.shape)
    return _assemble(
        shape, sharding, [b.astype(block_dtype, copy=False) for b in blocks], block_dtype
    )


def _check_block_shape(shape, sharding, dtype, block_shape) -> None:
    expected = sharding.shard_shape(shape)
    if tuple(block_shape) != expected:
        in_type = sharding if isinstance(sharding, NamedSharding) else None
        raise ValueError(
            f"Expected shard shape {expected} doesn't match the single device array shape "
            f"{tuple(block_shape)}. Shape of Array is "
            f"{ShapedArray(shape, dtype, sharding=in_type)} with sharding {sharding!r}"
        )


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """A global Array of `shape` from one single-device Array per device of `sharding`, each
    that device's block (taken where it lies, copied to it otherwise)."""
    shape = tuple(shape)
    devices = sharding._device_assignment
    if len(arrays) != len(devices):
        raise ValueError(
            f"Expected {len(devices)} per-device arrays (this is how many devices are "
            f"addressable by the sharding), but got {len(arrays)}"
        )
    by_device = {}
    for array in arrays:
        buffer = getattr(array, "_buffer", None)
        by_device[buffer.device.id if buffer is not None else None] = array
    ordered = [by_device.get(d.id, arrays[k]) for k, d in enumerate(devices)]
    dtype = ordered[0].dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    for array in ordered:
        _check_block_shape(shape, sharding, dtype, array.shape)
    return _assemble(shape, sharding, ordered, dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """A global Array laid out as `sharding` says from the data this process holds. With one
    process, as here, that is the whole array: `global_shape` may only repeat its shape."""
    if distributed.process_count() > 1:
        raise NotImplementedError(
            "make_array_from_process_local_data over several processes: each process's blocks "
            "of a global array"
        )
    value, weak_type = eval_module.to_numpy(local_data)
    if global_shape is not None and tuple(global_shape) != value.shape:
        raise ValueError(
            "When calling `make_array_from_process_local_data` on a single process, "
            "global_shape should be None or equal to local_data.shape.Got "
            f"global_shape={tuple(global_shape)} and local_data.shape={value.shape}."
        )
    indices = sharding.devices_indices_map(value.shape)
    blocks = [value[indices[device]] for device in sharding._device_assignment]
    return _assemble(value.shape, sharding, blocks, value.dtype, weak_type)


def _assemble(shape, sharding, blocks, dtype, weak_type=False):
    if dispatch.backend() != "pjrt" or not isinstance(sharding, NamedSharding):
        index = sharding.devices_indices_map(shape)
        value = np.empty(shape, dtype)
        for device, block in zip(sharding._device_assignment, blocks, strict=True):
            value[index[device]] = np.asarray(block)
        return dispatch.device_put(make_array(value, weak_type), sharding._device_assignment[0])
    client = runtime.get_client()
    buffers = []
    for device, block in zip(sharding._device_assignment, blocks, strict=True):
        buffer = getattr(block, "_buffer", None)
        if buffer is None or buffer.device is not device:
            buffer = client.buffer_from_numpy(
                np.require(np.asarray(block), requirements="C"), device
            )
        buffers.append(buffer)
    return make_sharded_array(buffers, sharding, ShapedArray(shape, np.dtype(dtype), weak_type))
