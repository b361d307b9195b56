"""The eval trace: the root interpreter, which runs each primitive's NumPy implementation.

This is eager mode. It is on the hot path of every un-jitted operation, so it does as little as
possible: unwrap the operands to NumPy values (canonicalizing dtypes of raw NumPy inputs and
Python scalars), call `primitive.impl`, and wrap the result with the weak type that the
primitive's `weak_type_rule` gives, the same rule its abstract evaluation uses.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array, make_array
from tracejit._src.core import (
    Trace,
    weak_if_all_weak,
    Tracer,
    escaped_tracer_error,
    python_scalar_types,
    set_root_trace,
)


def to_numpy(x):
    """(NumPy value with a canonical dtype, weak_type) of an eager operand."""
    if type(x) is Array:
        return x._value, x.weak_type
    if type(x) in python_scalar_types:
        return dtypes.python_scalar_dtype(x).type(x), type(x) is not bool
    if isinstance(x, (np.ndarray, np.generic)):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        return (x if x.dtype == dtype else x.astype(dtype)), False
    if isinstance(x, Tracer):
        raise escaped_tracer_error(x)
    if isinstance(x, Array):
        return x._value, x.weak_type
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid tracejit type")


class EvalTrace(Trace):
    def __init__(self):
        super().__init__(parent=None)

    def process_primitive(self, primitive, args, params):
        # Written for speed: this runs once per eager operation.
        values = []
        all_weak = True
        for x in args:
            if type(x) is Array:
                values.append(x._value)
                if not x.weak_type:
                    all_weak = False
            else:
                value, weak = to_numpy(x)
                values.append(value)
                if not weak:
                    all_weak = False
        out = primitive.impl(*values, **params) if params else primitive.impl(*values)
        rule = primitive.weak_type_rule
        weak = all_weak if rule is weak_if_all_weak else rule(all_weak, params)
        if primitive.multiple_results:
            return [make_array(v, weak) for v in out]
        array = _new_object(Array)
        array._value = out
        array.weak_type = weak
        return array

    def describe(self):
        return "evaluating eagerly"


_new_object = object.__new__
eval_trace = EvalTrace()
set_root_trace(eval_trace)
