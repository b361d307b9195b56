"""A multilayer perceptron classifies handwritten digits (JAX's `mnist_classifier.py`, on the
8x8 digits that scikit-learn ships).

    python examples/digits_classifier.py [--steps 1500] [--plot out/digits_classifier.png]

Built from `example_libraries`: the network is a `stax.serial` of dense layers, trained with
`optimizers.momentum`; one jitted function takes a step (forward, backward and update).
"""

from __future__ import annotations

import time

import numpy as np
import support

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.example_libraries import optimizers, stax


def network():
    return stax.serial(
        stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu, stax.Dense(10), stax.LogSoftmax
    )


def loss(apply_fun, params, batch):
    images, labels = batch
    log_probs = apply_fun(params, images)
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))


def accuracy(apply_fun, params, images, labels):
    return float(jnp.mean(jnp.argmax(apply_fun(params, images), axis=1) == labels))


def main(argv=None):
    args = support.parser(__doc__.splitlines()[0], steps=1500, plot="digits_classifier.png")
    args = args.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    train_x, train_y, test_x, test_y = support.digits(args.seed)
    init_fun, apply_fun = network()
    _, params = init_fun(jax.random.PRNGKey(args.seed), (-1, 64))
    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)

    @jax.jit
    def update(i, opt_state, batch):
        value, grads = jax.value_and_grad(lambda p: loss(apply_fun, p, batch))(
            get_params(opt_state)
        )
        return opt_update(i, grads, opt_state), value

    opt_state, batch_size = opt_init(params), 128
    stream = support.batches(train_x, train_y, batch_size, args.seed)
    history, evaluations = [], []
    progress = support.Progress(steps)
    start = time.perf_counter()
    for i in range(steps):
        opt_state, value = update(i, opt_state, next(stream))
        history.append(float(value))
        progress.update(i, batch_size, loss=history[-1])
        if (i + 1) % max(1, steps // 10) == 0 or i + 1 == steps:
            params = get_params(opt_state)
            evaluations.append((i + 1, accuracy(apply_fun, params, test_x, test_y)))
    progress.close()
    seconds = time.perf_counter() - start
    params = get_params(opt_state)
    result = {
        "losses": history,
        "train_accuracy": accuracy(apply_fun, params, train_x, train_y),
        "test_accuracy": accuracy(apply_fun, params, test_x, test_y),
        "steps_per_second": steps / seconds,
    }
    support.print_table([
        ("training steps", f"{steps} (batch {batch_size})"),
        ("final training loss", f"{np.mean(history[-20:]):.4f}"),
        ("train accuracy", f"{result['train_accuracy']:.2%}"),
        ("test accuracy", f"{result['test_accuracy']:.2%}"),
        ("steps per second", f"{result['steps_per_second']:.0f} (first step compiles)"),
    ])  # fmt: skip
    if not args.smoke:
        support.save_plot(
            args.plot,
            {
                "training loss": (np.arange(1, steps + 1), history),
                "test error": ([s for s, _ in evaluations], [1 - a for _, a in evaluations]),
            },
            xlabel="step", title="MLP on the 8x8 digits", logy=True,
        )  # fmt: skip
    return result


if __name__ == "__main__":
    main()
