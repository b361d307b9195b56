"""Data-parallel training with `pmap`: the digits MLP on several CPU devices.

    python examples/pmap_training.py [--devices 4] [--steps 500]

Each device gets its slice of every batch and a copy of the parameters; the step computes
the gradients on the device's slice and averages them over all devices with `lax.pmean`,
so that every copy takes the same update (the mean gradient of the whole batch, as on one
device). The CPU devices are XLA's host devices: `--devices N` asks for N of them
(`TRACEJIT_NUM_CPU_DEVICES`, which must be set before tracejit starts, so this script sets it
before importing tracejit). The table compares the result with the same training on one
device.
"""

from __future__ import annotations

import os
import sys


def _requested_devices(argv) -> str:
    for i, arg in enumerate(argv):
        if arg == "--devices" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--devices="):
            return arg.split("=", 1)[1]
    return "4"


if __name__ == "__main__":
    os.environ.setdefault("TRACEJIT_NUM_CPU_DEVICES", _requested_devices(sys.argv[1:]))

import time

import numpy as np
import support

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.example_libraries import optimizers, stax


def network():
    return stax.serial(
        stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu, stax.Dense(10), stax.LogSoftmax
    )


def train(devices: int, steps: int, seed: int, batch_size: int = 128, progress=None):
    """(losses, test accuracy, steps per second) of data-parallel training on `devices`."""
    train_x, train_y, test_x, test_y = support.digits(seed)
    init_fun, apply_fun = network()
    _, params = init_fun(jax.random.PRNGKey(seed), (-1, 64))
    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)

    def loss(params, images, labels):
        log_probs = apply_fun(params, images)
        return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))

    def step(i, opt_state, images, labels):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), images, labels)
        grads = lax.pmean(grads, axis_name="devices")
        return opt_update(i, grads, opt_state), lax.pmean(value, axis_name="devices")

    update = jax.pmap(step, axis_name="devices")
    replicate = lambda x: jnp.broadcast_to(x, (devices, *jnp.shape(x)))
    opt_state = jax.tree_util.tree_map(replicate, opt_init(params))
    stream = support.batches(train_x, train_y, batch_size, seed)
    losses = []
    start = time.perf_counter()
    for i in range(steps):
        images, labels = next(stream)
        shard = lambda x: x.reshape(devices, -1, *x.shape[1:])
        opt_state, value = update(jnp.full(devices, i), opt_state, shard(images), shard(labels))
        losses.append(float(value[0]))
        if progress is not None:
            progress.update(i, batch_size, loss=losses[-1])
    seconds = time.perf_counter() - start
    params = jax.tree_util.tree_map(lambda x: x[0], get_params(opt_state))
    accuracy = float(jnp.mean(jnp.argmax(apply_fun(params, test_x), axis=1) == test_y))
    return losses, accuracy, steps / seconds


def main(argv=None):
    p = support.parser(__doc__.splitlines()[0], steps=500, plot="pmap_training.png")
    p.add_argument("--devices", type=int, default=4, help="CPU devices to use (default 4)")
    args = p.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    devices = min(args.devices, jax.local_device_count())
    if devices < args.devices:
        print(f"{jax.local_device_count()} device(s) available: using {devices}")
    print(f"data-parallel training on {devices} devices: {jax.local_devices()[:devices]}")
    progress = support.Progress(steps)
    losses, accuracy, rate = train(devices, steps, args.seed, progress=progress)
    progress.close()
    print("the same training on one device:")
    one_losses, one_accuracy, one_rate = train(1, steps, args.seed)
    result = {"losses": losses, "test_accuracy": accuracy, "one_device_losses": one_losses,
              "one_device_accuracy": one_accuracy}  # fmt: skip
    support.print_table([
        ("training steps", f"{steps} (global batch 128)"),
        (f"test accuracy, {devices} devices", f"{accuracy:.2%}"),
        ("test accuracy, 1 device", f"{one_accuracy:.2%}"),
        ("largest loss difference", f"{np.max(np.abs(np.subtract(losses, one_losses))):.2e}"),
        (f"steps per second, {devices} devices", f"{rate:.0f}"),
        ("steps per second, 1 device", f"{one_rate:.0f}"),
    ])  # fmt: skip
    if not args.smoke:
        support.save_plot(
            args.plot,
            {f"{devices} devices": (np.arange(1, steps + 1), losses),
             "1 device": (np.arange(1, steps + 1), one_losses, ":")},
            xlabel="step", title="data-parallel training with pmap", logy=True,
        )  # fmt: skip
    return result


if __name__ == "__main__":
    main()
