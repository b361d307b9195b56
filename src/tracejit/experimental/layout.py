"""`tracejit.experimental.layout`, as `jax.experimental.layout`: `Format` and `Layout`."""

from tracejit._src.layout import Format, Layout

__all__ = ["Format", "Layout"]
