"""`jax.experimental.layout`: how an array's elements lie in memory, as plain data.

XLA's CPU client lays out every array row-major and tracejit asks for no other layout, so
`Layout` and `Format` are descriptions that libraries build, compare and pass along (flax maps
the sharding inside a `Format` like any other sharding); nothing compiles with them, and
`with_layout_constraint` is not built.
"""

from __future__ import annotations

from typing import NamedTuple

from tracejit._src.sharding import Sharding


class _Auto:
    def __repr__(self):
        return "AUTO"


class Layout(NamedTuple):
    """The order of an array's dimensions in memory, most major first, and its tiling."""

    major_to_minor: tuple[int, ...]
    tiling: tuple[tuple[int, ...], ...] | None = None
    sub_byte_element_size_in_bits: int = 0

    AUTO = _Auto()  # let the compiler choose


class Format:
    """A `Layout` (or `Layout.AUTO`, or None: the default) with the `Sharding` it applies to."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if layout is not None and not isinstance(layout, (Layout, _Auto)):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are `None`, "
                f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}"
            )
        if isinstance(layout, Layout) and not isinstance(sharding, Sharding):
            raise ValueError(  # noqa: TRY004 (JAX raises ValueError here)
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please pass "
                "a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the "
                f"sharding argument. Got sharding {sharding}"
            )
        self.layout, self.sharding = layout, sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __eq__(self, other):
        if not isinstance(other, Format):
            return NotImplemented
        return (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))
