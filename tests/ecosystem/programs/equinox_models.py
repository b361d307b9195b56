"""equinox models on one input: MLP, Linear, LayerNorm, Dropout with a key, MLP(scan=True),
filter_jit/filter_grad/filter_vmap ensembles, error_if under jit, and 50 steps of training
with optax; prints JSON {case: numbers, or {"error": "..."}}.

Runs unchanged on real JAX (`make_jax_reference_ecosystem.py` records its output) and on
tracejit (`python -m tracejit.as_jax equinox_models.py`)."""

import json
import sys

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
import optax

X = jnp.asarray(np.random.default_rng(1).normal(size=(8, 4)), jnp.float32)
Y = jnp.sin(X.sum(axis=1, keepdims=True))


def as_list(tree):
    return [np.asarray(leaf, np.float64).ravel().tolist() for leaf in jax.tree.leaves(tree)]


def mlp():
    model = eqx.nn.MLP(4, 2, 16, 2, key=jax.random.key(0))
    return as_list(jax.vmap(model)(X))


def mlp_scan():
    model = eqx.nn.MLP(4, 2, 16, 3, scan=True, key=jax.random.key(0))
    return as_list(jax.vmap(model)(X))


def linear():
    model = eqx.nn.Linear(4, 3, key=jax.random.key(1))
    return as_list([model(X[0]), model.weight, model.bias])


def layer_norm():
    model = eqx.nn.LayerNorm(4)
    return as_list(jax.vmap(model)(X))


def dropout():
    model = eqx.nn.Dropout(0.5)
    out = model(X, key=jax.random.key(2))
    return as_list([out, model(X, inference=True)])


def ensemble():
    """Five MLPs made with filter_vmap, run and differentiated as one."""

    @eqx.filter_vmap
    def make(key):
        return eqx.nn.MLP(4, 1, 8, 1, key=key)

    models = make(jax.random.split(jax.random.key(3), 5))

    @eqx.filter_jit
    @eqx.filter_grad
    def grads(models):
        outs = eqx.filter_vmap(lambda m: jax.vmap(m)(X), in_axes=eqx.if_array(0))(models)
        return jnp.mean((outs - Y) ** 2)

    g = grads(models)
    return as_list(eqx.filter(g, eqx.is_array))


def filter_jvp():
    model = eqx.nn.Linear(4, 2, key=jax.random.key(6))
    out, tangent = eqx.filter_jvp(lambda x: jnp.tanh(model(x)), (X[0],), (jnp.ones(4),))
    return as_list([out, tangent])


def error_if():
    @eqx.filter_jit
    def f(x):
        return eqx.error_if(x, x < 0, "negative input")

    ok = f(jnp.float32(1.0))
    try:
        f(jnp.float32(-1.0))
        raised = "no error"
    except Exception as err:  # noqa: BLE001  (equinox raises its EqxRuntimeError)
        raised = "negative input" in str(err)
    return [[float(ok)], [float(raised is True)]]


def checkpointed_while_loop():
    """equinox's checkpointed while loop (its own custom_vjp with symbolic zeros) under grad."""

    def f(x):
        def body(carry):
            return carry[0] + 1, carry[1] * 1.1 + jnp.sin(carry[1])

        carry = (0, x)
        out = eqxi.while_loop(
            lambda c: c[0] < 10, body, carry, max_steps=16, kind="checkpointed", checkpoints=4
        )
        return out[1].sum()

    x = jnp.arange(3.0) / 4
    return as_list([jax.grad(f)(x), jax.jit(jax.grad(f))(x)])


def conv2d():
    model = eqx.nn.Conv2d(2, 3, 3, padding=1, key=jax.random.key(5))
    return as_list(model(X.reshape(2, 4, 4)))


def max_pool2d():
    return as_list(eqx.nn.MaxPool2d(2, stride=1)(X.reshape(2, 4, 4)))


def train():
    model = eqx.nn.MLP(4, 1, 16, 2, key=jax.random.key(4))
    optimizer = optax.adam(1e-2)
    state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_value_and_grad
    def loss(model):
        return jnp.mean((jax.vmap(model)(X) - Y) ** 2)

    @eqx.filter_jit
    def step(model, state):
        value, grads = loss(model)
        updates, state = optimizer.update(grads, state, model)
        return eqx.apply_updates(model, updates), state, value

    losses = []
    for _ in range(50):
        model, state, value = step(model, state)
        losses.append(float(value))
    return [losses]


CASES = [
    mlp,
    mlp_scan,
    linear,
    layer_norm,
    dropout,
    ensemble,
    filter_jvp,
    error_if,
    checkpointed_while_loop,
    conv2d,
    max_pool2d,
    train,
]


def main(names):
    results = {}
    for case in CASES:
        if names and case.__name__ not in names:
            continue
        try:
            results[case.__name__] = case()
        except Exception as err:  # noqa: BLE001  (recorded: the comparison says which fail where)
            results[case.__name__] = {"error": f"{type(err).__name__}: {err}"[:300]}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
