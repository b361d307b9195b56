"""Run by test_distributed.py under `mpiexec -n 2`, with 2 CPU devices per process (and 1):
data-parallel SGD of an MLP over every process's devices (each process feeding its members'
parts of the batch, the gradients averaged with pmean) against the single-process step on the
whole batch. Writes `sgd` to `$TRACEJIT_TEST_REPORTS/<process>.txt` when three steps agree."""

import os

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

jax.distributed.initialize()
p, local = jax.process_index(), jax.local_device_count()
members = jax.device_count()

rng = np.random.default_rng(0)  # the same data and parameters in every process
sizes = [(128, 512), (512, 512), (512, 8)]  # (large enough for XLA to run the pmeans at once)
params = [
    (
        rng.standard_normal(shape).astype(np.float32) / np.sqrt(shape[0]),
        np.zeros(shape[1], np.float32),
    )
    for shape in sizes
]
inputs = rng.standard_normal((members * 32, 128)).astype(np.float32)
targets = rng.standard_normal((members * 32, 8)).astype(np.float32)


def loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def step(params, x, y, rate=0.1):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda v, g: v - rate * g, params, grads)


def parallel_step(params, x, y, rate=0.1):
    grads = lax.pmean(jax.grad(loss)(params, x, y), "batch")
    return jax.tree.map(lambda v, g: v - rate * g, params, grads)


whole = jax.jit(step)
data_parallel = jax.pmap(parallel_step, "batch", in_axes=(None, 0, 0), out_axes=None)
shards = slice(p * local, (p + 1) * local)
x_local = inputs.reshape(members, 32, 128)[shards]
y_local = targets.reshape(members, 32, 8)[shards]
reference = distributed = params
for _ in range(3):
    reference = whole(reference, inputs, targets)
    distributed = data_parallel(distributed, x_local, y_local)
for (w, b), (w_ref, b_ref) in zip(distributed, reference, strict=True):
    np.testing.assert_allclose(np.asarray(w), np.asarray(w_ref), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(b), np.asarray(b_ref), rtol=2e-5, atol=2e-6)
with open(os.path.join(os.environ["TRACEJIT_TEST_REPORTS"], f"{p}.txt"), "a") as report:
    report.write("sgd\n")
