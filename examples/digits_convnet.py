"""A small convolutional network classifies handwritten digits (the 8x8 digits that
scikit-learn ships, as images of one channel).

    python examples/digits_convnet.py [--steps 1000] [--plot out/digits_convnet.png]

Built from `example_libraries`: two 3x3 convolutions (`stax.Conv`, NHWC), max pooling and a
dense layer, trained with `optimizers.momentum`; one jitted function takes a step (forward,
backward through the convolutions and the pooling, and update). The training loop is
`support.train_classifier`, shared with `digits_classifier.py`.
"""

from __future__ import annotations

import support

from tracejit.example_libraries import stax


def network():
    return stax.serial(
        stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,
        stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten,
        stax.Dense(10), stax.LogSoftmax,
    )  # fmt: skip


def main(argv=None):
    args = support.parser(__doc__.splitlines()[0], steps=1000, plot="digits_convnet.png")
    args = args.parse_args(argv)
    steps = 20 if args.smoke else args.steps
    return support.train_classifier(network(), (8, 8, 1), args, steps=steps,
                                    title="convnet on the 8x8 digits")  # fmt: skip


if __name__ == "__main__":
    main()
