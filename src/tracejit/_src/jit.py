"""`jit`: trace once per signature, compile with XLA, call the compiled program.

`jit(f)(*args)` looks up its *trace cache* with the call's monomorphic signature (the argument
pytree's structure, each leaf's shape/dtype/weak type, the static arguments' values). On a
miss it stages `f` into a closed jaxpr. Either way it binds the `jit` call primitive with that
jaxpr, and the current trace decides what a call means:

- eagerly, the jaxpr is lowered to StableHLO, compiled by XLA through PJRT (once per
  signature: the function keeps the program with the trace, and both die with it) and executed
  (`dispatch.py`);
- staging records one `jit[name=f jaxpr={ ... }]` equation: jit nests;
- the JVP trace differentiates the jaxpr into a new one and binds `jit` again, so
  `jvp(jit(f))` stays compiled; partial evaluation inlines the jaxpr, computing what is known.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import warnings
import weakref

from tracejit._src import core, dispatch, monitoring, spmd, transfer_guard
from tracejit._src.accel import accel
from tracejit._src.api_util import (
    abstractify_arguments,
    argnums_and_argnames,
    fun_name,
    normalize_argnums,
)
from tracejit._src.array import Array, DeviceArray, ShardedArray
from tracejit._src.config import config
from tracejit._src.core import Primitive, current_trace, set_current_trace
from tracejit._src.interpreters import ad, batching, partial_eval, transpose
from tracejit._src.interpreters import eval as eval_module
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.sharding import Sharding
from tracejit._src.stages import Lowered, Signature, Traced, compiler_options_key
from tracejit._src.tree_util import (
    flatten_function,
    tree_flatten,
    tree_structure,
    tree_unflatten,
)

logger = logging.getLogger("tracejit")

# --- the call primitive -----------------------------------------------------------------------


class JitPrimitive(Primitive):
    call_jaxpr_param = "jaxpr"

    def bind(self, *args, jaxpr, name):
        trace = current_trace()
        if type(trace) is EvalTrace:  # run the compiled program; its outputs are Arrays already
            return dispatch.run_jaxpr(jaxpr, name, args)
        return trace.process_primitive(self, args, {"jaxpr": jaxpr, "name": name})


jit_p = JitPrimitive("jit", multiple_results=True)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr, name):
    return jaxpr.out_avals


@jit_p.def_impl
def _jit_impl(*args, jaxpr, name):
    return dispatch.run_jaxpr(jaxpr, name, args)


def _jit_jvp(primals, tangents, *, jaxpr, name):
    """A call of the body's JVP: `jvp(jit(f))` stays one compiled program."""

    def bind_call(jvp_bodies, nonzero_tangents):
        return jit_p.bind(*primals, *nonzero_tangents, jaxpr=jvp_bodies[0], name=name)

    return ad.call_jvp(bind_call, [jaxpr], primals, tangents)


ad.jvp_rules[jit_p] = _jit_jvp
ad.mark_linear(jit_p)  # in the operands its body is linear in


def _jit_partial_eval(trace, args, unknowns, *, jaxpr, name):
    """Two calls: a known one, run now, computing the known outputs and the residuals, and a
    staged one of the rest reading them, so that `grad(jit(f))` runs its forward pass (and,
    transposed, its backward pass) compiled. Residuals that are known inputs are not copied
    out of the known call."""
    (split,) = partial_eval.split_call([jaxpr], unknowns)
    num_known_outs = len(split.out_unknowns) - sum(split.out_unknowns)
    computed = [r for r, source in enumerate(split.forwarded) if source is None]
    known = split.known.jaxpr
    outvars = known.outvars[:num_known_outs] + [known.outvars[num_known_outs + r] for r in computed]
    known_jaxpr = ClosedJaxpr(
        Jaxpr(known.constvars, known.invars, outvars, known.eqns), split.known.consts
    )
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_outs = jit_p.bind(*known_args, jaxpr=known_jaxpr, name=name)
    computed_residuals = iter(known_outs[num_known_outs:])
    residuals = [
        next(computed_residuals) if source is None else known_args[source]
        for source in split.forwarded
    ]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    staged = iter(
        trace.stage(jit_p, [*residuals, *unknown_args], {"jaxpr": split.unknown, "name": name})
    )
    known_iter = iter(known_outs[:num_known_outs])
    return [next(staged) if u else next(known_iter) for u in split.out_unknowns]


partial_eval.partial_eval_rules[jit_p] = _jit_partial_eval


def _jit_transpose(cts, *args, jaxpr, name):
    """A call of the transposed body: the backward pass of `grad(jit(f))` is compiled too."""
    body, operands = transpose.transposed_call_body(jaxpr, cts, args)
    return transpose.call_cotangents(jit_p.bind(*operands, jaxpr=body, name=name), args)


ad.transpose_rules[jit_p] = _jit_transpose


def _jit_batch(values, dims, *, jaxpr, name, axis_size, axis_name):
    """The vmap of a call is a call of the vmapped body: `vmap(jit(f))` stays one compiled
    program. Every output comes back batched at the front."""
    batched, _ = batching.batch_jaxpr(
        jaxpr, axis_size, list(dims), [True] * len(jaxpr.out_avals), axis_name=axis_name
    )
    outs = jit_p.bind(*values, jaxpr=batched, name=name)
    return outs, [0] * len(outs)


batching.axis_rules.add(jit_p)
batching.batch_rules[jit_p] = _jit_batch


def _jit_lowering(ctx, *args, jaxpr, name):
    """A nested jit is inlined into the enclosing module: XLA sees one program."""
    return ctx.lower_sub_jaxpr(ctx.block, jaxpr, args)


lowering_rules[jit_p] = _jit_lowering
jit_p.params_to_print = lambda params: {"name": params["name"], "jaxpr": params["jaxpr"]}

# --- the API ----------------------------------------------------------------------------------


_jitted_functions = weakref.WeakSet()  # every live jitted function, for `clear_caches`


def clear_trace_caches() -> None:
    """Empties the trace caches of every jitted function (`tracejit.clear_caches`)."""
    for jitted in list(_jitted_functions):
        jitted.clear_cache()


