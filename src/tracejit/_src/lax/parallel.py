"""Collectives over named axes: psum, pmax, pmin (and pmean), all_gather, axis_index.

A collective names a mapped axis (`vmap(f, axis_name='i')`); the batching trace that maps that
axis carries it out (`BatchTrace.process_collective`), turning the named reduction into a
positional one over its batch dimension:

    vmap(lambda x: x / psum(x, 'i'), axis_name='i')
        b:f32[] = psum[axes=(0,) axis_index_groups=None] a
        c:f32[4] = div a b

A collective whose axis no enclosing transformation maps raises NameError (unbound axis name).
Staged inside a control-flow body under that vmap, a collective is typed with the axis size the
enclosing vmap gives it (`bound_axis_size`), and carried out when the vmap batches the body.
The same primitives will serve pmap, whose trace maps axes across devices.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive, ShapedArray
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    bound_axis_size,
    collective_rules,
    no_batched_operands,
)
from tracejit._src.lax import reductions, shapes, slicing
from tracejit._src.lax.standard import vectorized_batch_rule, weak_if_all_weak
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_map


def _names(axis_name, axis_index_groups=None) -> tuple:
    if axis_index_groups is not None:
        raise NotImplementedError("collectives over axis_index_groups are not built yet")
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _unbound(axes):
    for axis in axes:
        if not isinstance(axis, int):
            bound_axis_size(axis)


def _bind_over_leaves(primitive, x, axis_name, axis_index_groups):
    axes = _names(axis_name, axis_index_groups)
    return tree_map(lambda v: primitive.bind(v, axes=axes, axis_index_groups=axis_index_groups), x)


def _positional_reduction(np_reduce):
    """impl and abstract eval of a collective over positional axes (what vmap turns it into)."""

    def impl(x, *, axes, axis_index_groups):
        return np_reduce(x, axis=axes).astype(x.dtype, copy=False)

    def abstract_eval(x, *, axes, axis_index_groups):
        _unbound(axes)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    return impl, abstract_eval


def _collective_batch(primitive, size_scaling):
    """Carries out a reduction collective over the trace's axis: a positional reduction of the
    batch dimension (with any positional axes already there); an unbatched operand is the same
    in every member (`size_scaling`). Other axis names are left to enclosing traces."""

    def rule(trace, value, dim, *, axes, axis_index_groups):
        named = tuple(a for a in axes if not isinstance(a, int) and a != trace.axis_name)
        positional = tuple(a for a in axes if isinstance(a, int))
        if dim is None:
            out = size_scaling(value, trace.axis_size)
            if positional:
                out = primitive.bind(out, axes=positional, axis_index_groups=axis_index_groups)
        else:
            shifted = tuple(sorted((dim, *(a + (a >= dim) for a in positional))))
            out = primitive.bind(value, axes=shifted, axis_index_groups=axis_index_groups)
        if named:
            out = primitive.bind(out, axes=named, axis_index_groups=axis_index_groups)
        return out, None

    return rule


def _collective_batch_rule(primitive):
    """Batching of a collective over another trace's axis: positional axes move past the batch
    dimension, named ones pass through."""

    def rule(values, dims, *, axes, axis_index_groups):
        (x,), (dim,) = values, dims
        positional = [a + (a >= dim) for a in axes if isinstance(a, int)]
        named = [a for a in axes if not isinstance(a, int)]
        out = primitive.bind(x, axes=(*positional, *named), axis_index_groups=axis_index_groups)
        return out, dim - sum(a < dim for a in positional)

    return rule


def _unbound_impl(*args, axis_name, **params):
    raise NameError(f"unbound axis name: {axis_name}")


def _lower_like(reduction_p):
    """A positional collective lowers as the reduction it has become."""

    def lowering(ctx, x, *, axes, axis_index_groups):
        return lowering_rules[reduction_p](ctx, x, axes=axes)

    return lowering


# --- psum -----------------------------------------------------------------------------------
psum_p = Primitive("psum")


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` over the members of the mapped axis `axis_name` (a name or a tuple)."""
    return _bind_over_leaves(psum_p, x, axis_name, axis_index_groups)


_psum_impl, _psum_abstract_eval = _positional_reduction(np.sum)
psum_p.def_impl(_psum_impl)
psum_p.def_abstract_eval(_psum_abstract_eval)
psum_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(psum_p)


def _psum_transpose(ct, x, *, axes, axis_index_groups):
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [shapes.broadcast_in_dim(ct, shape, kept)]


