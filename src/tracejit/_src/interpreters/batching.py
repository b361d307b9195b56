"""Vectorization: the batching trace behind `vmap`.

A `BatchTracer` carries a value with one extra axis, the batch dimension (`batch_dim`, or None
for a value that does not depend on the batched inputs). Binding a primitive on batch tracers
runs the primitive's batching rule on the parent trace, which computes all batch members at
once with ordinary primitives:

    vmap(sin)(xs)           batch_rules[sin_p]: sin applied to xs as it is, same batch dim
    vmap(dot)(xs, w)        one dot_general with the batch dimension kept as a free dimension

Unbatched values stay unbatched: an operation whose operands are all unbatched runs once, on
the parent trace, and is never broadcast.

Rules (registered in each primitive's block, `lax/<family>.py`):

- `batch_rules[p](values, batch_dims, **params) -> (out, out_batch_dim)` (lists for
  `multiple_results` primitives); a batch dim is an int or None (not batched); at least one
  operand is batched. `move_batch_dim` and `batch_at_front` below line batch dimensions up;
  helpers that build rules from lax operations live in `lax/standard.py`.
- Primitives with bodies (control flow) are also listed in `axis_rules`: their rules receive
  the trace's `axis_size` and `axis_name` as keyword arguments, so that collectives inside
  the bodies find their named axis; under a named axis they run even when no operand is
  batched (a `psum` in the body still sums over the axis).
- A primitive without operands has nothing to batch: it declares `no_batched_operands` instead
  of a rule.
"""

from __future__ import annotations

from tracejit._src import core
from tracejit._src.core import (
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    current_trace,
    get_aval,
    new_trace,
    set_current_trace,
    shape_of,
)
from tracejit._src.interpreters import structural
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr

batch_rules: dict[Primitive, object] = {}
core.rule_registries["batching"] = batch_rules

# Collectives over named axes (`lax/parallel.py`): the batch trace mapping the named axis
# carries them out, `collective_rules[p](trace, *(value, batch_dim) pairs, **params)`.
collective_rules: dict[Primitive, object] = {}
core.rule_registries["collective"] = collective_rules

operandless: dict[Primitive, str] = {}
core.declarations["no batched operands"] = operandless


def no_batched_operands(primitive: Primitive) -> None:
    """Declares that `primitive` takes no operands (`iota`), so that vmap never binds it on
    batched values: it needs no batching rule."""
    operandless[primitive] = "it takes none"


axis_rules: set[Primitive] = set()


def _names_in(params) -> tuple:
    axes = params.get("axes", params.get("axis_name"))
    return axes if isinstance(axes, tuple) else (axes,)


def bound_axis_size(axis_name) -> int:
    """The size of the named axis that an enclosing vmap maps, for staging a collective (in a
    control-flow body, say) before that vmap carries it out, or that an enclosing staging
    trace was given in its axis environment (`make_jaxpr(axis_env=...)`); NameError if none."""
    trace = current_trace()
    while trace is not None:
        if isinstance(trace, BatchTrace) and trace.axis_name == axis_name:
            return trace.axis_size
        sizes = getattr(trace, "axis_sizes", None)
        if sizes and axis_name in sizes:
            return sizes[axis_name]
        trace = trace.parent
    raise NameError(f"unbound axis name: {axis_name}")


