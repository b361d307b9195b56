"""Several processes running one program together (`tracejit.distributed`), over MPI.

JAX's multi-controller model: every process runs the same Python program on its own local
devices, and collectives inside compiled programs span the devices of all processes. The CPU
plugin has no transport between processes, so this one is MPI (`mpi4py` over MPICH or Open MPI,
the optional extra `tracejit[mpi]`):

    mpiexec -n 2 python train.py        # each: tracejit.distributed.initialize()

`initialize()` reads this process's rank and the number of processes from MPI and numbers the
devices as JAX numbers CPU devices: process p's local device i is global device 2048 p + i.
`devices()` then lists every process's devices (those of other processes as `RemoteDevice`s,
which nothing can be placed on), `local_devices()` this process's own. It must run before the
runtime starts (before any computation or device query), as in JAX.

The collectives themselves are in `distributed_collectives.py`: the part of a collective among
a process's devices stays in XLA, and one exchange per collective per process (not per device)
sends the process's part to the others over MPI. Those MPI calls come from XLA's threads while
the main thread may make its own (`multihost_utils`): MPI is initialized with
`MPI_THREAD_MULTIPLE`, and the two kinds of calls use two communicators (duplicates of the
world), so that neither's messages can be taken for the other's.

Faults. A process whose Python program ends in an uncaught exception calls `MPI_Abort`, which
makes `mpiexec` end every process of the job (at once, with the traceback printed), instead of
leaving the others waiting in a collective for ever. A collective that waits longer than
`heartbeat_timeout_seconds` (a process died silently, or took another path through the program)
aborts the job the same way, saying which collective waited.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback

from tracejit._src import runtime
from tracejit._src.runtime.device import DeviceBase

_MPI_ENVIRONMENT = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


class RemoteDevice(DeviceBase):
    """A device of another process: listed by `devices()`, never computed on from here."""

    __slots__ = ("device_kind", "id", "platform", "process_index")

    def __init__(self, device_id: int, process_index: int, platform: str, device_kind: str):
        self.id = device_id
        self.process_index = process_index
        self.platform = platform
        self.device_kind = device_kind

    def __repr__(self) -> str:
        return (
            f"CpuDevice(id={self.id})" if self.platform == "cpu" else f"{self.platform}:{self.id}"
        )

    @property
    def _ptr(self):
        """(What the runtime places data on a device with: none for another process's.)"""
        raise NotImplementedError(
            f"{self!r} belongs to process {self.process_index}: arrays with blocks on other "
            "processes' devices (global arrays across processes) are not built; each process "
            "places its own data on its local devices (jax.local_devices()), and pmap maps "
            "over every process's devices"
        )


class _ProcessGroup:
    """The processes of the run: this one's index, their number, the communicators."""

    def __init__(self, mpi, process_index: int, process_count: int, timeout: float):
        self.mpi = mpi
        self.process_index = process_index
        self.process_count = process_count
        self.timeout = timeout
        world = mpi.COMM_WORLD
        self.program_comm = world.Dup()  # collectives of compiled programs (XLA's threads)
        self.host_comm = world.Dup()  # multihost_utils (the caller's thread)
        self.largest_tag = world.Get_attr(mpi.TAG_UB)
        self.watchdog = _Watchdog(self)
        self.previous_excepthook = sys.excepthook
        sys.excepthook = self._abort_on_uncaught
        local = runtime.get_client().local_devices()  # (the runtime starts numbered so)
        with self.watchdog.watching("distributed.initialize"):
            counts = world.allgather(len(local))
        self._devices = []
        for p, count in enumerate(counts):
            first = p * runtime.DEVICE_IDS_PER_PROCESS
            self._devices += (
                local
                if p == process_index
                else [
                    RemoteDevice(first + i, p, local[0].platform, local[0].device_kind)
                    for i in range(count)
                ]
            )

    def _abort_on_uncaught(self, kind, value, tb) -> None:
        self.abort(
            "".join(traceback.format_exception(kind, value, tb))
            + f"tracejit.distributed: process {self.process_index} ended with an uncaught "
            "exception: aborting the job (MPI_Abort)\n"
        )

    def abort(self, message: str) -> None:
        """Ends every process of the job, after `message` has had time to reach `mpiexec`.

        The abort travels to `mpiexec` on another channel than the process's stderr and can
        overtake it, and `mpiexec` drops what it has not forwarded yet when it ends the job: so
        the message goes out in one write, and the abort waits a moment behind it."""
        sys.stderr.flush()
        data = message.encode()
        while data:
            data = data[os.write(2, data) :]
        time.sleep(0.5)
        self.mpi.COMM_WORLD.Abort(1)

    def devices(self) -> list:
        """Every process's devices, in global id order."""
        return list(self._devices)

    def close(self) -> None:
        self.watchdog.stop()
        sys.excepthook = self.previous_excepthook
        self.program_comm.Free()
        self.host_comm.Free()


class _Watchdog:
    """Aborts the job when an MPI call has waited longer than the group's timeout."""

    def __init__(self, group: _ProcessGroup):
        self.group = group
        self.waiting: dict[int, tuple[str, float]] = {}  # thread id -> (what, since)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tracejit-watchdog", daemon=True)
        self.thread.start()

    def watching(self, what: str):
        return _Watched(self, what)

    def _run(self) -> None:
        period = min(1.0, self.group.timeout / 4)
        while not self.stopped.wait(period):
            now = time.monotonic()
            for what, since in list(self.waiting.values()):
                if now - since > self.group.timeout:
                    self.group.abort(
                        f"tracejit.distributed: process {self.group.process_index} waited "
                        f"{self.group.timeout:g} s for the other processes in {what}: one of "
                        "them died or took another path; aborting the job (MPI_Abort)\n"
                    )

    def stop(self) -> None:
        self.stopped.set()


class _Watched:
    __slots__ = ("key", "watchdog", "what")

    def __init__(self, watchdog, what):
        self.watchdog, self.what = watchdog, what

    def __enter__(self):
        self.key = threading.get_ident()
        self.watchdog.waiting[self.key] = (self.what, time.monotonic())

    def __exit__(self, *exc):
        del self.watchdog.waiting[self.key]


_group: list = [None]  # the _ProcessGroup of a multi-process run; None: one process
_initialized = [False]


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ImportError(
            "tracejit.distributed runs several processes over MPI and needs mpi4py: "
            "pip install 'tracejit[mpi]' (mpi4py with the MPICH wheel), then launch with "
            "mpiexec -n N python program.py"
        ) from err
    return MPI


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids=None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Joins this process to the others of the run (see the module docstring). Under
    `mpiexec` every argument may be left out (or `cluster_detection_method='mpi4py'` given);
    `num_processes` and `process_id`, when given, must agree with MPI's size and rank.
    `coordinator_address` is accepted and unused: MPI connects the processes.
    `heartbeat_timeout_seconds` bounds how long a collective waits for the others before the
    job is aborted. `local_device_ids` (or `JAX_LOCAL_DEVICE_IDS=0,1`) restricts the devices
    this process uses to those it names (`_restrict_local_devices`)."""
    if _initialized[0]:
        raise RuntimeError("distributed.initialize should only be called once.")
    if runtime.started():
        raise RuntimeError(
            "jax.distributed.initialize() must be called before any JAX calls that might "
            "initialise the XLA backend. This includes any computation, but also calls to "
            "jax.devices, jax.device_put, and others."
        )
    if cluster_detection_method not in (None, "mpi4py"):
        raise ValueError(
            f"Automatic Distributed initialization can not proceed: {cluster_detection_method} "
            "is not supported: tracejit detects its processes with mpi4py."
        )
    if local_device_ids is None and os.environ.get("JAX_LOCAL_DEVICE_IDS"):
        local_device_ids = [int(i) for i in os.environ["JAX_LOCAL_DEVICE_IDS"].split(",")]
    under_mpi = cluster_detection_method == "mpi4py" or any(
        name in os.environ for name in _MPI_ENVIRONMENT
    )
    if not under_mpi and num_processes == 1 and process_id in (None, 0):
        _restrict_local_devices(local_device_ids)
        _initialized[0] = True  # one process: nothing to connect
        return
    if not under_mpi and (coordinator_address is None or num_processes is None):
        raise ValueError("coordinator_address should be defined.")
    mpi = _mpi()
    rank, size = mpi.COMM_WORLD.Get_rank(), mpi.COMM_WORLD.Get_size()
    if num_processes not in (None, size) or process_id not in (None, rank):
        raise ValueError(
            f"initialize got num_processes={num_processes}, process_id={process_id}, but MPI "
            f"runs this process as rank {rank} of {size}: tracejit's processes are MPI's "
            "(launch them with mpiexec -n N)"
        )
    if mpi.Query_thread() < mpi.THREAD_MULTIPLE:
        raise RuntimeError(
            "tracejit.distributed calls MPI from XLA's threads and needs MPI_THREAD_MULTIPLE, "
            f"but MPI was initialized with thread level {mpi.Query_thread()}"
        )
    _restrict_local_devices(local_device_ids)
    runtime.set_process_index(rank)
    if size > 1:
        _group[0] = _ProcessGroup(mpi, rank, size, float(heartbeat_timeout_seconds))
    _initialized[0] = True


def _restrict_local_devices(local_device_ids) -> None:
    """This process sees only the CPU devices `local_device_ids` names (an int or a sequence
    of the process's device numbers, counted from 0), renumbered from 0 as the visible devices
    of an accelerator are: `TRACEJIT_NUM_CPU_DEVICES=4` with `local_device_ids=[2, 3]` leaves
    two devices, process p's global devices 2048 p and 2048 p + 1."""
    if local_device_ids is None:
        return
    ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
    if not ids:
        return  # (as in JAX: none named, all visible)
    if os.environ.get("TRACEJIT_PJRT_PLUGIN"):
        raise NotImplementedError(
            "initialize(local_device_ids=...) is built for the CPU plugin only, not for "
            f"{os.environ['TRACEJIT_PJRT_PLUGIN']}"
        )
    available = runtime.configured_cpu_device_count() or 1
    if len(set(ids)) != len(ids) or not all(0 <= i < available for i in ids):
        raise ValueError(
            f"initialize got local_device_ids={local_device_ids}, but this process has "
            f"{available} CPU devices (numbered 0 to {available - 1}; "
            "TRACEJIT_NUM_CPU_DEVICES=N sets how many): name each at most once"
        )
    runtime.set_visible_cpu_device_count(len(ids))


def shutdown() -> None:
    """Leaves the run: the processes are no longer connected (no-op if never initialized)."""
    group = _group[0]
    if group is not None:
        with group.watchdog.watching("distributed.shutdown"):
            group.host_comm.Barrier()
        group.close()
    _group[0] = None
    _initialized[0] = False


def is_initialized() -> bool:
    return _initialized[0]


def group() -> _ProcessGroup | None:
    """The process group of a multi-process run, or None with one process."""
    return _group[0]


def process_index() -> int:
    group = _group[0]
    return 0 if group is None else group.process_index


def process_count() -> int:
    group = _group[0]
    return 1 if group is None else group.process_count
