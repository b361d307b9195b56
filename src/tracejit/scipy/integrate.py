"""`tracejit.scipy.integrate`: `trapezoid`, as JAX has it."""

from tracejit._src.scipy.integrate import trapezoid  # noqa: F401
