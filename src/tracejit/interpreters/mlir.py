"""`tracejit.interpreters.mlir` (`jax.interpreters.mlir`): lowering a primitive defined outside
tracejit, as a traceable function (`lower_fun`); see `tracejit._src.interpreters.registration`."""

from tracejit._src.interpreters.registration import lower_fun, register_lowering  # noqa: F401
