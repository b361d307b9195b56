"""Elementwise broadcasting in derivative and batching rules.

lax broadcasts rank-0 and size-1 operands of elementwise primitives implicitly (`mul c 3.0:f32[]`),
so a tangent of one operand may need broadcasting to the result's shape (JVP), and batched
operands need their batch dimensions lined up (vmap). Summing a cotangent back down to an
operand's shape (transpose) is `reductions.unbroadcast`.

This module sits just above `shapes`, below every family whose blocks register
`broadcasting_batch_rule`, so that it is complete before any of them runs.
"""

from __future__ import annotations

from tracejit._src.core import shape_of
from tracejit._src.interpreters.batching import move_batch_dim
from tracejit._src.lax import shapes


def broadcast_to_shape(x, shape: tuple):
    """`x` (rank 0, or of equal rank with 1s where `shape` is larger) broadcast to `shape`."""
    x_shape = shape_of(x)
    if tuple(x_shape) == tuple(shape):
        return x
    dims = tuple(range(len(shape))) if x_shape else ()
    return shapes.broadcast_in_dim(x, shape, dims)


def broadcasting_batch_rule(primitive):
    """For n-ary elementwise primitives: batch dimensions first, unbatched operands given a
    size-1 leading axis (rank-0 ones left alone), so lax's own broadcasting lines them up."""

    def rule(values, dims, **params):
        ranks = [len(shape_of(v)) - (d is not None) for v, d in zip(values, dims, strict=True)]
        out_rank = max(ranks)
        operands = []
        for value, dim, rank in zip(values, dims, ranks, strict=True):
            if dim is None:
                if rank:
                    shape = tuple(shape_of(value))
                    value = shapes.broadcast_in_dim(value, (1, *shape), tuple(range(1, rank + 1)))
            else:
                value = move_batch_dim(value, dim, 0)
                if rank < out_rank:  # a batched scalar among arrays: (B,) -> (B, 1, ..., 1)
                    size = shape_of(value)[0]
                    value = shapes.reshape(value, (size,) + (1,) * out_rank)
            operands.append(value)
        return primitive.bind(*operands, **params), 0

    return rule
