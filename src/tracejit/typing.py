"""Type annotations for code that takes arrays and dtypes (`jax.typing`)."""

from tracejit._src.basearray import ArrayLike, DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
