"""`tracejit.flatten_util` (`jax.flatten_util`): pytrees as flat vectors."""

from tracejit._src.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
