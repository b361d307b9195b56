# tracejit in one file
# ====================
#
# This file is the design of tracejit's core, to read top to bottom before the real modules.
# Every name here is the name of the real thing, and each section says where the real one
# lives. The tests run this file and check what it prints and computes against tracejit
# itself, so it stays true.
#
# The idea: a JAX program is ordinary Python that calls *primitives* (sin, mul, reduce_sum...).
# A primitive does not compute by itself; it asks the *current trace* to interpret it. Which
# trace is current decides what a program means: the eval trace computes numbers, the staging
# trace writes down a program (a jaxpr). Transformations are more traces, each built on its
# *parent*: the JVP trace carries a tangent beside every value, the batch trace a batch axis.
# Reverse mode needs no trace of its own: it is the JVP run under partial evaluation, which
# stages the tangent computation into a linear jaxpr, then that jaxpr transposed. Swapping the
# interpreter under an unchanged Python function is all there is.
#
# Left out: dtypes other than float32, pytrees (api.py flattens arguments and results; here a
# function takes arrays and returns one array), helpful errors, and jit, which lowers a jaxpr
# to StableHLO (lowering/) and runs it through PJRT (runtime/).

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np

# --- Abstract values (tracejit/_src/core.py: ShapedArray) -----------------------------------
#
# While staging, a value is known only by its shape and dtype. Python may branch on those
# (`if x.ndim == 0`) but not on the numbers themselves.


class ShapedArray:
    def __init__(self, shape, dtype=np.float32):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    def str_short(self):
        short = {"float32": "f32"}[self.dtype.name]  # the one dtype of this file
        return f"{short}[{','.join(map(str, self.shape))}]"


# --- Primitives and the current trace (core.py: Primitive, Trace, Tracer, set_current_trace) --
#
# The current trace lives in a context (the real one is thread-local). A transformation
# installs its trace while the user's function runs and restores the previous one after.
# A Tracer is a value that a trace interprets: each trace has its own kind, and knows its own
# tracers by their `_trace`. Anything else, a NumPy array or another trace's tracer, is a
# constant to it. Python operators on tracers bind primitives (tracejit.numpy attaches them).

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


class Trace:
    def __init__(self, parent):
        self.parent = parent


class Tracer:
    __array_ufunc__ = None  # `ndarray + tracer` calls the tracer's __radd__, not NumPy's loop

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __mul__(self, other):
        return mul(self, other)


def get_aval(x):
    return x.aval if isinstance(x, Tracer) else ShapedArray(np.shape(x))


def _elementwise(*avals):
    """Operands of one shape, or of rank 0, or with 1s where the others are larger (lax's
    implicit broadcasting, which vmap relies on below)."""
    shapes = [a.shape for a in avals if a.shape]
    if len({len(s) for s in shapes}) > 1:
        raise TypeError(f"elementwise operands of different ranks: {shapes}")
    return ShapedArray(np.broadcast_shapes(*shapes))


def _reduced(x, *, axes, out_sharding):
    return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes])


def _broadcast_impl(x, *, shape, broadcast_dimensions):
    new_axes = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    return np.broadcast_to(np.expand_dims(x, new_axes), shape)


# The real blocks live in tracejit/_src/lax/<family>.py, each with all of its rules; here each
# section below registers its rules for all the primitives at once, to read as one piece.
sin_p = Primitive("sin", np.sin, _elementwise)
cos_p = Primitive("cos", np.cos, _elementwise)
neg_p = Primitive("neg", np.negative, _elementwise)
add_p = Primitive("add", np.add, _elementwise)
mul_p = Primitive("mul", np.multiply, _elementwise)
reduce_sum_p = Primitive("reduce_sum", lambda x, *, axes, **_: np.sum(x, axis=axes), _reduced)
broadcast_in_dim_p = Primitive(
    "broadcast_in_dim",
    _broadcast_impl,
    lambda x, *, shape, broadcast_dimensions: ShapedArray(shape),
)
transpose_p = Primitive(
    "transpose",
    lambda x, *, permutation: np.transpose(x, permutation),
    lambda x, *, permutation: ShapedArray([x.shape[i] for i in permutation]),
)


# The public wrappers bind their primitive, with the params in canonical form.
sin, cos, neg, add, mul = sin_p.bind, cos_p.bind, neg_p.bind, add_p.bind, mul_p.bind


def reduce_sum(x, axes):
    return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None)  # (JAX's params)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return broadcast_in_dim_p.bind(
        x, shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions)
    )


def transpose(x, permutation):
    return transpose_p.bind(x, permutation=tuple(permutation))


# --- The eval trace (tracejit/_src/interpreters/eval.py) -------------------------------------
#
# The root interpreter: run the NumPy implementation. This is eager mode.


class EvalTrace(Trace):
    def process_primitive(self, primitive, args, params):
        return primitive.impl(*args, **params)


_current_trace = EvalTrace(parent=None)

# --- Jaxprs (tracejit/_src/jaxpr.py: Var, Literal, JaxprEqn, Jaxpr) -------------------------
#
# A jaxpr is a list of equations `outvar = primitive[params] invars`, typed by avals. Its
# constvars stand for arrays it reads without taking them as inputs; scalar constants are
# inlined as literals. Names are given when printing.


class Var:
    def __init__(self, aval):
        self.aval = aval


class Literal:
    def __init__(self, val):
        self.val = np.float32(val)
        self.aval = ShapedArray(())


class JaxprEqn:
    def __init__(self, primitive, invars, params, outvar):
        self.primitive, self.invars, self.params, self.outvar = primitive, invars, params, outvar


class Jaxpr:
    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars, self.invars, self.eqns, self.outvars = constvars, invars, eqns, outvars

    def __str__(self):
        names = {}

        def name(v):
            if isinstance(v, Literal):
                return f"{v.val}:{v.aval.str_short()}"
            if v not in names:
                names[v] = "abcdefghijklmnopqrstuvwxyz"[len(names)]
            return names[v]

        def binders(vs):
            return " ".join(f"{name(v)}:{v.aval.str_short()}" for v in vs)

        lines = [f"{{ lambda {binders(self.constvars)}; {binders(self.invars)}. let"]
        for eqn in self.eqns:
            # As JAX prints them: no `shape`, which the result's type shows.
            params = " ".join(f"{k}={v}" for k, v in sorted(eqn.params.items()) if k != "shape")
            params = f"[{params}]" if params else ""
            args = " ".join(map(name, eqn.invars))
            lines.append(f"    {binders([eqn.outvar])} = {eqn.primitive.name}{params} {args}")
        lines.append(f"  in ({', '.join(map(name, self.outvars))},) }}")
        return "\n".join(lines)


# --- The staging trace (tracejit/_src/interpreters/staging.py) -------------------------------
#
# A tracer stands for a variable of the jaxpr being built. Binding a primitive on tracers
# appends an equation (its output type from the primitive's abstract evaluation) and returns a
# tracer for the result.


class StagingTracer(Tracer):
    def __init__(self, trace, var):
        self._trace, self.var = trace, var

    @property
    def aval(self):
        return self.var.aval

    def __bool__(self):
        # The real error, TracerBoolConversionError, names the user's line and the remedies.
        raise TypeError("Attempted boolean conversion of a traced array: use lax.cond")


class StagingTrace(Trace):
    def __init__(self, parent):
        super().__init__(parent)
        self.invars, self.eqns, self.constvars, self.consts = [], [], {}, []

    def new_arg(self, aval):
        self.invars.append(Var(aval))
        return StagingTracer(self, self.invars[-1])

    def to_atom(self, x):
        """The Var of one of this trace's tracers, a Literal for a Python scalar, else a
        constvar: arrays and the tracers of other traces are read as constants."""
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.var
        if isinstance(x, (int, float)):
            return Literal(x)
        if id(x) not in self.constvars:
            self.constvars[id(x)] = Var(get_aval(x))
            self.consts.append(x)
        return self.constvars[id(x)]

    def process_primitive(self, primitive, args, params):
        invars = [self.to_atom(x) for x in args]
        outvar = Var(primitive.abstract_eval(*(v.aval for v in invars), **params))
        self.eqns.append(JaxprEqn(primitive, invars, params, outvar))
        return StagingTracer(self, outvar)

    def to_jaxpr(self, outputs):
        """The jaxpr staged so far, returning `outputs`, and the values of its constvars."""
        outvars = [self.to_atom(x) for x in outputs]
        return Jaxpr(list(self.constvars.values()), self.invars, self.eqns, outvars), self.consts


def make_jaxpr(fun):
    """(tracejit/_src/api.py) Trace `fun` on abstract arguments into a Jaxpr (the real one
    returns a ClosedJaxpr, which also holds the values of the constvars)."""

    def make_jaxpr_f(*args):
        trace = StagingTrace(parent=_current_trace)
        with set_current_trace(trace):
            out = fun(*[trace.new_arg(get_aval(x)) for x in args])
        return trace.to_jaxpr([out])[0]

    return make_jaxpr_f


# --- Putting it together ---------------------------------------------------------------------
#
# The same Python function, interpreted twice: once computing numbers, once writing a program.


def func1(first, second):
    temp = first + sin(second) * 3.0
    return reduce_sum(temp, axes=(0,))


first, second = np.zeros(8, np.float32), np.ones(8, np.float32)
print(func1(first, second))
print(make_jaxpr(func1)(first, second))
# { lambda ; a:f32[8] b:f32[8]. let
#     c:f32[8] = sin b
#     d:f32[8] = mul c 3.0:f32[]
#     e:f32[8] = add a d
#     f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
#   in (f,) }

# --- Forward mode: the JVP trace (interpreters/ad.py: Zero, JVPTracer, JVPTrace, jvp_rules) ---
#
# Forward-mode differentiation carries, beside each primal value, its tangent: the derivative
# of that value along one direction of the inputs. A JVPTracer holds the pair. Binding a
# primitive on JVP tracers runs the primitive's JVP rule *on the parent trace*, and the rule
# computes the primal output and the tangent output with ordinary primitives:
#
#     sin(x + εt) = sin(x) + ε cos(x) t        jvp_rules[sin_p]: (x,), (t,) -> sin(x), cos(x) t
#
# Constants and other traces' tracers have zero tangents, kept symbolic as Zero(aval): rules
# skip them rather than multiply by zeros, and a primitive whose tangents are all zero simply
# runs on the parent. As the rules bind primitives on the parent, they mean whatever the parent
# makes of them: numbers under the eval trace, equations under staging, second derivatives
# under another JVP trace. Tangent sums that the rules make use add_any, a primitive of ad.py
# (unlike `add`, it does not promote dtypes or broadcast in the real system).


class Zero:
    def __init__(self, aval):
        self.aval = aval


def instantiate_zeros(tangent):
    return np.zeros(tangent.aval.shape, np.float32) if type(tangent) is Zero else tangent


add_any_p = Primitive("add_any", np.add, _elementwise)


def add_tangents(x, y):
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


jvp_rules = {}


class JVPTracer(Tracer):
    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self):
        return get_aval(self.primal)


class JVPTrace(Trace):
    def to_primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero(get_aval(x))

    def new_tracer(self, primal, tangent):
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def process_primitive(self, primitive, args, params):
        primals, tangents = zip(*map(self.to_primal_tangent, args), strict=True)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return primitive.bind(*primals, **params)
            primal_out, tangent_out = jvp_rules[primitive](primals, tangents, **params)
        return self.new_tracer(primal_out, tangent_out)


def jvp(fun, primals, tangents):
    """(api.py; the trace work is ad.jvp_flat) fun(*primals), and its derivative along
    `tangents`."""
    trace = JVPTrace(parent=_current_trace)
    with set_current_trace(trace):
        tracers = [trace.new_tracer(p, t) for p, t in zip(primals, tangents, strict=True)]
        primal_out, tangent_out = trace.to_primal_tangent(fun(*tracers))
    return primal_out, instantiate_zeros(tangent_out)


# A rule, `jvp_rules[p](primals, tangents, **params) -> (primal_out, tangent_out)`, gets at
# least one tangent that is not a Zero. Most rules come in a few shapes, with a helper of ad.py
# for each: `defjvp` takes one function per operand, `g(t, *primals)`, that operand's
# contribution to the output tangent; a linear primitive is its own JVP (`deflinear`).


def defjvp(primitive, *tangent_contributions):
    def rule(primals, tangents, **params):
        primal_out = primitive.bind(*primals, **params)
        pairs = zip(tangent_contributions, tangents, strict=True)
        terms = [g(t, *primals, **params) for g, t in pairs if type(t) is not Zero]
        return primal_out, functools.reduce(add_tangents, terms)

    jvp_rules[primitive] = rule


def deflinear(primitive):
    def rule(primals, tangents, **params):
        tangents = [instantiate_zeros(t) for t in tangents]
        return primitive.bind(*primals, **params), primitive.bind(*tangents, **params)

    jvp_rules[primitive] = rule


def broadcast_to_shape(x, shape):
    """(lax/standard.py) `x`, of rank 0 or with 1s where `shape` is larger, broadcast to it."""
    x_shape = get_aval(x).shape
    if x_shape == shape:
        return x
    return broadcast_in_dim(x, shape, range(len(shape)) if x_shape else ())


def _add_jvp(primals, tangents):
    """Linear, but a zero tangent is not instantiated: the other one is broadcast instead."""
    tx, ty = tangents
    out = add(*primals)
    if type(tx) is Zero:
        return out, broadcast_to_shape(ty, get_aval(out).shape)
    if type(ty) is Zero:
        return out, broadcast_to_shape(tx, get_aval(out).shape)
    return out, add(tx, ty)


defjvp(sin_p, lambda t, x: mul(t, cos(x)))
defjvp(cos_p, lambda t, x: neg(mul(t, sin(x))))
defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
jvp_rules[add_p] = _add_jvp
deflinear(neg_p)
deflinear(add_any_p)
deflinear(reduce_sum_p)
deflinear(broadcast_in_dim_p)
deflinear(transpose_p)

# The derivative of func1 along (0, 1), that is sum(3 cos(second)), and d²/dx² sin(x) = -sin(x)
# by nesting two JVP traces: the rules of the inner one run on the outer one.
x = np.linspace(0.0, 1.0, 8, dtype=np.float32)
ones = np.ones(8, np.float32)
print(jvp(func1, (first, second), (np.zeros(8, np.float32), ones))[1])  # 12.967255
print(jvp(lambda x: jvp(sin, (x,), (ones,))[1], (x,), (ones,))[1])  # [-0. -0.1424 ... -0.8415]

# --- Vectorization: the batch trace (interpreters/batching.py: BatchTracer, BatchTrace) ------
#
# vmap(f) computes f for each member of a batch at once. A BatchTracer holds a value with one
# extra axis, at position `batch_dim`. Binding a primitive on batch tracers runs its batching
# rule on the parent trace: ordinary primitives that compute all members together, and the
# position of the result's batch axis. A value that does not depend on the batched inputs stays
# unbatched (batch_dim None, never a tracer): what is computed from it alone runs once, on the
# parent, and is never broadcast along the batch.
#
#     vmap(sin)(xs)         batch_rules[sin_p]: sin of xs as it is, same batch_dim
#     vmap(add)(xs, y)      y unbatched: broadcast_in_dim y to a size-1 leading axis, then add


class BatchTracer(Tracer):
    def __init__(self, trace, val, batch_dim):
        self._trace, self.val, self.batch_dim = trace, val, batch_dim

    @property
    def aval(self):
        shape = list(get_aval(self.val).shape)
        del shape[self.batch_dim]
        return ShapedArray(shape)


class BatchTrace(Trace):
    def to_batch_info(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, None

    def new_tracer(self, val, batch_dim):
        return val if batch_dim is None else BatchTracer(self, val, batch_dim)

    def process_primitive(self, primitive, args, params):
        values, dims = zip(*map(self.to_batch_info, args), strict=True)
        with set_current_trace(self.parent):
            if all(d is None for d in dims):
                return primitive.bind(*values, **params)
            out, out_dim = batch_rules[primitive](values, dims, **params)
        return self.new_tracer(out, out_dim)


def vmap(fun, in_axes):
    """(api.py; the trace work is batching.vmap_flat) `fun` mapped over axis `in_axes[i]` of
    argument i (None: not mapped); the result's batch axis comes first."""

    def vmap_f(*args):
        size = next(
            get_aval(a).shape[d] for a, d in zip(args, in_axes, strict=True) if d is not None
        )
        trace = BatchTrace(parent=_current_trace)
        with set_current_trace(trace):
            out = fun(*[trace.new_tracer(a, d) for a, d in zip(args, in_axes, strict=True)])
        return batch_at_front(*trace.to_batch_info(out), size)

    return vmap_f


# The rules (`batch_rules[p](values, batch_dims, **params) -> (out, out_batch_dim)`) are built
# from two helpers of interpreters/batching.py that move a batch axis with ordinary primitives.
batch_rules = {}


def move_batch_dim(x, dim, to):
    if dim == to:
        return x
    permutation = [d for d in range(len(get_aval(x).shape)) if d != dim]
    permutation.insert(to, dim)
    return transpose(x, permutation)


def batch_at_front(x, dim, size):
    """`x` with its batch axis first; an unbatched `x` broadcast to `size` members."""
    if dim is None:
        shape = get_aval(x).shape
        return broadcast_in_dim(x, (size, *shape), range(1, len(shape) + 1))
    return move_batch_dim(x, dim, 0)


def vectorized_batch_rule(primitive):
    """For primitives that act on each element: apply as is, the batch axis stays put."""
    return lambda values, dims, **params: (primitive.bind(*values, **params), dims[0])


def broadcasting_batch_rule(primitive):
    """For elementwise primitives of several operands: batch axes first, unbatched operands
    given a size-1 leading axis (rank-0 ones left alone), so the primitive's own broadcasting
    lines them up."""

    def rule(values, dims, **params):
        ranks = [
            len(get_aval(v).shape) - (d is not None) for v, d in zip(values, dims, strict=True)
        ]
        operands = []
        for value, dim, rank in zip(values, dims, ranks, strict=True):
            if dim is None and rank:
                value = broadcast_in_dim(value, (1, *get_aval(value).shape), range(1, rank + 1))
            elif dim is not None:
                value = move_batch_dim(value, dim, 0)
                if rank < max(ranks):  # a batched scalar among arrays: (B,) -> (B, 1, ..., 1)
                    value = broadcast_in_dim(
                        value, (*get_aval(value).shape, *[1] * max(ranks)), (0,)
                    )
            operands.append(value)
        return primitive.bind(*operands, **params), 0

    return rule


def _reduce_sum_batch(values, dims, *, axes, out_sharding):
    """(reductions._reduction_batch_rule) The summed axes shift past the batch axis, which
    lands after the kept axes before it."""
    (x,), (dim,) = values, dims
    axes = [a + (a >= dim) for a in axes]
    return reduce_sum(x, axes), dim - sum(a < dim for a in axes)


def _broadcast_in_dim_batch(values, dims, *, shape, broadcast_dimensions):
    (x,), (dim,) = values, dims
    x = move_batch_dim(x, dim, 0)
    out_shape = (get_aval(x).shape[0], *shape)
    return broadcast_in_dim(x, out_shape, (0, *[d + 1 for d in broadcast_dimensions])), 0


def _transpose_batch(values, dims, *, permutation):
    (x,), (dim,) = values, dims
    return transpose(move_batch_dim(x, dim, 0), (0, *[p + 1 for p in permutation])), 0


batch_rules[sin_p] = vectorized_batch_rule(sin_p)
batch_rules[cos_p] = vectorized_batch_rule(cos_p)
batch_rules[neg_p] = vectorized_batch_rule(neg_p)
batch_rules[add_p] = broadcasting_batch_rule(add_p)
batch_rules[add_any_p] = broadcasting_batch_rule(add_any_p)
batch_rules[mul_p] = broadcasting_batch_rule(mul_p)
batch_rules[reduce_sum_p] = _reduce_sum_batch
batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
batch_rules[transpose_p] = _transpose_batch

# func1 over the columns of an 8x4 `first`, with one `second` for all: sin(second) is computed
# once, and the batch axis is moved to the front where the batched and unbatched values meet.
columns = np.arange(32, dtype=np.float32).reshape(8, 4)
print(vmap(func1, in_axes=(1, None))(columns, second))  # [132.1953 140.1953 148.1953 156.1953]
print(make_jaxpr(vmap(func1, in_axes=(1, None)))(columns, second))
# { lambda ; a:f32[8,4] b:f32[8]. let
#     c:f32[8] = sin b
#     d:f32[8] = mul c 3.0:f32[]
#     e:f32[4,8] = transpose[permutation=(1, 0)] a
#     f:f32[1,8] = broadcast_in_dim[broadcast_dimensions=(1,)] d
#     g:f32[4,8] = add e f
#     h:f32[4] = reduce_sum[axes=(1,) out_sharding=None] g
#   in (h,) }

# --- Linearize: the JVP, partially evaluated (interpreters/partial_eval.py) ------------------
#
# Reverse mode starts from forward mode. Run the JVP with known primals and *unknown* tangents
# under a PartialEvalTrace: a staging trace that stages only the equations reading an unknown
# value (one of its own tracers) and computes the others at once on its parent. A JVP rule
# computes primal and tangent together; the primal half reads known values only, so it runs
# now, while the tangent half is staged:
#
#     linearize(sin, x):   known:   y = sin x; c = cos x         (computed now)
#                          staged:  { lambda c; t. let u = mul t c in (u,) }
#
# The staged jaxpr is linear in its inputs, the tangents. The known values it reads (c above)
# are its constvars: the *residuals*, which reverse mode keeps from the forward pass for the
# backward one. (Control-flow primitives have `partial_eval_rules` that split their bodies
# into a known part and a staged part; here a primitive with an unknown operand is staged.)


class PartialEvalTrace(StagingTrace):
    def process_primitive(self, primitive, args, params):
        if any(isinstance(x, StagingTracer) and x._trace is self for x in args):
            return super().process_primitive(primitive, args, params)
        with set_current_trace(self.parent):
            return primitive.bind(*args, **params)


def linearize_flat(fun, primals):
    """fun(*primals), and the linear jaxpr from the input tangents to the output tangent with
    the values of its constvars, the residuals."""
    trace = PartialEvalTrace(parent=_current_trace)
    with set_current_trace(trace):
        tangents = [trace.new_arg(get_aval(p)) for p in primals]
        primal_out, tangent_out = jvp(fun, primals, tangents)
    linear_jaxpr, residuals = trace.to_jaxpr([tangent_out])
    return primal_out, linear_jaxpr, residuals


# func1 linearized: its one residual is cos(second) (a); the tangent of `first` (b) is added.
print(linearize_flat(func1, (first, second))[1])
# { lambda a:f32[8]; b:f32[8] c:f32[8]. let
#     d:f32[8] = mul c a
#     e:f32[8] = mul d 3.0:f32[]
#     f:f32[8] = add b e
#     g:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
#   in (g,) }

# --- Transposition: the backward pass (interpreters/transpose.py: UndefinedPrimal) -----------
#
# A linear function t -> A t has a transpose ct -> Aᵀ ct, and the transpose of the linearized
# function is the VJP: it pulls a cotangent of the output back to cotangents of the inputs.
# backward_pass transposes a linear jaxpr: it walks the equations backwards and hands the
# cotangent of each equation's output to its primitive's transpose rule, which returns the
# cotangents of the operands it is linear in; cotangents reaching one variable are summed (a
# tangent read twice gets two contributions). A rule receives those linear operands as
# UndefinedPrimal(aval), what is solved for, and the others, residuals and literals, as values:
#
#     u = mul t c      transposes to      ct_t = mul ct_u c
#
# Only linear primitives have transpose rules, `transpose_rules[p](ct, *operands, **params)
# -> [cotangent or None for each operand]` (the real registry sits in ad.py, beside jvp_rules). The rules bind primitives on the current trace, so
# a backward pass can itself be staged, batched or differentiated. (Every equation here reads
# a tangent; the real backward_pass also evaluates, first, those that read none.)

transpose_rules = {}


class UndefinedPrimal:
    def __init__(self, aval):
        self.aval = aval


def backward_pass(jaxpr, consts, cotangents_out):
    """The cotangents of the jaxpr's invars, given those of its outvars."""
    known = dict(zip(jaxpr.constvars, consts, strict=True))
    cotangents = {}

    def read_operand(atom):
        if isinstance(atom, Literal):
            return atom.val
        return known[atom] if atom in known else UndefinedPrimal(atom.aval)

    def add_cotangent(var, ct):
        if ct is None or isinstance(var, Literal) or var in known:
            return
        cotangents[var] = add_tangents(cotangents[var], ct) if var in cotangents else ct

    for var, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        add_cotangent(var, ct)
    for eqn in reversed(jaxpr.eqns):
        ct = cotangents.pop(eqn.outvar, None)
        if ct is None:  # the output does not reach the result: a zero cotangent, skipped
            continue
        operands = [read_operand(atom) for atom in eqn.invars]
        cts_in = transpose_rules[eqn.primitive](ct, *operands, **eqn.params)
        for atom, ct_in in zip(eqn.invars, cts_in, strict=True):
            add_cotangent(atom, ct_in)
    return [cotangents.pop(var, Zero(var.aval)) for var in jaxpr.invars]


def unbroadcast(aval, ct):
    """(lax/standard.py) `ct`, of an elementwise result's shape, summed down to an operand's
    `aval`: the transpose of the implicit broadcasting."""
    shape = get_aval(ct).shape
    if shape == aval.shape:
        return ct
    if not aval.shape:
        return reduce_sum(ct, range(len(shape)))
    axes = [i for i, (a, b) in enumerate(zip(aval.shape, shape, strict=True)) if a != b]
    kept = [i for i in range(len(shape)) if i not in axes]
    return broadcast_in_dim(reduce_sum(ct, axes), aval.shape, kept)


def _add_transpose(ct, x, y):
    return [unbroadcast(v.aval, ct) if type(v) is UndefinedPrimal else None for v in (x, y)]


def _mul_transpose(ct, x, y):
    if type(x) is UndefinedPrimal:
        return [unbroadcast(x.aval, mul(ct, y)), None]
    return [None, unbroadcast(y.aval, mul(x, ct))]


def _reduce_sum_transpose(ct, x, *, axes, out_sharding):
    shape = x.aval.shape
    return [broadcast_in_dim(ct, shape, [i for i in range(len(shape)) if i not in axes])]


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    """Sums over the axes the broadcast added or stretched, then gives back x's size-1 axes."""
    in_shape = x.aval.shape
    kept = [i for i, d in enumerate(broadcast_dimensions) if in_shape[i] == shape[d]]
    kept_out = [broadcast_dimensions[i] for i in kept]
    summed = reduce_sum(ct, [d for d in range(len(shape)) if d not in kept_out])
    return [summed if len(kept) == len(in_shape) else broadcast_in_dim(summed, in_shape, kept)]


def _transpose_transpose(ct, x, *, permutation):
    return [transpose(ct, [permutation.index(i) for i in range(len(permutation))])]


transpose_rules[neg_p] = lambda ct, x: [neg(ct)]
transpose_rules[add_p] = _add_transpose
transpose_rules[add_any_p] = _add_transpose
transpose_rules[mul_p] = _mul_transpose
transpose_rules[reduce_sum_p] = _reduce_sum_transpose
transpose_rules[broadcast_in_dim_p] = _broadcast_in_dim_transpose
transpose_rules[transpose_p] = _transpose_transpose

# --- vjp and grad (api.py) -------------------------------------------------------------------
#
# Reverse mode, put together: linearize (the forward pass, once), then transpose the linear
# jaxpr (the backward pass, reading the residuals). grad is the VJP of a function with a scalar
# result, pulling back the cotangent 1.


def vjp(fun, *primals):
    """fun(*primals), and the function pulling an output cotangent back to the inputs."""
    primal_out, linear_jaxpr, residuals = linearize_flat(fun, primals)

    def f_vjp(cotangent):
        cotangents = backward_pass(linear_jaxpr, residuals, [cotangent])
        return tuple(instantiate_zeros(ct) for ct in cotangents)

    return primal_out, f_vjp


def grad(fun, argnums=0):
    """The gradient of a scalar `fun` with respect to its argument `argnums`."""

    def grad_f(*args):
        def partial_fun(arg):
            return fun(*args[:argnums], arg, *args[argnums + 1 :])

        _, f_vjp = vjp(partial_fun, args[argnums])
        return f_vjp(np.float32(1.0))[0]

    return grad_f


# The gradient of func1 with respect to `second`, 3 cos(second); per-example gradients, vmap of
# grad, one for each of the four columns; and the second derivative of sin as grad of grad.
print(grad(func1, argnums=1)(first, second))  # [1.6209 1.6209 ... 1.6209]
print(vmap(grad(func1, argnums=1), in_axes=(None, 1))(first, columns))  # 4x8
print(grad(grad(sin))(np.float32(0.5)))  # -sin(0.5) = -0.47942555
