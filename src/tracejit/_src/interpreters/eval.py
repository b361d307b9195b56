"""The eval trace: the root interpreter, which runs each primitive's NumPy implementation.

This is eager mode. It is on the hot path of every un-jitted operation, so it does as little as
possible: unwrap the operands to NumPy values (canonicalizing dtypes of raw NumPy inputs and
Python scalars), call `primitive.impl`, and wrap the result with the weak type that the
primitive's `weak_type_rule` gives, the same rule its abstract evaluation uses.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.array import Array, make_array
from tracejit._src.config import config
from tracejit._src.core import (
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    check_result_sizes,
    escaped_tracer_error,
    python_scalar_types,
    set_root_trace,
    weak_if_all_weak,
)
from tracejit._src.core import _context as trace_context
from tracejit._src.errors import describe_user_location
from tracejit._src.jaxpr import Literal
from tracejit._src.sharding import sharding_in_types


def to_numpy(x):
    """(NumPy value with a canonical dtype, weak_type) of an eager operand."""
    if type(x) is Array:
        return x._value, x.weak_type
    if type(x) in python_scalar_types:
        return dtypes.python_scalar_dtype(x).type(x), type(x) is not bool
    if isinstance(x, (np.ndarray, np.generic)):  # (keys too: evaluated jaxprs hold them so)
        dtype = dtypes.canonicalize_dtype(x.dtype, allow_extended_dtype=True)
        return (x if x.dtype == dtype else x.astype(dtype)), False
    if isinstance(x, Tracer):
        raise escaped_tracer_error(x)
    if isinstance(x, Array):
        return x._value, x.weak_type
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid tracejit type")


def _unwrap(primitive, args):
    """(NumPy values, weak types, signature) of any operands."""
    values = []
    weak_types = []
    signature = [primitive]
    for x in args:
        value, weak = to_numpy(x)
        values.append(value)
        weak_types.append(weak)
        signature.append(value.shape)
        signature.append(value.dtype)
    return values, weak_types, tuple(signature)


eager_typed_sharding = [None]
"""`(trace, primitive, args, params) -> result` for operands whose types carry an Explicit
mesh's sharding: computed as any other, then laid out as the results' types say. Installed by
`spmd.py` (the compilation layer, which places arrays on devices)."""


def _sharded_in_type(args) -> bool:
    for x in args:
        if isinstance(x, Array) and type(x) is not Array and x.aval._sharding is not None:
            return True
    return False


class EvalTrace(Trace):
    """Runs NumPy. Each (primitive, operand shapes and dtypes, params) signature is checked once
    by the primitive's abstract evaluation, which raises for bad input and says what dtype the
    result must have; the answer is cached, so checking costs one dict lookup per operation."""

    def __init__(self):
        super().__init__(parent=None)
        self.signatures = {}

    def process_primitive(self, primitive, args, params):
        # Written for speed: this runs once per eager operation. One or two Array operands
        # (most operations) are read without building lists.
        n = len(args)
        if n == 1 and type(args[0]) is Array:
            x = args[0]
            value = x._value
            values = (value,)
            weak_types = (x.weak_type,)
            signature = (primitive, value.shape, value.dtype)
        elif n == 2 and type(args[0]) is Array and type(args[1]) is Array:
            x, y = args
            x_value, y_value = x._value, y._value
            values = (x_value, y_value)
            weak_types = (x.weak_type, y.weak_type)
            signature = (
                primitive, x_value.shape, x_value.dtype, y_value.shape, y_value.dtype
            )  # fmt: skip
        else:
            if sharding_in_types[0] and _sharded_in_type(args):
                return eager_typed_sharding[0](self, primitive, args, params)
            values, weak_types, signature = _unwrap(primitive, args)
        if params:
            signature = (signature, tuple(params.items()))
        try:
            out_avals = self.signatures[signature]
        except KeyError:
            out_avals = self.check_signature(signature, primitive, values, params)
        except TypeError:  # unhashable params (say, a list): check every time
            out_avals = self.check_signature(None, primitive, values, params)
        out = primitive.impl(*values, **params) if params else primitive.impl(*values)
        if _invalid_value_checks:
            check_invalid_values(primitive.name, out if primitive.multiple_results else [out])
        if primitive.multiple_results:
            return self.wrap_results(primitive, values, weak_types, params, out)
        rule = primitive.weak_type_rule
        if out.dtype != out_avals.dtype:
            out = out.astype(out_avals.dtype)
        array = _new_object(Array)
        array._value = out
        array.weak_type = (
            (False not in weak_types) if rule is weak_if_all_weak else rule(weak_types, params)
        )
        return array

    def check_signature(self, signature, primitive, values, params):
        avals = [ShapedArray(v.shape, v.dtype) for v in values]
        out_avals = primitive.abstract_eval(*avals, **params)
        results = out_avals if primitive.multiple_results else [out_avals]
        check_result_sizes(primitive, results, config.max_array_bytes)
        if signature is not None:
            if len(self.signatures) > 50_000:
                self.signatures.clear()
            self.signatures[signature] = out_avals
        return out_avals

    def wrap_results(self, primitive, values, weak_types, params, outs):
        """Wraps the outputs of a multiple-results primitive. Each output may have its own weak
        type (sort keeps each operand's), so these take the full abstract evaluation."""
        avals = [ShapedArray(v.shape, v.dtype, w) for v, w in zip(values, weak_types, strict=True)]
        out_avals = primitive.abstract_eval(*avals, **params)
        arrays = []
        for out, aval in zip(outs, out_avals, strict=True):
            if out.dtype != aval.dtype:
                out = out.astype(aval.dtype)
            arrays.append(make_array(out, aval.weak_type))
        return arrays

    def describe(self):
        return "evaluating eagerly"


_new_object = object.__new__

# --- jax_debug_nans / jax_debug_infs ----------------------------------------------------------
# Read on every eager operation, so kept in a module global that the options update.
_invalid_value_checks = False


def _update_invalid_value_checks(option_name: str) -> None:
    global _invalid_value_checks
    _invalid_value_checks = config.debug_nans or config.debug_infs
    if eager_context is not None:
        eager_context.configure(not _invalid_value_checks, config.max_array_bytes)


def check_invalid_values(name: str, values) -> None:
    """JAX's FloatingPointError if a floating value is NaN (`jax_debug_nans`) or infinite
    (`jax_debug_infs`), naming the operation `name` and the user's line."""
    for value in values:
        value = np.asarray(value)
        if not dtypes.is_inexact(value.dtype):
            continue
        kind = None
        if config.debug_nans and np.isnan(value).any():
            kind = "nan"
        elif config.debug_infs and np.isinf(value).any():
            kind = "inf"
        if kind is not None:
            raise FloatingPointError(
                f"invalid value ({kind}) encountered in {name} (at {describe_user_location()})"
            )


eval_trace = EvalTrace()
set_root_trace(eval_trace)

eager_context = (
    None if accel is None else accel.EagerContext(Array, trace_context, "trace", eval_trace)
)
"""What the C accelerator's eager kernels (`csrc/accel/eager.c`: an element-wise or reduction
primitive on Arrays in one C call, which `jnp`'s fast paths try first) check before running:
that the eval trace is the current trace, and that the value checks below are off."""

config.on_update(_update_invalid_value_checks)
_update_invalid_value_checks("")


def eval_jaxpr_numpy(jaxpr, consts, args) -> list:
    """Evaluates a jaxpr on NumPy values, calling each primitive's `impl` directly: how eager
    control flow runs its bodies, once per iteration, without wrapping every intermediate in
    an Array. The jaxpr was type-checked when it was staged, so no signature is checked here;
    each result is cast to its variable's dtype (NumPy may compute in a wider one). Primitives
    that customize `bind` (calls, custom derivatives) are bound on the eval trace instead."""
    env = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = to_numpy(value)[0]
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value

    def read(atom):
        if type(atom) is Literal:
            return atom.aval.dtype.type(atom.val)
        return env[atom]

    for eqn in jaxpr.eqns:
        primitive = eqn.primitive
        values = [read(atom) for atom in eqn.invars]
        if type(primitive) is Primitive:
            out = primitive.impl(*values, **eqn.params)
            outs = out if primitive.multiple_results else (out,)
        else:
            out = primitive.bind(*values, **eqn.params)
            outs = [to_numpy(o)[0] for o in (out if primitive.multiple_results else (out,))]
        for var, value in zip(eqn.outvars, outs, strict=True):
            dtype = var.aval.dtype
            env[var] = value if value.dtype == dtype else np.asarray(value, dtype)
    return [read(atom) for atom in jaxpr.outvars]
