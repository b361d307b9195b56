"""`custom_jvp` and `custom_vjp`: functions that bring their own derivative rules.

A call of such a function binds a call primitive (`custom_jvp_call`, `custom_vjp_call`) that
each trace interprets in its own way (`Trace.process_custom_jvp_call`): eagerly the function
just runs; the JVP trace runs the user's rule instead of differentiating the function's body;
staging records one equation holding the function's jaxpr and the rule, so that transforming
the staged jaxpr later still finds the rule. For custom_vjp, the JVP trace runs `fwd` and
represents the output tangent as `custom_lin`, a linear primitive whose transpose is `bwd`:
reverse mode works, forward mode is refused.

The user's functions take and return pytrees; the `_Flat*` wrappers here give the traces flat
lists of arrays, and print as the user's function names in jaxprs (`jvp=log1pexp_jvp`).
"""

from __future__ import annotations

import functools

from tracejit._src.api_util import argnums_and_argnames, shaped_abstractify
from tracejit._src.core import (
    Primitive,
    ShapedArray,
    Tracer,
    current_trace,
    get_aval,
    processed_by_trace_method,
    set_current_trace,
    shape_of,
)
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, tangent_aval, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, vmap_flat
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lowering.lower import lowering_rules, never_lowered
from tracejit._src.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)


