"""`tracejit.distributed`: several processes over MPI (`mpiexec -n 2` on this machine, 2 CPU
devices each), and the errors of `initialize` in one process.

The multi-process checks run worker scripts beside this file, each launched once per session;
a worker writes every check that holds in a process to a report file of that process."""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tracejit._src import runtime

HERE = Path(__file__).parent
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"  # (the mpich wheel's, in the venv)
    return str(beside) if beside.exists() else shutil.which("mpiexec")


needs_mpi = pytest.mark.skipif(
    not HAVE_MPI or _mpiexec() is None or not runtime.platform_available(),
    reason="MPI is not installed (pip install 'tracejit[mpi]': mpi4py and the mpich wheel), "
    "or no PJRT plugin",
)


def _environment(devices: int = 2, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_"))}
    env["TRACEJIT_NUM_CPU_DEVICES"] = str(devices)
    env.pop("XLA_FLAGS", None)
    return {**env, **extra}


def launch(
    script: str, *args: str, timeout: float = 180, devices: int = 2, **env
) -> subprocess.CompletedProcess:
    command = [_mpiexec(), "-n", "2", sys.executable, str(HERE / script), *args]
    return subprocess.run(
        command,
        env=_environment(devices, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """`reports(script, devices, **env)`: the checks each process of a run of `script` with
    `devices` CPU devices per process (and `env`) reported as holding ({process: [check, ...]})
    and the run's output; each runs once per module."""
    runs = {}

    def run(script: str, devices: int = 2, **env):
        key = (script, devices, tuple(sorted(env.items())))
        if key not in runs:
            directory = tmp_path_factory.mktemp(script.removesuffix(".py"))
            out = launch(script, devices=devices, TRACEJIT_TEST_REPORTS=str(directory), **env)
            held = {
                process: (directory / f"{process}.txt").read_text().split("\n")
                if (directory / f"{process}.txt").exists()
                else []
                for process in (0, 1)
            }
            runs[key] = held, out.stdout + out.stderr
        return runs[key]

    return run


COLLECTIVE_CHECKS = [
    "devices", "process_allgather", "psum", "pmax", "pmin", "pmean", "psum int32",
    "another dtype, same shape", "psum large", "psum float16", "psum pytree", "psum donated",
    "all_gather",
    "all_gather tiled", "psum_scatter", "psum_scatter untiled", "all_to_all", "ppermute",
    "ppermute partial", "axis_index", "loop", "jit inside pmap", "grad", "mismatched shapes",
    "transformed pmap is per process", "nested pmap", "not built", "broadcast_one_to_all",
    "assert_equal", "shutdown",
]  # fmt: skip
# one device per process: the second of two, which initialize(local_device_ids=) leaves
ONE_OF_TWO = {"devices": 2, "JAX_LOCAL_DEVICE_IDS": "1"}


@needs_mpi
@pytest.mark.parametrize("check", COLLECTIVE_CHECKS)
@pytest.mark.parametrize("devices", [2, 1])
def test_collective_across_two_processes(check, devices, reports):
    held, text = reports(
        "worker_collectives.py", **({"devices": 2} if devices == 2 else ONE_OF_TWO)
    )
    assert check in held[0] and check in held[1], text[-4000:]


@needs_mpi
def test_local_device_ids_restrict_each_process_to_the_devices_named(reports):
    held, text = reports("worker_collectives.py", **ONE_OF_TWO)
    assert "local_device_ids" in held[0] and "local_device_ids" in held[1], text[-4000:]


@needs_mpi
@pytest.mark.parametrize("devices", [2, 1])
def test_data_parallel_sgd_equals_the_whole_batch_step(devices, reports):
    held, text = reports("worker_sgd.py", devices)
    assert "sgd" in held[0] and "sgd" in held[1], text[-4000:]


@needs_mpi
@pytest.mark.parametrize("fault", ["raise", "hang"])
def test_a_failing_process_ends_the_job(fault):
    start = time.monotonic()
    out = launch("worker_faults.py", fault, timeout=30)
    text = out.stdout + out.stderr
    assert time.monotonic() - start < 30
    assert out.returncode != 0, text
    assert "without process 1" not in text
    assert "MPI_Abort" in text, text
    if fault == "raise":
        assert "process 1 failed on purpose" in text and "uncaught exception" in text, text
    else:
        assert "waited 3 s for the other processes in psum of float32[]" in text, text


def _run_alone(script: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", textwrap.dedent(script)]
    return subprocess.run(
        command, env=_environment(), capture_output=True, text=True, timeout=120, check=False
    )


def test_initialize_errors_in_one_process():
    out = _run_alone(
        """
        import sys
        import numpy as np
        import pytest
        import tracejit as jax
        from tracejit.experimental import multihost_utils

        with pytest.raises(ValueError, match="bogus is not supported"):
            jax.distributed.initialize(cluster_detection_method="bogus")
        with pytest.raises(ValueError, match=r"local_device_ids=\\[0, 2\\].* 2 CPU devices"):
            jax.distributed.initialize("localhost:1", 1, 0, local_device_ids=[0, 2])
        with pytest.raises(ValueError, match="coordinator_address should be defined"):
            jax.distributed.initialize()
        saved = sys.modules.get("mpi4py")
        sys.modules["mpi4py"] = None  # as if it were not installed
        with pytest.raises(ImportError, match=r"tracejit\\[mpi\\]"):
            jax.distributed.initialize(cluster_detection_method="mpi4py")
        sys.modules.pop("mpi4py")
        assert not jax.distributed.is_initialized()

        jax.distributed.initialize("localhost:1234", 1, 0, local_device_ids=[1])
        assert jax.distributed.is_initialized()
        with pytest.raises(RuntimeError, match="should only be called once"):
            jax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
        assert (jax.process_index(), jax.process_count(), jax.process_indices()) == (0, 1, [0])
        assert [d.id for d in jax.devices()] == [0] == [d.id for d in jax.local_devices()]
        x = np.arange(3.0)
        assert multihost_utils.process_allgather(x).shape == (1, 3)
        assert np.array_equal(multihost_utils.process_allgather(x, tiled=True), x)
        assert np.array_equal(multihost_utils.broadcast_one_to_all(x), x)
        assert multihost_utils.sync_global_devices("here") is None
        jax.distributed.shutdown()
        assert not jax.distributed.is_initialized()
        with pytest.raises(RuntimeError, match="must be called before any JAX calls"):
            jax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
        print("done")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-4000:]


@pytest.mark.skipif(not HAVE_MPI, reason="mpi4py is not installed (pip install 'tracejit[mpi]')")
def test_initialize_checks_the_arguments_against_mpi():
    out = _run_alone(
        """
        import pytest
        import tracejit as jax

        with pytest.raises(ValueError, match="rank 0 of 1"):
            jax.distributed.initialize("localhost:1", num_processes=2, process_id=1)
        print("done")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-4000:]


def test_a_pmap_inside_a_pmap_is_jaxs_value_error_in_one_process_too():
    out = _run_alone(
        """
        import numpy as np
        import pytest
        import tracejit as jax

        inner = jax.pmap(lambda v: 2 * v, "j")
        message = (
            r"The context mesh AbstractMesh\\('i': 2, axis_types=\\(Manual,\\), device_kind=cpu, "
            r"num_cores=None, platform=cpu\\) should match the mesh passed to shard_map "
            r"Mesh\\('j': 1, axis_types=\\(Auto,\\)\\)"
        )
        with pytest.raises(ValueError, match=message):
            jax.pmap(inner, "i")(np.ones((2, 1, 3), np.float32))
        inner(np.ones((1, 3), np.float32))  # (the inner program cached: the same error)
        with pytest.raises(ValueError, match=message):
            jax.pmap(inner, "i")(np.ones((2, 1, 3), np.float32))
        print("done")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-4000:]


def test_back_to_back_calls_of_a_pmapped_collective_finish():
    """200 such calls, each launched before the last had finished, once hung in XLA's
    rendezvous on a 2-core machine: two runs of the program took each other's threads."""
    out = _run_alone(
        """
        import numpy as np
        import tracejit as jax
        from tracejit import lax

        psum = jax.pmap(lambda v: lax.psum(v, "i"), "i")
        v = psum(np.ones((2, 3), np.float32) / 2)  # (on the devices: each call launches at once)
        outs = [psum(v) for _ in range(300)]
        assert all(np.array_equal(np.asarray(out), np.full((2, 3), 2.0)) for out in outs)
        print("done")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-4000:]


@pytest.mark.skipif(sys.platform != "linux", reason="transparent huge pages are Linux's")
def test_huge_pages_are_asked_for_under_a_buffer():
    import mmap

    import numpy as np

    from tracejit._src import distributed_collectives

    size = 8 << 20
    memory = mmap.mmap(-1, size)  # (fresh anonymous pages, as XLA's results are, unadvised)
    array = np.frombuffer(memory, np.float32)
    start = array.__array_interface__["data"][0]

    def flags_of_huge_pages() -> set:
        """The VmFlags of the mappings holding the array's whole 2 MiB pages."""
        found = set()
        first, end = -(-start // 2**21) * 2**21, (start + size) // 2**21 * 2**21
        lines = Path("/proc/self/smaps").read_text().splitlines()
        for k, line in enumerate(lines):
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(x, 16) for x in head.split("-"))
                if low < end and high > first:
                    flags = next(x for x in lines[k + 1 :] if x.startswith("VmFlags:"))
                    found.add("hg" in flags.split())
        return found

    if Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().find("[never]") >= 0:
        pytest.skip("transparent huge pages are off on this system")
    assert flags_of_huge_pages() == {False}
    distributed_collectives.advise_huge_pages(array)
    assert flags_of_huge_pages() == {True}
    del array
    memory.close()
