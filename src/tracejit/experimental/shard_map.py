"""`tracejit.experimental.shard_map`, as `jax.experimental.shard_map`."""

from tracejit._src.shard_map import shard_map

__all__ = ["shard_map"]
