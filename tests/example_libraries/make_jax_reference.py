"""Records JAX's results for `tests/example_libraries/test_*.py`.

The tests never import JAX; they compare tracejit's values with the ones this script saved
from real JAX 0.10.2 into `tests/example_libraries/data/reference.npz`. To regenerate them,
in a virtualenv with `jax==0.10.2` (CPU) and NumPy, from outside the repository's `src`:

    python tools/jax_reference.py tests/example_libraries/make_jax_reference.py

`OPTIMIZER_CASES` and `STAX_CASES` are functions of a namespace `m` (`m.jax`, `m.jnp`,
`m.optimizers`, `m.stax`: JAX's or tracejit's), so that this file is also the tests' table
of cases: they import it without running `main`. Each case returns a pytree of arrays; its
leaves are stored in order under "<case>/<i>".
"""

from __future__ import annotations

import pathlib
import types

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "reference.npz"


JAX_MODULES = (
    "jax.example_libraries.optimizers",
    "jax.example_libraries.stax",
)  # (imported for main by tools/jax_reference.py)


def _params(m):
    w = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)
    return {"w": m.jnp.asarray(w), "b": m.jnp.asarray(np.array([0.5, -0.25], np.float32))}


def _loss(m, params):
    x = np.linspace(-2.0, 2.0, 12, dtype=np.float32).reshape(4, 3)
    y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -0.5]], np.float32)
    prediction = m.jnp.tanh(x @ params["w"] + params["b"])
    return m.jnp.sum((prediction - y) ** 2)


def _trajectory(m, make, steps=12):
    """The parameters after `steps` jitted updates on a small regression, and the state.
    (`get_params` stays outside `jit`: sm3's state holds the parameters' shape. The gradient
    is jitted too: eager tanh is NumPy's in tracejit and XLA's in JAX, 1 ulp apart.)"""
    init, update, get_params = make(m.optimizers)
    grad = m.jax.jit(m.jax.grad(lambda p: _loss(m, p)))
    step = m.jax.jit(update)
    state = init(_params(m))
    for i in range(steps):
        state = step(i, grad(get_params(state)), state)
    return get_params(state), m.jax.tree_util.tree_leaves(state)


OPTIMIZER_CASES = {
    "sgd": lambda m: _trajectory(m, lambda o: o.sgd(0.1)),
    "sgd_schedule": lambda m: _trajectory(m, lambda o: o.sgd(o.exponential_decay(0.2, 3, 0.5))),
    "momentum": lambda m: _trajectory(m, lambda o: o.momentum(0.05, 0.9)),
    "nesterov": lambda m: _trajectory(m, lambda o: o.nesterov(0.05, 0.9)),
    "adagrad": lambda m: _trajectory(m, lambda o: o.adagrad(0.1)),
    "rmsprop": lambda m: _trajectory(m, lambda o: o.rmsprop(0.01)),
    "rmsprop_momentum": lambda m: _trajectory(m, lambda o: o.rmsprop_momentum(0.01)),
    "adam": lambda m: _trajectory(m, lambda o: o.adam(0.05)),
    "adam_piecewise": lambda m: _trajectory(
        m, lambda o: o.adam(o.piecewise_constant([3, 6], [0.1, 0.05, 0.01]))
    ),
    "adamax": lambda m: _trajectory(m, lambda o: o.adamax(0.05)),
    "sm3": lambda m: _trajectory(m, lambda o: o.sm3(0.1)),
    "schedules": lambda m: [
        m.jnp.stack([m.jnp.asarray(schedule(i), m.jnp.float32) for i in (0, 1, 5, 10, 100)])
        for schedule in (
            m.optimizers.constant(0.3),
            m.optimizers.exponential_decay(0.3, 10, 0.5),
            m.optimizers.inverse_time_decay(0.3, 10, 0.5),
            m.optimizers.inverse_time_decay(0.3, 10, 0.5, staircase=True),
            m.optimizers.polynomial_decay(0.3, 50, 0.01, power=2.0),
            m.optimizers.piecewise_constant([2, 8], [1.0, 0.5, 0.1]),
        )
    ],
    "clip_grads": lambda m: m.optimizers.clip_grads(_params(m), 0.5),
    "l2_norm": lambda m: m.optimizers.l2_norm(_params(m)),
}


def _inputs(shape):
    return np.sin(np.arange(np.prod(shape), dtype=np.float32) * 0.7).reshape(shape)


