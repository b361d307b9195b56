"""`tracejit.profiler`, as `jax.profiler`: traces of jitted calls, compiles, Python calls and
annotations, written as Chrome trace-event JSON (see `tracejit._src.profiler`)."""

from tracejit._src.profiler import (
    StepTraceAnnotation,
    TraceAnnotation,
    annotate_function,
    start_trace,
    stop_trace,
    trace,
)

__all__ = [
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "start_trace",
    "stop_trace",
    "trace",
]
