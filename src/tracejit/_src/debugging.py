"""`tracejit.debug`: printing and calling Python from inside traced code.

`debug.print(fmt, *args, **kwargs)` formats the *values* of its arguments, wherever the code
runs: eagerly at once, under `jit` when the compiled program reaches it (XLA calls back into
Python, see `_src/callback.py`), under `vmap` once per batch member, under `grad` with the
primal values (never in the backward pass). `debug.callback(f, *args)` calls any `f` the same
way. Both bind effectful primitives that dead-code elimination keeps:

    >>> make_jaxpr(lambda x: debug.print("x={x}", x=x))(1.0)
    { lambda ; a:f32[]. let
        debug_print[fmt=x={x} has_placeholders=True in_tree=PyTreeDef(((), {'x': *})) ...] a
      in () }

The format string is checked at trace time against the arguments, as JAX checks it (a missing
argument raises IndexError/KeyError, an unused positional one ValueError). Arguments that are
not arrays (strings, objects) are static: kept in the equation, not passed through XLA.
"""

from __future__ import annotations

import logging
import string

import numpy as np

from tracejit._src.array import Array
from tracejit._src.callback import (
    DebugEffect,
    OrderedDebugEffect,
    check_callable,
    debug_callback_flat,
    debug_print_p,
    flatten_operands,
)
from tracejit._src.core import Tracer
from tracejit._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["DebugEffect", "OrderedDebugEffect", "breakpoint", "callback", "log", "print"]

_ARRAY_TYPES = (Tracer, Array, np.ndarray, np.generic, int, float, complex, bool)


def _split_static(leaves):
    """(the array leaves, ((position, value), ...) of the others)."""
    dynamic, static = [], []
    for position, leaf in enumerate(leaves):
        if isinstance(leaf, _ARRAY_TYPES):
            dynamic.append(leaf)
        else:
            static.append((position, leaf))
    return dynamic, tuple(static)


class _Placeholder:
    """Stands for an argument while the format string is checked: any format spec is fine."""

    def __format__(self, spec):
        return ""

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self


class _CheckingFormatter(string.Formatter):
    """`string.Formatter` over placeholders, plus JAX's error for the user's positional
    arguments that no field uses."""

    def __init__(self, user_args):
        self.user_args = user_args

    def check_unused_args(self, used_args, args, kwargs):
        unused = [arg for k, arg in enumerate(self.user_args) if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")


def _check_format(fmt, args, kwargs) -> bool:
    """Raises as JAX does when `fmt` does not match the arguments; whether it has fields."""
    formatter = _CheckingFormatter(args)
    formatter.vformat(fmt, tuple(_Placeholder() for _ in args), {k: _Placeholder() for k in kwargs})
    return any(field is not None for _, field, _, _ in formatter.parse(fmt))


def print(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs,
) -> None:
    """Prints `fmt.format(*args, **kwargs)` with the values of the arguments, eagerly and from
    inside `jit`, `vmap` (each batch member), `grad` (primal values) and control flow; with
    `ordered=True`, in program order relative to other ordered effects."""
    if fmt is None:
        raise TypeError("debug.print() missing required argument: 'fmt'")
    if not isinstance(fmt, str):
        raise TypeError(f"expected str, got {type(fmt).__name__}")
    has_placeholders = True
    if not skip_format_check:
        has_placeholders = _check_format(fmt, args, kwargs)
    leaves, in_tree = tree_flatten((args, kwargs))
    dynamic, static = _split_static(leaves)
    operands, _ = flatten_operands(tuple(dynamic), {})
    record = ("tracejit.debug", logging.INFO) if _use_logging else None
    debug_print_p.bind(
        *operands,
        fmt=fmt,
        has_placeholders=has_placeholders,
        in_tree=in_tree,
        logging_record=record,
        np_printoptions=tuple(np.get_printoptions().items()),
        ordered=bool(ordered),
        partitioned=bool(partitioned),
        static_args=static,
    )


def log(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = True,
    **kwargs,
) -> None:
    """As `print`, but the line goes to the `tracejit.debug` logger at level INFO."""
    print(
        fmt,
        *args,
        ordered=ordered,
        partitioned=partitioned,
        skip_format_check=skip_format_check,
        _use_logging=_use_logging,
        **kwargs,
    )


def callback(callback=None, *args, ordered: bool = False, partitioned: bool = False, **kwargs):
    """Calls `callback(*args, **kwargs)` for its effect with the values of the arguments
    (Arrays; non-array arguments as they are), eagerly and from compiled code; under `vmap`
    once per batch member, under `grad` with primal values. Returns None."""
    check_callable(callback, "jax.debug.callback")
    leaves, in_tree = tree_flatten((args, kwargs))
    dynamic, static = _split_static(leaves)
    flat_callback = _DebugFlatCallback(callback, in_tree, static)
    operands, _ = flatten_operands(tuple(dynamic), {})
    debug_callback_flat(flat_callback, operands, ordered=ordered, partitioned=partitioned)


class _DebugFlatCallback:
    """`debug.callback`'s function of the array operands: puts the static arguments back,
    rebuilds the user's pytrees and calls the user's function. Prints as JAX's does."""

    __slots__ = ("callback_func", "in_tree", "static")

    def __init__(self, callback_func, in_tree, static):
        self.callback_func = callback_func
        self.in_tree = in_tree
        self.static = static

    def __call__(self, *arrays):
        flat = list(arrays)
        for position, value in self.static:
            flat.insert(position, value)
        args, kwargs = tree_unflatten(self.in_tree, flat)
        self.callback_func(*args, **kwargs)
        return []

    def __repr__(self):
        return (
            "<function debug_callback.<locals>._debug_callback.<locals>._flat_callback "
            "at 0xXXXXXXXXXXXX>"
        )


def breakpoint(
    *, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs
):
    """Not available in tracejit: an interactive debugger inside compiled code."""
    raise NotImplementedError(
        "tracejit.debug.breakpoint is not implemented: use debug.print or debug.callback"
    )
