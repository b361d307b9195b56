"""A variational autoencoder of handwritten digits (Kingma and Welling 2013).

    python examples/vae.py [--steps 3000] [--latent 8] [--plot out/vae.png]

The encoder maps an 8x8 digit to the mean and log-variance of a Gaussian over a small latent
space; the decoder maps a latent point to Bernoulli logits of the 64 pixels. Training
maximizes the evidence lower bound with one reparameterized sample per image (its noise
from `random.normal` with a fresh key each step). Saved: the loss curve, and an image grid
of test digits, their reconstructions and new digits decoded from the prior.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np
import support

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.example_libraries import optimizers, stax


def networks(latent: int):
    encoder = stax.serial(stax.Dense(256), stax.Relu, stax.Dense(2 * latent))
    decoder = stax.serial(stax.Dense(256), stax.Relu, stax.Dense(64))
    return encoder, decoder


def negative_elbo(encode, decode, params, images, key):
    """The batch's mean negative ELBO: reconstruction cross-entropy plus KL(q(z|x) || N(0, I))."""
    enc_params, dec_params = params
    mean, log_var = jnp.split(encode(enc_params, images), 2, axis=1)
    z = mean + jnp.exp(0.5 * log_var) * jax.random.normal(key, mean.shape)
    logits = decode(dec_params, z)
    reconstruction = jnp.sum(
        jnp.logaddexp(0.0, logits) - images * logits, axis=1
    )  # Bernoulli cross-entropy with pixel intensities as probabilities
    kl = 0.5 * jnp.sum(jnp.exp(log_var) + mean**2 - 1.0 - log_var, axis=1)
    return jnp.mean(reconstruction + kl)


def save_grid(path: str, rows: list[np.ndarray], titles: list[str]) -> None:
    """Rows of 8x8 images side by side, one labelled row each."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'tracejit[examples]'): no image saved")
        return
    count = len(rows[0])
    fig, axes = plt.subplots(len(rows), count, figsize=(count * 0.7, len(rows) * 0.8), dpi=100)
    for r, (images, title) in enumerate(zip(rows, titles, strict=True)):
        for c, image in enumerate(images):
            axes[r, c].imshow(image.reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
            axes[r, c].axis("off")
        axes[r, 0].set_title(title, fontsize=8, loc="left")
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    print(f"saved {path}")


def main(argv=None):
    p = support.parser(__doc__.splitlines()[0], steps=3000, plot="vae.png")
    p.add_argument("--latent", type=int, default=8, help="latent dimensions (default 8)")
    args = p.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    train_x, _, test_x, _ = support.digits(args.seed)
    (enc_init, encode), (dec_init, decode) = networks(args.latent)
    key = jax.random.PRNGKey(args.seed)
    enc_key, dec_key, key = jax.random.split(key, 3)
    params = (enc_init(enc_key, (-1, 64))[1], dec_init(dec_key, (-1, args.latent))[1])
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    loss = jax.jit(lambda params, x, k: negative_elbo(encode, decode, params, x, k))

    @jax.jit
    def update(i, opt_state, images, key):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), images, key)
        return opt_update(i, grads, opt_state), value

    opt_state, batch_size = opt_init(params), 64
    stream = support.batches(train_x, np.zeros(len(train_x)), batch_size, args.seed)
    history = []
    progress = support.Progress(steps)
    start = time.perf_counter()
    for i in range(steps):
        key, step_key = jax.random.split(key)
        opt_state, value = update(i, opt_state, next(stream)[0], step_key)
        history.append(float(value))
        progress.update(i, batch_size, elbo=-history[-1])
    progress.close()
    seconds = time.perf_counter() - start
    params = get_params(opt_state)
    test_loss = float(loss(params, test_x, jax.random.PRNGKey(1)))
    result = {"losses": history, "test_negative_elbo": test_loss,
              "steps_per_second": steps / seconds}  # fmt: skip
    support.print_table([
        ("training steps", f"{steps} (batch {batch_size})"),
        ("train ELBO (last 50 steps)", f"{-np.mean(history[-50:]):.2f} nats"),
        ("test ELBO", f"{-test_loss:.2f} nats"),
        ("steps per second", f"{result['steps_per_second']:.0f}"),
    ])  # fmt: skip
    if not args.smoke:
        support.save_plot(args.plot, {"-ELBO (train)": (np.arange(1, steps + 1), history)},
                         xlabel="step", title="VAE on the 8x8 digits", logy=True)  # fmt: skip
        originals = test_x[:12]
        mean, _ = jnp.split(encode(params[0], originals), 2, axis=1)
        reconstructions = jax.nn.sigmoid(decode(params[1], mean))
        prior = jax.random.normal(jax.random.PRNGKey(2), (12, args.latent))
        samples = jax.nn.sigmoid(decode(params[1], prior))
        grid = str(pathlib.Path(args.plot).with_name("vae_digits.png"))
        save_grid(grid, [originals, np.asarray(reconstructions), np.asarray(samples)],
                  ["test digits", "reconstructions", "samples from the prior"])  # fmt: skip
    return result


if __name__ == "__main__":
    main()
