"""`tracejit.monitoring`: listeners get JAX's compile events and the events users record."""

import pytest

import tracejit as jax
from tracejit import monitoring
from tracejit._src import dispatch


@pytest.fixture
def recorded():
    events = []

    def on_duration(event, seconds, **kwargs):
        assert seconds >= 0
        events.append(("duration", event, kwargs))

    def on_event(event, **kwargs):
        events.append(("event", event, kwargs))

    monitoring.register_event_duration_secs_listener(on_duration)
    monitoring.register_event_listener(on_event)
    yield events
    monitoring.unregister_event_duration_listener(on_duration)
    monitoring.unregister_event_listener(on_event)


def test_a_first_jit_call_records_tracing_lowering_and_compiling(recorded):
    def add_one_for_monitoring(x):
        return x + 1

    jax.jit(add_one_for_monitoring)(1.0)
    durations = [(e, kw) for kind, e, kw in recorded if kind == "duration"]
    assert ("/jax/core/compile/jaxpr_trace_duration", {"fun_name": "add_one_for_monitoring"}) in (
        durations
    )
    if dispatch.backend() == "pjrt":
        compiled = {e for e, kw in durations if kw == {"fun_name": "jit(add_one_for_monitoring)"}}
        assert compiled == {
            "/jax/core/compile/jaxpr_to_mlir_module_duration",
            "/jax/core/compile/backend_compile_duration",
        }
    recorded.clear()
    jax.jit(add_one_for_monitoring)(2.0)  # a new jitted function: traced again, cached compile
    assert len(recorded) >= 1


def test_user_events_reach_their_listeners(recorded):
    monitoring.record_event("/my/event", step=3)
    monitoring.record_event_duration_secs("/my/duration", 0.5, phase="train")
    assert recorded == [
        ("event", "/my/event", {"step": 3}),
        ("duration", "/my/duration", {"phase": "train"}),
    ]


def test_scalars_and_time_spans():
    seen = []
    monitoring.register_scalar_listener(lambda e, v, **kw: seen.append((e, v)))
    monitoring.register_event_time_span_listener(lambda e, s, t, **kw: seen.append((e, t - s)))
    monitoring.record_scalar("/loss", 1.5)
    monitoring.record_event_time_span("/span", 1.0, 3.0)
    monitoring.clear_event_listeners()
    monitoring.record_scalar("/loss", 2.5)
    assert seen == [("/loss", 1.5), ("/span", 2.0)]
