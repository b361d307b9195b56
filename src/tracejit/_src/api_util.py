"""What every function-of-functions needs before it traces: argument stand-ins and positions.

Transformations (`grad`, `vmap`, `jit`, `checkpoint`) and the control-flow primitives all take a
user's function and its arguments, decide which arguments are traced and which are static, and
give each traced leaf an aval. That shared front end lives here, below `lax`, so that the
control-flow primitives need nothing from the transformations API above them.
"""

from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array, make_array
from tracejit._src.core import ShapedArray, Tracer, get_aval
from tracejit._src.sharding import NamedSharding, PartitionSpec, get_mesh
from tracejit._src.tree_util import keystr, tree_flatten_with_path


class ShapeDtypeStruct:
    """A stand-in for an array of a given shape and dtype (and sharding: a `Sharding`, or a
    PartitionSpec of the context mesh): tracing needs nothing more."""

    __slots__ = ("dtype", "shape", "sharding", "weak_type")

    def __init__(
        self, shape, dtype, *, sharding=None, weak_type=False, manual_axis_type=None, is_ref=False
    ):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        for name, value, missing in (
            ("manual_axis_type", manual_axis_type, "manual mesh axes are not built yet"),
            ("is_ref", is_ref, "mutable array references (jax.Ref) are not built yet"),
        ):
            if value:
                raise NotImplementedError(f"ShapeDtypeStruct({name}={value!r}): {missing}")
        if isinstance(sharding, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise ValueError(
                    "sharding of ShapeDtypeStruct should be a `Sharding` instance, or a "
                    f"PartitionSpec within a mesh context (`jax.set_mesh`). Got {sharding!r}"
                )
            sharding = NamedSharding(mesh, sharding)
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    # Without mesh axes in manual mode and references, these are always their defaults.
    manual_axis_type = None
    is_ref = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def _key(self):
        return (self.shape, self.dtype, self.weak_type, self.sharding)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = "" if self.sharding is None else f", sharding={self.sharding!r}"
        dtype = dtypes.dtype_name(self.dtype)
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={dtype}{sharding}{weak})"


def fun_name(fun) -> str:
    """The name a transformation gives `fun`, as JAX does: a `functools.partial` is named after
    the function it wraps, a callable without `__name__` `<unnamed function>`."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", "<unnamed function>")


def shaped_abstractify(x) -> ShapedArray:
    """The aval a transformation gives an argument: ShapeDtypeStructs count as arrays."""
    if isinstance(x, ShapeDtypeStruct):
        typed = x.sharding if isinstance(x.sharding, NamedSharding) else None
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type, sharding=typed)
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


def argnums_and_argnames(fun, argnums, argnames, kind: str) -> tuple[frozenset, frozenset]:
    """(positions, names) of the arguments an option pair such as `static_argnums`/
    `static_argnames` (`kind` "static") selects, each completed by the other through `fun`'s
    signature, so that an argument is selected however the caller passes it. Positions and
    names the signature rules out raise JAX's ValueError."""
    nums = {operator.index(i) for i in as_tuple(argnums, int)}
    names = set(as_tuple(argnames, str))
    parameters = function_parameters(fun)
    if parameters is None or not (nums or names):
        return frozenset(nums), frozenset(names)
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    kinds = {p.kind for p in parameters}
    if inspect.Parameter.VAR_POSITIONAL not in kinds and any(i >= len(positional) for i in nums):
        raise ValueError(
            f"Jitted function has {kind}_argnums={tuple(sorted(nums))}, but only accepts "
            f"{len(positional)} positional arguments."
        )
    by_keyword = {p.name for p in parameters if p.kind != p.POSITIONAL_ONLY}
    invalid = names - by_keyword
    if inspect.Parameter.VAR_KEYWORD not in kinds and invalid:
        raise ValueError(
            f"Jitted function has invalid argnames {invalid} in {kind}_argnames. Function does "
            "not take these args."
        )
    names |= {positional[i] for i in nums if 0 <= i < len(positional)}
    nums |= {positional.index(n) for n in names if n in positional}
    return frozenset(nums), frozenset(names)


def argument_paths(fun, args, kwargs) -> list:
    """Where each flat argument of `fun(*args, **kwargs)` came from, as error messages name
    it: (head, key path) with head the parameter a positional argument binds to (by position
    in `fun`'s signature; None past the named ones, then `args[i]`), or `kwargs` for keyword
    arguments. E.g. (`'x'`, `"['k']"`)."""
    names = [p.name for p in function_parameters(fun) or ()]
    paths = []
    for i, arg in enumerate(args):
        head = names[i] if i < len(names) else None
        paths += [(head, keystr(path) if head else f"args[{i}]{keystr(path)}")
                  for path, _ in tree_flatten_with_path(arg)[0]]  # fmt: skip
    paths += [(None, "kwargs" + keystr(path)) for path, _ in tree_flatten_with_path(kwargs)[0]]
    return paths


def abstractify_arguments(fun, leaves, args, kwargs, transformation: str = "jit") -> list:
    """The avals of the flat arguments `leaves` of `fun(*args, **kwargs)`; a leaf that is no
    array raises JAX's TypeError, naming where in the arguments it was."""
    avals = []
    for i, x in enumerate(leaves):
        try:
            avals.append(shaped_abstractify(x))
        except TypeError:
            head, path = argument_paths(fun, args, kwargs)[i]
            raise _not_an_array_error(fun, x, (head or "") + path, transformation) from None
    return avals


def _not_an_array_error(fun, x, path: str, transformation: str) -> TypeError:
    if transformation == "jit":
        return TypeError(
            f"Error interpreting argument to {fun!r} as an abstract array. The problematic "
            f"value is of type {type(x)!r} and was passed to the function at path {path}.\n"
            "This typically means that a jit-wrapped function was called with a non-array "
            "argument, and this argument was not marked as static using the static_argnums or "
            "static_argnames parameters of jax.jit."
        )
    return TypeError(
        f"Argument {x!r} of type {type(x)!r} is not a valid JAX type (passed to {transformation} "
        f"of {getattr(fun, '__name__', fun)!r} at path {path})."
    )


def as_array(x):
    """`x` as the transformations hand values to rules and back to users: an Array (tracers
    pass), Python scalars weakly typed, NumPy values in their canonical dtype; float0 values
    (the tangents of integers) stay NumPy arrays; an Array whose type carries a sharding
    (Explicit mesh axes) stays itself, so that transformations see that type."""
    if type(x) is Array or isinstance(x, Tracer):
        return x
    if isinstance(x, Array) and getattr(x.aval, "_sharding", None) is not None:
        return x
    value = np.asarray(x)
    if value.dtype == dtypes.float0:
        return value
    return make_array(
        np.asarray(value, dtypes.canonicalize_dtype(value.dtype)), dtypes.is_weakly_typed(x)
    )
