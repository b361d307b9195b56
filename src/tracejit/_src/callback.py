"""Host callbacks as primitives: Python functions called from traced and compiled code.

Four primitives, as JAX names them in jaxprs, each calling a Python function on concrete
values wherever the program runs: eagerly the function is called at once; staged, the equation
is lowered to a `stablehlo.custom_call` that XLA runs by calling back into Python
(`runtime/ffi.py`, through `LoweringContext.host_callback`).

    pure_callback   a pure function: its results are declared (`result_avals`); XLA may drop
                    it when nothing reads them, or run it more than once
    io_callback     a function with effects: never dropped; `ordered=True` ones run in order
    debug_callback  no results: never dropped, runs on the primal values under `grad`, once
                    per batch member under `vmap`
    debug_print     `debug.print`'s: formats its operands and writes to `sys.stdout`

    >>> make_jaxpr(lambda x: pure_callback(np.sin, ShapeDtypeStruct((3,), np.float32), x))(x)
    { lambda ; a:f32[3]. let
        b:f32[3] = pure_callback[callback=_FlatCallback(...) result_avals=(...) ...] a
      in (b,) }

The user's function takes and returns pytrees; `_FlatCallback` gives the primitives flat lists
(arrays in, NumPy arrays out). Effects are per primitive (`has_side_effects`, read by the
dead-code pass in `jaxpr.py`); program order of the effectful ones is kept by XLA, which runs
side-effecting custom calls in the order of the program.

This module sits with the higher-order primitives: `pure_callback`'s `sequential` batching
stages a `scan`.
"""

from __future__ import annotations

import logging
import re
import sys

import numpy as np

from tracejit._src import dtypes, runtime
from tracejit._src.array import Array, make_array
from tracejit._src.config import config
from tracejit._src.core import Primitive, ShapedArray, Tracer
from tracejit._src.errors import JaxRuntimeError
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, move_batch_dim
from tracejit._src.lax import shapes, slicing
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

# --------------------------------------------------------------------------------------------
# What the primitives share


