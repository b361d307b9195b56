"""`tracejit.experimental.ode`, as `jax.experimental.ode`: `odeint`."""

from tracejit._src.ode import odeint

__all__ = ["odeint"]
