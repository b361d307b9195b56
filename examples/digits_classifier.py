"""A multilayer perceptron classifies handwritten digits (JAX's `mnist_classifier.py`, on the
8x8 digits that scikit-learn ships).

    python examples/digits_classifier.py [--steps 1500] [--plot out/digits_classifier.png]

Built from `example_libraries`: the network is a `stax.serial` of dense layers, trained with
`optimizers.momentum`; one jitted function takes a step (forward, backward and update). The
training loop is `support.train_classifier`, shared with `digits_convnet.py`.
"""

from __future__ import annotations

import support

from tracejit.example_libraries import stax


def network():
    return stax.serial(
        stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu, stax.Dense(10), stax.LogSoftmax
    )


def main(argv=None):
    args = support.parser(__doc__.splitlines()[0], steps=1500, plot="digits_classifier.png")
    args = args.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    return support.train_classifier(network(), (64,), args, steps=steps,
                                    title="MLP on the 8x8 digits")  # fmt: skip


if __name__ == "__main__":
    main()
