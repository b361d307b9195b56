"""`tracejit.debug`, as `jax.debug`: printing and host callbacks from traced code."""

from tracejit._src.debugging import (
    DebugEffect,
    OrderedDebugEffect,
    breakpoint,
    callback,
    log,
    print,
)
from tracejit._src.sharding_visualization import (
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
