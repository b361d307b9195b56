"""`vmap`: the public vectorizing transformation over the batching interpreter.

It checks the axes specifications as JAX checks them, finds the batch size (naming the
arguments whose sizes disagree by their parameter and their path), runs the function under
`interpreters.batching` and places each output's batch axis where `out_axes` asks.
"""

from __future__ import annotations

import functools

from tracejit._src.api_util import (
    abstractify_arguments,
    argument_paths,
    as_array,
    shaped_abstractify,
)
from tracejit._src.interpreters import batching
from tracejit._src.interpreters.batching import batch_at_front, move_batch_dim
from tracejit._src.lax import reductions
from tracejit._src.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
)


def _broadcast_prefix(prefix, tree, what: str) -> list:
    """`prefix` (an int/None, or a pytree prefix of `tree` with ints/None at its leaves)
    expanded to one entry per leaf of `tree`."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    prefix_tree = tree_structure(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value, got "
            f"specification {prefix!r} for value tree {tree_structure(tree)}."
        ) from err
    axes = tree_flatten(prefix, is_leaf=lambda x: x is None)[0]
    return [axis for sub, axis in zip(subtrees, axes, strict=True) for _ in tree_flatten(sub)[0]]


def _check_axes_leaves(spec, what: str) -> None:
    """vmap's axes specifications hold Python ints (not bools, not NumPy integers) or None."""
    leaves = tree_flatten(spec, is_leaf=lambda x: x is None)[0]
    if not all(leaf is None or type(leaf) is int for leaf in leaves):
        raise TypeError(
            f"vmap {what} must be an int, None, or (nested) container with those types as "
            f"leaves, but got {spec}."
        )


def _vmap_arg_names(fun, args, kwargs) -> list:
    """How JAX names each flat argument in vmap's errors: `argument x['k']` after the
    parameter a positional argument binds to, `args[i]` past the named ones, `kwargs['name']`
    for keyword arguments."""
    return [
        f"argument {head}{path}" if head else path
        for head, path in argument_paths(fun, args, kwargs)
    ]


def _inconsistent_sizes_error(fun, args, kwargs, flat_args, user_axes, sizes, axis_size):
    """JAX's message: one line per size, the most common first, each with an example."""
    names = _vmap_arg_names(fun, args, kwargs)
    lines = [] if axis_size is None else [f"the `axis_size` argument was {axis_size}"]
    groups = sorted(sizes.items(), key=lambda item: -len(item[1]))  # stable: first seen first
    for n, (size, positions) in enumerate(groups):
        i = positions[0]
        aval = shaped_abstractify(flat_args[i])
        shape = ",".join(map(str, aval.shape))
        example = f"axis {user_axes[i]} of {names[i]} of type {aval.dtype.name}[{shape}]"
        if len(positions) == 1:
            lines.append(f"one axis had size {size}: {example}")
        else:
            amount = "most axes" if n == 0 else "some axes"
            lines.append(f"{amount} ({len(positions)} of them) had size {size}, e.g. {example}")
    detail = ";\n".join(f"  * {line}" for line in lines)
    return ValueError(f"vmap got inconsistent sizes for array axes to be mapped:\n{detail}")


