"""`tracejit.debug`, as `jax.debug`: printing and host callbacks from traced code."""

from tracejit._src.debugging import (
    DebugEffect,
    OrderedDebugEffect,
    breakpoint,
    callback,
    log,
    print,
)

__all__ = ["DebugEffect", "OrderedDebugEffect", "breakpoint", "callback", "log", "print"]
