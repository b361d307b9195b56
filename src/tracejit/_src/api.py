"""The public transformations, as functions of functions: `make_jaxpr` and autodiff.

Each transformation flattens its arguments to a list of array leaves (pytrees), runs the
user's function under its trace, and rebuilds the outputs' structure.
"""

from __future__ import annotations

import contextlib
import functools
import itertools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api_util import (
    ShapeDtypeStruct,
    abstractify_arguments,
    as_array,
    as_tuple,
    normalize_argnums,
    shaped_abstractify,
)
from tracejit._src.array import Array, make_array
from tracejit._src.core import Tracer, current_trace, get_aval, new_trace
from tracejit._src.interpreters import ad, batching, partial_eval, transpose
from tracejit._src.interpreters.batching import batch_at_front
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.jit import jit
from tracejit._src.lax import conversions, shapes
from tracejit._src.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
)


def _static_out_of_range(fun, args):
    def error(i):
        return ValueError(
            f"static_argnums {i} is out of range for {getattr(fun, '__name__', 'fun')} called "
            f"with {len(args)} positional arguments"
        )

    return error


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False):
    """Returns a function that gives the jaxpr of `fun` for the given example arguments.

    Only the shapes and dtypes of the arguments matter (ShapeDtypeStructs work as well),
    except those listed in `static_argnums`, whose Python values are used as they are.
    `axis_env`, a list of (axis name, size), binds named axes for the collectives of `fun`
    that no vmap inside it maps (as a pmap around it would).
    """

    @functools.wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        static = set(normalize_argnums(static_argnums, len(args), _static_out_of_range(fun, args)))
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

        closed_jaxpr = trace_to_jaxpr(
            flat_fun, in_avals, DebugInfo(fun, "make_jaxpr"), axis_env or ()
        )
        if not return_shape:
            return closed_jaxpr
        shapes = [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in closed_jaxpr.out_avals
        ]
        return closed_jaxpr, tree_unflatten(out_trees[0], shapes)

    return make_jaxpr_f


def eval_shape(fun, *args, **kwargs):
    """The shapes, dtypes and weak types of `fun(*args, **kwargs)`'s outputs, as a pytree of
    ShapeDtypeStructs, found by tracing alone: nothing is computed (ShapeDtypeStructs may stand
    for the arguments)."""
    leaves, in_tree = tree_flatten((args, kwargs))
    in_avals = abstractify_arguments(fun, leaves, args, kwargs)
    out_trees = []

    def flat_fun(*flat_args):
        call_args, call_kwargs = tree_unflatten(in_tree, flat_args)
        out_leaves, out_tree = tree_flatten(fun(*call_args, **call_kwargs))
        out_trees.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat_fun, in_avals, DebugInfo(fun, "eval_shape"))
    structs = [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=a._sharding)
        for a in closed.out_avals
    ]
    return tree_unflatten(out_trees[0], structs)


def typeof(x):
    """The abstract type (`ShapedArray`: shape, dtype, weak type, and the sharding over
    `Explicit` mesh axes) of an array, a Python scalar or a tracer: what a transformation knows
    of it."""
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from None


class named_scope(contextlib.ContextDecorator):
    """Names the operations of a block (`with named_scope("attention"): ...`, or as a
    decorator). JAX records the name in its name stack, which only profilers and the compiled
    program's metadata read; tracejit emits no such metadata, so the name changes nothing."""

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError("named_scope name argument must be a string.")
        self.name = name

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return False


def named_call(fun, *, name=None):
    """`fun` with its operations named `name` (default: its `__name__`): see `named_scope`."""
    return named_scope(fun.__name__ if name is None else name)(fun)


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


# --------------------------------------------------------------------------------------------
# Automatic differentiation


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), the directional derivative of fun at primals along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    flat_primals, in_tree = tree_flatten(tuple(primals))
    flat_tangents, tangent_tree = tree_flatten(tuple(tangents))
    if in_tree != tangent_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {in_tree} whereas tangents have tree structure "
            f"{tangent_tree}."
        )
    for p, t in zip(flat_primals, flat_tangents, strict=True):
        expected = ad.tangent_aval(shaped_abstractify(p))
        got = shaped_abstractify(t)
        if expected.shape != got.shape or (
            expected.dtype != got.dtype and expected.dtype != dtypes.float0
        ):
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                "or in case of int/bool primal dtype the tangent dtype must be float0. Got "
                f"primal dtype {shaped_abstractify(p).dtype} and so expected tangent dtype "
                f"{expected.dtype}, but got tangent dtype {got.dtype} (shapes {expected.shape} "
                f"and {got.shape})."
            )
    flat_fun, out_info = _flatten_fun(fun, in_tree, has_aux)
    tangents_in = [
        ad.Zero(ad.tangent_aval(shaped_abstractify(p))) if ad.tangent_dtype(
            shaped_abstractify(p).dtype) == dtypes.float0 else _typed_as_primal(t, p)
        for p, t in zip(flat_primals, flat_tangents, strict=True)
    ]  # fmt: skip
    primals_out, tangents_out = ad.jvp_flat(flat_fun, flat_primals, tangents_in)
    tangents_out = [as_array(ad.instantiate_zeros(t)) for t in tangents_out]
    out_tree = out_info["tree"]
    primals_out = [as_array(p) for p in primals_out]
    result = (tree_unflatten(out_tree, primals_out), tree_unflatten(out_tree, tangents_out))
    return (*result, out_info["aux"]) if has_aux else result


def _flatten_fun(fun, in_tree, has_aux=False):
    """`fun` on flat inputs with flat outputs; the output structure (and aux) land in `info`."""
    info = {}

    def flat_fun(*flat_args):
        out = fun(*tree_unflatten(in_tree, flat_args))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(
                    "has_aux=True requires the function to return a pair (output, aux), got "
                    f"{type(out).__name__}"
                )
            out, aux = out
            info["aux"] = _without_derivative(aux)
        out_flat, info["tree"] = tree_flatten(out)
        return out_flat

    return flat_fun, info


def _without_derivative(aux):
    """`has_aux` outputs as the caller receives them: values, not tracers of the JVP trace the
    function ran under (which would leak out of it and carry a derivative no one asked for)."""
    trace = current_trace()
    if not isinstance(trace, ad.JVPTrace):
        return aux
    leaves, tree = tree_flatten(aux)
    return tree_unflatten(tree, [trace.to_primal_tangent(x)[0] for x in leaves])


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) evaluates the linearization of fun at
    primals, reusing the forward pass' residuals."""
    flat_primals, in_tree = tree_flatten(primals)
    flat_fun, out_info = _flatten_fun(fun, in_tree, has_aux)
    primals_out, linear = partial_eval.linearize_flat(
        flat_fun, flat_primals, DebugInfo(fun, "linearize")
    )
    out_tree = out_info["tree"]

    def f_jvp(*tangents):
        flat_tangents, tangent_tree = tree_flatten(tangents)
        if tangent_tree != in_tree:
            raise ValueError(
                f"linearized function called on tangents with tree structure {tangent_tree}, "
                f"expected {in_tree}"
            )
        outs = eval_jaxpr(linear.jaxpr, linear.consts, *flat_tangents)
        return tree_unflatten(out_tree, [as_array(o) for o in outs])

    primals_out = [as_array(p) for p in primals_out]
    result = (tree_unflatten(out_tree, primals_out), f_jvp)
    return (*result, out_info["aux"]) if has_aux else result


def _reject_reduce_axes(reduce_axes, name: str) -> None:
    """`reduce_axes` is a deprecated parameter that JAX keeps in its signatures and refuses."""
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {name} is deprecated")


