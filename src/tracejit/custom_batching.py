"""`tracejit.custom_batching` (`jax.custom_batching`): functions with their own vmap rule."""

from tracejit._src.custom_batching import custom_vmap, sequential_vmap  # noqa: F401
