"""What the control-flow primitives share: staging the user's functions, and their type errors.

Python `if` and `for` cannot branch or loop on traced values, so control flow becomes
higher-order primitives (`cond`, `while`, `scan`) whose bodies are jaxprs. A body is staged from
the user's function once, on abstract values: its closure constants (arrays and tracers of
enclosing transformations it reads) are hoisted out as leading inputs, so the primitive receives
them as ordinary operands and every transformation sees them:

    lax.cond(p, lambda x: x * w, lambda x: x, x)      cond[branches=(
                                                        { lambda ; a b. let  in (b,) }
                                                        { lambda ; c d. let e = mul d c in (e,) }
                                                      )] i w x
"""

from __future__ import annotations

from tracejit._src import dtypes
from tracejit._src.config import config
from tracejit._src.core import ShapedArray, current_trace
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, Var
from tracejit._src.lax import conversions
from tracejit._src.tree_util import _node_type_of as node_type_of
from tracejit._src.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)


def runs_python() -> bool:
    """Under `disable_jit`, eager control flow calls the user's Python functions directly (so
    prints and breakpoints in them run every iteration), as JAX does."""
    return config.disable_jit and type(current_trace()) is EvalTrace


def stage_function(fun, in_tree, in_avals, transformation: str):
    """Stages `fun(*args)`, its arguments the pytree `in_tree` of `in_avals`, into a jaxpr that
    takes its closure constants first. Returns (closed jaxpr without consts, consts, out_tree)."""
    out_trees = []

    def flat_fun(*flat_args):
        out = fun(*tree_unflatten(in_tree, flat_args))
        leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return leaves

    closed = trace_to_jaxpr(flat_fun, in_avals, DebugInfo(fun, transformation))
    jaxpr = closed.jaxpr
    hoisted = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(hoisted, []), closed.consts, out_trees[0]


def with_leading_inputs(closed: ClosedJaxpr, avals, position: int = 0) -> ClosedJaxpr:
    """`closed` taking extra inputs of `avals`, unused, at `position` among its inputs: how
    branches come to share one operand list."""
    jaxpr = closed.jaxpr
    extra = [Var(aval) for aval in avals]
    invars = jaxpr.invars[:position] + extra + jaxpr.invars[position:]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns), closed.consts)


def function_name(fun) -> str:
    """`f at file.py:12`, as JAX names user functions in control-flow errors."""
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None) or type(fun).__name__
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name


def _type_str(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def structure_difference(a, b, path=()):
    """Where two pytrees first differ: (key path, what a is there, what b is, why they differ)
    in the words of JAX's control-flow errors, or None if their structures agree."""
    a_type, b_type = node_type_of(a), node_type_of(b)
    if a_type is not b_type:
        return path, _describe_node(a), _describe_node(b), "their Python types differ"
    if treedef_is_leaf(tree_structure(a)):
        return None
    a_pairs, a_aux = a_type.flatten_with_keys(a)
    b_pairs, b_aux = b_type.flatten_with_keys(b)
    if isinstance(a, (tuple, list)) and len(a_pairs) != len(b_pairs):
        kind = type(a).__name__
        return (
            path,
            f"a {kind} of length {len(a_pairs)}",
            f"a {kind} of length {len(b_pairs)}",
            "the lengths do not match",
        )
    if a_aux != b_aux:
        return (
            path,
            f"a {type(a)} with pytree metadata {a_aux}",
            f"a {type(b)} with pytree metadata {b_aux}",
            "the pytree node metadata does not match",
        )
    if len(a_pairs) != len(b_pairs):
        return (
            path,
            f"a {type(a)} with {len(a_pairs)} children",
            f"a {type(b)} with {len(b_pairs)} children",
            "the numbers of children do not match",
        )
    for (key, x), (_, y) in zip(a_pairs, b_pairs, strict=True):
        found = structure_difference(x, y, (*path, key))
        if found is not None:
            return found
    return None


def _describe_node(x) -> str:
    if x is not None and treedef_is_leaf(tree_structure(x)):
        return "a pytree leaf"
    return f"a {type(x)}"


def type_difference(paths, avals_a, avals_b):
    """The first leaf whose shape or dtype differ: (key path, type of a, type of b, why), or
    None. Weak types may differ."""
    for path, a, b in zip(paths, avals_a, avals_b, strict=True):
        if a.shape == b.shape and a.dtype == b.dtype:
            continue
        if a.shape != b.shape and a.dtype != b.dtype:
            why = "the dtypes do not match, and the shapes do not match"
        elif a.shape != b.shape:
            why = "the shapes do not match"
        else:
            why = "the dtypes do not match"
        return path, _type_str(a), _type_str(b), why
    return None


def example_tree(tree_def):
    """A pytree of the structure `tree_def` (its leaves zeros): what the error messages walk."""
    return tree_unflatten(tree_def, [0] * tree_def.num_leaves)


def leaf_paths(tree_def, num_leaves: int):
    """The key path of each leaf of a pytree structure."""
    example = tree_unflatten(tree_def, [0] * num_leaves)
    return [path for path, _ in tree_flatten_with_path(example)[0]]


def check_carry(loop: str, in_tree, in_avals, out_tree, out_avals, root: str = "c"):
    """Raises JAX's TypeError when a loop body's carry output differs from its carry input in
    pytree structure or in a leaf's shape/dtype (weak types may differ)."""

    def carry(path):
        return f"input carry component {root}{keystr(path)}" if path else f"input carry {root}"

    if in_tree != out_tree:
        path, a, b, why = structure_difference(example_tree(in_tree), example_tree(out_tree))
        raise TypeError(
            f"{loop} body function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe {carry(path)} is {a} but the corresponding "
            f"component of the carry output is {b}, so {why}.\n\nRevise the function so that "
            "the carry output has the same pytree structure as the carry input."
        )
    found = type_difference(leaf_paths(in_tree, len(in_avals)), in_avals, out_avals)
    if found is not None:
        path, a, b, why = found
        raise TypeError(
            f"{loop} body function carry input and carry output must have equal types, but "
            f"they differ:\n\nThe {carry(path)} has type {a} but the corresponding output "
            f"carry component has type {b}, so {why}.\n\nRevise the function so that all "
            "output types match the corresponding input types."
        )


def reorder_jaxpr(closed: ClosedJaxpr, in_order=None, out_order=None) -> ClosedJaxpr:
    """`closed` with its inputs (outputs) listed in the order of the indices `in_order`
    (`out_order`; an index may be left out to drop that output): primitives that group their
    operands (consts, carry, xs) use it to fit a transformed body to their layout."""
    jaxpr = closed.jaxpr
    invars = jaxpr.invars if in_order is None else [jaxpr.invars[i] for i in in_order]
    outvars = jaxpr.outvars if out_order is None else [jaxpr.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, invars, outvars, jaxpr.eqns), closed.consts)


def split_list(values, sizes) -> list:
    """`values` cut into consecutive pieces of `sizes` (and the rest)."""
    values, pieces = list(values), []
    for size in sizes:
        pieces.append(values[:size])
        values = values[size:]
    pieces.append(values)
    return pieces


def merge_by_mask(mask, if_true, if_false) -> list:
    """Interleaves two lists by a mask: position i comes from `if_true` where `mask[i]`."""
    true_iter, false_iter = iter(if_true), iter(if_false)
    return [next(true_iter) if m else next(false_iter) for m in mask]


def promote_weak_carries(leaves, in_avals, out_avals):
    """A weakly typed initial carry (a Python scalar) is promoted, as JAX does, to the type it
    and the body's output promote to (`0` with an f32 output: f32), then the body is staged
    again; an output of another kind still fails `check_carry` (`0.` made int32). Returns the
    promoted leaves, or None when none changes."""
    promoted, changed = [], False
    for x, a, b in zip(leaves, in_avals, out_avals, strict=True):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            dtype = dtypes.binary_result(a.dtype, True, b.dtype, b.weak_type)[0]
            if dtype != a.dtype:
                x, changed = conversions.convert_element_type(x, dtype), True
        promoted.append(x)
    return promoted if changed else None


def fixed_point(carry_flags, flags_of_outputs):
    """Loop-carried properties (nonzero tangent, unknown, batched) spread through the body:
    a carry has one if its input or its output does. Iterates to the fixed point."""
    carry_flags = list(carry_flags)
    for _ in range(len(carry_flags) + 1):
        out_flags = flags_of_outputs(carry_flags)
        new = [a or b for a, b in zip(carry_flags, out_flags[: len(carry_flags)], strict=True)]
        if new == carry_flags:
            return carry_flags
        carry_flags = new
    return carry_flags
