"""`tracejit.example_libraries.optimizers`: JAX's small library of first-order optimizers.

An optimizer is a triple of pure functions, `Optimizer(init_fn, update_fn, params_fn)`:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)   # inside jit, scan, ... : all pure
    params = get_params(state)

Each optimizer below is written for one array (`opt_maker` returns init/update/get_params of a
single array and its own state, any pytree); the `optimizer` decorator lifts it to pytrees of
parameters. The whole state is an `OptimizerState`, a pytree node whose leaves are every
parameter's state leaves, so that `jit` and `scan` carry it like any other value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import tracejit.numpy as jnp
from tracejit import tree_util

Array = Any
Params = Any
State = Any
Updates = Params
Step = int
Schedule = Callable[[Step], float]
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]


class OptimizerState(NamedTuple):
    """The state of a pytree of parameters: each parameter's state flattened
    (`packed_state[i]` the leaves of parameter i's state), the parameters' structure and each
    state's structure."""

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda structures, children: OptimizerState(children[0], *structures),
)


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_states(states) -> tuple[tuple, tuple]:
    flat = [tree_util.tree_flatten(state) for state in states]
    return tuple(leaves for leaves, _ in flat), tuple(treedef for _, treedef in flat)


def _unflatten_states(opt_state: OptimizerState) -> list:
    return [
        tree_util.tree_unflatten(treedef, leaves)
        for treedef, leaves in zip(opt_state.subtree_defs, opt_state.packed_state, strict=True)
    ]


def optimizer(opt_maker):
    """Lifts an optimizer of one array (`opt_maker(*args) -> (init, update, get_params)`) to
    pytrees of parameters."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        name = getattr(opt_maker, "__name__", "optimizer")
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree_def = tree_util.tree_flatten(x0_tree)
            packed, subtree_defs = _flatten_states([init(x0) for x0 in x0_flat])
            return OptimizerState(packed, tree_def, subtree_defs)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            grad_flat, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != opt_state.tree_def:
                raise TypeError(
                    f"{name} update: the gradient's pytree structure {grad_def} does not match "
                    f"the parameters' {opt_state.tree_def} the optimizer state was made for"
                )
            states = _unflatten_states(opt_state)
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states, strict=True)]
            packed, subtree_defs = _flatten_states(new_states)
            if subtree_defs != opt_state.subtree_defs:
                raise TypeError(
                    f"{name} update: the update changed a parameter's state structure from "
                    f"{opt_state.subtree_defs} to {subtree_defs}"
                )
            return OptimizerState(packed, opt_state.tree_def, subtree_defs)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            params = [get_params(state) for state in _unflatten_states(opt_state)]
            return tree_util.tree_unflatten(opt_state.tree_def, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --- optimizers of one array ----------------------------------------------------------------


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x ← x - step_size(i) g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Heavy-ball momentum: v ← mass v + g, x ← x - step_size(i) v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov's accelerated gradient: v ← mass v + g, x ← x - step_size(i) (mass v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


def _inverse_sqrt_where_positive(accumulator):
    return jnp.where(accumulator > 0, 1.0 / jnp.sqrt(accumulator), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the rescaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_where_positive(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, (lambda state: state[0])


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: the gradient over the root of a moving average of its square."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose steps accumulate in a momentum term."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, (lambda state: state[0])


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014): bias-corrected moving averages of g and g²."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, (lambda state: state[0])


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Kingma and Ba 2014): Adam with the infinity norm in place of g²."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u

    return init, update, (lambda state: state[0])


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per index of each axis (memory linear in the
    axes' lengths, not their product); a coordinate's accumulator is the least of those that
    cover it. The state keeps the parameter's shape (scalars are updated as 1-vectors)."""
    step_size = make_schedule(step_size)

    def along_axis(values, axis: int, ndim: int):
        shape = [1] * ndim
        shape[axis] = values.shape[0]
        return jnp.reshape(values, shape)

    def init(x0):
        shape = tuple(x0.shape)
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, accumulators, shape = state
        ndim = x.ndim
        covering = [along_axis(v, axis, ndim) for axis, v in enumerate(accumulators)]
        accumulator = functools.reduce(jnp.minimum, covering) + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_where_positive(accumulator)) + momentum * m
        x = x - step_size(i) * m
        others = [tuple(a for a in range(ndim) if a != axis) for axis in range(ndim)]
        return x, m, [accumulator.max(axes) for axes in others], shape

    return init, update, (lambda state: jnp.reshape(state[0], tuple(state[3])))


# --- learning-rate schedules ----------------------------------------------------------------


def constant(step_size) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From `step_size` down to `final_step_size` over `decay_steps` steps along
    (1 - i / decay_steps) ** power, then constant."""

    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """values[0] until step boundaries[0], values[1] until boundaries[1], ..., values[-1]
    after the last boundary."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(
            "piecewise_constant: boundaries and values must be sequences, got shapes "
            f"{boundaries.shape} and {values.shape}"
        )
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(
            "piecewise_constant: values must have one element more than boundaries, got "
            f"{values.shape[0]} values and {boundaries.shape[0]} boundaries"
        )
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(
        f"a step size must be a scalar or a schedule (a function of the step), got "
        f"{type(scalar_or_schedule).__name__} of shape {np.shape(scalar_or_schedule)}"
    )


# --- utilities ------------------------------------------------------------------------------


def l2_norm(tree):
    """The l2 norm of a pytree of arrays, as if they were one flat vector."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down, all by one factor, so that their l2 norm is at most
    `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree
    )


class JoinPoint:
    """Marks where one parameter's state hangs in the tree `unpack_optimizer_state` makes (a
    leaf, so flattening stops there)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        return iter((self.subtree,))


def unpack_optimizer_state(opt_state: OptimizerState):
    """The state as a pytree of the parameters' shape, each leaf a `JoinPoint` holding that
    parameter's state: a form that pickles and saves (`pack_optimizer_state` undoes it)."""
    marks = [JoinPoint(state) for state in _unflatten_states(opt_state)]
    return tree_util.tree_unflatten(opt_state.tree_def, marks)


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """The `OptimizerState` that `unpack_optimizer_state` unpacked."""
    marks, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(mark, JoinPoint) for mark in marks):
        raise TypeError(
            "pack_optimizer_state: every leaf must be a JoinPoint made by unpack_optimizer_state"
        )
    packed, subtree_defs = _flatten_states([mark.subtree for mark in marks])
    return OptimizerState(packed, tree_def, subtree_defs)
