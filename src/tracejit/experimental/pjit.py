"""`tracejit.experimental.pjit`, as `jax.experimental.pjit`: `pjit`, deprecated for `jit`."""

from tracejit._src.jit import pjit  # noqa: F401
