"""`tracejit.experimental`, as `jax.experimental`: `io_callback` for now."""

from tracejit._src.callback import io_callback

__all__ = ["io_callback"]
