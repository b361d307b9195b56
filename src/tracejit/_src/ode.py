"""`odeint` (`jax.experimental.ode`): an adaptive Dormand-Prince Runge-Kutta solver in `lax`
control flow, differentiated in reverse mode by the adjoint method.

The forward solve is one `lax.scan` over the output times; for each, a `lax.while_loop` takes
steps of the Dormand-Prince 5(4) pair until it passes that time, the step size set by the
embedded 4th-order error estimate (Hairer, Nørsett & Wanner, *Solving ODEs I*, II.4), and the
value at the output time is read from a quartic through the step's ends and its midpoint
(Shampine's dense output). The whole solve is thus jittable, vmappable and runs as one
compiled loop.

Reverse mode does not differentiate through the solver's steps (whose step sizes depend on the
values): a `custom_vjp` solves the adjoint ODE backwards instead, from the last output time to
the first, with the state, its adjoint and the parameters' adjoint integrated together
(Pontryagin; Chen et al., *Neural ODEs*, 2018), the cotangent of each output added to the
adjoint as the backward solve passes its time. The state is restarted from the stored outputs
at every output time, so the backward solve does not drift from the forward one.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src import api, custom_derivatives
from tracejit._src.flatten_util import ravel_pytree
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.numpy.creation import arange, asarray, zeros, zeros_like
from tracejit._src.numpy.manipulation import concatenate, stack
from tracejit._src.numpy.products import vdot
from tracejit._src.numpy.promotion import is_arraylike
from tracejit._src.numpy.reductions import mean
from tracejit._src.numpy.ufuncs import absolute, clip, maximum, minimum, sqrt, where
from tracejit._src.tree_util import tree_leaves
from tracejit._src.vmap import vmap

# The Dormand-Prince 5(4) tableau: nodes, stages, 5th-order weights (the last stage is the
# first of the next step), and the 5th- minus 4th-order weights (the error estimate).
_NODES = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
_STAGES = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_WEIGHTS = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_ERROR_WEIGHTS = _WEIGHTS - np.array(
    [5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]
)
# the midpoint of a step from its stages (Shampine, 1986)
_MIDPOINT_WEIGHTS = 0.5 * np.array(
    [
        6025192743 / 30085553152,
        0,
        51252292925 / 65400821598,
        -2691868925 / 45128329728,
        187940372067 / 1594534317056,
        -1776094331 / 19743644256,
        11237099 / 235043384,
    ]
)
_ORDER = 5
_SAFETY, _MOST_GROWTH, _MOST_SHRINK = 0.9, 10.0, 0.2


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Integrates `dy/dt = func(y, t, *args)` from `y0` at `t[0]`; returns `y` at every time
    of `t` (strictly increasing), with a leading axis of `len(t)` on each leaf of `y0`.
    `rtol`/`atol` bound each step's local error; `mxstep` caps the steps taken to reach each
    output time; `hmax` caps the step size."""
    for arg in tree_leaves(args):
        if not is_arraylike(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            )
    flat_y0, unravel = ravel_pytree(y0)
    t = asarray(t)

    def flat_func(y, time, *args):
        return ravel_pytree(func(unravel(y), time, *args))[0]

    converted, consts = custom_derivatives.closure_convert(flat_func, flat_y0, t[0], *args)
    ys = _odeint(converted, rtol, atol, mxstep, hmax, flat_y0, t, *args, *consts)
    return vmap(unravel)(ys)


def _rms(x):
    return sqrt(mean(x * x))


