"""Segment reductions (`jax.ops`)."""

from tracejit._src.ops import segment_max, segment_min, segment_prod, segment_sum

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