def _check_in_axes_spec(in_axes):
    """in_axes as vmap takes it (a list counts as a tuple), its leaves checked."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) is int or isinstance(in_axes, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )
    _check_axes_leaves(in_axes, "in_axes")
    return in_axes


def _flat_in_axes(in_axes, args, kwargs) -> list:
    """One entry of `in_axes` per flat argument, as the user wrote it (keyword arguments are
    mapped along axis 0)."""
    if isinstance(in_axes, tuple):
        if len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        arg_axes = [
            a for arg, ax in zip(args, in_axes) for a in _broadcast_prefix(ax, arg, "in_axes")
        ]
    else:
        arg_axes = _broadcast_prefix(in_axes, args, "in_axes")
    return arg_axes + [0] * len(tree_flatten(kwargs)[0])


def _batch_size(fun, args, kwargs, flat_args, user_axes, axis_size):
    """(the flat axes made non-negative, the batch size): every mapped axis must be in range
    and of one size, which `axis_size` (if given) must equal."""
    flat_axes = list(user_axes)
    sizes = {}  # size -> flat positions of the arguments mapped along an axis of that size
    for i, (x, axis) in enumerate(zip(flat_args, user_axes, strict=True)):
        if axis is None:
            continue
        shape = shaped_abstractify(x).shape
        ndim = len(shape)
        if not -ndim <= axis < ndim:
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies "
                f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                f"is only {ndim} (its shape is {shape})"
            )
        flat_axes[i] = axis % ndim
        sizes.setdefault(shape[axis], []).append(i)
    if len(sizes) > 1 or (sizes and axis_size is not None and axis_size not in sizes):
        raise _inconsistent_sizes_error(fun, args, kwargs, flat_args, user_axes, sizes, axis_size)
    if sizes:
        return flat_axes, next(iter(sizes))
    if axis_size is None:
        raise ValueError(
            "vmap must have at least one non-None value in in_axes or axis_size must be specified"
        )
    return flat_axes, axis_size


def _place_outputs(outs, out_dims, out_tree, out_axes, size, sum_match=False) -> list:
    """Each output with its batch axis where `out_axes` asks (None: not batched; with
    `sum_match`, a batched output asked to be unbatched is summed over its batch axis)."""
    out_value = tree_unflatten(out_tree, outs)
    out_axes_flat = _broadcast_prefix(out_axes, out_value, "out_axes")
    paths = [path for path, _ in tree_flatten_with_path(out_value)[0]]
    results = []
    for out, dim, target, path in zip(outs, out_dims, out_axes_flat, paths, strict=True):
        if target is None:
            if dim is not None and sum_match:
                out, dim = reductions.reduce_sum(out, (dim,)), None
            if dim is not None:
                raise ValueError(
                    f"at vmap out_axes{keystr(path)}, got axis spec None but output was "
                    f"batched on axis {dim}"
                )
            results.append(as_array(out))
            continue
        out = batch_at_front(out, dim, size)
        ndim = len(shaped_abstractify(out).shape)
        if not -ndim <= target < ndim:
            raise ValueError(f"axis {target} is out of bounds for array of dimension {ndim}")
        results.append(as_array(move_batch_dim(out, 0, target % ndim)))
    return results


def vmap(
    fun,
    in_axes=0,
    out_axes=0,
    axis_name=None,
    axis_size=None,
    spmd_axis_name=None,
    sum_match=False,
):
    """Vectorizes `fun` over the axes `in_axes` of its arguments; the outputs get the batch
    axis at `out_axes`. One call computes every batch member at once. With `sum_match`, an
    output that `out_axes` wants unbatched (None) but that depends on the batch is summed
    over it instead of refused. (`spmd_axis_name`, which shards the batch over a device mesh,
    waits for meshes.)

    The axes specifications are checked here, as JAX checks them; errors about the arguments
    (sizes that disagree) name them by their parameter and their path inside it."""
    if spmd_axis_name is not None:
        raise NotImplementedError("vmap's spmd_axis_name needs device meshes, not built yet")
    in_axes = _check_in_axes_spec(in_axes)
    _check_axes_leaves(out_axes, "out_axes")

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        flat_args, in_tree = tree_flatten((args, kwargs))
        abstractify_arguments(fun, flat_args, args, kwargs, "vmap")
        user_axes = _flat_in_axes(in_axes, args, kwargs)
        flat_axes, size = _batch_size(fun, args, kwargs, flat_args, user_axes, axis_size)
        out_info = {}

        def flat_fun(*xs):
            a, kw = tree_unflatten(in_tree, xs)
            out_flat, out_info["tree"] = tree_flatten(fun(*a, **kw))
            return out_flat

        outs, out_dims = batching.vmap_flat(flat_fun, flat_args, flat_axes, size, axis_name)
        results = _place_outputs(outs, out_dims, out_info["tree"], out_axes, size, sum_match)
        return tree_unflatten(out_info["tree"], results)

    return vmap_f
