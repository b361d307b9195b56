"""Fitting an ODE's parameters by gradient descent through its solver.

    python examples/ode_fit.py [--steps 400] [--plot out/ode_fit.png]

The Lotka-Volterra equations of predators and prey,

    dx/dt = α x - β x y,    dy/dt = δ x y - γ y,

are integrated by the classical Runge-Kutta method in a `lax.scan` of 400 steps. From noisy
observations of a trajectory with unknown (α, β, γ, δ), gradient descent (Adam on the
parameters' logarithms) recovers them: `grad` differentiates through the whole `scan`, which
`jit` compiles into one XLA loop.
"""

from __future__ import annotations

import time

import numpy as np
import support

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.example_libraries import optimizers

TRUE_PARAMS = np.array([1.0, 0.5, 1.5, 0.75], np.float32)  # α, β, γ, δ
DT, SOLVER_STEPS, OBSERVE_EVERY = 0.025, 400, 10


def vector_field(state, params):
    x, y = state
    alpha, beta, gamma, delta = params
    return jnp.stack([alpha * x - beta * x * y, delta * x * y - gamma * y])


def solve(params, initial_state):
    """The state at every solver step (RK4 in a scan)."""

    def rk4_step(state, _):
        k1 = vector_field(state, params)
        k2 = vector_field(state + 0.5 * DT * k1, params)
        k3 = vector_field(state + 0.5 * DT * k2, params)
        k4 = vector_field(state + DT * k3, params)
        state = state + DT / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return state, state

    _, states = lax.scan(rk4_step, initial_state, None, length=SOLVER_STEPS)
    return states


def loss(log_params, initial_state, observations):
    states = solve(jnp.exp(log_params), initial_state)
    return jnp.mean((states[OBSERVE_EVERY - 1 :: OBSERVE_EVERY] - observations) ** 2)


def main(argv=None):
    p = support.parser(__doc__.splitlines()[0], steps=400, plot="ode_fit.png")
    args = p.parse_args(argv)
    steps = 10 if args.smoke else args.steps
    initial_state = jnp.array([2.0, 1.0])
    truth = solve(jnp.asarray(TRUE_PARAMS), initial_state)
    noise = 0.05 * jax.random.normal(jax.random.PRNGKey(args.seed), truth.shape)
    observations = (truth + noise)[OBSERVE_EVERY - 1 :: OBSERVE_EVERY]
    guess = jnp.log(jnp.array([0.7, 0.7, 0.7, 0.7]))
    opt_init, opt_update, get_params = optimizers.adam(0.05)

    @jax.jit
    def update(i, opt_state):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), initial_state, observations)
        return opt_update(i, grads, opt_state), value

    opt_state, history = opt_init(guess), []
    progress = support.Progress(steps, unit="steps")
    start = time.perf_counter()
    for i in range(steps):
        opt_state, value = update(i, opt_state)
        history.append(float(value))
        progress.update(i, 1, loss=history[-1])
    progress.close()
    seconds = time.perf_counter() - start
    fitted = np.exp(np.asarray(get_params(opt_state)))
    result = {"losses": history, "fitted": fitted, "steps_per_second": steps / seconds}
    rows = [(f"{name} (true {t:.3f})", f"{f:.3f}")
            for name, t, f in zip("αβγδ", TRUE_PARAMS, fitted, strict=True)]  # fmt: skip
    support.print_table([
        ("gradient steps", f"{steps} through {SOLVER_STEPS} RK4 steps each"),
        ("final loss", f"{history[-1]:.5f} (noise variance 0.0025)"),
        *rows,
        ("steps per second", f"{result['steps_per_second']:.0f}"),
    ])  # fmt: skip
    if not args.smoke:
        times = DT * np.arange(1, SOLVER_STEPS + 1)
        fit = np.asarray(solve(jnp.asarray(fitted), initial_state))
        start_guess = np.asarray(solve(jnp.exp(guess), initial_state))
        observed_t = times[OBSERVE_EVERY - 1 :: OBSERVE_EVERY]
        support.save_plot(
            args.plot,
            {
                "prey, observed": (observed_t, np.asarray(observations)[:, 0], "o"),
                "predators, observed": (observed_t, np.asarray(observations)[:, 1], "s"),
                "prey, fitted": (times, fit[:, 0]),
                "predators, fitted": (times, fit[:, 1]),
                "prey, first guess": (times, start_guess[:, 0], ":"),
            },
            xlabel="time", title="Lotka-Volterra: fitted through lax.scan",
        )  # fmt: skip
    return result


if __name__ == "__main__":
    main()
