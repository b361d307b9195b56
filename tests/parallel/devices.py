"""Running a test's body in a fresh process with several CPU devices.

The device count is fixed when the runtime starts, so a test that needs 4 devices runs its
body in a subprocess started with `TRACEJIT_NUM_CPU_DEVICES=4`: `run_with_devices(source)`
executes `source` (a Python program that asserts) there and fails with its output if it does.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from tracejit._src import dispatch

needs_plugin = pytest.mark.skipif(
    dispatch.backend() != "pjrt", reason="several devices need a PJRT plugin"
)

PRELUDE = """
import numpy as np
import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.sharding import Mesh, NamedSharding, PartitionSpec as P
def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)
"""


def run_with_devices(source: str, devices: int = 4, timeout: float = 240, platform=None) -> str:
    """Runs `source` after `PRELUDE` with `devices` CPU devices (`platform="numpy"`: on the
    NumPy evaluator, with as many host devices)."""
    env = dict(os.environ, TRACEJIT_NUM_CPU_DEVICES=str(devices))
    if platform is not None:
        env["TRACEJIT_PLATFORM"] = platform
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(src), env.get("PYTHONPATH", "")])
    program = PRELUDE + textwrap.dedent(source)
    done = subprocess.run(
        [sys.executable, "-c", program],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"subprocess failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout
