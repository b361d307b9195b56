"""Lowering: a jaxpr interpreter that emits StableHLO instead of computing.

`lower_jaxpr_to_module` walks a closed jaxpr's equations in order and asks each primitive's
lowering rule to emit the StableHLO operations computing it from the values of its operands:

    lowering_rules[sin_p] = lambda ctx, x: ctx.op("stablehlo.sine", [x])

Rules (registered in each primitive's block, `lax/<family>.py`):

- `lowering_rules[p](ctx, *operands, **params) -> Value | list[Value]`: operands are
  `stablehlo.Value`s; `ctx.avals_in`/`ctx.avals_out` give the jaxpr types; `ctx.op(name,
  operands, attributes=..., regions=...)` emits an operation whose result types default to
  those of `ctx.avals_out`; `ctx.block` is the builder for anything else (constants, regions,
  the typed helpers `compare`, `convert`, `full_like`, which work in any region too);
  `ctx.lower_sub_jaxpr(block, closed_jaxpr, args)` lowers a nested jaxpr into a region.

A primitive that never reaches lowering declares it with `never_lowered` instead of a rule.

A module's `main` leaves out the equations no output depends on (`live_equations`); a
primitive whose equations must run anyway sets `has_side_effects = True`.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes, runtime  # (names resolved on first use: no cffi at import)
from tracejit._src.core import Primitive, ShapedArray, declarations, rule_registries
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, live_equations
from tracejit._src.lowering import stablehlo as hlo


def unsupported_operation(message: str) -> NotImplementedError:
    """The error of what neither compiled code nor NumPy evaluation can do (a dtype no routine
    takes): `jit` raises it, where a lowering rule's other NotImplementedErrors (a case it
    lacks) make it evaluate the jaxpr with NumPy instead (`falls_back_to_numpy`). JAX's class,
    NotImplementedError, marked."""
    error = NotImplementedError(message)
    error.unsupported_operation = True
    return error


def falls_back_to_numpy(error: NotImplementedError) -> bool:
    return not getattr(error, "unsupported_operation", False)


lowering_rules: dict[Primitive, object] = {}
never_lowered_reasons: dict[Primitive, str] = {}
rule_registries["lowering"] = lowering_rules
declarations["never lowered"] = never_lowered_reasons


def never_lowered(primitive: Primitive, reason: str) -> None:
    """Declares that no jaxpr being lowered holds `primitive` (`reason` says why), in place of
    a lowering rule."""
    never_lowered_reasons[primitive] = reason


# Typed PRNG keys are their uint32 words in StableHLO (`aval_type`). The rules of the key
# primitives take words (they declare it with `takes_key_words`), and so do primitives with
# jaxpr bodies (control flow, calls), which only pass values through. Any other primitive that
# meets keys (slice, gather, select_n, concatenate, ...) knows only NumPy dtypes: `_src/prng.py`
# hands down `key_words_rule[0]`, which lowers it as the same operation on each word.
key_words_primitives: set[Primitive] = set()
key_words_rule: list = []


def takes_key_words(primitive: Primitive) -> None:
    key_words_primitives.add(primitive)


def _rule_for(eqn):
    rule = lowering_rules.get(eqn.primitive)
    if rule is None or eqn.primitive in key_words_primitives or _has_body(eqn):
        return rule
    avals = [a.aval for a in eqn.invars] + [v.aval for v in eqn.outvars]
    if all(a.dtype != dtypes.key_fry for a in avals):
        return rule
    return lambda ctx, *operands, **params: key_words_rule[0](ctx, eqn.primitive, operands, params)


def _has_body(eqn) -> bool:
    for param in eqn.params.values():
        items = param if isinstance(param, tuple) else (param,)
        if any(isinstance(item, (ClosedJaxpr, Jaxpr)) for item in items):
            return True
    return False


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The array XLA holds for a value of `aval`: a typed PRNG key array is its uint32 words."""
    if aval.dtype == dtypes.key_fry:
        return ShapedArray((*aval.shape, 2), np.dtype(np.uint32))
    return aval


def physical_constant(value, dtype) -> np.ndarray:
    """A constant as XLA holds it: a typed PRNG key array as its uint32 words."""
    array = np.asarray(value, dtype)
    return array["fry"] if array.dtype == dtypes.key_fry else array


def aval_type(aval: ShapedArray) -> str:
    physical = physical_aval(aval)
    return hlo.tensor_type(physical.shape, physical.dtype)


