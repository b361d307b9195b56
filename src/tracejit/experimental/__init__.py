"""`tracejit.experimental`, as `jax.experimental`: `io_callback` and `compilation_cache`."""

from tracejit._src.callback import io_callback
from tracejit.experimental import compilation_cache

__all__ = ["compilation_cache", "io_callback"]