class _FlatCallback:
    """The user's function of pytrees as a function of flat lists: `in_tree` rebuilds
    `(args, kwargs)` from the operands. Prints as JAX prints it in jaxprs."""

    __slots__ = ("_positional", "callback_func", "in_tree")

    def __init__(self, callback_func, in_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree
        # (a call of positional arrays only, the common case, skips the unflattening)
        self._positional = in_tree == tree_structure((tuple(range(in_tree.num_leaves)), {}))

    def __call__(self, *flat_args):
        if self._positional:
            results = self.callback_func(*flat_args)
        else:
            args, kwargs = tree_unflatten(self.in_tree, list(flat_args))
            results = self.callback_func(*args, **kwargs)
        if isinstance(results, (np.ndarray, Array)):
            return [results]
        return tree_leaves(results)

    def __eq__(self, other):
        return (
            type(other) is _FlatCallback
            and self.callback_func is other.callback_func
            and self.in_tree == other.in_tree
        )

    def __hash__(self):
        return hash((id(self.callback_func), self.in_tree))

    def __repr__(self):
        function = masked_repr(self.callback_func)
        return f"_FlatCallback(callback_func={function}, in_tree={self.in_tree!r})"

    @property
    def name(self) -> str:
        return getattr(self.callback_func, "__qualname__", None) or repr(self.callback_func)


def masked_repr(value) -> str:
    """`repr(value)` with memory addresses masked, as JAX prints functions in jaxprs (so that
    printouts do not change from run to run)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0xXXXXXXXXXXXX", repr(value))


class DebugEffect:
    """The effect of a `debug_callback`: it must run, in any order."""

    def __repr__(self):
        return "Debug"

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))


class OrderedDebugEffect(DebugEffect):
    """The effect of an ordered `debug_callback`: it runs in program order."""

    def __repr__(self):
        return "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


def _operand_array(value) -> Array:
    """What a callback receives for an operand: an Array owning a copy (the NumPy view of
    XLA's buffer is valid only during the call, and the function may keep what it gets)."""
    return make_array(value.copy())


def _call_user(callback, what: str, values):
    """Calls `callback` on Arrays of `values`; its exception becomes JAX's runtime error."""
    try:
        return callback(*(_operand_array(v) for v in values))
    except Exception as exception:
        message = runtime.callback_error_message(f"{what} {callback.name}", exception)
        raise JaxRuntimeError(f"INTERNAL: {message}") from exception


def _checked_results(callback, result_avals, results, what: str) -> list[np.ndarray]:
    """The callback's flat results as NumPy values of `result_avals`, or JAX's runtime error."""
    try:
        return runtime.check_results(
            f"{what} {callback.name}",
            [a.shape for a in result_avals],
            [a.dtype for a in result_avals],
            results,
        )
    except runtime.CallbackResultError as error:
        raise JaxRuntimeError(f"INVALID_ARGUMENT: {error}") from error


def _host_function(callback, what: str):
    """The function the runtime calls with NumPy views of the operands."""

    def call(*views):
        return callback(*(_operand_array(v) for v in views))

    call.__qualname__ = f"{what} {callback.name}"
    return call


def check_callable(callback, api_name: str) -> None:
    if not callable(callback):
        raise TypeError(
            f"first argument to {api_name} must be callable, but got an object of type "
            f"{type(callback)}"
        )


def result_avals_of(result_shape_dtypes) -> tuple[list[ShapedArray], object]:
    """The declared results as avals and their tree: each leaf anything with `.shape` and
    `.dtype` (a ShapeDtypeStruct, an array), as JAX reads them (AttributeError otherwise)."""
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        dtype = np.dtype(leaf.dtype)
        shape = tuple(int(d) for d in leaf.shape)
        if not config.enable_x64 and dtype.itemsize == 8 and dtype.kind in "iuf":
            raise ValueError(
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"
            )
        avals.append(ShapedArray(shape, dtypes.canonicalize_dtype(dtype)))
    return avals, tree


def flatten_operands(args, kwargs) -> tuple[list, object]:
    """The operands' leaves (Python scalars made Arrays, as JAX's `asarray` would) and tree."""
    leaves, tree = tree_flatten((args, kwargs))
    return [_as_operand(x) for x in leaves], tree


def _as_operand(x):
    if isinstance(x, (Tracer, Array)):
        return x
    value = np.asarray(x)
    weak = isinstance(x, (int, float, complex)) and not isinstance(x, bool)
    return make_array(value.astype(dtypes.canonicalize_dtype(value.dtype)), weak)


def _batched_slices(values, dims, axis_size: int):
    """Per batch member, the operands with member `i` taken out of the batched ones."""
    return [
        [
            x if d is None else slicing.index_in_dim(x, i, d, keepdims=False)
            for x, d in zip(values, dims, strict=True)
        ]
        for i in range(axis_size)
    ]


# --- pure_callback --------------------------------------------------------------------------
pure_callback_p = Primitive("pure_callback", multiple_results=True)

_VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls the pure Python function `callback(*args, **kwargs)` on concrete values, from
    eager, traced or compiled code, returning arrays of `result_shape_dtypes` (a pytree of
    ShapeDtypeStruct-like objects). Being pure, it may be left out when its results are not
    used, or called more than once. `vmap_method` says how `vmap` calls it: 'sequential'
    (a loop), 'sequential_unrolled', 'expand_dims' (one call, unbatched operands with a size-1
    leading axis), 'broadcast_all' (every operand broadcast to the batch) or
    'legacy_vectorized' (one call, unbatched operands as they are)."""
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        allowed = [*_VMAP_METHODS, None]
        raise ValueError(
            f"vmap_method must be on of the allowed methods {allowed}, but got: {vmap_method}"
        )
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    operands, in_tree = flatten_operands(args, kwargs)
    flat = _FlatCallback(callback, in_tree)
    outs = pure_callback_p.bind(
        *operands,
        callback=flat,
        result_avals=tuple(result_avals),
        sharding=sharding,
        vmap_method=vmap_method,
    )
    return tree_unflatten(out_tree, list(outs))


def _pure_callback_impl(*values, callback, result_avals, sharding, vmap_method):
    results = _call_user(callback, "pure_callback", values)
    return _checked_results(callback, result_avals, results, "pure_callback")


def _pure_callback_abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
    return list(result_avals)


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
        "while taking gradients."
    )


def _pure_callback_batch(values, dims, *, callback, result_avals, sharding, vmap_method):
    axis_size = next(
        shapes.shape_of(x)[d] for x, d in zip(values, dims, strict=True) if d is not None
    )
    params = {"callback": callback, "sharding": sharding, "vmap_method": vmap_method}
    if vmap_method in ("sequential", "sequential_unrolled"):
        batched = [batch_at_front(x, d, axis_size) for x, d in zip(values, dims) if d is not None]
        fixed = [(k, x) for k, (x, d) in enumerate(zip(values, dims)) if d is None]

        def member(_, xs):
            operands, it = list(values), iter(xs)
            for k, d in enumerate(dims):
                operands[k] = next(it) if d is not None else operands[k]
            for k, x in fixed:
                operands[k] = x
            return (), pure_callback_p.bind(*operands, result_avals=result_avals, **params)

        unroll = axis_size if vmap_method == "sequential_unrolled" else 1
        _, outs = scan(member, (), batched, unroll=unroll)
        return list(outs), [0] * len(outs)
    if vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        operands = []
        for x, d in zip(values, dims, strict=True):
            if d is not None:
                operands.append(move_batch_dim(x, d, 0))
            elif vmap_method == "expand_dims":
                shape = tuple(shapes.shape_of(x))
                operands.append(
                    shapes.broadcast_in_dim(x, (1, *shape), tuple(range(1, len(shape) + 1)))
                )
            elif vmap_method == "broadcast_all":
                operands.append(batch_at_front(x, None, axis_size))
            else:
                operands.append(x)
        avals = tuple(ShapedArray((axis_size, *a.shape), a.dtype) for a in result_avals)
        outs = pure_callback_p.bind(*operands, result_avals=avals, **params)
        return list(outs), [0] * len(outs)
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got vmap_method={vmap_method}."
    )


def _pure_callback_lowering(ctx, *operands, callback, result_avals, sharding, vmap_method):
    function = _host_function(callback, "pure_callback")
    return ctx.host_callback(function, list(operands), function.__qualname__, has_side_effect=False)


pure_callback_p.def_impl(_pure_callback_impl)
pure_callback_p.def_abstract_eval(_pure_callback_abstract_eval)
ad.jvp_rules[pure_callback_p] = _pure_callback_jvp
batch_rules[pure_callback_p] = _pure_callback_batch
lowering_rules[pure_callback_p] = _pure_callback_lowering


# --- io_callback ----------------------------------------------------------------------------
io_callback_p = Primitive("io_callback", multiple_results=True)
io_callback_p.has_side_effects = True  # never dropped (`jaxpr.live_equations`)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls the Python function `callback(*args, **kwargs)`, which may have side effects, on
    concrete values, returning arrays of `result_shape_dtypes`. It is never left out; with
    `ordered=True` the calls run in program order (and cannot be vmapped)."""
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    operands, in_tree = flatten_operands(args, kwargs)
    outs = io_callback_p.bind(
        *operands,
        callback=_FlatCallback(callback, in_tree),
        ordered=bool(ordered),
        result_avals=tuple(result_avals),
        sharding=sharding,
    )
    return tree_unflatten(out_tree, list(outs))


def _io_callback_impl(*values, callback, ordered, result_avals, sharding):
    results = _call_user(callback, "io_callback", values)
    return _checked_results(callback, result_avals, results, "io_callback")


def _io_callback_abstract_eval(*avals, callback, ordered, result_avals, sharding):
    return list(result_avals)


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_batch(values, dims, *, callback, ordered, result_avals, sharding):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    axis_size = next(
        shapes.shape_of(x)[d] for x, d in zip(values, dims, strict=True) if d is not None
    )
    batched = [batch_at_front(x, d, axis_size) for x, d in zip(values, dims) if d is not None]

    def member(_, xs):
        operands, it = list(values), iter(xs)
        for k, d in enumerate(dims):
            if d is not None:
                operands[k] = next(it)
        outs = io_callback_p.bind(
            *operands,
            callback=callback,
            ordered=ordered,
            result_avals=result_avals,
            sharding=sharding,
        )
        return (), outs

    _, outs = scan(member, (), batched)
    return list(outs), [0] * len(outs)


def _io_callback_lowering(ctx, *operands, callback, ordered, result_avals, sharding):
    function = _host_function(callback, "io_callback")
    return ctx.host_callback(function, list(operands), function.__qualname__, has_side_effect=True)


io_callback_p.def_impl(_io_callback_impl)
io_callback_p.def_abstract_eval(_io_callback_abstract_eval)
ad.jvp_rules[io_callback_p] = _io_callback_jvp
batch_rules[io_callback_p] = _io_callback_batch
lowering_rules[io_callback_p] = _io_callback_lowering


# --- debug_callback -------------------------------------------------------------------------
debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.has_side_effects = True


def debug_callback_flat(flat_callback, operands, *, ordered: bool, partitioned: bool = False):
    """Binds `debug_callback`: `flat_callback(*arrays)` is called for its effect only."""
    debug_callback_p.bind(
        *operands,
        callback=flat_callback,
        effect=ordered_debug_effect if ordered else debug_effect,
        partitioned=partitioned,
    )


def _debug_callback_impl(*values, callback, effect, partitioned):
    _call_user(_Named(callback), "debug_callback", values)
    return []


def _debug_callback_abstract_eval(*avals, callback, effect, partitioned):
    return []


def _debug_jvp(primitive):
    """Debug callbacks see the primal values; they have no outputs, so no tangents."""

    def rule(primals, tangents, **params):
        primitive.bind(*primals, **params)
        return [], []

    return rule


def _debug_batch(primitive):
    """One call per batch member, as JAX does: each sees unbatched values."""

    def rule(values, dims, **params):
        axis_size = next(
            shapes.shape_of(x)[d] for x, d in zip(values, dims, strict=True) if d is not None
        )
        for operands in _batched_slices(values, dims, axis_size):
            primitive.bind(*operands, **params)
        return [], []

    return rule


def _debug_callback_lowering(ctx, *operands, callback, effect, partitioned):
    named = _Named(callback)
    function = _host_function(named, "debug_callback")
    ctx.host_callback(
        _no_results(function), list(operands), function.__qualname__, has_side_effect=True
    )
    return []


debug_callback_p.def_impl(_debug_callback_impl)
debug_callback_p.def_abstract_eval(_debug_callback_abstract_eval)
ad.jvp_rules[debug_callback_p] = _debug_jvp(debug_callback_p)
batch_rules[debug_callback_p] = _debug_batch(debug_callback_p)
lowering_rules[debug_callback_p] = _debug_callback_lowering


# --- debug_print ----------------------------------------------------------------------------
debug_print_p = Primitive("debug_print", multiple_results=True)
debug_print_p.has_side_effects = True


def _debug_print_impl(*values, **params):
    _print_values(params, [np.asarray(v) for v in values])
    return []


def _print_values(params, values) -> None:
    """Formats `values` (NumPy) into the equation's `fmt` and writes the line to stdout."""
    leaves = list(values)
    for index, value in params["static_args"]:
        leaves.insert(index, value)
    args, kwargs = tree_unflatten(params["in_tree"], leaves)
    with np.printoptions(**dict(params["np_printoptions"])):
        text = params["fmt"].format(*args, **kwargs)
    record = params["logging_record"]
    if record is None:
        sys.stdout.write(text + "\n")
    else:
        logging.getLogger(record[0]).log(record[1], text)


def _debug_print_abstract_eval(*avals, **params):
    return []


class _Printer:
    """`debug_print`'s host function: prints the formatted values (each a NumPy view)."""

    __slots__ = ("params",)

    def __init__(self, params):
        self.params = params

    def __call__(self, *views):
        _print_values(self.params, views)
        return []


def _debug_print_lowering(ctx, *operands, **params):
    ctx.host_callback(_Printer(params), list(operands), "debug.print", has_side_effect=True)
    return []


debug_print_p.def_impl(_debug_print_impl)
debug_print_p.def_abstract_eval(_debug_print_abstract_eval)
ad.jvp_rules[debug_print_p] = _debug_jvp(debug_print_p)
batch_rules[debug_print_p] = _debug_batch(debug_print_p)
lowering_rules[debug_print_p] = _debug_print_lowering


# --------------------------------------------------------------------------------------------


class _Named:
    """A debug callback as `_call_user` and `_host_function` take it (with a `name`)."""

    __slots__ = ("function",)

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)

    @property
    def name(self) -> str:
        function = self.function
        inner = getattr(function, "callback_func", None)
        return getattr(inner or function, "__qualname__", None) or repr(function)


def _no_results(function):
    def call(*views):
        function(*views)
        return []

    call.__qualname__ = function.__qualname__
    return call


# --- effects_barrier --------------------------------------------------------------------------
def effects_barrier() -> None:
    """Waits until the functions already called have finished their side effects. Nothing is
    left to wait for when it is called: eager callbacks run at once, and a compiled program
    that calls back into Python (`dispatch`) finishes before its call returns."""
