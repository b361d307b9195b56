"""Ragged contractions: `ragged_dot` and `ragged_dot_general`, products where consecutive groups
of rows (of sizes `group_sizes`) each meet their own operand.

Built from `dot_general` and masks (XLA expands its ragged dot to dense products on the CPU
too): masks select each group's rows, one batched `dot_general` computes every group's
product, and each row keeps its own group's. Two layouts:

- ragged rows (`ragged_dot`): lhs (m, k), rhs (g, k, n), out (m, n); row i of lhs meets
  `rhs[group(i)]`; rows past `sum(group_sizes)` give zeros.
- ragged contraction: lhs (m, k), rhs (k, n), out (g, m, n); group j contracts its own slice
  of k.

Their derivatives and batching are those of the primitives they are made of.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tracejit._src.core import get_aval, shape_of
from tracejit._src.lax import (
    binary,
    bitwise,
    comparison,
    conversions,
    cumulative,
    dot,
    reductions,
    selection,
    shapes,
)
from tracejit._src.lax.standard import check_no_sharding


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """Where a ragged contraction's dimensions are: `dot_dimension_numbers` as `dot_general`'s,
    the lhs dimension split into groups, and the rhs dimension indexing the groups."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        normalized = tuple(tuple(map(tuple, pair)) for pair in dot_dimension_numbers)
        object.__setattr__(self, "dot_dimension_numbers", normalized)
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_RAGGED_ROWS = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
_RAGGED_CONTRACTION = RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())


def ragged_dot(
    lhs,
    rhs,
    group_sizes,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """`out[i] = lhs[i] @ rhs[group(i)]` for lhs (m, k), rhs (g, k, n) and int32 group_sizes
    (g,): the first group_sizes[0] rows form group 0, and so on."""
    return ragged_dot_general(
        lhs, rhs, group_sizes, _RAGGED_ROWS, precision, preferred_element_type, group_offset,
        out_sharding,
    )  # fmt: skip


def ragged_dot_general(
    lhs,
    rhs,
    group_sizes,
    ragged_dot_dimension_numbers,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """A ragged contraction in one of the two layouts of the module doc (others are not
    supported yet)."""
    check_no_sharding("ragged_dot_general", out_sharding)
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    lhs_shape, rhs_shape = shape_of(lhs), shape_of(rhs)
    (num_groups,) = shape_of(group_sizes)
    params = {"precision": precision, "preferred_element_type": preferred_element_type}
    if ragged_dot_dimension_numbers == _RAGGED_ROWS and len(lhs_shape) == len(rhs_shape) - 1 == 2:
        if rhs_shape[0] != num_groups:
            raise TypeError(
                f"expected rhs group dimension size to be {num_groups}, got {rhs_shape[0]}."
            )
        (m, _), n = lhs_shape, rhs_shape[2]
        inside = _group_mask(group_sizes, m)  # (g, m)
        per_group = dot.dot_general(
            _masked(lhs, inside, (num_groups, *lhs_shape), (1, 2), (0, 1)),
            rhs,
            (((2,), (1,)), ((0,), (0,))),
            **params,
        )  # (g, m, n); a row's other groups are dropped, NaNs from their operands too
        return reductions.reduce_sum(
            _masked(per_group, inside, (num_groups, m, n), None, (0, 1)), (0,)
        )
    if (
        ragged_dot_dimension_numbers == _RAGGED_CONTRACTION
        and len(lhs_shape) == len(rhs_shape) == 2
    ):
        inside = _group_mask(group_sizes, lhs_shape[1])  # (g, k)
        return dot.dot_general(
            _masked(lhs, inside, (num_groups, *lhs_shape), (1, 2), (0, 2)),
            _masked(rhs, inside, (num_groups, *rhs_shape), (1, 2), (0, 1)),
            (((2,), (1,)), ((0,), (0,))),
            **params,
        )
    raise NotImplementedError(
        "ragged_dot_general supports the layouts lhs (m, k) with rhs (g, k, n) ragged in m, and "
        f"lhs (m, k) with rhs (k, n) ragged in k; got {ragged_dot_dimension_numbers} for "
        f"shapes {lhs_shape} and {rhs_shape}"
    )


def _group_mask(group_sizes, size: int):
    """(g, size) booleans: position i belongs to group j (ends[j] - sizes[j] <= i < ends[j])."""
    (num_groups,) = shape_of(group_sizes)
    sizes = conversions.convert_element_type(group_sizes, np.int32)
    ends = cumulative.cumsum(sizes, 0)
    starts = binary.sub(ends, sizes)
    positions = shapes.broadcasted_iota(np.int32, (num_groups, size), 1)
    return bitwise.bitwise_and(
        comparison.ge(positions, shapes.broadcast_in_dim(starts, (num_groups, size), (0,))),
        comparison.lt(positions, shapes.broadcast_in_dim(ends, (num_groups, size), (0,))),
    )


def _masked(x, inside, shape, x_dims, inside_dims):
    """`x` broadcast to `shape` (along `x_dims`; None: it has that shape), zero where the
    broadcast `inside` is False: selected, not multiplied, so that infinities and NaNs outside a
    group do not reach it."""
    if x_dims is not None:
        x = shapes.broadcast_in_dim(x, shape, x_dims)
    zeros = shapes.broadcast_in_dim(np.zeros((), get_aval(x).dtype), shape, ())
    return selection.select(shapes.broadcast_in_dim(inside, shape, inside_dims), x, zeros)
