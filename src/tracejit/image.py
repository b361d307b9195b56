"""Image resampling (`jax.image`)."""

from tracejit._src.image import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
