"""Run by test_distributed.py under `mpiexec -n 2`: process 1 fails (as `sys.argv[1]` says)
while process 0 waits for it in a collective; the job must end, not hang."""

import sys
import time

import numpy as np

import tracejit as jax
from tracejit import lax

jax.distributed.initialize(heartbeat_timeout_seconds=3)
if jax.process_index() == 1:
    if sys.argv[1] == "raise":
        raise RuntimeError("process 1 failed on purpose")
    time.sleep(60)  # "hang": alive, but never reaching the collective
jax.pmap(lambda v: lax.psum(v, "i"), "i")(np.ones(jax.local_device_count(), np.float32))
print("process 0 finished a collective without process 1", flush=True)