def _typed_as_primal(tangent, primal):
    """A tangent given to `jvp`, with its primal's weak type (the dtypes being equal), as JAX
    takes it: the tangent of a Python float is weak, whatever the tangent given."""
    want, got = ad.tangent_aval(shaped_abstractify(primal)), shaped_abstractify(tangent)
    if got.weak_type == want.weak_type or got.dtype != want.dtype:
        return tangent
    if isinstance(tangent, Tracer):
        return conversions.convert_element_type_p.bind(
            tangent, new_dtype=want.dtype, weak_type=want.weak_type
        )
    return make_array(
        np.asarray(tangent._value if type(tangent) is Array else tangent), want.weak_type
    )


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), f_vjp) where f_vjp(cotangent) pulls an output cotangent back to a tuple
    of input cotangents (one per primal argument). `f_vjp` is a pytree (`VJP`) whose leaves
    are the residuals, so it may cross a `jit` boundary (see `fwd_and_bwd`)."""
    _reject_reduce_axes(reduce_axes, "vjp")
    flat_primals, in_tree = tree_flatten(primals)
    flat_fun, out_info = _flatten_fun(fun, in_tree, has_aux)
    primals_out, linear = partial_eval.linearize_flat(flat_fun, flat_primals, DebugInfo(fun, "vjp"))
    out_tree = out_info["tree"]
    out_avals = [shaped_abstractify(p) for p in primals_out]
    in_avals = [ad.tangent_aval(shaped_abstractify(p)) for p in flat_primals]
    pullback = _Pullback(linear.jaxpr, in_tree, in_avals, out_tree, out_avals)
    primals_out = [as_array(p) for p in primals_out]
    result = (tree_unflatten(out_tree, primals_out), VJP(pullback, list(linear.consts)))
    return (*result, out_info["aux"]) if has_aux else result


class _Pullback:
    """The static part of a `VJP`: the linear jaxpr to transpose and the trees and types of
    its cotangents. Compared by identity, as a jit cache key part."""

    def __init__(self, linear_jaxpr, in_tree, in_avals, out_tree, out_avals):
        self.linear_jaxpr, self.in_tree, self.in_avals = linear_jaxpr, in_tree, in_avals
        self.out_tree, self.out_avals = out_tree, out_avals

    def __call__(self, residuals, cotangent):
        flat_cts, ct_tree = tree_flatten(cotangent)
        if ct_tree != self.out_tree:
            raise ValueError(
                "unexpected tree structure of argument to vjp function: got "
                f"{ct_tree}, but expected to match {self.out_tree}"
            )
        for ct, aval in zip(flat_cts, self.out_avals, strict=True):
            got, want = shaped_abstractify(ct), ad.tangent_aval(aval)
            if got.shape != want.shape or (got.dtype != want.dtype and want.dtype != dtypes.float0):
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to vjp function: got "
                    f"{got.str_short()}, but expected {want.str_short()} because the "
                    "corresponding output of the function had that type"
                )
        cts_in = transpose.backward_pass(self.linear_jaxpr, residuals, flat_cts)
        cts_in = [
            as_array(ad.zeros_like_aval(aval) if type(ct) is ad.Zero else ct)
            for ct, aval in zip(cts_in, self.in_avals, strict=True)
        ]
        return tree_unflatten(self.in_tree, cts_in)


class VJP:
    """The function `vjp` returns: cotangent of the outputs -> cotangents of the inputs. A
    pytree whose leaves are the residuals of the forward pass, as in JAX."""

    def __init__(self, pullback: _Pullback, residuals: list):
        self.pullback, self.residuals = pullback, residuals

    def __call__(self, cotangent):
        return self.pullback(self.residuals, cotangent)


register_pytree_node(
    VJP, lambda f: (f.residuals, f.pullback), lambda pullback, res: VJP(pullback, list(res))
)


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """(fwd, bwd): `fwd(*args)` is `vjp` of `fun` in the arguments `argnums`, returning
    (outputs, residuals[, aux]), and `bwd(residuals, cotangent)` the cotangents of those
    arguments (one, for an int `argnums`). Both jitted by default: the residuals are a pytree,
    so the backward pass compiles once and is reused across calls."""
    single = isinstance(argnums, int)

    def fwd(*args):
        nums = normalize_argnums(argnums, len(args))

        def partial_fun(*diff):
            full = list(args)
            for i, a in zip(nums, diff, strict=True):
                full[i] = a
            return fun(*full)

        return vjp(partial_fun, *[args[i] for i in nums], has_aux=has_aux)

    def bwd(f_vjp, cotangent):
        cotangents = f_vjp(cotangent)
        return cotangents[0] if single else cotangents

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def _normalize_argnums_grad(argnums, num_args: int):
    """(whether `argnums` is a single int, the positions it names)."""

    def error(_):
        most = max(as_tuple(argnums, int)) + 1
        return TypeError(
            f"differentiating with respect to argnums={argnums} requires at least {most} "
            f"positional arguments to be passed by the caller, but got only {num_args} "
            "positional arguments."
        )

    return isinstance(argnums, int), normalize_argnums(argnums, num_args, error)


def _check_grad_inputs(name: str, args, holomorphic: bool, allow_int: bool):
    for leaf in tree_flatten(args)[0]:
        dtype = shaped_abstractify(leaf).dtype
        if holomorphic:
            if not dtypes.is_complex(dtype):
                raise TypeError(
                    f"{name} with holomorphic=True requires inputs with complex dtype, but got "
                    f"{dtype.name}."
                )
        elif not dtypes.is_inexact(dtype) and not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use Boolean- "
                "or integer-valued inputs, use vjp or set allow_int to True."
            )


def _check_grad_output(name: str, aval, holomorphic: bool):
    """Reverse mode's outputs: real, or complex when differentiating holomorphically."""
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but got "
                f"{aval.dtype.name}."
            )
    elif not dtypes.is_float(aval.dtype):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, "
            "pass holomorphic=True. For differentiation of non-holomorphic functions "
            "involving complex outputs, use jax.vjp directly."
        )