class SymbolicZero:
    """A zero tangent or cotangent handed to a rule defined with `symbolic_zeros=True`, in
    place of an array of zeros: the rule can skip work for it, and may return one for an output
    that does not depend on the inputs. Reads as its aval (`.shape`, `.dtype`)."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __getattr__(self, name):
        return getattr(self.__dict__["aval"], name)

    @staticmethod
    def from_primal_value(value) -> SymbolicZero:
        return SymbolicZero(tangent_aval(get_aval(value)))

    def __repr__(self):
        return "SymbolicZero"


def zero_from_primal(value, symbolic_zeros: bool = False):
    """The zero tangent of a pytree of primal values: `SymbolicZero`s, or arrays of zeros."""
    if symbolic_zeros:
        return tree_map(SymbolicZero.from_primal_value, value)
    return tree_map(lambda x: ad.zeros_like_aval(tangent_aval(get_aval(x))), value)


class CustomVJPPrimal:
    """An argument of a custom_vjp `fwd` rule defined with `symbolic_zeros=True`: the value,
    and whether it is `perturbed` (differentiated with respect to; if not, no cotangent of it
    is asked for)."""

    __slots__ = ("perturbed", "value")

    def __init__(self, value, perturbed: bool):
        self.value, self.perturbed = value, perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed!r})"


def custom_vjp_primal_tree_values(tree):
    """The values of a pytree whose leaves may be `CustomVJPPrimal`s."""
    return tree_map(
        lambda x: x.value if isinstance(x, CustomVJPPrimal) else x,
        tree,
        is_leaf=lambda x: isinstance(x, CustomVJPPrimal),
    )


def _to_symbolic(t):
    return SymbolicZero(t.aval) if type(t) is Zero else t


def _from_symbolic(t):
    return Zero(t.aval) if isinstance(t, SymbolicZero) else t


class CustomJVPCall:
    """What a trace needs to process a custom_jvp call: flat `fun(*args) -> list` and
    `jvp(primals, tangents) -> (primals_out, tangents_out)`."""

    __slots__ = ("fun", "jvp", "name", "symbolic_zeros")

    def __init__(self, fun, jvp, symbolic_zeros, name):
        self.fun, self.jvp, self.symbolic_zeros, self.name = fun, jvp, symbolic_zeros, name


class CustomVJPCall:
    """Flat `fun(*args) -> list`, `fwd(*args) -> (outs, residuals)` and
    `bwd(residuals, cotangents) -> cotangents of args`."""

    __slots__ = ("bwd", "fun", "fwd", "name", "symbolic_zeros")

    def __init__(self, fun, fwd, bwd, symbolic_zeros, name):
        self.fun, self.fwd, self.bwd = fun, fwd, bwd
        self.symbolic_zeros, self.name = symbolic_zeros, name

    def run_fwd(self, primals, perturbed):
        """`fwd` of the primals; with symbolic zeros, each is a `CustomVJPPrimal`."""
        if self.symbolic_zeros:
            primals = [CustomVJPPrimal(p, q) for p, q in zip(primals, perturbed, strict=True)]
        return self.fwd(*primals)

    def jvp(self, primals, tangents):
        """Forward mode runs `fwd`; the output tangents are a `custom_lin` of the input
        tangents, which only reverse mode can give a meaning to (its transpose is `bwd`)."""
        primals_out, residuals = self.run_fwd(primals, [type(t) is not Zero for t in tangents])
        tangents_out = custom_lin_p.bind(
            *residuals,
            *map(ad.instantiate_zeros, tangents),
            num_res=len(residuals),
            bwd=self.bwd,
            out_avals=tuple(get_aval(p) for p in primals_out),
            in_avals=tuple(get_aval(p) for p in primals),
        )
        return primals_out, tangents_out


class CustomCallPrimitive(Primitive):
    """A call primitive: binding it hands the call record to the current trace. Rebinding a
    staged equation (from `eval_jaxpr`) rebuilds the record from the equation's params.
    `batch_call(trace, call, args)` is how `BatchTrace` vectorizes a call (defined in this
    module, above the batching interpreter, beside the call records it builds)."""

    def __init__(self, name, process_method, batch_call):
        super().__init__(name, multiple_results=True)
        self.process_method = process_method
        self.batch_call = batch_call
        processed_by_trace_method(self, process_method)  # no JVP or batching rule

    def bind_call(self, call, args):
        return getattr(current_trace(), self.process_method)(self, call, list(args))

    def bind(self, *args, name, call_jaxpr, num_consts, symbolic_zeros, **rules):
        consts, args = args[:num_consts], args[num_consts:]

        def fun(*xs):
            return eval_jaxpr(call_jaxpr.jaxpr, (), *consts, *xs)

        if "jvp" in rules:
            call = CustomJVPCall(fun, rules["jvp"], symbolic_zeros, name)
        else:
            call = CustomVJPCall(fun, rules["fwd"], rules["bwd"], symbolic_zeros, name)
        return self.bind_call(call, args)

    def params_to_print(self, params):
        return {k: v for k, v in params.items() if k != "num_consts" or v}


def _call_abstract_eval(*avals, call_jaxpr, **params):
    return call_jaxpr.out_avals


def _batch_custom_jvp_call(trace, call, args):
    return batch_custom_jvp_call(trace, custom_jvp_call_p, call, args)


def _batch_custom_vjp_call(trace, call, args):
    return batch_custom_vjp_call(trace, custom_vjp_call_p, call, args)


custom_jvp_call_p = CustomCallPrimitive(
    "custom_jvp_call", "process_custom_jvp_call", _batch_custom_jvp_call
)
custom_jvp_call_p.def_abstract_eval(_call_abstract_eval)
custom_vjp_call_p = CustomCallPrimitive(
    "custom_vjp_call", "process_custom_vjp_call", _batch_custom_vjp_call
)
custom_vjp_call_p.def_abstract_eval(_call_abstract_eval)


@custom_jvp_call_p.def_impl
@custom_vjp_call_p.def_impl
def _call_impl(*args, **params):
    raise AssertionError("custom call primitives are processed by their trace, never run")


def _call_lowering(ctx, *args, call_jaxpr, **params):
    """Compiled, a custom-derivative function is just its body: the rules served autodiff."""
    return ctx.lower_sub_jaxpr(ctx.block, call_jaxpr, args)


lowering_rules[custom_jvp_call_p] = _call_lowering
lowering_rules[custom_vjp_call_p] = _call_lowering


class _Named:
    """A flat wrapper of a user function that prints as that function's name in jaxprs."""

    def __init__(self, fn, user_fn, symbolic_zeros=False):
        self.fn = fn
        self.name = getattr(user_fn, "__name__", repr(user_fn))
        self.symbolic_zeros = symbolic_zeros  # of a bwd rule: it takes `SymbolicZero`s

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return self.name


def _nondiff_positions(fun, nondiff_argnums, nondiff_argnames) -> tuple:
    """The positions of the non-differentiable arguments, those named included."""
    nums, _ = argnums_and_argnames(fun, nondiff_argnums, nondiff_argnames, "nondiff")
    return tuple(sorted(nums))


def _split_nondiff(args, nondiff_argnums):
    static = {i: args[i] for i in nondiff_argnums}
    dynamic = [a for i, a in enumerate(args) if i not in static]
    return static, dynamic


def _merge_nondiff(static, dynamic, n):
    dynamic = iter(dynamic)
    return [static[i] if i in static else next(dynamic) for i in range(n)]


def _type_name(aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _check_output_types(primal_outs, tangent_outs):
    for p, t in zip(primal_outs, tangent_outs, strict=True):
        if type(t) is Zero:
            continue
        primal, expected, got = get_aval(p), tangent_aval(get_aval(p)), get_aval(t)
        if (expected.shape, expected.dtype) != (got.shape, got.dtype):
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with corresponding "
                f"shapes and dtypes. Expected {_type_name(expected)} (tangent type of "
                f"{_type_name(primal)}) but got {_type_name(got)}."
            )


class custom_jvp:
    """A function with a custom JVP rule (JAX's `jax.custom_jvp`).

    @custom_jvp
    def f(x): ...

    @f.defjvp
    def f_jvp(primals, tangents):
        return primal_out, tangent_out
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument, `t -> output tangent`, summed (None: no dependence)."""

        def jvp(primals, tangents):
            primal_out = self(*primals)
            tangent_out = None
            for fn, t in zip(tangent_fns, tangents, strict=True):
                if fn is None:
                    continue
                term = fn(t, primal_out, *primals)
                tangent_out = (
                    term if tangent_out is None else tree_map(lambda a, b: a + b, tangent_out, term)
                )
            if tangent_out is None:
                tangent_out = tree_map(lambda p: p * 0, primal_out)
            return primal_out, tangent_out

        self.defjvp(jvp)

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"custom_jvp function {self.__name__} takes positional arguments only")
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."
            )
        static, dynamic = _split_nondiff(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(dynamic)
        n, out_trees = len(args), []

        def fun(*xs):
            out = self.fun(*_merge_nondiff(static, tree_unflatten(in_tree, xs), n))
            out_flat, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_flat

        def jvp(primals, tangents):
            if self.symbolic_zeros:
                tangents = [_to_symbolic(t) for t in tangents]
            primals_tree = tree_unflatten(in_tree, primals)
            tangents_tree = tree_unflatten(in_tree, tangents)
            nondiff = [static[i] for i in self.nondiff_argnums]
            out = self.jvp(*nondiff, tuple(primals_tree), tuple(tangents_tree))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    f"Custom JVP rule {self.jvp.__name__} for function {self.__name__} must "
                    "produce a pair (list or tuple of length two) representing primal and "
                    f"tangent outputs, but got {out!r}."
                )
            primal_out, tangent_out = out
            primals_out, out_tree = tree_flatten(primal_out)
            tangents_out = [_from_symbolic(t) for t in tree_flatten(tangent_out)[0]]
            if tree_structure(tangent_out) != out_tree:
                raise TypeError(
                    f"Custom JVP rule {self.jvp.__name__} for function {self.__name__} must "
                    "produce primal and tangent outputs with equal container (pytree) "
                    f"structures, but got {out_tree} and {tree_structure(tangent_out)}."
                )
            _check_output_types(primals_out, tangents_out)
            out_trees.append(out_tree)
            return primals_out, tangents_out

        call = CustomJVPCall(
            _Named(fun, self.fun), _Named(jvp, self.jvp), self.symbolic_zeros, self.__name__
        )
        out_flat = custom_jvp_call_p.bind_call(call, flat_args)
        return tree_unflatten(out_trees[-1], out_flat)


