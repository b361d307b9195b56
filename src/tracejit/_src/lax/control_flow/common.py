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

from tracejit._src.core import ShapedArray
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.jaxpr import ClosedJaxpr, Jaxpr, Var
from tracejit._src.tree_util import (
    flatten_one_level,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)


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


def _structure_difference(a, b, path=()):
    """(key path, node of a, node of b) of the first place the pytrees differ, or None."""
    from tracejit._src.tree_util import _node_type_of

    a_type, b_type = _node_type_of(a), _node_type_of(b)
    if a_type is not b_type:
        return path, a, b
    if treedef_is_leaf(tree_structure(a)):
        return None
    a_pairs, a_aux = a_type.flatten_with_keys(a)
    b_pairs, b_aux = b_type.flatten_with_keys(b)
    if len(a_pairs) != len(b_pairs) or a_aux != b_aux:
        return path, a, b
    for (key, x), (_, y) in zip(a_pairs, b_pairs, strict=True):
        found = _structure_difference(x, y, (*path, key))
        if found is not None:
            return found
    return None


def _describe_node(x) -> str:
    if treedef_is_leaf(tree_structure(x)):
        return "a pytree leaf"
    return f"a {type(x)}"


def explain_structure_mismatch(a, b, a_name: str, b_name: str, root: str) -> str:
    """`The input carry c[0] is a <class 'tuple'> but the corresponding component of the carry
    output is a <class 'dict'>, so their Python types differ.`"""
    found = _structure_difference(a, b)
    if found is None:
        return f"{a_name} and {b_name} have different pytree structures"
    path, x, y = found
    where = f" {root}{keystr(path)}" if root else ""
    if type(x) is type(y) and not treedef_is_leaf(tree_structure(x)):
        return (
            f"The {a_name}{where} is {_describe_node(x)} with {len(flatten_one_level(x)[0])} "
            f"children but the corresponding component of the {b_name} is "
            f"{_describe_node(y)} with {len(flatten_one_level(y)[0])} children, so the "
            "numbers of children do not match."
        )
    return (
        f"The {a_name}{where} is {_describe_node(x)} but the corresponding component of the "
        f"{b_name} is {_describe_node(y)}, so their Python types differ."
    )


def explain_type_mismatch(paths, avals_a, avals_b, a_name: str, b_name: str, root: str):
    """The sentence naming the first leaf whose types differ, or None if they all agree."""
    for path, a, b in zip(paths, avals_a, avals_b, strict=True):
        if a.shape == b.shape and a.dtype == b.dtype:
            continue
        if a.shape != b.shape and a.dtype != b.dtype:
            what = "the shapes and dtypes do not match"
        elif a.shape != b.shape:
            what = "the shapes do not match"
        else:
            what = "the dtypes do not match"
        where = f" {root}{keystr(path)}" if root else ""
        return (
            f"The {a_name}{where} has type {_type_str(a)} but the corresponding {b_name} has "
            f"type {_type_str(b)}, so {what}."
        )
    return None


def leaf_paths(tree_def, num_leaves: int):
    """The key path of each leaf of a pytree structure."""
    example = tree_unflatten(tree_def, [0] * num_leaves)
    return [path for path, _ in tree_flatten_with_path(example)[0]]


def check_carry(loop: str, in_tree, in_avals, out_tree, out_avals, root: str = "c"):
    """Raises JAX's TypeError when a loop body's carry output differs from its carry input in
    pytree structure or in a leaf's shape/dtype (weak types may differ)."""
    if in_tree != out_tree:
        a = tree_unflatten(in_tree, [0] * in_tree.num_leaves)
        b = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        raise TypeError(
            f"{loop} body function carry input and carry output must have the same pytree "
            "structure, but they differ:\n\n"
            + explain_structure_mismatch(a, b, "input carry", "carry output", root)
            + "\n\nRevise the function so that the carry output has the same pytree structure "
            "as the carry input."
        )
    message = explain_type_mismatch(
        leaf_paths(in_tree, len(in_avals)),
        in_avals,
        out_avals,
        "input carry component",
        "output carry component",
        root,
    )
    if message is not None:
        raise TypeError(
            f"{loop} body function carry input and carry output must have equal types, but "
            f"they differ:\n\n{message}\n\nRevise the function so that all output types match "
            "the corresponding input types."
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
