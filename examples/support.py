"""What the examples share: their command line, the digits data set, a progress line, the
loss-curve plot and the final table.

The progress line is a few lines of our own rather than `tqdm`: the examples also run in the
test suite, where only the test extra is installed, and a line that shows the step, the loss
and the throughput is all they need.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.example_libraries import optimizers

OUT = pathlib.Path(__file__).parent / "out"


def parser(description: str, *, steps: int, plot: str) -> argparse.ArgumentParser:
    """The options every example has: `--steps`, `--seed`, `--plot PATH`, `--smoke`."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=steps, help=f"training steps (default {steps})")
    p.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    p.add_argument(
        "--plot", default=str(OUT / plot), help=f"where to save the plot (default out/{plot})"
    )
    p.add_argument(
        "--smoke", action="store_true",
        help="a few steps and no plot: checks that the example runs (the test suite uses it)",
    )  # fmt: skip
    return p


def digits(seed: int = 0, test_fraction: float = 0.25):
    """scikit-learn's 8x8 handwritten digits (1,797 images, shipped with scikit-learn: no
    download), pixels scaled to [0, 1], split at random into train and test sets:
    (train_images, train_labels, test_images, test_labels), images float32 of shape (n, 64)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as error:
        raise SystemExit(
            "this example needs scikit-learn for its data: pip install 'tracejit[examples]'"
        ) from error
    data = load_digits()
    images = (data.data / 16.0).astype(np.float32)
    labels = data.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


def batches(images, labels, batch_size: int, seed: int):
    """An endless stream of shuffled minibatches (each epoch a new permutation)."""
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(labels))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            chosen = order[start : start + batch_size]
            yield images[chosen], labels[chosen]


class Progress:
    """`step 120/500 [####      ] loss 0.4123 · 8,512 examples/s`, redrawn in place on a
    terminal; elsewhere (a pipe, a log, the test suite) one line per tenth of the run."""

    def __init__(self, total: int, unit: str = "examples", width: int = 20, stream=None):
        self.total, self.unit, self.width = total, unit, width
        self.stream = stream or sys.stdout
        self.live = getattr(self.stream, "isatty", lambda: False)()
        self.start, self.count = time.perf_counter(), 0

    def update(self, step: int, amount: int, **metrics) -> None:
        """After step `step` (0-based), which processed `amount` units."""
        self.count += amount
        done = step + 1
        if not self.live and done % max(1, self.total // 10) and done != self.total:
            return
        rate = self.count / max(time.perf_counter() - self.start, 1e-9)
        filled = self.width * done // self.total
        shown = " · ".join(f"{k} {v:.4g}" for k, v in metrics.items())
        line = (f"step {done}/{self.total} [{'#' * filled}{' ' * (self.width - filled)}] "
                f"{shown} · {rate:,.0f} {self.unit}/s")  # fmt: skip
        self.stream.write(("\r" + line) if self.live else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")


def save_plot(path: str, curves: dict, *, xlabel: str, title: str, logy: bool = False) -> None:
    """Plots `curves` ({label: (xs, ys) or (xs, ys, format)}, format as matplotlib's, e.g.
    "o" for points) into `path` (PNG) with matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'tracejit[examples]'): no plot saved")
        return
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for label, (xs, ys, *style) in curves.items():
        ax.plot(xs, ys, *style, label=label, markersize=3)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    print(f"saved {path}")


def print_table(rows: list[tuple[str, str]]) -> None:
    """A two-column table of final results."""
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


def train_classifier(network, image_shape: tuple, args, *, steps: int, title: str) -> dict:
    """Trains a stax `network` of log-probabilities on the digits (images reshaped to
    `image_shape`) by momentum SGD, one jitted step per batch of 128; prints progress and a
    final table, saves the curves unless `args.smoke`."""
    train_x, train_y, test_x, test_y = digits(args.seed)
    init_fun, apply_fun = network

    def log_probs(params, images):
        return apply_fun(params, images.reshape(-1, *image_shape))

    def accuracy(params, images, labels):
        return float(jnp.mean(jnp.argmax(log_probs(params, images), axis=1) == labels))

    def loss(params, images, labels):
        return -jnp.mean(jnp.take_along_axis(log_probs(params, images), labels[:, None], axis=1))

    _, params = init_fun(jax.random.PRNGKey(args.seed), (-1, *image_shape))
    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)

    @jax.jit
    def update(i, opt_state, images, labels):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), images, labels)
        return opt_update(i, grads, opt_state), value

    opt_state, batch_size = opt_init(params), 128
    stream = batches(train_x, train_y, batch_size, args.seed)
    history, evaluations = [], []
    progress = Progress(steps)
    start = time.perf_counter()
    for i in range(steps):
        opt_state, value = update(i, opt_state, *next(stream))
        history.append(float(value))
        progress.update(i, batch_size, loss=history[-1])
        if (i + 1) % max(1, steps // 10) == 0:
            evaluations.append((i + 1, accuracy(get_params(opt_state), test_x, test_y)))
    progress.close()
    seconds = time.perf_counter() - start
    params = get_params(opt_state)
    result = {
        "losses": history,
        "train_accuracy": accuracy(params, train_x, train_y),
        "test_accuracy": accuracy(params, test_x, test_y),
        "steps_per_second": steps / seconds,
    }
    print_table([
        ("training steps", f"{steps} (batch {batch_size})"),
        ("final training loss", f"{np.mean(history[-20:]):.4f}"),
        ("train accuracy", f"{result['train_accuracy']:.2%}"),
        ("test accuracy", f"{result['test_accuracy']:.2%}"),
        ("steps per second", f"{result['steps_per_second']:.0f} (the first step compiles)"),
    ])  # fmt: skip
    if not args.smoke:
        save_plot(
            args.plot,
            {
                "training loss": (np.arange(1, steps + 1), history),
                "test error": ([s for s, _ in evaluations], [1 - a for _, a in evaluations]),
            },
            xlabel="step", title=title, logy=True,
        )  # fmt: skip
    return result