class custom_vjp:
    """A function with custom forward and backward passes (JAX's `jax.custom_vjp`).

    @custom_vjp
    def f(x): ...
    def f_fwd(x): return f(x), residuals
    def f_bwd(residuals, g): return (cotangent_of_x,)
    f.defvjp(f_fwd, f_bwd)
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"custom_vjp function {self.__name__} takes positional arguments only")
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp."
            )
        static, dynamic = _split_nondiff(args, self.nondiff_argnums)
        flat_args, in_tree = tree_flatten(dynamic)
        n, out_trees, res_trees = len(args), [], []
        nondiff = [static[i] for i in self.nondiff_argnums]

        def fun(*xs):
            out = self.fun(*_merge_nondiff(static, tree_unflatten(in_tree, xs), n))
            out_flat, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_flat

        def fwd(*xs):
            out, residuals = self.fwd(*_merge_nondiff(static, tree_unflatten(in_tree, xs), n))
            out_flat, out_tree = tree_flatten(out)
            res_flat, res_tree = tree_flatten(residuals)
            out_trees.append(out_tree)
            res_trees.append(res_tree)
            return out_flat, res_flat

        def bwd(res_flat, cts_flat):
            residuals = tree_unflatten(res_trees[-1], list(res_flat))
            cts = tree_unflatten(out_trees[-1], list(cts_flat))
            cts_in = self.bwd(*nondiff, residuals, cts)
            return _flatten_cotangents(cts_in, dynamic, self.bwd.__name__)

        call = CustomVJPCall(
            _Named(fun, self.fun),
            _Named(fwd, self.fwd),
            _Named(bwd, self.bwd, symbolic_zeros=self.symbolic_zeros),
            self.symbolic_zeros,
            self.__name__,
        )
        out_flat = custom_vjp_call_p.bind_call(call, flat_args)
        return tree_unflatten(out_trees[-1], out_flat)


def _flatten_cotangents(cts_in, args, rule: str) -> list:
    """The bwd rule's cotangents as a flat list matching the arguments' leaves; None in the
    place of an argument's subtree means zero cotangents for it. A structure or a shape that
    does not match the arguments raises JAX's errors (a wrong gradient would be silent)."""
    if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(args):
        raise TypeError(
            f"Custom VJP bwd rule {rule} must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must produce "
            "a tuple of length equal to the number of arguments to the primal function, but got "
            f"bwd output structure {tree_structure(cts_in)} for primal input structure "
            f"{tree_structure(tuple(args))}."
        )
    flat = []
    for i, (ct, arg) in enumerate(zip(cts_in, args, strict=True)):
        leaves = tree_flatten(arg)[0]
        if ct is None:
            flat.extend([None] * len(leaves))
            continue
        try:  # None stands for the zero cotangents of a whole subtree, a leaf included
            ct_leaves = tree_structure(arg).flatten_up_to(ct)
        except (TypeError, ValueError):
            ct_leaves = None
        if ct_leaves is None or len(ct_leaves) != len(leaves):
            raise TypeError(
                f"Custom VJP bwd rule {rule} must produce an output with the same container "
                f"(pytree) structure as the args tuple of the primal function, but at output[{i}] got "
                f"{tree_structure(ct)} for primal input structure {tree_structure(arg)}."
            )
        ct_leaves = [None if isinstance(c, SymbolicZero) else c for c in ct_leaves]
        for c, leaf in zip(ct_leaves, leaves, strict=True):
            if c is not None and get_aval(c).shape != get_aval(leaf).shape:
                raise ValueError(
                    f"Custom VJP bwd rule {rule} must produce an output with the same type as the args "
                    f"tuple of the primal function, but at output[{i}] the bwd rule produced an "
                    f"output of type {_type_name(get_aval(c))} corresponding to an input of "
                    f"type {_type_name(get_aval(leaf))}, so the shapes do not match"
                )
        flat.extend(ct_leaves)
    return flat


# --- vmap of custom-derivative functions ----------------------------------------------------
# The batched call is again a custom-derivative call, of the vectorized function and rules:
# every operand is batched at the front (unbatched ones broadcast) and every output too, so
# the rules see consistent batch dims and the derivatives of the broadcasts sum where needed.


def _vmap_at_front(fn, size):
    """`fn(*xs) -> list` vectorized over the leading axis of every `xs`; outputs batched at
    the front (unbatched ones broadcast)."""

    def batched(*xs):
        outs, dims = vmap_flat(fn, list(xs), [0] * len(xs), size)
        return [batch_at_front(o, d, size) for o, d in zip(outs, dims, strict=True)]

    return batched


def vmap_bwd(bwd, size, in_avals):
    """`bwd(residuals, cts) -> cotangents (None: zero)` over batches at the front; the
    cotangents of the (unbatched) `in_avals` come back batched at the front, never None."""

    def batched_bwd(residuals, cts):
        n = len(residuals)

        def flat_bwd(*xs):
            cts_in = bwd(list(xs[:n]), list(xs[n:]))
            return [
                ad.zeros_like_aval(ad.tangent_aval(a)) if c is None else ad.instantiate_zeros(c)
                for c, a in zip(cts_in, in_avals, strict=True)
            ]

        return _vmap_at_front(flat_bwd, size)(*residuals, *cts)

    return _Named(batched_bwd, bwd)


