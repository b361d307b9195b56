"""`tracejit.profiler`: a trace is Chrome trace-event JSON, gzipped, where TensorBoard and JAX
put it, holding each jitted call (`PjitFunction(f)`, JAX's name), the compile phases, Python
calls and the user's annotations, each span inside the spans that contain it."""

import functools
import gzip
import json
import sys
import threading

import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import profiler


def read_trace(log_dir) -> list:
    (folder,) = (log_dir / "plugins" / "profile").iterdir()
    (path,) = folder.glob("*.trace.json.gz")
    with gzip.open(path) as file:
        return json.load(file)["traceEvents"]


def spans(events, name) -> list:
    return [e for e in events if e["ph"] == "X" and e["name"] == name]


def inside(inner, outer) -> bool:
    end = outer["ts"] + outer["dur"] + 1e-3
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= end


def test_a_trace_holds_jitted_calls_compile_phases_and_annotations(tmp_path):
    @jax.jit
    def profiled_step(x):
        return jnp.tanh(x) * 3.0

    @functools.partial(profiler.annotate_function, name="helper", kind="pure")
    def helper(x):
        return x + 1

    with profiler.trace(tmp_path):
        for step in range(3):
            with profiler.StepTraceAnnotation("train", step_num=step):
                profiled_step(jnp.ones(4)).block_until_ready()
        with profiler.TraceAnnotation("outer", size=[1, 2]):
            assert helper(1) == 2
    events = read_trace(tmp_path)
    calls = spans(events, "PjitFunction(profiled_step)")
    steps = spans(events, "train")
    assert [s["args"] for s in steps] == [{"step_num": str(i)} for i in range(3)]
    assert len(calls) == 3
    assert all(inside(c, s) for c, s in zip(calls, steps, strict=True))
    (traced,) = spans(events, "trace profiled_step")
    (lowered,) = spans(events, "lower jit(profiled_step)")
    assert inside(traced, calls[0]) and inside(lowered, calls[0])
    (outer,) = spans(events, "outer")
    (annotated,) = spans(events, "helper")
    assert outer["args"] == {"size": "[1, 2]"} and annotated["args"] == {"kind": "pure"}
    assert inside(annotated, outer)
    python_calls = [e for e in events if e["name"].endswith(" profiled_step")]
    assert any(e["name"].startswith("$test_profiler.py:") for e in python_calls)
    names = {e["name"] for e in events if e["ph"] == "M"}
    assert names == {"process_name", "thread_name"}


def test_each_thread_has_its_own_timeline(tmp_path):
    def work():
        with profiler.TraceAnnotation("in a thread"):
            jnp.sum(jnp.ones(3))

    with profiler.trace(tmp_path):
        thread = threading.Thread(target=work, name="worker")
        thread.start()
        thread.join()
        with profiler.TraceAnnotation("in the main thread"):
            pass
    events = read_trace(tmp_path)
    (a,) = spans(events, "in a thread")
    (b,) = spans(events, "in the main thread")
    assert a["tid"] != b["tid"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert threads[a["tid"]] == "worker"


def test_a_thread_running_on_after_the_trace_stops_being_profiled(tmp_path):
    started, stop, profilers = threading.Event(), threading.Event(), []

    def work():
        started.set()
        stop.wait()
        jnp.sum(jnp.ones(3))
        profilers.append(sys.getprofile())

    with profiler.trace(tmp_path):
        thread = threading.Thread(target=work)
        thread.start()
        started.wait()
    stop.set()
    thread.join()
    assert profilers == [None]


def test_start_and_stop_trace_and_the_perfetto_copy(tmp_path):
    profiler.start_trace(str(tmp_path), create_perfetto_trace=True)
    with pytest.raises(RuntimeError, match="Profile has already been started"):
        profiler.start_trace(str(tmp_path))
    with profiler.TraceAnnotation("span"):
        pass
    profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    (folder,) = (tmp_path / "plugins" / "profile").iterdir()
    with gzip.open(folder / "perfetto_trace.json.gz") as file:
        assert spans(json.load(file)["traceEvents"], "span")
    assert spans(read_trace(tmp_path), "span")


def test_annotations_outside_a_trace_do_nothing():
    with profiler.TraceAnnotation("unseen") as annotation:
        pass
    assert isinstance(annotation, profiler.TraceAnnotation)
    assert profiler.annotate_function(lambda x: x * 2)(4) == 8


def test_what_tracejit_cannot_do_says_so(tmp_path):
    with pytest.raises(NotImplementedError, match="Perfetto UI"):
        profiler.start_trace(tmp_path, create_perfetto_link=True)
    with pytest.raises(NotImplementedError, match="profiler_options"):
        profiler.start_trace(tmp_path, profiler_options=object())
    profiler.start_trace(tmp_path)  # (nothing was left started)
    profiler.stop_trace()
