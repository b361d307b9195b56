"""`tracejit.stages` (`jax.stages`): the stages of ahead-of-time compilation: a jitted
function (`Wrapped`), `jit(f).lower(...)` (`Lowered`) and `.compile()` (`Compiled`)."""

from tracejit._src.jit import Compiled, Lowered
from tracejit._src.jit import PjitFunction as Wrapped

__all__ = ["Compiled", "Lowered", "Wrapped"]
