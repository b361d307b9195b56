"""`tracejit.interpreters` (`jax.interpreters`): the rule registries of tracejit's
transformations in JAX's spelling, for primitives that libraries define themselves."""

from tracejit.interpreters import ad, batching, mlir  # noqa: F401