def _layer(m, layer, input_shape, rng=False):
    """A layer's output shape, initial parameters (key 0) and output on fixed inputs."""
    init, apply = layer(m.stax)
    shape, params = init(m.jax.random.PRNGKey(0), input_shape)
    kwargs = {"rng": m.jax.random.PRNGKey(7)} if rng else {}
    outputs = apply(params, m.jnp.asarray(_inputs(input_shape)), **kwargs)
    return np.array(shape, np.int64), params, outputs


STAX_CASES = {
    "dense": lambda m: _layer(m, lambda s: s.Dense(5), (4, 3)),
    "mlp": lambda m: _layer(
        m,
        lambda s: s.serial(s.Dense(8), s.Relu, s.Dense(8), s.Tanh, s.Dense(3), s.LogSoftmax),
        (5, 4),
    ),
    "activations": lambda m: _layer(
        m,
        lambda s: s.serial(
            s.Elu, s.Gelu, s.LeakyRelu, s.Selu, s.Sigmoid, s.Softplus, s.Exp, s.Softmax
        ),
        (3, 4),
    ),
    "dropout": lambda m: _layer(m, lambda s: s.serial(s.Dense(6), s.Dropout(0.7)), (4, 3), True),
    "dropout_test": lambda m: _layer(m, lambda s: s.Dropout(0.7, mode="test"), (4, 3), True),
    "batchnorm": lambda m: _layer(m, lambda s: s.BatchNorm(axis=(0,)), (6, 3)),
    "batchnorm_image": lambda m: _layer(m, lambda s: s.BatchNorm(), (2, 3, 3, 2)),
    "fan": lambda m: _layer(
        m,
        lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(4), s.Identity, s.Dense(4)), s.FanInSum),
        (2, 4),
    ),
    "concat": lambda m: _layer(
        m,
        lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(2), s.Dense(3)), s.FanInConcat()),
        (2, 4),
    ),
    "flatten": lambda m: _layer(m, lambda s: s.serial(s.Flatten, s.Dense(2)), (2, 3, 2, 2)),
    "shape_dependent": lambda m: _layer(
        m, lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)), (2, 3)
    ),
    "conv": lambda m: _layer(m, lambda s: s.Conv(4, (3, 3), padding="SAME"), (2, 5, 5, 3)),
    "conv_strided": lambda m: _layer(
        m, lambda s: s.Conv(2, (2, 3), strides=(2, 1), padding="VALID"), (1, 6, 5, 2)
    ),
    "general_conv_nchw": lambda m: _layer(
        m,
        lambda s: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 3), padding="SAME"),
        (2, 2, 4, 4),
    ),
    "conv_transpose": lambda m: _layer(
        m, lambda s: s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"), (1, 3, 3, 2)
    ),
    "conv1d_transpose": lambda m: _layer(
        m, lambda s: s.Conv1DTranspose(2, (3,), padding="VALID"), (2, 5, 3)
    ),
    "max_pool": lambda m: _layer(m, lambda s: s.MaxPool((2, 2)), (2, 4, 4, 3)),
    "avg_pool_same": lambda m: _layer(
        m, lambda s: s.AvgPool((3, 3), strides=(2, 2), padding="SAME"), (1, 5, 5, 2)
    ),
    "sum_pool_nchw": lambda m: _layer(m, lambda s: s.SumPool((2, 2), spec="NCHW"), (1, 2, 4, 4)),
    "convnet": lambda m: _layer(
        m,
        lambda s: s.serial(
            s.Conv(4, (3, 3), padding="SAME"),
            s.BatchNorm(),
            s.Relu,
            s.MaxPool((2, 2)),
            s.Flatten,
            s.Dense(3),
            s.LogSoftmax,
        ),
        (2, 6, 6, 1),
    ),
}


def leaves_of(m, result) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in m.jax.tree_util.tree_leaves(result)]


def main(jax):
    jnp = jax.numpy
    optimizers, stax = jax.example_libraries.optimizers, jax.example_libraries.stax

    m = types.SimpleNamespace(jax=jax, jnp=jnp, optimizers=optimizers, stax=stax)
    arrays = {}
    for name, case in {**OPTIMIZER_CASES, **STAX_CASES}.items():
        for i, leaf in enumerate(leaves_of(m, case(m))):
            arrays[f"{name}/{i}"] = leaf
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **arrays)
    print(f"wrote {len(arrays)} arrays to {DATA}")
