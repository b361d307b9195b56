"""`tracejit.profiler`: traces of what a program did, for Perfetto or chrome://tracing.

JAX's profiler is XLA's (XPlane protos of host and device activity), which the PJRT C API does
not offer. tracejit's collects, between `start_trace` and `stop_trace`, the events it can see
from Python, on a timeline per thread:

- every Python function call and return (named `$file.py:line function`, as JAX's Python
  tracer names them), through `sys.setprofile` (which slows Python calls while tracing);
- each call of a jitted function, named `PjitFunction(f)` as in JAX;
- the phases of compiling one (`trace`, `lower`, `compile` of `jit(f)`), from `monitoring`;
- the user's `TraceAnnotation`, `StepTraceAnnotation` and `annotate_function` spans, with
  their keyword arguments.

`stop_trace` writes them as Chrome trace-event JSON, gzipped, where TensorBoard's profile
plugin and JAX look for it: `<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`
(and `perfetto_trace.json.gz` beside it with `create_perfetto_trace=True`). XLA's own
activity inside a compile or an execution is one span of the Python call that made it.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import socket
import sys
import threading
import time

from tracejit._src import monitoring
from tracejit._src.jit import PjitFunction

_JIT_CALL = PjitFunction.__call__.__code__
_PHASES = {
    monitoring.JAXPR_TRACE_DURATION: "trace",
    monitoring.JAXPR_TO_MLIR_MODULE_DURATION: "lower",
    monitoring.BACKEND_COMPILE_DURATION: "compile",
}


class _Session:
    """The events of one trace: complete events (`"ph": "X"`) in microseconds from its start."""

    def __init__(self, log_dir, create_perfetto_trace: bool):
        self.log_dir = os.fspath(log_dir)
        self.create_perfetto_trace = create_perfetto_trace
        self.started_at = time.localtime()
        self.start_ns = time.perf_counter_ns()
        self.events = []
        self.open_calls = threading.local()  # each thread's stack of (code, frame, start)
        self.thread_names = {}
        self.previous_profilers = (sys.getprofile(), threading.getprofile())

    def add(self, name: str, start_ns: int, end_ns: int, args=None) -> None:
        thread = threading.get_ident()
        if thread not in self.thread_names:
            self.thread_names[thread] = threading.current_thread().name
        event = {
            "ph": "X",
            "pid": os.getpid(),
            "tid": thread,
            "ts": (start_ns - self.start_ns) / 1e3,
            "dur": (end_ns - start_ns) / 1e3,
            "name": name,
        }
        if args:
            event["args"] = {key: str(value) for key, value in args.items()}
        self.events.append(event)

    def on_python_event(self, frame, event, arg) -> None:
        if self is not _session:  # a thread started during the trace, running on after it
            sys.setprofile(None)
            return
        if event == "call":
            calls = self.open_calls.__dict__.setdefault("stack", [])
            calls.append((frame, time.perf_counter_ns()))
        elif event == "return":
            calls = self.open_calls.__dict__.get("stack")
            if calls:  # (not a return from a frame entered before the trace started)
                frame, start = calls.pop()
                self.add(_python_event_name(frame), start, time.perf_counter_ns())

    def on_duration(self, event: str, seconds: float, **kwargs) -> None:
        phase = _PHASES.get(event)
        if phase is not None:
            end = time.perf_counter_ns()
            self.add(f"{phase} {kwargs.get('fun_name', '')}".strip(), end - int(seconds * 1e9), end)

    def trace_json(self) -> dict:
        pid = os.getpid()
        metadata = [
            {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/host:CPU"}},
            *(
                {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}
                for tid, name in self.thread_names.items()
            ),
        ]
        return {"displayTimeUnit": "ns", "traceEvents": metadata + self.events}

    def write(self) -> str:
        """Writes the trace; returns its folder."""
        folder = os.path.join(
            self.log_dir,
            "plugins",
            "profile",
            time.strftime("%Y_%m_%d_%H_%M_%S", self.started_at),
        )
        os.makedirs(folder, exist_ok=True)
        data = json.dumps(self.trace_json()).encode()
        names = [f"{socket.gethostname()}.trace.json.gz"]
        if self.create_perfetto_trace:
            names.append("perfetto_trace.json.gz")
        for name in names:
            with gzip.open(os.path.join(folder, name), "wb") as file:
                file.write(data)
        return folder


def _python_event_name(frame) -> str:
    code = frame.f_code
    if code is _JIT_CALL:
        jitted = frame.f_locals.get("self")
        return f"PjitFunction({getattr(jitted, 'name', '?')})"
    return f"${os.path.basename(code.co_filename)}:{code.co_firstlineno} {code.co_name}"


_session: _Session | None = None
_session_lock = threading.Lock()


def start_trace(
    log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
    profiler_options=None,
) -> None:  # fmt: skip
    """Starts collecting a trace (see the module's docstring for what it holds); `stop_trace`
    writes it under `log_dir`. Only one trace may be collected at a time: starting a second
    raises RuntimeError."""
    global _session
    if create_perfetto_link:
        raise NotImplementedError(
            "start_trace(create_perfetto_link=True): tracejit does not serve traces to the "
            "Perfetto UI; use create_perfetto_trace=True and open the file there"
        )
    if profiler_options is not None:
        raise NotImplementedError("start_trace(profiler_options=...): XLA's profiler options")
    with _session_lock:
        if _session is not None:
            raise RuntimeError(
                "Profile has already been started. Only one profile may be run at a time."
            )
        _session = _Session(log_dir, create_perfetto_trace)
    monitoring.register_event_duration_secs_listener(_session.on_duration)
    threading.setprofile(_session.on_python_event)
    sys.setprofile(_session.on_python_event)


def stop_trace() -> None:
    """Stops the trace `start_trace` started and writes it to its `log_dir`."""
    global _session
    with _session_lock:
        if _session is None:
            raise RuntimeError("No profile started")
        session, _session = _session, None
    sys.setprofile(session.previous_profilers[0])
    threading.setprofile(session.previous_profilers[1])
    monitoring.unregister_event_duration_listener(session.on_duration)
    session.write()


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """A trace of the block (`start_trace` on entry, `stop_trace` on exit), written under
    `log_dir` as the module's docstring says."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A span named `name` on the trace's timeline for the duration of the `with` block (its
    keyword arguments shown with it), if a trace is being collected; nothing otherwise."""

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._starts = []

    def __enter__(self):
        self._starts.append((_session, time.perf_counter_ns()))
        return self

    def __exit__(self, *exc_info):
        session, start = self._starts.pop()
        if session is not None and session is _session:
            session.add(self.name, start, time.perf_counter_ns(), self.kwargs)


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` marking one step of a loop: `StepTraceAnnotation("train",
    step_num=i)`."""


def annotate_function(func, name: str | None = None, **decorator_kwargs):
    """`func` with each call a `TraceAnnotation` named `name` (default: the function's name)."""
    name = name or func.__name__

    @functools.wraps(func)
    def annotated(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return annotated