class PjitFunction:
    """A jitted function: callable, with `.lower(*args)` for the StableHLO and compiled forms.
    Named and printed as JAX's type of jitted functions, which libraries recognize by name
    (chex refuses `assert_max_traces` over an already jitted function)."""

    warns_of_retraces = True  # (not tracejit's own: see `library_jit`)
    compiles_eagerly = True

    def __init__(
        self,
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        inline=False,
        in_shardings=None,
        out_shardings=None,
        compiler_options=None,
    ):
        functools.update_wrapper(self, fun)
        # pytree prefixes of the dynamic arguments and of the outputs (None: unspecified)
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.fun = fun
        static_nums, static_names = argnums_and_argnames(
            fun, static_argnums, static_argnames, "static"
        )
        self.static_argnums, self.static_argnames = tuple(sorted(static_nums)), static_names
        self.donate_argnums, self.donate_argnames = argnums_and_argnames(
            fun, donate_argnums, donate_argnames, "donate"
        )
        if static_names & self.donate_argnames:
            raise ValueError(
                "static_argnames and donate_argnames cannot intersect. Argument names "
                f"{set(static_names & self.donate_argnames)} appear in both static_argnames and "
                "donate_argnames"
            )
        self.keep_unused = bool(keep_unused)
        self.inline = bool(inline)
        self.compiler_options = compiler_options_key(compiler_options)
        self.name = fun_name(fun)
        if not hasattr(fun, "__name__"):  # (a partial, a callable object: named as JAX does)
            self.__name__ = self.__qualname__ = self.name
        # The function's traces and programs: freed with it, and bounded as the process-wide
        # compile caches are (`tracejit_compile_cache_size`).
        self._cache = dispatch.LRUCache()  # signature -> CacheEntry
        # The hot path's index: `_arrays_signature` -> CacheEntry with its program. Read with
        # one dict lookup, so kept in bounds by emptying it when full (calls then refill it).
        self._compiled: dict = {}
        self._context = config.trace_context  # the trace context `_compiled` was filled in
        # The C accelerator's call of the signature called last (`accel.FastCall`), tried
        # before anything else; None without the accelerator or before a compiled call.
        self._fast = None
        self._last_key = None
        _jitted_functions.add(self)

    def clear_cache(self) -> None:
        """Forgets this function's traces and programs: the next call traces again."""
        self._cache.clear()
        self._compiled.clear()
        self._fast = None
        self._last_key = None

    def _split(self, args, kwargs):
        static = set(normalize_argnums(self.static_argnums, len(args)))
        static_kwargs = {k: v for k, v in kwargs.items() if k in self.static_argnames}
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        dynamic = [a for i, a in enumerate(args) if i not in static]
        static_values = tuple((i, args[i]) for i in sorted(static))
        return static, static_values, static_kwargs, dynamic, dynamic_kwargs

    def _trace(self, args, kwargs):
        """(cache entry, flat dynamic arguments) for this call's signature: the entry holds the
        closed jaxpr, the output tree and, once compiled, the program."""
        context = config.trace_context  # x64, PRNG counters: they change the trace too
        if not kwargs and not self.static_argnums:  # the common case, kept short
            leaves, in_tree = tree_flatten(args)
            key = (in_tree, tuple(map(_leaf_signature, leaves)), context)
            entry = self._cache.get(key)
            if entry is None:
                entry = self._trace_new_signature(
                    key, args, (), {}, leaves, in_tree, positional_only=True
                )
                if not entry.closure:
                    self._cache[key] = entry
            return entry, leaves
        static, static_values, static_kwargs, dynamic, dynamic_kwargs = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dynamic, dynamic_kwargs))
        try:
            signature = tuple(map(_leaf_signature, leaves))
            static_items = tuple(sorted(static_kwargs.items()))
            hash((static_values, static_items))  # (the cache may not hash a key it lacks)
            key = (in_tree, signature, static_values, static_items, context)
            entry = self._cache.get(key)
        except TypeError as err:
            raise ValueError(
                f"Non-hashable static arguments are not supported: jit of {self.name} got {err}"
            ) from None
        if entry is None:
            entry = self._trace_new_signature(key, args, static, static_kwargs, leaves, in_tree)
            if not entry.closure:
                self._cache[key] = entry
        return entry, leaves

    def _trace_new_signature(
        self, key, args, static, static_kwargs, leaves, in_tree, positional_only=False
    ):
        self._explain_miss(key)
        if config.no_tracing:
            code = getattr(self.fun, "__code__", None)
            where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
            raise RuntimeError(
                f"re-tracing function {self.name}{where} for `jit`, but 'no_tracing' is set"
            )
        # (static arguments given as `()`, which has no leaves, so that errors name the path)
        kwargs = {} if positional_only else tree_unflatten(in_tree, leaves)[1]
        arg_paths = [() if i in static else a for i, a in enumerate(args)]
        avals = abstractify_arguments(self.fun, leaves, arg_paths, kwargs)
        out_trees = []

        def flat_fun(*flat_args):
            if positional_only:
                dyn, kw = tree_unflatten(in_tree, flat_args), {}
            else:
                dyn, kw = tree_unflatten(in_tree, flat_args)
            dyn = iter(dyn)
            full = [args[i] if i in static else next(dyn) for i in range(len(args))]
            out = self.fun(*full, **kw, **static_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        with monitoring.timed(monitoring.JAXPR_TRACE_DURATION, fun_name=self.name):
            closed = trace_to_jaxpr(flat_fun, avals, DebugInfo(self.fun, "jit"))
        donated = self._donated_leaves(args, static, in_tree, positional_only)
        closed, closure = hoist_tracer_consts(closed)
        return CacheEntry(closed, out_trees[0], donated, closure)

    def _donated_leaves(self, args, static, in_tree, positional_only) -> tuple | None:
        """Whether each flat argument is donated; None when none is."""
        if not self.donate_argnums and not self.donate_argnames:
            return None
        nums, names = self.donate_argnums, self.donate_argnames
        flags = []
        dynamic = [i for i in range(len(args)) if i not in static]
        if positional_only:
            positional, keywords = in_tree.children(), None
        else:
            positional, keywords = in_tree.children()
            positional = positional.children()
        for i, subtree in zip(dynamic, positional, strict=True):
            flags += [i in nums] * subtree.num_leaves
        if keywords is not None and keywords.num_leaves:
            _, keys = keywords.node_data()
            for key, subtree in zip(keys, keywords.children(), strict=True):
                flags += [key in names] * subtree.num_leaves
        return tuple(flags) if any(flags) else None

    def _explain_miss(self, key):
        """Logs compiles when asked; warns once when a function keeps being retraced."""
        reason = _miss_reason(key, self._last_key)
        self._last_key = key
        if config.log_compiles or config.explain_cache_misses:
            logger.warning("Compiling %s (%s)", self.name, reason)
        if self.warns_of_retraces and len(self._cache) + 1 == RETRACE_WARNING_THRESHOLD:
            code = getattr(self.fun, "__code__", None)
            where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
            warnings.warn(
                f"jit-compiled function {self.name}{where} has been traced for "
                f"{RETRACE_WARNING_THRESHOLD} distinct signatures; the latest change: {reason}. "
                "Each new signature traces and compiles again: keep shapes, dtypes and static "
                "arguments stable (or pad shapes) to reuse compiled code.",
                RuntimeWarning,
                stacklevel=4,
            )

    def __repr__(self):
        return f"<PjitFunction of {self.fun!r}>"

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs:  # the steady call, in C (or NotImplemented)
            outs = fast(args)
            if outs is not NotImplemented:
                return outs
        if config.disable_jit:
            return self.fun(*args, **kwargs)
        eager = type(current_trace()) is EvalTrace
        if eager and not self.compiles_eagerly:
            return self.fun(*args, **kwargs)
        if eager and not kwargs:
            # The hot path: Arrays and Python scalars only, in a signature compiled before. No
            # flattening, no treedef: the key is the arguments' own signatures (in this trace
            # context).
            if self._context is not config.trace_context:
                self._compiled.clear()
                self._context = config.trace_context
            entry = self._compiled.get(_arrays_signature(args))
            if entry is not None:
                outs = entry.program(args)
                if eval_module._invalid_value_checks:
                    self._check_invalid_values(outs, args, kwargs)
                self._fast = entry.fast
                return outs[0] if entry.out_is_leaf else entry.out_tree.unflatten(outs)
        entry, leaves = self._trace(args, kwargs)
        if eager:  # the common case: run the compiled program
            transfer_guard.jit_arguments(leaves)
            program = entry.program
            if program is None:
                program = entry.program = self._compile(entry, leaves, args, kwargs)
            outs = program(leaves)
            if not kwargs and not self.static_argnums:  # next time, the hot path
                signature = _arrays_signature(args)
                if signature is not None:
                    if len(self._compiled) >= config.compile_cache_size:
                        self._compiled.clear()
                    self._compiled[signature] = entry
                self._fast = self._fast_call(entry, args, leaves)
            if eval_module._invalid_value_checks:
                self._check_invalid_values(outs, args, kwargs)
            return tree_unflatten(entry.out_tree, outs)
        if self.inline:
            outs = eval_jaxpr(entry.jaxpr.jaxpr, entry.jaxpr.consts, *entry.closure, *leaves)
        else:
            outs = jit_p.bind(*entry.closure, *leaves, jaxpr=entry.jaxpr, name=self.name)
        return tree_unflatten(entry.out_tree, outs)

    def _fast_call(self, entry, args, leaves):
        """The accelerator's call of this signature (made once its program has run and shown
        its outputs' layouts), or None where it would decline every call: leaves other than
        Arrays and Python scalars, a program it cannot run (`CompiledProgram.accelerated`)."""
        if entry.fast is not _UNTRIED:
            return entry.fast
        entry.fast = None
        program = entry.program
        if accel is None or not isinstance(program, dispatch.CompiledProgram) or entry.closure:
            return None
        prepared = program.accelerated()
        if prepared is None:
            return None
        signatures = tuple(map(_leaf_signature, leaves))
        scalars = tuple(
            program.scalar_spec(i) if type(leaf) in _SCALAR_KINDS else None
            for i, leaf in enumerate(leaves)
        )
        unflatten = None if entry.out_is_leaf else entry.out_tree.unflatten
        # what decides whether a call runs the program now (`disable_jit`, the trace, ...)
        guards = (config, core._context, self._context, EvalTrace, eval_module)
        try:
            entry.fast = accel.FastCall(
                prepared,
                signatures,
                args,
                unflatten,
                program.transfer,
                scalars,
                transfer_guard.guarded,
                flatten_function,
                None if program.kept is None else tuple(program.kept),
                guards,
            )
        except ValueError:  # arguments it does not take (NumPy arrays, ...)
            pass
        return entry.fast

    def _compile(self, entry, leaves, args, kwargs):
        """The program of a new signature: partitioned by XLA over a mesh's devices when its
        arguments are sharded or shardings are asked for (`spmd.partition_shardings`), else
        on one device (a jit of nothing but a shard_map runs that on its devices)."""
        closed = entry.jaxpr
        partitioned = None
        if dispatch.device_call(closed) is None and dispatch.backend() == "pjrt":
            if self.in_shardings is not None and (kwargs or self.static_argnums):
                raise NotImplementedError(
                    "jit(in_shardings=) with static or keyword arguments is not built yet"
                )
            in_tree = tree_flatten(tuple(args))[1]
            given_in = _flat_shardings(self.in_shardings, in_tree, len(leaves))
            given_out = _flat_shardings(self.out_shardings, entry.out_tree, len(closed.out_avals))
            arg_shardings = [getattr(x, "sharding", None) for x in leaves]
            arg_shardings = [None] * len(entry.closure) + arg_shardings
            given_in = [None] * len(entry.closure) + given_in
            partitioned = spmd.partition_shardings(closed, arg_shardings, given_in, given_out)
        if partitioned is None:
            return dispatch.compile_program(
                closed, self.name, entry.donated, self.keep_unused, self.compiler_options
            )
        if self.compiler_options:
            raise NotImplementedError(
                "jit(compiler_options=) of a program partitioned over several devices is not "
                "built yet"
            )
        ins, outs = partitioned
        return spmd.partitioned_program(closed, self.name, ins, outs, entry.donated)

    def _check_invalid_values(self, outs, args, kwargs) -> None:
        """`jax_debug_nans`/`jax_debug_infs`: an invalid output makes the function run again op
        by op (as if not jitted), where the first operation that produces one raises."""
        try:
            eval_module.check_invalid_values(f"jit({self.name})", outs)
        except FloatingPointError as err:
            with disable_jit():
                self.fun(*args, **kwargs)
            raise FloatingPointError(
                f"{err}; the function run op by op (as if not jitted) produced no invalid "
                "value, so the compiled program computes it differently"
            ) from None

    def trace(self, *args, **kwargs) -> Traced:
        """The function traced for this call's signature (no compiling): its jaxpr and the
        description of its arguments and results."""
        entry, _ = self._trace(args, kwargs)
        static, _, _, dynamic, dynamic_kwargs = self._split(args, kwargs)
        signature = Signature(
            entry.jaxpr,
            self.name,
            tree_structure((tuple(dynamic), dynamic_kwargs)),
            entry.out_tree,
            entry.donated,
            donate_argnums=tuple(
                i for i in normalize_argnums(self.donate_argnums, len(args)) if i not in static
            ),
            keep_unused=self.keep_unused,
            compiler_options=self.compiler_options,
        )
        return Traced(signature)

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        """The shapes and dtypes of the results (`ShapeDtypeStruct`s), computed by tracing."""
        return self.trace(*args, **kwargs).out_info

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)


RETRACE_WARNING_THRESHOLD = 5


_UNTRIED = object()


class CacheEntry:
    __slots__ = ("closure", "donated", "fast", "jaxpr", "out_is_leaf", "out_tree", "program")

    def __init__(self, jaxpr: ClosedJaxpr, out_tree, donated=None, closure=()):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.out_is_leaf = out_tree.node_data() is None  # a single Array
        self.donated = donated  # a bool per flat argument, or None
        self.closure = closure  # tracers the function closes over: the jaxpr's first inputs
        self.program = None
        self.fast = _UNTRIED  # the accelerator's call of its signature, or None (`_fast_call`)


def _arrays_signature(args) -> tuple | None:
    """The signature of a call whose arguments are all Arrays or Python scalars (each a leaf):
    per argument its `_leaf_signature`; None if some argument is anything else."""
    for x in args:
        if type(x) not in _LEAF_KINDS:
            return None
    return tuple(map(_leaf_signature, args))


def _flat_shardings(prefix, tree, count: int) -> list:
    """One sharding (or None) per leaf of `tree` from `prefix` (a Sharding, None, or a pytree
    prefix of them)."""
    if prefix is None or tree is None:
        return [None] * count
    if isinstance(prefix, Sharding):
        return [prefix] * count
    is_leaf = lambda x: x is None or isinstance(x, Sharding)
    spec_leaves, spec_tree = tree_flatten(prefix, is_leaf=is_leaf)
    subtrees = spec_tree.flatten_up_to(tree_unflatten(tree, [0] * tree.num_leaves))
    return [
        sharding
        for sharding, sub in zip(spec_leaves, subtrees, strict=True)
        for _ in range(tree_flatten(sub)[1].num_leaves)
    ]


def _leaf_signature(x):
    """What of an argument the trace depends on: shape, dtype and weak type (a Python scalar:
    its type, which fixes all three); for an Array over several devices its sharding too,
    which its program is partitioned for. An Array keeps its own (this runs once per argument
    of every call: a thousand arguments are a thousand attribute reads)."""
    kind = type(x)
    if kind in _ARRAY_KINDS:
        try:
            return x._signature
        except AttributeError:
            signature = x._signature = _array_signature(x, kind)
            return signature
    if kind in _SCALAR_KINDS:
        return kind
    try:
        signature = (x.shape, x.dtype, getattr(x, "weak_type", False))
    except AttributeError:  # not an array: tracing it raises (`abstractify_arguments`)
        return None
    typed = getattr(getattr(x, "aval", None), "_sharding", None)  # (a tracer's type's sharding)
    return signature if typed is None else (*signature, typed)


def _array_signature(x, kind) -> tuple:
    if kind is DeviceArray:
        buffer = x._buffer
        return (buffer.shape, buffer.dtype, x.weak_type)
    if kind is Array:
        value = x._value
        return (value.shape, value.dtype, x.weak_type)
    return (x.shape, x.dtype, x.weak_type, x.sharding)  # a ShardedArray


_ARRAY_KINDS = frozenset((DeviceArray, Array, ShardedArray))
_SCALAR_KINDS = frozenset((int, float, complex, bool))
_LEAF_KINDS = _ARRAY_KINDS | _SCALAR_KINDS


def _describe_leaf(signature) -> str:
    if isinstance(signature, type):
        return f"Python {signature.__name__}"
    shape, dtype, weak, *sharding = signature
    placed = f" on {sharding[0]}" if sharding else ""
    return f"{dtype}{list(shape)}" + (" (weak)" if weak else "") + placed


def _miss_reason(key, previous) -> str:
    """What changed in a jitted function's signature since its previous trace."""
    if previous is None:
        return "first call"
    if len(previous) != len(key):
        return "static or keyword arguments were given differently"
    if previous[0] != key[0]:
        return f"the argument structure changed from {previous[0]} to {key[0]}"
    if previous[1] != key[1]:
        return "; ".join(
            f"argument {i}: {_describe_leaf(a)} -> {_describe_leaf(b)}"
            for i, (a, b) in enumerate(zip(previous[1], key[1], strict=True))
            if a != b
        )
    return f"static arguments changed from {previous[2:]} to {key[2:]}"


class _NotSpecified:
    def __repr__(self):
        return "<not-specified>"


_not_specified = _NotSpecified()


def jit(
    fun=_not_specified,
    /,
    *,
    in_shardings=None,
    out_shardings=None,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
    keep_unused=False,
    device=None,
    backend=None,
    inline=False,
    compiler_options=None,
):
    """Compiles `fun` with XLA, tracing it once per monomorphic signature. Usable as a
    decorator, with or without arguments.

    `donate_argnums`/`donate_argnames` give those arguments' buffers to the computation, which
    may write outputs of the same shape and dtype into them instead of allocating: a donated
    Array is deleted by the call (using it then raises RuntimeError). `keep_unused=False` lets
    the compiled program leave out arguments the function never reads, so calls do not
    transfer them; results are the same either way. `inline=True` traces `fun` into the
    jaxpr of a jitted caller instead of as a nested `jit` equation. `device`/`backend` may name
    only what there is: tracejit compiles for its one default device.

    `in_shardings`/`out_shardings` (a `Sharding`, or a pytree prefix of the positional
    arguments / the outputs with shardings or None) lay arguments and results over a mesh's
    devices; XLA then partitions the program, as it does for arguments that are sharded
    Arrays already. Inside another transformation they are not applied (values are equal).

    `compiler_options` are XLA debug options by name and value (`{"xla_cpu_enable_fast_math":
    True}`), on top of those tracejit compiles every program with; an unknown name or a value
    of the wrong type raises XlaRuntimeError when the function is compiled, as in JAX.
    """
    _check_placement(device, backend)
    options = {
        "static_argnums": static_argnums,
        "static_argnames": static_argnames,
        "donate_argnums": donate_argnums,
        "donate_argnames": donate_argnames,
        "keep_unused": keep_unused,
        "inline": inline,
        "in_shardings": in_shardings,
        "out_shardings": out_shardings,
        "compiler_options": compiler_options,
    }
    if fun is _not_specified:
        return lambda fun: jit(fun, **options)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    return PjitFunction(fun, **options)


