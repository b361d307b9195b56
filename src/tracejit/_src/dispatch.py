"""Running a jitted jaxpr: compile once with XLA through PJRT, or evaluate with NumPy.

The backend is PJRT (`runtime/`) when a plugin loads, else the NumPy evaluator, which runs the
staged jaxpr with `eval_jaxpr` on the eval trace (still traced once per signature), with a
one-time warning. `TRACEJIT_PLATFORM=numpy` forces the NumPy evaluator. A jaxpr holding a
primitive that has no lowering rule yet is also evaluated with NumPy, with a warning naming it.

Compiled programs are cached per jaxpr object (the jit trace cache keeps those alive) and, to
share executables between equal programs, per StableHLO text.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array, make_array, make_device_array
from tracejit._src.config import config
from tracejit._src.interpreters.eval import to_numpy
from tracejit._src.jaxpr import ClosedJaxpr, eval_jaxpr

_backend = None
_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def backend() -> str:
    """'pjrt' or 'numpy'."""
    global _backend
    if _backend is None:
        if os.environ.get("TRACEJIT_PLATFORM", "").lower() == "numpy":
            _backend = "numpy"
        else:
            from tracejit._src import runtime

            _backend = "pjrt" if runtime.platform_available() else "numpy"
            if _backend == "numpy":
                _warn_once(
                    "no-plugin",
                    "No PJRT plugin could be loaded (XLA's CPU plugin, xla_cpu_pjrt, has wheels "
                    "for Linux x86-64 only): jit evaluates its staged programs with NumPy.",
                )
    return _backend


class CompiledProgram:
    """A jaxpr compiled by XLA: call it with flat arguments, get flat Arrays back."""

    def __init__(self, closed: ClosedJaxpr, name: str, text: str, executable):
        self.closed = closed
        self.name = name
        self.text = text
        self.executable = executable
        self.out_weak_types = [aval.weak_type for aval in closed.out_avals]
        self.client = executable.client

    def __call__(self, args):
        buffers = []
        for x in args:
            try:
                buffers.append(x._buffer)
            except AttributeError:
                buffers.append(self.transfer(x))
        outs = self.executable.execute_one(buffers)
        return [make_device_array(b, w) for b, w in zip(outs, self.out_weak_types, strict=True)]

    def transfer(self, x):
        """A device buffer for a host value. An Array keeps it (Arrays are immutable, and the
        buffer aliases the Array's memory), so passing it again costs no transfer."""
        value = to_numpy(x)[0]
        if type(x) is not Array:
            return self.client.buffer_from_numpy(value)
        buffer = x._buffer = self.client.buffer_from_numpy(value, zero_copy=True)
        return buffer

    def as_text(self) -> str:
        """The StableHLO module compiled (the C API hands out no optimized HLO text)."""
        return self.text

    def cost_analysis(self):
        return self.executable.cost_analysis()


class EvaluatedProgram:
    """The NumPy evaluator's stand-in for a compiled program."""

    def __init__(self, closed: ClosedJaxpr, name: str):
        self.closed = closed
        self.name = name

    def __call__(self, args):
        return eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)

    def as_text(self) -> str:
        return str(self.closed)

    def cost_analysis(self):
        return {}


_programs: dict = {}  # ClosedJaxpr -> program
_programs_by_text: dict = {}  # StableHLO text -> program's executable


def compiled_program(closed: ClosedJaxpr, name: str):
    program = _programs.get(closed)
    if program is None:
        program = _programs[closed] = _compile(closed, name)
    return program


def _compile(closed: ClosedJaxpr, name: str):
    if backend() == "numpy" or any(a.dtype == dtypes.float0 for a in closed.in_avals):
        return EvaluatedProgram(closed, name)
    from tracejit._src.lowering.lower import lower_jaxpr_to_module

    try:
        text = lower_jaxpr_to_module(closed, f"jit_{name}")
    except NotImplementedError as err:
        _warn_once(str(err), f"{err}; jit evaluates {name} with NumPy instead.")
        return EvaluatedProgram(closed, name)
    executable = _programs_by_text.get(text)
    if executable is None:
        executable = _programs_by_text[text] = _compile_with_disk_cache(text)
    return CompiledProgram(closed, name, text, executable)


def cache_dir() -> str:
    base = os.environ.get("TRACEJIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tracejit"
    )
    return os.path.join(base, "executables")


def _compile_with_disk_cache(text: str):
    """Compiles, or loads the serialized executable a previous process compiled from the same
    StableHLO text, compile options and plugin version. Written atomically (rename), so
    several processes may share the cache."""
    from tracejit._src.runtime import XlaRuntimeError, get_client

    client = get_client()
    if not config.enable_compilation_cache:
        return client.compile(text)
    identity = f"{client.platform}|{client.platform_version}|replicas=1|partitions=1|{text}"
    path = os.path.join(cache_dir(), hashlib.sha256(identity.encode()).hexdigest())
    try:
        with open(path, "rb") as f:
            return client.deserialize(f.read())
    except (OSError, XlaRuntimeError):
        pass
    executable = client.compile(text)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(executable.serialize())
        os.replace(temporary, path)
    except (OSError, XlaRuntimeError):
        pass  # an unwritable cache only costs the next process a compile
    return executable


def run_jaxpr(closed: ClosedJaxpr, name: str, args):
    return compiled_program(closed, name)(args)


# --- devices --------------------------------------------------------------------------------


class NumpyDevice:
    """The one device of the NumPy evaluator: the host."""

    id = 0
    platform = "cpu"
    kind = "cpu"
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


def devices() -> list:
    if backend() == "pjrt":
        from tracejit._src.runtime import get_client

        return get_client().devices()
    return [NumpyDevice()]


def default_backend() -> str:
    return devices()[0].platform


def device_put(x, device=None):
    """`x` (an array-like or a pytree of them) committed to `device` (default: the first)."""
    from tracejit._src.tree_util import tree_map

    def put(leaf):
        value, weak = to_numpy(leaf)
        if backend() != "pjrt":
            return make_array(np.array(value), weak)
        from tracejit._src.runtime import get_client

        return make_device_array(get_client().buffer_from_numpy(value, device), weak)

    return tree_map(put, x)
