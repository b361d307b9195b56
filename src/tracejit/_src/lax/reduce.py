"""`lax.reduce`: reductions by any monoid computation, over pytrees of operands.

A computation that is one of the monoids lax has a primitive for, given its identity as the
initial value, becomes that primitive, as in JAX (`lax.reduce(x, 0., lax.add, (0,))` stages
`reduce_sum`). Any other computation is staged into a jaxpr on scalars and held by the
`reduce` primitive, with the user's function as a param (JAX prints both):

    lax.reduce(x, 0., lambda a, b: a + 2 * b, (0,))
    b:f32[3] = reduce[computation=<function <lambda>> dimensions=(0,) jaxpr={ lambda ; c:f32[]
        d:f32[]. let e:f32[] = mul 2.0:f32[] d; f:f32[] = add c e in (f,) }] a 0.0:f32[]

Operands `x_1..x_k` and initial values `i_1..i_k` are the primitive's operands, in that order;
the jaxpr maps `(a_1..a_k, b_1..b_k)` to the combined `k` values. XLA reduces in an order of its
choosing, which is why the computation must be associative and the initial values its identity.
Eagerly, each result folds its elements into the initial value in row-major order, as XLA's CPU
reduction does (so even a non-associative computation agrees with jit); with no dimensions
to reduce, the result is the operands, as XLA simplifies it. For derivatives, the
reduction is a tree of pairwise combinations, each level the computation batched over all pairs
at once (`batching.vmap_flat`): its JVP is that tree's JVP, made of ordinary primitives, so
reverse mode goes through. Compiled, it is one `stablehlo.reduce` whose region is the jaxpr.
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, Tracer, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_jaxpr,
    batch_rules,
    vmap_flat,
)
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lax import binary, bitwise, reductions, shapes, slicing
from tracejit._src.lax.standard import (
    check_no_sharding,
    is_int_or_bool,
    is_int_or_float,
    is_numeric,
    normalize_axes,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_unflatten


def _max_identity(dtype):
    return -np.inf if dtypes.is_float(dtype) else dtypes.iinfo(dtype).min


def _all_ones(dtype):
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


def _min_identity(dtype):
    return np.inf if dtypes.is_float(dtype) else dtypes.iinfo(dtype).max


# computation -> (the reduction primitive's wrapper, its identity for a dtype, dtype condition)
_MONOIDS = {
    binary.add: (reductions.reduce_sum, lambda dtype: 0, is_numeric),
    binary.mul: (reductions.reduce_prod, lambda dtype: 1, is_numeric),
    binary.max: (reductions.reduce_max, _max_identity, is_int_or_float),
    binary.min: (reductions.reduce_min, _min_identity, is_int_or_float),
    bitwise.bitwise_or: (reductions.reduce_or, lambda dtype: 0, is_int_or_bool),
    bitwise.bitwise_and: (reductions.reduce_and, _all_ones, is_int_or_bool),
    bitwise.bitwise_xor: (reductions.reduce_xor, lambda dtype: 0, is_int_or_bool),
}


def _monoid_reducer(computation, operands, init_values):
    """The reduction primitive's wrapper when `computation` is a known monoid and the single
    initial value is its identity, concretely; else None."""
    if len(operands) != 1 or computation not in _MONOIDS:
        return None
    (init,) = init_values
    if isinstance(init, Tracer) or np.shape(init) != ():
        return None
    reducer, identity, accepts = _MONOIDS[computation]
    dtype = dtypes.dtype_of(init)
    if not accepts(dtype) or not np.equal(np.asarray(init), identity(dtype)):
        return None
    return reducer


# --- reduce ---------------------------------------------------------------------------------
reduce_p = Primitive("reduce", multiple_results=True)


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduces `operands` (an array or a pytree of arrays of one shape) over `dimensions` with
    `computation`, a function of two pytrees like `init_values` (scalars, its identity) that
    returns one such pytree. The result has the operands' structure, the reduced dimensions
    removed."""
    check_no_sharding("reduce", out_sharding)
    flat_operands, operand_tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{operand_tree} vs. {init_tree}"
        )
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values")
    ndim = len(shape_of(flat_operands[0])) if flat_operands else 0
    dimensions = normalize_axes("reduce", dimensions, ndim)  # negative ones too, as in JAX
    reducer = _monoid_reducer(computation, flat_operands, flat_inits)
    if reducer is not None:
        return tree_unflatten(operand_tree, [reducer(flat_operands[0], dimensions)])
    jaxpr = staged_computation(computation, init_tree, flat_inits)
    outs = reduce_p.bind(
        *flat_operands, *flat_inits, computation=computation, jaxpr=jaxpr, dimensions=dimensions
    )
    return tree_unflatten(operand_tree, outs)


def staged_computation(computation, tree, flat_inits, name="reduce", structure_error=None):
    """The monoid `computation` of two pytrees of `tree` (the init values' structure) as a
    closed jaxpr over their flattened leaves, for `reduce` and `reduce_window`; a result of
    another structure raises `structure_error(tree, result_tree)` (default: reduce's)."""
    avals = [get_aval(init).strip_weak_type() for init in flat_inits]
    out_trees = []

    def flat_computation(*args):
        half = len(args) // 2
        out = computation(tree_unflatten(tree, args[:half]), tree_unflatten(tree, args[half:]))
        leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return leaves

    closed = trace_to_jaxpr(flat_computation, avals + avals, DebugInfo(computation, name))
    if out_trees[0] != tree:
        if structure_error is not None:
            raise structure_error(tree, out_trees[0])
        raise TypeError(
            f"reduce computation must return the structure of init_values, {tree}; got "
            f"{out_trees[0]}"
        )
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers: pass the traced values as "
            "operands instead"
        )
    return closed


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(*args, computation, jaxpr, dimensions):
    half = len(args) // 2
    operands, inits = args[:half], args[half:]
    if any(x.shape != operands[0].shape for x in operands):
        got = ", ".join(str(x.shape) for x in operands)
        raise ValueError(f"reduce operands must all have the same shape, got {got}")
    for x, init, out in zip(operands, inits, jaxpr.out_avals, strict=True):
        if init.shape != () or x.dtype != init.dtype or out.dtype != x.dtype or out.shape:
            raise TypeError(
                f"reduce: operand {x.str_short()}, initial value {init.str_short()} and the "
                f"computation's result {out.str_short()} must have one dtype (scalars for "
                "the latter two)"
            )
    shape = tuple(n for d, n in enumerate(operands[0].shape) if d not in dimensions)
    return [ShapedArray(shape, x.dtype, x.weak_type) for x in operands]


