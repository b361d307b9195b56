"""The exceptions tracejit raises for misuse of transformations, and where they point.

Each derives from `JAXTypeError` (a `TypeError`) or `JAXIndexError` (an `IndexError`), so code
written against JAX's `jax.errors` catches them under the same names. Messages say what was
attempted, why it cannot work under tracing, what to use instead, and the user's source line
(found by `user_location`, which skips tracejit's own frames).
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where frames are not the user's: tracejit's own files, and those a library built on it
# registers (`jax._src.traceback_util.register_exclusion`, as equinox does for its wrappers).
_EXCLUDED_PREFIXES = [_PACKAGE_DIR]


def register_exclusion(path: str) -> None:
    """Frames from files under `path` are not the user's line in messages and warnings."""
    _EXCLUDED_PREFIXES.append(path)


def is_user_file(filename: str) -> bool:
    return not filename.startswith(tuple(_EXCLUDED_PREFIXES))


class JAXTypeError(TypeError):
    """Base of tracejit's type errors (JAX's name, kept so `except` clauses carry over)."""

    def __init__(self, message: str):
        super().__init__(message)


class KeyReuseError(JAXTypeError):
    """A consumed PRNG key was used again (checked with `jax_debug_key_reuse` on)."""


class JAXIndexError(IndexError):
    """Base of tracejit's index errors."""

    def __init__(self, message: str):
        super().__init__(message)


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was needed from a value known only abstractly (shape and dtype)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value: Python control flow cannot branch on it while staging."""


class TracerIntegerConversionError(JAXTypeError):
    """`int()` or `__index__` of a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """`numpy.asarray` of a traced value: NumPy cannot compute on abstract values."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that made it (stored in a global, returned via a side
    channel) and was used after that transformation finished."""

    def __init__(self, msg: str):
        super().__init__(msg)


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing makes the output shape depend on values, impossible when staging."""


class JaxRuntimeError(RuntimeError):
    """A computation that could not run (JAX's `jax.errors.JaxRuntimeError`): the message starts
    with the status, as `RESOURCE_EXHAUSTED: ...`."""


class JaxprTypeError(TypeError):
    """A jaxpr that does not type-check (`check_jaxpr`): a variable used before it is bound, or an
    equation whose output types are not what its primitive gives. Raised while staging when
    `jax_enable_checks` is on."""


class InconclusiveDimensionOperation(Exception):
    """JAX raises this for a comparison or division of symbolic dimensions whose result depends
    on the dimensions' values. tracejit's shapes are always concrete integers, so it never
    raises it; the class exists so that `except` clauses written for JAX carry over."""


class SourceLocation:
    """A line of the user's code, kept as plain data (holding the frame would keep its locals
    alive): `file.py:12 (fun_name): `the source line``."""

    __slots__ = ("filename", "function", "lineno")

    def __init__(self, filename: str, lineno: int, function: str):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self):
        import linecache

        where = f"{self.filename}:{self.lineno} ({self.function})"
        line = linecache.getline(self.filename, self.lineno).strip()
        return f"{where}: `{line}`" if line else where


def user_location() -> SourceLocation | None:
    """The innermost line outside tracejit on the stack: the user's line that caused an event."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if is_user_file(code.co_filename):
            return SourceLocation(code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def warn_at_user_line(message: str, category=UserWarning) -> None:
    """`warnings.warn`, attributed to the innermost line outside tracejit."""
    frame, level = sys._getframe(1), 2
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def describe_user_location() -> str:
    return str(user_location() or "<unknown location>")
