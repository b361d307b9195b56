"""`tracejit.stages` (`jax.stages`): the stages of ahead-of-time compilation: a jitted
function (`Wrapped`), `jit(f).trace(...)` (`Traced`), `.lower()` (`Lowered`) and `.compile()`
(`Compiled`), and the `ArgInfo` of each argument."""

from tracejit._src.jit import PjitFunction as Wrapped
from tracejit._src.stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced", "Wrapped"]
