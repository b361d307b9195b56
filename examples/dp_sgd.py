"""Differentially private SGD: every example's gradient clipped on its own, then noised.

    python examples/dp_sgd.py [--steps 1500] [--l2-norm-clip 1.0] [--noise-multiplier 1.1]

DP-SGD (Abadi et al. 2016) bounds each training example's influence on a step: it clips each
example's gradient to norm C, sums them, adds Gaussian noise of standard deviation σC and
averages. Per-example gradients are what `vmap(grad(loss))` gives in one vectorized call:
the seeds' flagship use of `vmap`. The same network is also trained without privacy for
comparison; the table reports both test accuracies. (The ε of the privacy guarantee needs an
accountant, e.g. the moments accountant of TensorFlow Privacy; it is not computed here.)
"""

from __future__ import annotations

import time
from functools import partial

import support

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.example_libraries import optimizers, stax


def network():
    return stax.serial(stax.Dense(128), stax.Tanh, stax.Dense(10), stax.LogSoftmax)


def example_loss(apply_fun, params, image, label):
    return -apply_fun(params, image[None])[0, label]


def private_gradient(apply_fun, params, batch, key, l2_norm_clip, noise_multiplier):
    """The clipped, summed, noised and averaged gradient of the batch."""
    images, labels = batch
    per_example = jax.vmap(jax.grad(partial(example_loss, apply_fun)), in_axes=(None, 0, 0))(
        params, images, labels
    )
    leaves, treedef = jax.tree_util.tree_flatten(per_example)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))
    scale = jnp.minimum(1.0, l2_norm_clip / (norms + 1e-12))
    keys = jax.random.split(key, len(leaves))
    noised = [
        (jnp.tensordot(scale, g, axes=1)
         + noise_multiplier * l2_norm_clip * jax.random.normal(k, g.shape[1:])) / len(labels)
        for g, k in zip(leaves, keys, strict=True)
    ]  # fmt: skip
    return jax.tree_util.tree_unflatten(treedef, noised)


def accuracy(apply_fun, params, images, labels):
    return float(jnp.mean(jnp.argmax(apply_fun(params, images), axis=1) == labels))


def train(args, steps, private: bool, data, progress=None):
    train_x, train_y, test_x, test_y = data
    init_fun, apply_fun = network()
    _, params = init_fun(jax.random.PRNGKey(args.seed), (-1, 64))
    opt_init, opt_update, get_params = optimizers.sgd(args.learning_rate)

    @jax.jit
    def update(i, opt_state, batch, key):
        params = get_params(opt_state)
        if private:
            grads = private_gradient(apply_fun, params, batch, key, args.l2_norm_clip,
                                     args.noise_multiplier)  # fmt: skip
        else:
            losses = jax.vmap(partial(example_loss, apply_fun), in_axes=(None, 0, 0))
            grads = jax.grad(lambda p: jnp.mean(losses(p, *batch)))(params)
        return opt_update(i, grads, opt_state)

    opt_state = opt_init(params)
    stream = support.batches(train_x, train_y, args.batch_size, args.seed)
    key = jax.random.PRNGKey(args.seed + 1)
    evaluations = []
    for i in range(steps):
        key, step_key = jax.random.split(key)
        opt_state = update(i, opt_state, next(stream), step_key)
        if progress is not None:
            progress.update(i, args.batch_size)
        if (i + 1) % max(1, steps // 10) == 0:
            evaluations.append((i + 1, accuracy(apply_fun, get_params(opt_state), test_x, test_y)))
    return evaluations


def main(argv=None):
    p = support.parser(__doc__.splitlines()[0], steps=1500, plot="dp_sgd.png")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--learning-rate", type=float, default=0.25)
    p.add_argument("--l2-norm-clip", type=float, default=1.0)
    p.add_argument("--noise-multiplier", type=float, default=1.1)
    args = p.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    data = support.digits(args.seed)
    print(f"DP-SGD: clip {args.l2_norm_clip}, noise multiplier {args.noise_multiplier}, "
          f"batch {args.batch_size}")  # fmt: skip
    progress = support.Progress(steps)
    start = time.perf_counter()
    private = train(args, steps, True, data, progress)
    progress.close()
    seconds = time.perf_counter() - start
    print("the same network without privacy:")
    public = train(args, steps, False, data)
    result = {
        "private_accuracy": private[-1][1],
        "public_accuracy": public[-1][1],
        "private_evaluations": private,
        "steps_per_second": steps / seconds,
    }
    support.print_table([
        ("training steps", f"{steps} (batch {args.batch_size})"),
        ("test accuracy, DP-SGD", f"{result['private_accuracy']:.2%}"),
        ("test accuracy, SGD", f"{result['public_accuracy']:.2%}"),
        ("DP-SGD steps per second", f"{result['steps_per_second']:.0f}"),
    ])  # fmt: skip
    if not args.smoke:
        support.save_plot(
            args.plot,
            {
                "DP-SGD": ([s for s, _ in private], [a for _, a in private]),
                "SGD": ([s for s, _ in public], [a for _, a in public]),
            },
            xlabel="step", title="test accuracy on the 8x8 digits",
        )  # fmt: skip
    return result


if __name__ == "__main__":
    main()
