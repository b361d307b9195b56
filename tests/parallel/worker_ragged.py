"""Run by test_ragged_all_to_all.py under `mpiexec -n 2`, with 2 CPU devices per process:
`ragged_all_to_all` over a pmap axis spanning both processes, compared with the docstring's
loop on the gathered inputs; prints "ragged across processes: ok" in each process where every
check holds (a failing one raises, which aborts the job)."""

import os
import sys

import numpy as np

import tracejit as jax
from tracejit import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ragged_cases import ragged_pattern, reference

jax.distributed.initialize(heartbeat_timeout_seconds=60)  # (a loaded machine compiles slowly)
p, local = jax.process_index(), jax.local_device_count()
size = jax.process_count() * local
mine = slice(p * local, (p + 1) * local)  # this process's members
rng = np.random.default_rng(0)  # the same patterns in both processes

exchange = jax.pmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i")
for per_member, dtype, trailing in [(1, np.float32, ()), (2, np.int32, (3,)), (3, np.bool_, ())]:
    args = ragged_pattern(rng, size, per_member, trailing, dtype)
    got = exchange(*(a[mine] for a in args))
    np.testing.assert_array_equal(np.asarray(got), np.stack(reference(*args))[mine])

# the transpose, inside the mapped body: an output row keeps its cotangent unless overwritten
operand, output, *indices = ragged_pattern(rng, size, 2, (2,))
loss = lambda u, v, *i: lax.ragged_all_to_all(u, v, *i, axis_name="i").sum()
grads = jax.pmap(jax.grad(loss, (0, 1)), axis_name="i")(operand[mine], output[mine],
                                                        *(a[mine] for a in indices))  # fmt: skip
written = np.stack(reference(operand * 0 + 1, output * 0, *indices)) > 0
np.testing.assert_array_equal(np.asarray(grads[1]), np.where(written, 0.0, 1.0)[mine])
print("ragged across processes: ok")
