"""Every optax optimizer, 20 jitted steps on a small least-squares regression; prints JSON
{name: {"loss": [...per step], "params": {...}} or {"error": "..."}}.

Runs unchanged on real JAX (`make_jax_reference_ecosystem.py` records its output) and on
tracejit (`python -m tracejit.as_jax optax_optimizers.py`)."""

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax
import optax.contrib

rng = np.random.default_rng(0)
X = jnp.asarray(rng.normal(size=(16, 3)), jnp.float32)
Y = jnp.asarray(X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.01 * rng.normal(size=16), jnp.float32)
PARAMS = {"w": jnp.zeros(3, jnp.float32), "b": jnp.full(1, 0.1, jnp.float32)}


def loss_fn(params):
    return jnp.mean((X @ params["w"] + params["b"] - Y) ** 2)


def run(optimizer, steps=20, extra_args=()):
    """`extra_args` names what the optimizer's update also takes, of `value`, `grad`,
    `value_fn` and `obj_fn`."""
    state = optimizer.init(PARAMS)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        extra = {"value": loss, "grad": grads, "value_fn": loss_fn, "obj_fn": loss_fn}
        kwargs = {name: extra[name] for name in extra_args}
        updates, state = optimizer.update(grads, state, params, **kwargs)
        return optax.apply_updates(params, updates), state, loss

    params, losses = PARAMS, []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return {"loss": losses, "params": {k: np.asarray(v).tolist() for k, v in params.items()}}


