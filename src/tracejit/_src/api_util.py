"""What every function-of-functions needs before it traces: argument stand-ins and positions.

Transformations (`grad`, `vmap`, `jit`, `checkpoint`) and the control-flow primitives all take a
user's function and its arguments, decide which arguments are traced and which are static, and
give each traced leaf an aval. That shared front end lives here, below `lax`, so that the
control-flow primitives need nothing from the transformations API above them.
"""

from __future__ import annotations

import inspect

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray, get_aval


class ShapeDtypeStruct:
    """A stand-in for an array of a given shape and dtype: tracing needs nothing more."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) == (
            other.shape,
            other.dtype,
            other.weak_type,
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def shaped_abstractify(x) -> ShapedArray:
    """The aval a transformation gives an argument: ShapeDtypeStructs count as arrays."""
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    return get_aval(x)


def as_tuple(value, kind) -> tuple:
    """An `argnums`/`argnames`-style option (None, one `kind`, or a sequence) as a tuple."""
    if value is None:
        return ()
    return (value,) if isinstance(value, kind) else tuple(value)


def normalize_argnums(argnums, num_args: int, out_of_range=None) -> tuple:
    """The positions in `argnums` (an int or a sequence; negative ones count from the end) as
    non-negative positions of a call with `num_args` positional arguments, in the given order.
    A position outside the call raises `out_of_range(position)` if that is given, and is
    otherwise left out (an option naming an argument this call did not pass)."""
    positions = []
    for i in as_tuple(argnums, int):
        if -num_args <= i < num_args:
            positions.append(i % num_args)
        elif out_of_range is not None:
            raise out_of_range(i)
    return tuple(positions)


def function_parameters(fun) -> list | None:
    """`fun`'s parameters, or None when Python can't tell (some builtins)."""
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None


def argnums_and_argnames(fun, argnums, argnames, option: str) -> tuple[frozenset, frozenset]:
    """(positions, names) of the arguments an option such as `static_argnums`/`static_argnames`
    selects, each completed by the other through `fun`'s signature, so that an argument is
    selected however the caller passes it."""
    nums, names = set(as_tuple(argnums, int)), set(as_tuple(argnames, str))
    parameters = function_parameters(fun)
    if parameters is not None and (nums or names):
        positional = [
            p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        takes_varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
        if not takes_varargs and any(i >= len(positional) for i in nums):
            raise ValueError(
                f"Jitted function has {option}={tuple(sorted(nums))}, but only accepts "
                f"{len(positional)} positional arguments."
            )
        names |= {positional[i] for i in nums if 0 <= i < len(positional)}
        nums |= {positional.index(n) for n in names if n in positional}
    return frozenset(nums), frozenset(names)