class LoweringContext:
    """What a lowering rule sees of the equation it lowers."""

    __slots__ = ("avals_in", "avals_out", "block", "eqn", "module")

    def __init__(self, block, avals_in, avals_out, module, eqn):
        self.block = block
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.module = module
        self.eqn = eqn

    def op(self, name, operands, attributes=None, regions=(), result_avals=None):
        """Emits one operation; returns its single result, or the list of several."""
        results = self.op_results(name, operands, attributes, regions, result_avals)
        return results[0] if len(results) == 1 else results

    def op_results(self, name, operands, attributes=None, regions=(), result_avals=None):
        """Emits one operation; returns the list of its results, however many."""
        avals = self.avals_out if result_avals is None else result_avals
        return self.block.op(name, operands, [aval_type(a) for a in avals], attributes, regions)

    def constant(self, value, dtype) -> hlo.Value:
        return self.block.constant(physical_constant(value, dtype))

    def broadcast_operands(self, *operands) -> list:
        """The operands of an elementwise primitive broadcast to its result's shape (lax
        broadcasts rank-0 and size-1 operands implicitly; StableHLO does not)."""
        shape = self.avals_out[0].shape
        return [
            x if aval.shape == shape else self.broadcast(x, aval, shape)
            for x, aval in zip(operands, self.avals_in, strict=True)
        ]

    def broadcast(self, x, aval, shape) -> hlo.Value:
        """`x` (rank 0, or of equal rank with 1s) broadcast to `shape`."""
        dims = list(range(len(shape))) if aval.shape else []
        return self.block.op1(
            "stablehlo.broadcast_in_dim",
            [x],
            hlo.tensor_type(shape, aval.dtype),
            {"broadcast_dimensions": hlo.i64_array(dims)},
        )

    def reduce(self, x, combiner: str, init, axes) -> hlo.Value:
        """`stablehlo.reduce` of `x` over `axes` with the binary op `combiner` from `init`."""
        aval = self.avals_in[0]
        scalar = hlo.tensor_type((), aval.dtype)
        region = self.block.region([scalar, scalar])
        (combined,) = region.op(combiner, region.args, [scalar])
        region.ret([combined])
        init_value = self.constant(init, aval.dtype)
        return self.op(
            "stablehlo.reduce",
            [x, init_value],
            attributes={"dimensions": hlo.i64_array(axes)},
            regions=[region],
        )

    def host_callback(
        self, function, operands, name: str, *, has_side_effect: bool, result_avals=None
    ):
        """Emits a `stablehlo.custom_call` that calls the Python `function` on the host (see
        `runtime/ffi.py`): it receives NumPy views of `operands` and returns one array per
        result aval (default: `ctx.avals_out`). The module keeps the registration alive; the
        executable compiled from it must take it over (`lower_jaxpr_to_module`'s `callbacks`)."""
        avals = self.avals_out if result_avals is None else result_avals
        callback = runtime.HostCallback(
            function,
            [physical_aval(a) for a in avals],
            name,
            operand_avals=[physical_aval(a) for a in self.avals_in],
        )
        self.module.keep_alive.append(callback)
        attributes = runtime.custom_call_attributes(callback, has_side_effect)
        return self.op_results("stablehlo.custom_call", operands, attributes, result_avals=avals)

    def lower_sub_jaxpr(self, block, closed: ClosedJaxpr, args):
        """Lowers a nested jaxpr (a call's body, a region of control flow) into `block`; the
        operation emitted next keeps this equation's location."""
        location = self.block.function.location
        try:
            return lower_jaxpr(block, closed.jaxpr, closed.consts, args, self.module)
        finally:
            self.block.function.location = location


class LoweringError(Exception):
    """A primitive could not be lowered; names the primitive and the user's source line."""


class RefusedProgram(Exception):
    """Mixed into the error a lowering rule raises for a program the user may not compile
    (a `check` that checkify did not functionalize): it reaches the user unwrapped, with the
    class JAX raises."""


