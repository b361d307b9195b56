"""Host values across the processes of a run (`tracejit.experimental.multihost_utils`).

What a multi-process program needs outside its compiled programs: every process's value of
something (`process_allgather`), one process's value everywhere (`broadcast_one_to_all`), a
point all processes reach together (`sync_global_devices`), a check that they agree
(`assert_equal`). They run MPI collectives on NumPy values from the caller's thread (the
process group's host communicator, see `distributed.py`) and return NumPy arrays, as JAX's do.
With one process they need no MPI and return what one process would give.
"""

from __future__ import annotations

import zlib

import numpy as np

from tracejit._src import dispatch, distributed
from tracejit._src.sharding import NamedSharding, PartitionSpec
from tracejit._src.tree_util import tree_flatten, tree_map, tree_unflatten


def _gathered(value: np.ndarray, what: str) -> np.ndarray:
    """Every process's `value`, stacked in process order (shapes checked to agree first)."""
    group = distributed.group()
    if group is None:
        return value[None]
    with group.watchdog.watching(what):
        kinds = group.host_comm.allgather((value.shape, value.dtype.str))
        if len(set(kinds)) > 1:
            listed = "; ".join(
                f"process {p}: {np.dtype(d).name}{list(s)}" for p, (s, d) in enumerate(kinds)
            )
            raise ValueError(f"{what}: the processes passed arrays of different shapes ({listed})")
        out = np.empty((group.process_count, *value.shape), value.dtype)
        send = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        group.host_comm.Allgather(send, out.reshape(group.process_count, -1).view(np.uint8))
    return out


def process_allgather(in_tree, tiled: bool = False):
    """Every process's value of each leaf of `in_tree`, stacked along a new leading axis in
    process order (`tiled=True`: concatenated along the leading axis)."""

    def gather(leaf):
        stacked = _gathered(np.asarray(leaf), "process_allgather")
        return np.concatenate(list(stacked), axis=0) if tiled else stacked

    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
    """The value of `in_tree` in the source process (by default process 0), in every process:
    the sum over the processes that say `is_source` of their values, as in JAX."""
    if is_source is None:
        is_source = distributed.process_index() == 0
    leaves, tree = tree_flatten(in_tree)
    flags = _gathered(np.asarray(bool(is_source)), "broadcast_one_to_all")

    def broadcast(leaf):
        value = np.asarray(leaf)
        stacked = _gathered(value, "broadcast_one_to_all")[flags]
        if value.dtype == np.bool_:
            return np.any(stacked, axis=0)
        return np.sum(stacked, axis=0, dtype=value.dtype)

    return tree_unflatten(tree, [broadcast(leaf) for leaf in leaves])


def sync_global_devices(name: str) -> None:
    """Returns once every process has called it with the same `name` (AssertionError when the
    names differ: the processes are at different points of the program)."""
    assert_equal(
        np.uint32(zlib.crc32(name.encode())), f"sync_global_devices name mismatch ('{name}')"
    )


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raises AssertionError (in every process) unless every process passed equal values."""
    for leaf in tree_flatten(in_tree)[0]:
        try:
            stacked = _gathered(np.asarray(leaf), "assert_equal")
        except ValueError as err:
            raise AssertionError(f"{fail_message} {err}") from None
        if not all(np.array_equal(stacked[0], other) for other in stacked[1:]):
            raise AssertionError(
                f"{fail_message} Expected equal values in every process, got "
                f"{[other.tolist() for other in stacked]}"
            )


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Arrays made of each process's local data, laid out on `global_mesh` by `pspecs` (a
    PartitionSpec, or a pytree prefix of `local_inputs` with them). Within one process the
    local data is the whole array."""
    return _laid_out(local_inputs, global_mesh, pspecs, "host_local_array_to_global_array")


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """Each process's part of global arrays laid out on `global_mesh` by `pspecs`: within one
    process, the whole arrays, laid out so."""
    return _laid_out(global_inputs, global_mesh, pspecs, "global_array_to_host_local_array")


def _laid_out(inputs, mesh, pspecs, name: str):
    if distributed.process_count() > 1:
        raise NotImplementedError(
            f"{name} across several processes: arrays with blocks on other processes' devices "
            "are not built (see docs/scaling.md)"
        )
    is_spec = lambda spec: spec is None or isinstance(spec, PartitionSpec)
    return tree_map(
        lambda spec, x: dispatch.device_put(x, NamedSharding(mesh, spec or PartitionSpec())),
        pspecs,
        inputs,
        is_leaf=is_spec,
    )