schedule = optax.warmup_cosine_decay_schedule(0.0, 0.1, 5, 20, end_value=0.01)
OPTIMIZERS = {
    "adabelief": lambda: optax.adabelief(0.1),
    "adadelta": lambda: optax.adadelta(1.0),
    "adafactor": lambda: optax.adafactor(0.1),
    "adagrad": lambda: optax.adagrad(0.1),
    "adam": lambda: optax.adam(0.1),
    "adamax": lambda: optax.adamax(0.1),
    "adamaxw": lambda: optax.adamaxw(0.1),
    "adamw": lambda: optax.adamw(0.1, weight_decay=0.01),
    "adan": lambda: optax.adan(0.1),
    "amsgrad": lambda: optax.amsgrad(0.1),
    "fromage": lambda: optax.fromage(0.1),
    "lamb": lambda: optax.lamb(0.1),
    "lars": lambda: optax.lars(0.1),
    "lion": lambda: optax.lion(0.01),
    "nadam": lambda: optax.nadam(0.1),
    "nadamw": lambda: optax.nadamw(0.1),
    "noisy_sgd": lambda: optax.noisy_sgd(0.05, key=jax.random.key(3)),
    "novograd": lambda: optax.novograd(0.1),
    "optimistic_adam_v2": lambda: optax.optimistic_adam_v2(0.05),
    "optimistic_gradient_descent": lambda: optax.optimistic_gradient_descent(0.05),
    "radam": lambda: optax.radam(0.1),
    "rmsprop": lambda: optax.rmsprop(0.05),
    "rmsprop_centered_momentum": lambda: optax.rmsprop(0.05, centered=True, momentum=0.9),
    "rprop": lambda: optax.rprop(0.05),
    "sgd": lambda: optax.sgd(0.05),
    "sgd_momentum": lambda: optax.sgd(0.05, momentum=0.9),
    "sgd_nesterov": lambda: optax.sgd(0.05, momentum=0.9, nesterov=True),
    "sign_sgd": lambda: optax.sign_sgd(0.01),
    "signum": lambda: optax.signum(0.01),
    "sm3": lambda: optax.sm3(0.1),
    "yogi": lambda: optax.yogi(0.1),
    "chain_clip_adamw_cosine": lambda: optax.chain(
        optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-3)
    ),
    "chain_clip_adam_schedule": lambda: optax.chain(
        optax.clip(0.5),
        optax.scale_by_adam(),
        optax.scale_by_schedule(optax.exponential_decay(0.1, 5, 0.5)),
        optax.scale(-1.0),
    ),
    "chain_piecewise_sgd": lambda: optax.sgd(
        optax.piecewise_constant_schedule(0.1, {5: 0.5, 10: 0.5})
    ),
    "inject_hyperparams_adam": lambda: optax.inject_hyperparams(optax.adam)(learning_rate=0.1),
    "multi_transform": lambda: optax.multi_transform(
        {"a": optax.adam(0.1), "s": optax.sgd(0.05)}, {"w": "a", "b": "s"}
    ),
    "masked_weight_decay": lambda: optax.chain(
        optax.masked(optax.add_decayed_weights(0.1), {"w": True, "b": False}), optax.sgd(0.05)
    ),
    "apply_every": lambda: optax.chain(optax.apply_every(2), optax.sgd(0.05)),
    "multi_steps": lambda: optax.MultiSteps(optax.adam(0.1), every_k_schedule=2),
    "contrib_acprop": lambda: optax.contrib.acprop(0.1),
    "contrib_ademamix": lambda: optax.contrib.ademamix(0.1),
    "contrib_adopt": lambda: optax.contrib.adopt(0.1),
    "contrib_cocob": lambda: optax.contrib.cocob(),
    "contrib_dadapt_adamw": lambda: optax.contrib.dadapt_adamw(1.0),
    "contrib_dog": lambda: optax.contrib.dog(),
    "contrib_dowg": lambda: optax.contrib.dowg(),
    "contrib_madgrad": lambda: optax.contrib.madgrad(0.1),
    "contrib_mechanize": lambda: optax.contrib.mechanize(optax.adam(0.1)),
    "contrib_prodigy": lambda: optax.contrib.prodigy(1.0),
    "contrib_schedule_free_adamw": lambda: optax.contrib.schedule_free_adamw(0.1),
    "contrib_simplified_ademamix": lambda: optax.contrib.simplified_ademamix(0.1),
}
VALUE = ("value",)
EXTRA_ARGS = {  # name: (optimizer, what its update also takes)
    "polyak_sgd": (lambda: optax.polyak_sgd(1.0), VALUE),
    "contrib_momo": (lambda: optax.contrib.momo(0.1), VALUE),
    "contrib_momo_adam": (lambda: optax.contrib.momo_adam(0.1), VALUE),
    "contrib_reduce_on_plateau": (
        lambda: optax.chain(optax.sgd(0.05), optax.contrib.reduce_on_plateau(patience=2)),
        VALUE,
    ),
    "contrib_sophia": (lambda: optax.contrib.sophia(0.1), ("obj_fn",)),
}


def lbfgs_run(steps=20):
    """L-BFGS with its zoom line search, as optax documents it."""
    optimizer = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(loss_fn)

    @jax.jit
    def step(params, state):
        value, grad = value_and_grad(params, state=state)
        updates, state = optimizer.update(
            grad, state, params, value=value, grad=grad, value_fn=loss_fn
        )
        return optax.apply_updates(params, updates), state, value

    params, state, losses = PARAMS, optimizer.init(PARAMS), []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return {"loss": losses, "params": {k: np.asarray(v).tolist() for k, v in params.items()}}


def main(names):
    results = {}
    runs = {name: (lambda make=make: run(make())) for name, make in OPTIMIZERS.items()}
    for name, (make, extra_args) in EXTRA_ARGS.items():
        runs[name] = lambda make=make, extra_args=extra_args: run(make(), extra_args=extra_args)
    runs["lbfgs"] = lbfgs_run
    for name, run_one in runs.items():
        if names and name not in names:
            continue
        try:
            results[name] = run_one()
        except Exception as err:  # noqa: BLE001  (recorded: the comparison says which fail where)
            results[name] = {"error": f"{type(err).__name__}: {err}"[:300]}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
