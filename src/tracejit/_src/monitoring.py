"""Events for whoever listens (`jax.monitoring`): tracejit records how long tracing, lowering
and compiling take, under JAX's event names, and users and libraries may record their own.

    monitoring.register_event_duration_secs_listener(
        lambda event, seconds, **kw: print(event, seconds, kw))
    jit(f)(x)  # /jax/core/compile/jaxpr_trace_duration 0.0004 {'fun_name': 'f'}, ...

Listeners are called synchronously, in registration order, with the event's keyword metadata.
"""

from __future__ import annotations

import contextlib
import time

_event_listeners: list = []
_duration_listeners: list = []
_time_span_listeners: list = []
_scalar_listeners: list = []

# The events tracejit records, with JAX's names.
JAXPR_TRACE_DURATION = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_DURATION = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_DURATION = "/jax/core/compile/backend_compile_duration"


def record_event(event: str, **kwargs) -> None:
    for listener in _event_listeners:
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs) -> None:
    for listener in _duration_listeners:
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
    for listener in _time_span_listeners:
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value, **kwargs) -> None:
    for listener in _scalar_listeners:
        listener(event, value, **kwargs)


def register_event_listener(callback) -> None:
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback) -> None:
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback) -> None:
    _time_span_listeners.append(callback)


def register_scalar_listener(callback) -> None:
    _scalar_listeners.append(callback)


def unregister_event_listener(callback) -> None:
    _event_listeners.remove(callback)


def unregister_event_duration_listener(callback) -> None:
    _duration_listeners.remove(callback)


def unregister_event_time_span_listener(callback) -> None:
    _time_span_listeners.remove(callback)


def unregister_scalar_listener(callback) -> None:
    _scalar_listeners.remove(callback)


def clear_event_listeners() -> None:
    for listeners in (
        _event_listeners,
        _duration_listeners,
        _time_span_listeners,
        _scalar_listeners,
    ):
        listeners.clear()


@contextlib.contextmanager
def timed(event: str, **kwargs):
    """Records the duration of the block as `event` (when anyone listens), also if it raises."""
    if not _duration_listeners:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        record_event_duration_secs(event, time.perf_counter() - start, **kwargs)