def lower_jaxpr(block, jaxpr: Jaxpr, consts, args, module, live=None) -> list:
    """Emits `jaxpr` into `block`, reading its invars from `args` (Values); returns the Values
    of its outvars. `live` (a bool per equation, see `live_equations`) skips dead equations.
    A constant is emitted where it is first read."""
    env = {}
    pending_consts = dict(zip(jaxpr.constvars, consts, strict=True))

    def read(atom):
        if isinstance(atom, Literal):
            return block.constant(physical_constant(atom.val, atom.aval.dtype))
        value = env.get(atom)
        if value is None:
            constant = physical_constant(pending_consts[atom], atom.aval.dtype)
            value = env[atom] = block.constant(constant)
        return value

    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for k, eqn in enumerate(jaxpr.eqns):
        if live is not None and not live[k]:
            continue
        rule = _rule_for(eqn)
        where = f" (from {eqn.source_info})" if eqn.source_info else ""
        if rule is None:
            raise NotImplementedError(
                f"[lowering] primitive '{eqn.primitive.name}' has no StableHLO lowering rule{where}"
            )
        ctx = LoweringContext(
            block, [a.aval for a in eqn.invars], [v.aval for v in eqn.outvars], module, eqn
        )
        # XLA's error messages quote the location of the failing operation: the primitive
        # and the user's line that staged it.
        block.function.location = f"{eqn.primitive.name}{where}"
        try:
            out = rule(ctx, *map(read, eqn.invars), **eqn.params)
        except (NotImplementedError, RefusedProgram):
            raise
        except Exception as err:
            raise LoweringError(
                f"[lowering] could not lower '{eqn.primitive.name}'{where}: {err}"
            ) from err
        outs = out if eqn.primitive.multiple_results else [out]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    return [read(atom) for atom in jaxpr.outvars]


def lower_jaxpr_to_module(
    closed: ClosedJaxpr,
    name: str = "jit_fun",
    num_replicas: int = 1,
    *,
    kept_inputs=None,
    aliases=None,
    callbacks: list | None = None,
    replica_axes=(),
    process_span=None,
    num_partitions: int = 1,
    arg_shardings=None,
    result_shardings=None,
):
    """The StableHLO module text of a closed jaxpr, as a `main` function of its inputs.
    Its constants are embedded in the module.

    `kept_inputs` (indices of the jaxpr's inputs; default all) are `main`'s parameters: an
    input the jaxpr never reads may be left out, so that calls need not pass it. `aliases`
    maps a parameter's index (among the kept) to the output that may reuse its buffer: the
    `tf.aliasing_output` attribute, through which XLA honours buffer donation.

    A program partitioned by XLA over `num_partitions` devices gives the HLO sharding
    (`sharding.hlo_sharding`) of each kept parameter in `arg_shardings` and of each result in
    `result_shardings` (`mhlo.sharding` attributes; a result's None leaves it to XLA).

    `replica_axes`, ((name, size), ...), names the axes of a program run as that many replicas
    (`num_replicas` is their product): its collectives over those names exchange data between
    replicas. `process_span` (see `distributed.ProcessSpan`) says that the members of one of
    them span several processes, of which the replicas are this process's share.

    Host callbacks the module calls are appended to `callbacks`: the executable compiled from
    the text must keep them (their registration ends when the last reference goes). Without a
    list they end with this call, and the text is for reading, not for running.
    """
    jaxpr = closed.jaxpr
    invars = jaxpr.invars
    kept = range(len(invars)) if kept_inputs is None else kept_inputs
    module = hlo.Module(_module_name(name), num_replicas, num_partitions)
    module.replica_axes = tuple(replica_axes)
    module.process_span = process_span
    main = module.function(
        "main", [aval_type(invars[i].aval) for i in kept], [aval_type(a) for a in closed.out_avals]
    )
    for parameter, output in (aliases or {}).items():
        main.arg_attributes[parameter] = {"tf.aliasing_output": f"{output} : i32"}
    for parameter, sharding in enumerate(arg_shardings or ()):
        main.arg_attributes.setdefault(parameter, {})["mhlo.sharding"] = f'"{sharding}"'
    for result, sharding in enumerate(result_shardings or ()):
        if sharding is not None:  # (None: the partitioner chooses)
            main.result_attributes[result] = {"mhlo.sharding": f'"{sharding}"'}
    args = [None] * len(invars)  # a left-out input is never read (only dead equations may)
    for i, value in zip(kept, main.body.args, strict=True):
        args[i] = value
    live, _ = live_equations(jaxpr)
    outs = lower_jaxpr(main.body, jaxpr, closed.consts, args, module, live)
    main.body.ret(outs, op_name="func.return")
    if callbacks is not None:
        callbacks.extend(module.keep_alive)
    return module.text()


def _module_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"jit_{cleaned}"
