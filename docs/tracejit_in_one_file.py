# tracejit in one file
# ====================
#
# This file is the whole idea of tracejit's core in about two hundred lines, to read top to
# bottom before the real modules. Every name here is the name of the real thing, and each
# section says where the real one lives. The tests run this file, so it stays true.
#
# The idea: a JAX program is ordinary Python that calls *primitives* (sin, mul, reduce_sum...).
# A primitive does not compute by itself; it asks the *current trace* to interpret it. Which
# trace is current decides what a program means: the eval trace computes numbers, the staging
# trace writes down a program (a jaxpr). Transformations are more traces, each built on its
# *parent*. Swapping the interpreter under an unchanged Python function is all there is.

from __future__ import annotations

import itertools
from contextlib import contextmanager

import numpy as np

# --- Abstract values (tracejit/_src/core.py: ShapedArray) -----------------------------------
#
# While staging, a value is known only by its shape and dtype. Python may branch on those
# (`if x.ndim == 0`) but not on the numbers themselves.


class ShapedArray:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    def str_short(self):
        short = {"float32": "f32", "int32": "i32", "bool": "bool"}[self.dtype.name]
        return f"{short}[{','.join(map(str, self.shape))}]"


# --- Primitives and the current trace (core.py: Primitive, set_current_trace) ----------------
#
# The current trace lives in a context (the real one is thread-local). A transformation
# installs its trace while the user's function runs and restores the previous one after.

_current_trace = None


@contextmanager
def set_current_trace(trace):
    global _current_trace
    previous, _current_trace = _current_trace, trace
    try:
        yield
    finally:
        _current_trace = previous


class Primitive:
    def __init__(self, name, impl, abstract_eval):
        self.name, self.impl, self.abstract_eval = name, impl, abstract_eval

    def bind(self, *args, **params):
        return _current_trace.process_primitive(self, args, params)


def _same_shape(x, y=None, **params):
    return ShapedArray(x.shape, x.dtype)


def _reduced(x, *, axes):
    return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype)


# The real blocks live in tracejit/_src/lax/<family>.py, each with all of its rules.
sin_p = Primitive("sin", np.sin, _same_shape)
mul_p = Primitive("mul", np.multiply, _same_shape)
add_p = Primitive("add", np.add, _same_shape)
reduce_sum_p = Primitive("reduce_sum", lambda x, *, axes: np.sum(x, axis=axes), _reduced)


# --- The eval trace (tracejit/_src/interpreters/eval.py) -------------------------------------
#
# The root interpreter: run the NumPy implementation. This is eager mode.


class EvalTrace:
    parent = None

    def process_primitive(self, primitive, args, params):
        return primitive.impl(*args, **params)


_current_trace = EvalTrace()

# --- Jaxprs (tracejit/_src/jaxpr.py) ----------------------------------------------------------
#
# A jaxpr is a list of equations `outvar = primitive[params] invars`, typed by avals. Scalar
# constants are inlined as literals; names are given when printing.

_ids = itertools.count()


class Var:
    def __init__(self, aval):
        self.aval, self.id = aval, next(_ids)


class Literal:
    def __init__(self, val):
        self.val = np.float32(val)
        self.aval = ShapedArray((), np.float32)


class JaxprEqn:
    def __init__(self, primitive, invars, params, outvar):
        self.primitive, self.invars, self.params, self.outvar = primitive, invars, params, outvar


class Jaxpr:
    def __init__(self, invars, eqns, outvars):
        self.invars, self.eqns, self.outvars = invars, eqns, outvars

    def __str__(self):
        names = {}

        def name(v):
            if isinstance(v, Literal):
                return f"{v.val}:{v.aval.str_short()}"
            if v not in names:
                names[v] = "abcdefghijklmnopqrstuvwxyz"[len(names)]
            return names[v]

        def binder(v):
            return f"{name(v)}:{v.aval.str_short()}"

        lines = [f"{{ lambda ; {' '.join(map(binder, self.invars))}. let"]
        for eqn in self.eqns:
            params = "".join(f"[{k}={v}]" for k, v in sorted(eqn.params.items()))
            args = " ".join(map(name, eqn.invars))
            lines.append(f"    {binder(eqn.outvar)} = {eqn.primitive.name}{params} {args}")
        lines.append(f"  in ({', '.join(map(name, self.outvars))},) }}")
        return "\n".join(lines)


# --- The staging trace (tracejit/_src/interpreters/staging.py) -------------------------------
#
# A tracer stands for a variable of the jaxpr being built. Binding a primitive on tracers
# appends an equation (its output type from the primitive's abstract evaluation) and returns a
# tracer for the result. Operators on tracers bind primitives (tracejit.numpy attaches them).


class StagingTracer:
    def __init__(self, trace, var):
        self._trace, self.var = trace, var

    @property
    def aval(self):
        return self.var.aval

    def __mul__(self, other):
        return mul_p.bind(self, other)

    def __add__(self, other):
        return add_p.bind(self, other)

    def __radd__(self, other):
        return add_p.bind(other, self)

    def __bool__(self):
        # The real error, TracerBoolConversionError, names the user's line and the remedies.
        raise TypeError("Attempted boolean conversion of a traced array: use lax.cond")


class StagingTrace:
    def __init__(self, parent):
        self.parent, self.eqns = parent, []

    def to_atom(self, x):
        return x.var if isinstance(x, StagingTracer) else Literal(x)

    def process_primitive(self, primitive, args, params):
        invars = [self.to_atom(x) for x in args]
        outvar = Var(primitive.abstract_eval(*(v.aval for v in invars), **params))
        self.eqns.append(JaxprEqn(primitive, invars, params, outvar))
        return StagingTracer(self, outvar)


def make_jaxpr(fun):
    """(tracejit/_src/api.py) Trace `fun` on abstract arguments into a Jaxpr."""

    def make_jaxpr_f(*args):
        trace = StagingTrace(parent=_current_trace)
        invars = [Var(ShapedArray(np.shape(x), np.float32)) for x in args]
        with set_current_trace(trace):
            out = fun(*[StagingTracer(trace, v) for v in invars])
        return Jaxpr(invars, trace.eqns, [trace.to_atom(out)])

    return make_jaxpr_f


# --- Putting it together ---------------------------------------------------------------------
#
# The same Python function, interpreted twice: once computing numbers, once writing a program.


def sin(x):
    return sin_p.bind(x)


def func1(first, second):
    temp = first + sin(second) * 3.0
    return reduce_sum_p.bind(temp, axes=(0,))


if __name__ == "__main__":
    print(func1(np.zeros(8, np.float32), np.ones(8, np.float32)))
    print(make_jaxpr(func1)(np.zeros(8), np.ones(8)))
    # { lambda ; a:f32[8] b:f32[8]. let
    #     c:f32[8] = sin b
    #     d:f32[8] = mul c 3.0:f32[]
    #     e:f32[8] = add a d
    #     f:f32[] = reduce_sum[axes=(0,)] e
    #   in (f,) }