def value_and_grad(
    fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()
):
    """A function returning (fun(*args), its gradient w.r.t. the arguments in `argnums`)."""
    _reject_reduce_axes(reduce_axes, "value_and_grad")

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        single, nums = _normalize_argnums_grad(argnums, len(args))
        diff_args = [args[i] for i in nums]
        checked = [a if i in nums else () for i, a in enumerate(args)]
        abstractify_arguments(fun, tree_flatten(checked)[0], checked, {}, "grad")
        _check_grad_inputs("grad", diff_args, holomorphic, allow_int)

        def partial_fun(*diff):
            full = list(args)
            for i, a in zip(nums, diff, strict=True):
                full[i] = a
            return fun(*full, **kwargs)

        out = vjp(partial_fun, *diff_args, has_aux=has_aux)
        ans, f_vjp = out[0], out[1]
        aval = shaped_abstractify(ans) if not isinstance(ans, (tuple, list, dict)) else None
        if aval is None or aval.shape != ():
            shape = "a pytree" if aval is None else aval.shape
            raise TypeError(
                f"Gradient only defined for scalar-output functions. Output had shape: {shape}."
            )
        _check_grad_output("grad", aval, holomorphic)
        grads = f_vjp(make_array(np.ones((), aval.dtype), aval.weak_type))  # ans's weak type
        grads = grads[0] if single else tuple(grads)
        value = (ans, out[2]) if has_aux else ans
        return value, grads

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar-valued `fun` w.r.t. its argument(s) `argnums`."""
    _reject_reduce_axes(reduce_axes, "grad")
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def _jacobian_inputs(name, fun, argnums, args, kwargs, holomorphic, allow_int=None):
    """(is argnums an int, flat differentiable inputs, their tree, the function of them).
    Reverse mode (`allow_int` given) takes what grad takes: complex inputs too, and integers
    if allowed; forward mode real inputs only, complex ones if holomorphic."""
    single, nums = _normalize_argnums_grad(argnums, len(args))
    diff_args = tuple(args[i] for i in nums)
    if allow_int is not None:
        _check_grad_inputs(name, diff_args, holomorphic, allow_int)
    for leaf in tree_flatten(diff_args)[0] if allow_int is None else ():
        dtype = shaped_abstractify(leaf).dtype
        if holomorphic and not dtypes.is_complex(dtype):
            raise TypeError(
                f"{name} with holomorphic=True requires inputs with complex dtype, but got "
                f"{dtype.name}."
            )
        if not holomorphic and not dtypes.is_float(dtype):
            raise TypeError(
                f"{name} requires real-valued inputs (input dtype that is a sub-dtype of "
                f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
                f"holomorphic=True. For differentiation of non-holomorphic functions involving "
                f"complex inputs or integer inputs, use jax.jvp directly."
            )

    def partial_fun(*diff):
        full = list(args)
        for i, a in zip(nums, diff, strict=True):
            full[i] = a
        return fun(*full, **kwargs)

    flat, in_tree = tree_flatten(diff_args)
    return single, flat, in_tree, partial_fun


def _assemble_jacobian(blocks, out_avals, in_avals, out_tree, in_tree, single, out_major):
    """Jacobian blocks arranged as JAX returns them (the output's structure outside, the
    inputs' structure (per argnum) inside), each of shape out.shape + in.shape. `blocks[o][i]`
    stacks rows (one per output element, out_major) or columns (one per input element). As in
    JAX, a block takes the dtype and weak type of what it is a derivative along: the input
    for rows (jacrev), the output for columns (jacfwd)."""

    def block(o, i):
        stacked = blocks[o][i]
        if out_major:  # one row per output element, each of the input's shape
            shape = out_avals[o].shape + in_avals[i].shape
            if ad.tangent_aval(in_avals[i]).dtype == dtypes.float0:  # integers (allow_int)
                return make_array(np.zeros(shape, in_avals[i].dtype))  # JAX's zeros there
            return like(shapes.reshape(stacked, shape), ad.tangent_aval(in_avals[i]))
        # one column per input element, each of the output's shape: move input axes last
        stacked = shapes.reshape(stacked, in_avals[i].shape + out_avals[o].shape)
        n_in, n_out = len(in_avals[i].shape), len(out_avals[o].shape)
        if n_in:
            permutation = (*range(n_in, n_in + n_out), *range(n_in))
            stacked = shapes.transpose(stacked, permutation)
        return like(stacked, out_avals[o])

    def like(x, aval):
        got = shaped_abstractify(x)
        if (got.dtype, got.weak_type) == (aval.dtype, aval.weak_type) or got.dtype != aval.dtype:
            return x
        return conversions.convert_element_type_p.bind(
            x, new_dtype=aval.dtype, weak_type=aval.weak_type
        )

    per_output = []
    for o in range(len(out_avals)):
        per_input = tree_unflatten(in_tree, [block(o, i) for i in range(len(in_avals))])
        per_output.append(per_input[0] if single else tuple(per_input))
    return tree_unflatten(out_tree, per_output)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by forward mode: for each input, one JVP vectorized (vmap) over
    the standard basis of that input's tangent space."""

    @functools.wraps(fun)
    def jacfwd_f(*args, **kwargs):
        single, flat_in, in_tree, partial_fun = _jacobian_inputs(
            "jacfwd", fun, argnums, args, kwargs, holomorphic
        )
        flat_fun, out_info = _flatten_fun(partial_fun, in_tree, has_aux)
        in_avals = [shaped_abstractify(x) for x in flat_in]
        offsets = np.cumsum([0] + [a.size for a in in_avals])
        total = int(offsets[-1])
        # the standard basis of all the inputs' tangents at once: member k is 1 at element k
        basis = [
            np.eye(total, a.size, -int(start), a.dtype).reshape((total, *a.shape))
            for a, start in zip(in_avals, offsets[:-1], strict=True)
        ]

        def pushforward(*tangents):  # the primal outputs and aux come out unbatched
            primals_out, tangents_out = ad.jvp_flat(flat_fun, flat_in, list(tangents))
            aux_leaves = tree_flatten(out_info.get("aux"))[0]
            out_info["counts"] = len(primals_out), len(aux_leaves)
            return [*primals_out, *aux_leaves, *map(ad.instantiate_zeros, tangents_out)]

        outs, dims = batching.vmap_flat(pushforward, basis, [0] * len(basis), total)
        num_out, num_aux = out_info["counts"]
        unbatched = [
            o if d is None else batch_at_front(o, d, total)[0]
            for o, d in zip(outs, dims, strict=True)
        ]
        out_avals = [shaped_abstractify(p) for p in unbatched[:num_out]]
        aux = None
        if has_aux:
            aux = tree_unflatten(tree_flatten(out_info["aux"])[1], unbatched[num_out:][:num_aux])
        tangents = [
            batch_at_front(o, d, total) for o, d in list(zip(outs, dims))[num_out + num_aux :]
        ]
        columns = [
            [tangent[start:end] for start, end in itertools.pairwise(offsets)]
            for tangent in tangents
        ]
        jac = _assemble_jacobian(
            columns, out_avals, in_avals, out_info["tree"], in_tree, single, out_major=False
        )
        return (jac, aux) if has_aux else jac

    return jacfwd_f


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` by reverse mode: one forward pass (linearization), then for each
    output one backward pass vectorized (vmap) over the standard basis of its cotangents."""

    @functools.wraps(fun)
    def jacrev_f(*args, **kwargs):
        single, flat_in, in_tree, partial_fun = _jacobian_inputs(
            "jacrev", fun, argnums, args, kwargs, holomorphic, allow_int
        )
        flat_fun, out_info = _flatten_fun(partial_fun, in_tree, has_aux)
        primals_out, linear = partial_eval.linearize_flat(
            flat_fun, flat_in, DebugInfo(fun, "jacrev")
        )
        in_avals = [shaped_abstractify(x) for x in flat_in]
        out_avals = [shaped_abstractify(p) for p in primals_out]
        for aval in out_avals:
            _check_grad_output("jacrev", aval, holomorphic)
        rows = [[None] * len(in_avals) for _ in out_avals]
        for o, aval in enumerate(out_avals):
            if aval.size == 0:
                for i, in_aval in enumerate(in_avals):
                    rows[o][i] = np.zeros((0, *in_aval.shape), ad.tangent_aval(in_aval).dtype)
                continue
            ct_aval = ad.tangent_aval(aval)
            basis = np.eye(aval.size, dtype=ct_aval.dtype).reshape((aval.size, *aval.shape))

            def pullback(ct, o=o):
                cts = [
                    ct if j == o else ad.Zero(ad.tangent_aval(a)) for j, a in enumerate(out_avals)
                ]
                cts_in = transpose.backward_pass(linear.jaxpr, linear.consts, cts)
                return [
                    ad.zeros_like_aval(ad.tangent_aval(a)) if type(c) is ad.Zero else c
                    for c, a in zip(cts_in, in_avals, strict=True)
                ]

            outs, dims = batching.vmap_flat(pullback, [basis], [0], aval.size)
            for i, (out, dim) in enumerate(zip(outs, dims, strict=True)):
                rows[o][i] = batch_at_front(out, dim, aval.size)
        jac = _assemble_jacobian(
            rows, out_avals, in_avals, out_info["tree"], in_tree, single, out_major=True
        )
        return (jac, out_info["aux"]) if has_aux else jac

    return jacrev_f


jacobian = jacrev  # JAX's alias


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of a scalar `fun`: forward-over-reverse, jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, at arguments shaped like `primals`: a
    function from output cotangents to a tuple of input cotangents."""
    _reject_reduce_axes(reduce_axes, "transpose")
    flat_primals, in_tree = tree_flatten(primals)
    in_avals = [shaped_abstractify(p) for p in flat_primals]
    flat_fun, out_info = _flatten_fun(fun, in_tree)
    trace = partial_eval.PartialEvalTrace(current_trace(), DebugInfo(fun, "linear_transpose"))
    with new_trace(trace):
        outs = flat_fun(*[trace.new_arg(aval) for aval in in_avals])
        linear = trace.to_jaxpr(outs)
    out_tree = out_info["tree"]

    def transposed(*cotangents):
        cotangent = cotangents[0] if len(cotangents) == 1 else cotangents
        flat_cts, ct_tree = tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"cotangent tree does not match function output, expected {out_tree} but got "
                f"{ct_tree}"
            )
        cts_in = transpose.backward_pass(linear.jaxpr, linear.consts, flat_cts)
        cts_in = [
            ad.zeros_like_aval(aval) if type(ct) is ad.Zero else ct
            for ct, aval in zip(cts_in, in_avals, strict=True)
        ]
        return tree_unflatten(in_tree, cts_in)

    return transposed