def _front(trace, args):
    """(parent values batched at the front, batch size), or (values, None) if none batched."""
    values, dims = zip(*map(trace.to_batch_info, args)) if args else ((), ())
    if all(d is None for d in dims):
        return list(values), None
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    with set_current_trace(trace.parent):
        return [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)], size


def batch_custom_jvp_call(trace, primitive, call, args):
    """`BatchTrace.process_custom_jvp_call`: a custom_jvp call of the vectorized function
    whose rule is the vectorized rule."""
    values, size = _front(trace, args)
    if size is None:
        with set_current_trace(trace.parent):
            return primitive.bind_call(call, values)
    n = len(values)

    def flat_jvp(*xs):
        primals_out, tangents_out = call.jvp(list(xs[:n]), list(xs[n:]))
        return [*primals_out, *map(ad.instantiate_zeros, tangents_out)]

    def jvp(primals, tangents):
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        outs = _vmap_at_front(flat_jvp, size)(*primals, *tangents)
        half = len(outs) // 2
        return outs[:half], outs[half:]

    batched = CustomJVPCall(
        _Named(_vmap_at_front(call.fun, size), call.fun), _Named(jvp, call.jvp), False, call.name
    )
    with set_current_trace(trace.parent):
        outs = primitive.bind_call(batched, values)
    return [trace.new_tracer(o, 0) for o in outs]


def batch_custom_vjp_call(trace, primitive, call, args):
    """`BatchTrace.process_custom_vjp_call`: a custom_vjp call of the vectorized function,
    fwd and bwd."""
    in_avals = [get_aval(a) for a in args]  # unbatched avals (a batch tracer's aval)
    values, size = _front(trace, args)
    if size is None:
        with set_current_trace(trace.parent):
            return primitive.bind_call(call, values)
    num_outs = []

    def flat_fwd(*xs):
        outs, residuals = call.run_fwd(xs, [True] * len(xs))
        num_outs[:] = [len(outs)]
        return [*outs, *residuals]

    def fwd(*xs):
        outs = _vmap_at_front(flat_fwd, size)(*xs)
        return outs[: num_outs[0]], outs[num_outs[0] :]

    batched = CustomVJPCall(
        _Named(_vmap_at_front(call.fun, size), call.fun),
        _Named(fwd, call.fwd),
        vmap_bwd(call.bwd, size, in_avals),
        False,
        call.name,
    )
    with set_current_trace(trace.parent):
        outs = primitive.bind_call(batched, values)
    return [trace.new_tracer(o, 0) for o in outs]


# --------------------------------------------------------------------------------------------
# custom_lin: the tangent of a custom_vjp function, linear in its tangents, whose transpose is
# the user's bwd. It only exists to be transposed: evaluating it means forward mode was asked.

custom_lin_p = Primitive("custom_lin", multiple_results=True)


@custom_lin_p.def_impl
def _custom_lin_impl(*args, num_res, bwd, out_avals, in_avals):
    raise TypeError(
        "can't apply forward-mode autodiff (jvp) to a custom_vjp function; use reverse mode "
        "(grad, vjp) or define a custom_jvp rule instead."
    )


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals, in_avals):
    return [tangent_aval(a) for a in out_avals]


custom_lin_p.params_to_print = lambda params: {"num_res": params["num_res"], "bwd": params["bwd"]}
ad.not_differentiable(custom_lin_p, "the tangent of a custom_vjp function only serves reverse mode")
ad.mark_linear(custom_lin_p)  # in its tangents, the operands after the num_res residuals


def _custom_lin_transpose(cts, *operands, num_res, bwd, out_avals, in_avals):
    residuals = operands[:num_res]
    if getattr(bwd, "symbolic_zeros", False):
        cts = [_to_symbolic(c) for c in cts]
    else:
        cts = [ad.zeros_like_aval(tangent_aval(a)) if type(c) is Zero else c
               for c, a in zip(cts, out_avals, strict=True)]  # fmt: skip
    cts_in = [Zero(tangent_aval(a)) if c is None else c
              for c, a in zip(bwd(residuals, cts), in_avals, strict=True)]  # fmt: skip
    return [None] * num_res + cts_in