def pjit(fun, in_shardings=None, out_shardings=None, **options):
    """`jax.experimental.pjit.pjit`: `jit` under its old name, which JAX 0.10.2 keeps with a
    DeprecationWarning (`in_shardings` and `out_shardings` may come positionally)."""
    warnings.warn(
        "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings, **options)


def library_jit(fun=None, /, *, compiles_eagerly: bool, **options):
    """`jit` for tracejit's own functions that JAX jits too (the random samplers, many `jnp`
    functions), so that they print in jaxprs as JAX's do. They follow their callers' shapes and
    dtypes, so many signatures are no sign of misuse: they never warn of it.

    Eagerly, a sampler (`compiles_eagerly=True`) runs as one compiled program, which beats
    a NumPy pass per primitive of its dozens; a `jnp` function of a few primitives runs them
    on NumPy directly (`False`), which beats a dispatch on small arrays."""
    if fun is None:
        return lambda fun: library_jit(fun, compiles_eagerly=compiles_eagerly, **options)
    jitted = jit(fun, **options)
    jitted.warns_of_retraces = False
    jitted.compiles_eagerly = compiles_eagerly
    return jitted


def _check_placement(device, backend) -> None:
    if device is not None and backend is not None:
        raise ValueError(
            "can't specify both a device and a backend for jit, got "
            f"device={device!r} and backend={backend!r}"
        )
    if backend is not None and backend != dispatch.default_backend():
        raise RuntimeError(
            f"Unknown backend: {backend!r} requested, but no platforms that are instances of "
            f"{backend} are present. Platforms present are: {dispatch.default_backend()}"
        )
    if device is not None and device not in dispatch.devices()[:1]:
        raise NotImplementedError(f"jit(device={device!r}): tracejit compiles for one device")


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block, jitted functions run their Python code op by op (eagerly) and eager
    control flow calls its Python functions directly: for debugging with prints and
    breakpoints. Values are those the compiled program would give."""
    previous = config.disable_jit
    config.update("jax_disable_jit", disable)
    try:
        yield
    finally:
        config.update("jax_disable_jit", previous)
