"""The public transformations, as functions of functions. So far: `make_jaxpr`.

Each transformation flattens its arguments to a list of array leaves (pytrees), runs the
user's function under its trace, and rebuilds the outputs' structure.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray, get_aval
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.tree_util import tree_flatten, tree_unflatten


class ShapeDtypeStruct:
    """A stand-in for an array of a given shape and dtype: tracing needs nothing more."""

    __slots__ = ("shape", "dtype", "weak_type")

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


def _normalize_argnums(argnums, num_args: int, fun_name: str) -> tuple:
    if isinstance(argnums, int):
        argnums = (argnums,)
    normalized = []
    for i in argnums:
        if not -num_args <= i < num_args:
            raise ValueError(
                f"static_argnums {i} is out of range for {fun_name} called with {num_args} "
                "positional arguments"
            )
        normalized.append(i % num_args)
    return tuple(sorted(set(normalized)))


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """Returns a function that gives the jaxpr of `fun` for the given example arguments.

    Only the shapes and dtypes of the arguments matter (ShapeDtypeStructs work as well),
    except those listed in `static_argnums`, whose Python values are used as they are.
    """

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        static = _normalize_argnums(static_argnums, len(args), getattr(fun, "__name__", "fun"))
        dynamic_args = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_flatten((dynamic_args, kwargs))
        in_avals = [shaped_abstractify(x) for x in leaves]
        out_trees = []

        def flat_fun(*flat_args):
            dyn, kw = tree_unflatten(in_tree, flat_args)
            dyn = iter(dyn)
            full_args = [args[i] if i in static else next(dyn) for i in range(len(args))]
            out = fun(*full_args, **kw)
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        closed_jaxpr = trace_to_jaxpr(flat_fun, in_avals, DebugInfo(fun, "make_jaxpr"))
        if not return_shape:
            return closed_jaxpr
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed_jaxpr.out_avals]
        return closed_jaxpr, tree_unflatten(out_trees[0], shapes)

    return make_jaxpr_f


def block_until_ready(x):
    """Waits for every array in the pytree `x` to be computed; returns `x`."""
    for leaf in tree_flatten(x)[0]:
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def device_get(x):
    """The pytree `x` with every array replaced by a NumPy array."""
    leaves, tree = tree_flatten(x)
    return tree_unflatten(
        tree, [np.asarray(leaf) if hasattr(leaf, "__array__") else leaf for leaf in leaves]
    )