transpose_rules[psum_p] = _psum_transpose
lowering_rules[psum_p] = _lower_like(reductions.reduce_sum_p)
batch_rules[psum_p] = _collective_batch_rule(psum_p)
collective_rules[psum_p] = _collective_batch(psum_p, lambda x, n: x * n)

# --- pmax -----------------------------------------------------------------------------------
pmax_p = Primitive("pmax")


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` over the members of the mapped axis `axis_name`."""
    return _bind_over_leaves(pmax_p, x, axis_name, axis_index_groups)


_pmax_impl, _pmax_abstract_eval = _positional_reduction(np.max)
pmax_p.def_impl(_pmax_impl)
pmax_p.def_abstract_eval(_pmax_abstract_eval)
pmax_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(
    pmax_p, "JAX defines none either; jnp.max of all_gather(x, axis_name) has one"
)
lowering_rules[pmax_p] = _lower_like(reductions.reduce_max_p)
batch_rules[pmax_p] = _collective_batch_rule(pmax_p)
collective_rules[pmax_p] = _collective_batch(pmax_p, lambda x, n: x)

# --- pmin -----------------------------------------------------------------------------------
pmin_p = Primitive("pmin")


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` over the members of the mapped axis `axis_name`."""
    return _bind_over_leaves(pmin_p, x, axis_name, axis_index_groups)


_pmin_impl, _pmin_abstract_eval = _positional_reduction(np.min)
pmin_p.def_impl(_pmin_impl)
pmin_p.def_abstract_eval(_pmin_abstract_eval)
pmin_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(
    pmin_p, "JAX defines none either; jnp.min of all_gather(x, axis_name) has one"
)
lowering_rules[pmin_p] = _lower_like(reductions.reduce_min_p)
batch_rules[pmin_p] = _collective_batch_rule(pmin_p)
collective_rules[pmin_p] = _collective_batch(pmin_p, lambda x, n: x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the members of the mapped axis `axis_name`."""
    size = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda v: v / size, psum(x, axis_name, axis_index_groups=axis_index_groups))


# --- all_gather -----------------------------------------------------------------------------
all_gather_p = Primitive("all_gather")


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member's `x`, stacked along a new leading axis (each member gets all of them)."""
    if axis != 0 or tiled:
        raise NotImplementedError("all_gather with axis != 0 or tiled=True is not built yet")
    return all_gather_p.bind(x, axis_name=axis_name)


all_gather_p.def_impl(_unbound_impl)


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, axis_name):
    return ShapedArray((bound_axis_size(axis_name), *x.shape), x.dtype, x.weak_type)


all_gather_p.def_weak_type_rule(weak_if_all_weak)
ad.deflinear(all_gather_p)


def _all_gather_transpose(ct, x, *, axis_name):
    """Each member's operand is row `axis_index` of every member's result, so its cotangent is
    the sum of that row over the members: a reduce-scatter, as the psum of the cotangent sliced
    to this member's row."""
    summed = psum_p.bind(ct, axes=(axis_name,), axis_index_groups=None)
    row = slicing.dynamic_index_in_dim(
        summed, axis_index(axis_name), keepdims=False, allow_negative_indices=False
    )
    return [row]


transpose_rules[all_gather_p] = _all_gather_transpose
lowering_rules[all_gather_p] = lambda ctx, x, *, axis_name: _unbound_impl(axis_name=axis_name)
batch_rules[all_gather_p] = vectorized_batch_rule(all_gather_p)


def _all_gather_collective(trace, value, dim, *, axis_name):
    return batch_at_front(value, dim, trace.axis_size), None


collective_rules[all_gather_p] = _all_gather_collective

# --- axis_index -----------------------------------------------------------------------------
axis_index_p = Primitive("axis_index")


def axis_index(axis_name):
    """The position of the current member along the mapped axis `axis_name` (int32)."""
    return axis_index_p.bind(axis_name=axis_name)


axis_index_p.def_impl(_unbound_impl)


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
    bound_axis_size(axis_name)
    return ShapedArray((), np.int32)


ad.defjvp_zero(axis_index_p)
lowering_rules[axis_index_p] = lambda ctx, *, axis_name: _unbound_impl(axis_name=axis_name)


def _axis_index_collective(trace, *, axis_name):
    return shapes.iota(np.int32, trace.axis_size), 0


collective_rules[axis_index_p] = _axis_index_collective
no_batched_operands(axis_index_p)