def _initial_step(f, t0, y0, f0, rtol, atol):
    """Hairer's choice of the first step: one explicit Euler trial step sizes it so that its
    local error is about 1% of the tolerance."""
    scale = atol + absolute(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    largest = maximum(d1, d2)
    h1 = where(
        largest <= 1e-15,
        maximum(1e-6, h0 * 1e-3),
        (0.01 / largest) ** (1.0 / _ORDER),
    )
    return minimum(100 * h0, h1)


def _dopri_step(f, y, f_start, t, dt):
    """One Dormand-Prince step: (y at t + dt, f there, the local error estimate, the stages)."""
    stages = [f_start]
    for node, row in zip(_NODES[1:], _STAGES[1:], strict=True):
        increment = sum(w * k for w, k in zip(row, stages, strict=False) if w)
        stages.append(f(y + dt * increment, t + node * dt))
    y_next = y + dt * sum(w * k for w, k in zip(_WEIGHTS, stages, strict=True) if w)
    error = dt * sum(w * k for w, k in zip(_ERROR_WEIGHTS, stages, strict=True) if w)
    return y_next, stages[-1], error, stages


def _quartic(y_start, y_end, y_mid, slope_start, slope_end):
    """The coefficients (highest power first) of the quartic p on [0, 1] with p(0), p(1),
    p(1/2) and p'(0), p'(1) given (slopes already scaled by the step)."""
    a = y_end - y_start - slope_start
    b = slope_end - slope_start
    c = y_mid - y_start - slope_start / 2
    return stack(
        [16 * c - 8 * a + 2 * b, 14 * a - 3 * b - 32 * c, b - 5 * a + 16 * c, slope_start, y_start]
    )


def _next_step_size(dt, error_ratio, hmax):
    factor = where(
        error_ratio == 0,
        _MOST_GROWTH,
        clip(_SAFETY * error_ratio ** (-1.0 / _ORDER), _MOST_SHRINK, _MOST_GROWTH),
    )
    return clip(dt * factor, 0, hmax)


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The forward solve (see the module docstring): y at every time of `ts`."""
    f = lambda y, t: func(y, t, *args)
    f0 = f(y0, ts[0])
    dt = _initial_step(f, ts[0], y0, f0, rtol, atol)
    coefficients = zeros((5, *y0.shape), y0.dtype)
    # (y, f(y), t, the next step size, the last step's start, its interpolating quartic)
    start = (y0, f0, ts[0], dt, ts[0], coefficients)

    def reach(state, target):
        def not_there(loop):
            steps, _, _, t, dt, _, _ = loop
            return (t < target) & (steps < mxstep) & (dt > 0)

        def step(loop):
            steps, y, fy, t, dt, last_t, coefficients = loop
            y_next, f_next, error, stages = _dopri_step(f, y, fy, t, dt)
            tolerance = atol + rtol * maximum(absolute(y), absolute(y_next))
            error_ratio = _rms(error / tolerance)
            y_mid = y + dt * sum(w * k for w, k in zip(_MIDPOINT_WEIGHTS, stages, strict=True) if w)
            quartic = _quartic(y, y_next, y_mid, dt * fy, dt * f_next)
            accepted = error_ratio <= 1
            keep = lambda new, old: where(accepted, new, old)
            return (
                steps + 1,
                keep(y_next, y),
                keep(f_next, fy),
                keep(t + dt, t),
                _next_step_size(dt, error_ratio, hmax),
                keep(t, last_t),
                keep(quartic, coefficients),
            )

        _, *state = while_loop(not_there, step, (0, *state))
        _, _, t, _, last_t, coefficients = state
        position = (target - last_t) / (t - last_t)
        value = functools.reduce(lambda acc, c: acc * position + c, coefficients)
        return tuple(state), value

    _, ys = scan(reach, start, ts[1:])
    return concatenate([y0[None], ys])


@functools.partial(custom_derivatives.custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    return _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)


def _odeint_forward(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_backward(func, rtol, atol, mxstep, hmax, residuals, ys_bar):
    """The adjoint solve: for each interval, from its end back to its start, the state y,
    its adjoint a and the parameters' adjoint integrated together in reversed time s = -t:
    dy/ds = -f, da/ds = a·∂f/∂y, d(a_args)/ds = a·∂f/∂args."""
    ys, ts, args = residuals
    flat_args, unravel_args = ravel_pytree(args)
    y_size = ys.shape[1]

    def augmented(state, minus_t, flat_args):
        y, a, _ = _split(state, y_size)
        dydt, pullback = api.vjp(
            lambda y, flat_args: func(y, -minus_t, *unravel_args(flat_args)), y, flat_args
        )
        a_y, a_args = pullback(a)
        return concatenate([-dydt, a_y, a_args])

    f = lambda y, t: func(y, t, *args)

    def interval(carry, i):
        a, a_args = carry
        a = a + ys_bar[i]
        t_bar = vdot(ys_bar[i], f(ys[i], ts[i]))
        state = concatenate([ys[i], a, a_args])
        times = stack([-ts[i], -ts[i - 1]])
        end = _solve(augmented, rtol, atol, mxstep, hmax, state, times, flat_args)[-1]
        _, a, a_args = _split(end, y_size)
        return (a, a_args), t_bar

    start = (zeros_like(ys[-1]), zeros_like(flat_args))
    last = ys.shape[0] - 1
    (a, a_args), t_bars = scan(interval, start, arange(last, 0, -1))
    t0_bar = -vdot(a, f(ys[0], ts[0]))  # moving the start moves the whole trajectory
    ts_bar = concatenate([t0_bar[None], t_bars[::-1]])
    args_bar = unravel_args(a_args)
    return (a + ys_bar[0], ts_bar, *args_bar)


def _split(state, y_size):
    return state[:y_size], state[y_size : 2 * y_size], state[2 * y_size :]


_odeint.defvjp(_odeint_forward, _odeint_backward)
