"""`tracejit.core` (`jax.core`): abstract values, tracers and evaluating jaxprs."""

from tracejit._src.core import ShapedArray, Trace, Tracer  # noqa: F401
from tracejit._src.interpreters.compile_time_eval import ensure_compile_time_eval  # noqa: F401
from tracejit._src.jaxpr import Atom, eval_jaxpr  # noqa: F401