def _combine(jaxpr, lhs, rhs, size: int) -> list:
    """The computation applied to `size` pairs at once (each operand a vector of `size`)."""
    outs, dims = vmap_flat(
        lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
        [*lhs, *rhs],
        [0] * (len(lhs) + len(rhs)),
        size,
    )
    return [batch_at_front(out, d, size) for out, d in zip(outs, dims, strict=True)]


def _tree_reduce(operands, inits, jaxpr, dimensions) -> list:
    """The reduction as a tree of pairwise combinations, built from primitives: reduced
    dimensions moved in front and flattened to `n`, the rest to `m`; halves combined until one
    row is left (an odd row count padded with the identity), then combined with the identity
    (which also gives the result when there are no elements to reduce)."""
    if not dimensions:
        return list(operands)
    shape = shape_of(operands[0])
    kept = tuple(d for d in range(len(shape)) if d not in dimensions)
    out_shape = tuple(shape[d] for d in kept)
    n, m = math.prod(shape[d] for d in dimensions), math.prod(out_shape)
    rows = [shapes.reshape(x, (n, m), dimensions + kept) for x in operands]
    fill = [shapes.broadcast_in_dim(init, (1, m), ()) for init in inits]
    while n > 1:
        if n % 2:
            rows = [shapes.concatenate([x, f], 0) for x, f in zip(rows, fill, strict=True)]
            n += 1
        half = n // 2
        lhs = [shapes.reshape(slicing.slice(x, (0, 0), (half, m)), (half * m,)) for x in rows]
        rhs = [shapes.reshape(slicing.slice(x, (half, 0), (n, m)), (half * m,)) for x in rows]
        rows = [shapes.reshape(x, (half, m)) for x in _combine(jaxpr, lhs, rhs, half * m)]
        n = half
    identity = [shapes.reshape(f, (m,)) for f in fill]
    if n == 0:
        outs = identity
    else:
        outs = _combine(jaxpr, identity, [shapes.reshape(x, (m,)) for x in rows], m)
    return [shapes.reshape(out, out_shape) for out in outs]


@reduce_p.def_impl
def _reduce_impl(*args, computation, jaxpr, dimensions):
    """XLA's order on CPU: each result element folds the reduced elements into the initial
    value one at a time, in row-major order (`acc = computation(acc, x)`), all results at
    once through the computation batched over them."""
    half = len(args) // 2
    operands, inits = args[:half], args[half:]
    if not dimensions:  # XLA returns the operands as they are
        return list(operands)
    shape = operands[0].shape
    kept = tuple(d for d in range(len(shape)) if d not in dimensions)
    out_shape = tuple(shape[d] for d in kept)
    m = math.prod(out_shape)
    rows = [x.transpose(dimensions + kept).reshape(-1, m) for x in operands]
    batched, _ = batch_jaxpr(jaxpr, m, [0] * len(args), [True] * half)
    acc = [np.broadcast_to(init, (m,)) for init in inits]
    for i in range(rows[0].shape[0]):
        acc = eval_jaxpr_numpy(batched.jaxpr, batched.consts, [*acc, *(x[i] for x in rows)])
    return [np.asarray(a, x.dtype).reshape(out_shape) for a, x in zip(acc, operands, strict=True)]


def _reduce_weak_types(weak_types, params):
    return all(weak_types[: len(weak_types) // 2])


reduce_p.def_weak_type_rule(_reduce_weak_types)


def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
    """The JVP of the tree of combinations: ordinary primitives, so it transposes."""
    half = len(primals) // 2
    return ad.jvp_flat(
        lambda *args: _tree_reduce(args[:half], args[half:], jaxpr, dimensions),
        primals,
        tangents,
    )


ad.jvp_rules[reduce_p] = _reduce_jvp


def _reduce_lowering(ctx, *args, computation, jaxpr, dimensions):
    half = len(args) // 2
    scalars = [hlo.tensor_type((), aval.dtype) for aval in ctx.avals_in[half:]]
    region = ctx.block.region(scalars + scalars)
    region.ret(ctx.lower_sub_jaxpr(region, jaxpr, region.args))
    outs = ctx.op(
        "stablehlo.reduce",
        list(args),
        attributes={"dimensions": hlo.i64_array(dimensions)},
        regions=[region],
    )
    return outs if isinstance(outs, list) else [outs]


def _reduce_batch(values, dims, *, computation, jaxpr, dimensions):
    half = len(values) // 2
    if any(d is not None for d in dims[half:]):
        raise NotImplementedError("vmap of lax.reduce over batched initial values")
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values[:half], dims[:half], strict=True)]
    outs = reduce_p.bind(
        *operands,
        *values[half:],
        computation=computation,
        jaxpr=jaxpr,
        dimensions=tuple(d + 1 for d in dimensions),
    )
    return outs, [0] * len(outs)


lowering_rules[reduce_p] = _reduce_lowering
batch_rules[reduce_p] = _reduce_batch