class BatchTracer(Tracer):
    __slots__ = ("batch_dim", "val")

    def __init__(self, trace: BatchTrace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.batch_dim is None:
            return aval
        shape = aval.shape[: self.batch_dim] + aval.shape[self.batch_dim + 1 :]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def to_concrete_value(self):
        return None

    def __repr__(self):  # as JAX 0.10.2 shows its vmap tracers
        batched = get_aval(self.val).str_short(short_dtypes=False)
        return f"VmapTracer(aval={self.aval.str_short(short_dtypes=False)}, batched={batched})"


class BatchTrace(Trace):
    checks_leaks = True

    def __init__(self, parent: Trace, axis_size: int, axis_name=None):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def to_batch_info(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, None

    def process_primitive(self, primitive, args, params):
        values, dims = zip(*map(self.to_batch_info, args)) if args else ((), ())
        if primitive in collective_rules and self.axis_name in _names_in(params):
            with set_current_trace(self.parent):
                pairs = [x for pair in zip(values, dims, strict=True) for x in pair]
                out, out_dim = collective_rules[primitive](self, *pairs, **params)
            return self.new_tracer(out, out_dim)
        named_body = primitive in axis_rules and self.axis_name is not None
        if all(d is None for d in dims) and not named_body:
            with set_current_trace(self.parent):
                return primitive.bind(*values, **params)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"[vmap] batching rule for '{primitive.name}' is not implemented"
            )
        if primitive in axis_rules:
            params = dict(params, axis_size=self.axis_size, axis_name=self.axis_name)
        with set_current_trace(self.parent):
            out, out_dims = rule(values, dims, **params)
        if primitive.multiple_results:
            return [self.new_tracer(v, d) for v, d in zip(out, out_dims, strict=True)]
        return self.new_tracer(out, out_dims)

    def process_custom_jvp_call(self, primitive, call, args):
        return primitive.batch_call(self, call, args)

    def process_custom_vjp_call(self, primitive, call, args):
        return primitive.batch_call(self, call, args)

    def new_tracer(self, value, batch_dim):
        return value if batch_dim is None else BatchTracer(self, value, batch_dim)

    def describe(self):
        return "while vectorizing (vmap)"


# --------------------------------------------------------------------------------------------
# Lining batch dimensions up


def move_batch_dim(x, dim: int, to: int):
    """`x` with its axis `dim` moved to position `to`."""
    if dim == to:
        return x
    perm = [d for d in range(len(shape_of(x))) if d != dim]
    perm.insert(to, dim)
    return structural.transpose(x, tuple(perm))


def batch_at_front(x, dim, size: int):
    """`x` with its batch dimension first; an unbatched `x` is broadcast to `size` members."""
    if dim is None:
        shape = tuple(shape_of(x))
        return structural.broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
    return move_batch_dim(x, dim, 0)


# --------------------------------------------------------------------------------------------
# Entry points


def vmap_flat(fun, args, in_dims, axis_size: int, axis_name=None):
    """Runs `fun(*tracers) -> list` with `args` batched along `in_dims` (None: not batched);
    returns the outputs and their batch dimensions (None: the output is not batched)."""
    trace = BatchTrace(current_trace(), axis_size, axis_name)
    with new_trace(trace):
        tracers = [trace.new_tracer(x, d) for x, d in zip(args, in_dims, strict=True)]
        outs = fun(*tracers)
        infos = [trace.to_batch_info(o) for o in outs]
    return [v for v, _ in infos], [d for _, d in infos]


def batch_jaxpr(closed, axis_size: int, in_dims, instantiate, axis_name=None):
    """A jaxpr computing `closed` for all `axis_size` batch members at once, as a jaxpr: each
    input batched along its entry of `in_dims` (None: not batched); each output batched at the
    front if it depends on a batched input or `instantiate` (a list of bools) asks for it.
    Returns (batched jaxpr, out_batched). Control-flow rules use it on their bodies."""
    avals = []
    for aval, dim in zip(closed.in_avals, in_dims, strict=True):
        if dim is not None:
            shape = list(aval.shape)
            shape.insert(dim, axis_size)
            aval = ShapedArray(shape, aval.dtype, aval.weak_type)
        avals.append(aval)
    found = {}

    def batched_fun(*args):
        outs, out_dims = vmap_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
            list(args),
            list(in_dims),
            axis_size,
            axis_name,
        )
        out_batched = [d is not None or inst for d, inst in zip(out_dims, instantiate, strict=True)]
        found["out_batched"] = out_batched
        return [
            batch_at_front(o, d, axis_size) if b else o
            for o, d, b in zip(outs, out_dims, out_batched, strict=True)
        ]

    jaxpr = trace_to_jaxpr(batched_fun, avals, DebugInfo(batched_fun, "vmap"))
    return jaxpr, found["out_batched"]
