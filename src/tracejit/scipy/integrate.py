"""`tracejit.scipy.integrate`: `trapezoid`, as JAX has it (jnp's)."""

from tracejit._src.numpy.calculus import trapezoid  # noqa: F401