def _custom_lin_batch(values, dims, *, num_res, bwd, out_avals, in_avals):
    """Every operand batched at the front; the transpose is the user's bwd, vectorized."""
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    values = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]

    def batched(avals):
        return tuple(ShapedArray((size, *a.shape), a.dtype, a.weak_type) for a in avals)

    outs = custom_lin_p.bind(
        *values,
        num_res=num_res,
        bwd=vmap_bwd(bwd, size, in_avals),
        out_avals=batched(out_avals),
        in_avals=batched(in_avals),
    )
    return outs, [0] * len(outs)


transpose_rules[custom_lin_p] = _custom_lin_transpose
batch_rules[custom_lin_p] = _custom_lin_batch
never_lowered(custom_lin_p, "transposed away before anything is compiled")


# --------------------------------------------------------------------------------------------
# Conveniences over custom_vjp


def _stage_flat(fun, in_tree, in_avals, name: str):
    """(closed jaxpr of `fun` on arguments of tree `in_tree` and types `in_avals`, its output
    tree)."""
    out_trees = []

    def flat_fun(*flat_args):
        out_flat, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, flat_args)))
        out_trees.append(out_tree)
        return out_flat

    return trace_to_jaxpr(flat_fun, in_avals, DebugInfo(fun, name)), out_trees[0]


def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)` with the values
    `fun` closes over that may carry derivatives (floating-point tracers) passed explicitly as
    `consts`, so that `custom_vjp`/`custom_jvp` rules, which take only explicit arguments, can
    differentiate with respect to them. `example_args` give the arguments' types."""
    flat_args, in_tree = tree_flatten(example_args)
    in_avals = [shaped_abstractify(x) for x in flat_args]
    closed, out_tree = _stage_flat(fun, in_tree, in_avals, "closure_convert")
    hoisted = [_maybe_perturbed(c) for c in closed.consts]
    hoisted_consts = [c for c, h in zip(closed.consts, hoisted, strict=True) if h]
    num_hoisted = len(hoisted_consts)

    def converted_fun(*args_and_consts):
        num_args = len(args_and_consts) - num_hoisted
        args, given = args_and_consts[:num_args], iter(args_and_consts[num_args:])
        consts = [next(given) if h else c for c, h in zip(closed.consts, hoisted, strict=True)]
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same Pytree "
                f"structure as the example arguments passed when closure_convert was called. "
                f"Expected {in_tree}, but got {tree}"
            )
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *flat))

    return converted_fun, hoisted_consts


def _maybe_perturbed(x) -> bool:
    """Whether a closed-over value may carry a derivative: a tracer of an inexact dtype."""
    return isinstance(x, Tracer) and tangent_aval(get_aval(x)).dtype.kind in "fc"


class _GradientRule:
    """The residuals of `custom_gradient`: the user's backward function staged as a jaxpr (in
    the pytree's static part) and the values it closes over (its leaves)."""

    def __init__(self, jaxpr, consts, in_tree, out_tree):
        self.jaxpr, self.consts, self.in_tree, self.out_tree = jaxpr, consts, in_tree, out_tree


register_pytree_node(
    _GradientRule,
    lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
    lambda aux, consts: _GradientRule(aux[0], list(consts), aux[1], aux[2]),
)


def custom_gradient(fun):
    """A function whose gradient `fun` gives along with its value: `fun(*args)` returns
    `(value, vjp)`, with `vjp(cotangent)` returning one cotangent per argument (as a tuple, or
    alone for a function of one argument)."""

    @custom_vjp
    def wrapped_fun(*args):
        return fun(*args)[0]

    def fwd(*args):
        ans, rule = fun(*args)
        ans_flat, out_tree = tree_flatten((ans,))
        ct_avals = [tangent_aval(get_aval(x)) for x in ans_flat]
        closed, in_tree = _stage_flat(rule, out_tree, ct_avals, "custom_gradient")
        return ans, _GradientRule(closed.jaxpr, list(closed.consts), in_tree, out_tree)

    def bwd(res, cts):
        cts_flat, out_tree = tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        cts_in = tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *cts_flat))
        return (cts_in,) if treedef_is_leaf(res.in_tree) else cts_in

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun
