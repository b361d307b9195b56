"""Pytrees: nested containers of arrays, taken apart into a flat list and put back together.

Every transformation (`jit`, `grad`, `vmap`, ...) works on flat lists of arrays: a tracer per
input, an output per result. Users, though, pass and return nested structures: tuples of
parameters, dicts of layers, dataclasses of optimizer state. A *pytree* is such a structure, and
this module converts between the two views:

    leaves, treedef = tree_flatten(tree)      # [array, array, ...], the shape of the nesting
    tree = tree_unflatten(treedef, leaves)    # the same nesting, around new leaves

A transformation flattens its arguments, works on the leaves, and unflattens its results with the
treedef it recorded. `jit` also uses the treedef as part of its cache key, so flattening runs on
every call and is kept fast: `_flatten` dispatches on `type(x)` through one dict lookup, and a
treedef is an immutable nested tuple wrapped in a `PyTreeDef` that caches its hash.

Which types are nodes (have children) and which are leaves:

* tuple, list, dict (children in sorted key order), None (a node without children, not a leaf);
* namedtuples, `collections.OrderedDict` (insertion order), `collections.defaultdict`;
* any class registered with `register_pytree_node` and its variants (`register_dataclass`, ...).

Everything else, arrays and Python scalars included, is a leaf. The node types, the registry
and the key path entries live in `tree_registry`; this module walks trees with them, and is
the one the rest of the package (and `tracejit.tree_util`) imports from.

The internal treedef encoding: a leaf is `None`; any other node is the triple
`(node_type, aux_data, children)` where `node_type` is a `_NodeType`, `aux_data` is the hashable
static part (dict keys, a custom class's metadata) and `children` a tuple of encoded subtrees.
Plain tuples compare and hash structurally, which is what treedef equality means.
"""

import dataclasses
import difflib
import functools
from collections.abc import Callable, Iterable
from typing import Any

from tracejit._src.tree_registry import (  # noqa: F401  (the package imports them from here)
    _DICT,
    _LEAF,
    _LIST,
    _NONE,
    _NONE_NODE,
    _TUPLE,
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    _classify,
    _dispatch,
    _key_label,
    _namedtuple_types,
    _node_type_of,
    _sorted_keys,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    static,
)

# ---------------------------------------------------------------------------------------------
# Flattening. Three walkers share the encoding: the fast one (no is_leaf, no key paths) is what
# transformations call on every invocation; the other two add the optional features.


def _flatten(tree, leaves, _lookup=_dispatch.get):
    """Append the leaves of `tree` to `leaves`; return its encoded treedef.

    The hot path of every transformation call, hence its shape: the dispatch table's `get` is
    bound once as a default argument, and children that are leaves (the usual case) are handled
    in the loop instead of by a recursive call. An explicit loop also beats a comprehension
    here, since on Python 3.11 a comprehension is one more function call.
    """
    node_type = _lookup(type(tree))
    if node_type is None:
        node_type = _classify(type(tree))
    if node_type is _LEAF:
        leaves.append(tree)
        return None
    if node_type is _TUPLE or node_type is _LIST:
        children = tree
        aux = None
    elif node_type is _DICT:
        aux = _sorted_keys(tree)
        children = map(tree.__getitem__, aux)
    elif node_type is _NONE:
        return _NONE_NODE
    else:
        children, aux = node_type.flatten(tree)
    encoded = []
    for child in children:
        if _lookup(type(child)) is _LEAF:
            leaves.append(child)
            encoded.append(None)
        else:
            encoded.append(_flatten(child, leaves))
    return (node_type, aux, tuple(encoded))


def flatten_function(node) -> Callable | None:
    """What takes `node` apart (`node -> (children, aux_data)`, as `tree_flatten` calls it), or
    None where `node` is a leaf: for code that walks trees itself (the C accelerator's jit
    call walks tuples, lists and dicts and asks this of other nodes)."""
    node_type = _node_type_of(node)
    return None if node_type is _LEAF else node_type.flatten


def _flatten_is_leaf(tree, leaves, is_leaf):
    """`_flatten`, with `is_leaf(subtree)` able to stop the descent anywhere."""
    if is_leaf(tree):
        leaves.append(tree)
        return None
    node_type = _node_type_of(tree)
    if node_type is _LEAF:
        leaves.append(tree)
        return None
    children, aux = node_type.flatten(tree)
    return (node_type, aux, tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children]))


def _flatten_with_path(tree, path, pairs, is_leaf, is_leaf_takes_path):
    """Append `(key_path, leaf)` pairs to `pairs`; return the encoded treedef."""
    if is_leaf is not None and (is_leaf(path, tree) if is_leaf_takes_path else is_leaf(tree)):
        pairs.append((path, tree))
        return None
    node_type = _node_type_of(tree)
    if node_type is _LEAF:
        pairs.append((path, tree))
        return None
    keyed_children, aux = node_type.flatten_with_keys(tree)
    children = tuple(
        [
            _flatten_with_path(child, (*path, key), pairs, is_leaf, is_leaf_takes_path)
            for key, child in keyed_children
        ]
    )
    return (node_type, aux, children)


def _unflatten(node, next_leaf):
    """Rebuild the tree encoded by `node` (not a leaf), drawing leaves from `next_leaf()`."""
    node_type, aux, children = node
    values = []
    for child in children:
        values.append(next_leaf() if child is None else _unflatten(child, next_leaf))
    if node_type is _TUPLE:
        return tuple(values)
    if node_type is _LIST:
        return values
    if node_type is _DICT:
        return dict(zip(aux, values))
    return node_type.unflatten(aux, tuple(values))


# ---------------------------------------------------------------------------------------------
# Treedefs.


def _count_leaves(node) -> int:
    if node is None:
        return 1
    return sum([_count_leaves(child) for child in node[2]])


def _count_nodes(node) -> int:
    if node is None:
        return 1
    return 1 + sum([_count_nodes(child) for child in node[2]])


def _node_repr(node) -> str:
    if node is None:
        return "*"
    node_type, aux, children = node
    parts = [_node_repr(child) for child in children]
    if node_type is _TUPLE:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if node_type is _LIST:
        return "[" + ", ".join(parts) + "]"
    if node_type is _DICT:
        items = ", ".join(f"{key!r}: {part}" for key, part in zip(aux, parts, strict=True))
        return "{" + items + "}"
    if node_type is _NONE:
        return "None"
    return f"CustomNode({node_type.label(aux)}, [{', '.join(parts)}])"


def _without_aux(node):
    if node is None:
        return None
    return (node[0], tuple([_without_aux(child) for child in node[2]]))


def _replace_leaves(node, replacement):
    if node is None:
        return replacement
    node_type, aux, children = node
    return (node_type, aux, tuple([_replace_leaves(child, replacement) for child in children]))


class PyTreeDef:
    """The structure of a pytree with the leaves taken out: what `tree_unflatten` needs to put
    new leaves back, and what `jit` compares to decide whether a call can reuse a compilation.

    Immutable; equal when the node types, their static data and the nesting agree; its hash
    leaves the static data out.
    """

    __slots__ = ("_hash", "_node", "_num_leaves")

    def __init__(self, node, num_leaves: int):
        self._node = node
        self._num_leaves = num_leaves
        self._hash = None  # computed when first asked: jit hashes the treedef of every call

    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Nodes of every kind in the tree, leaves and None included."""
        return _count_nodes(self._node)

    def children(self) -> list["PyTreeDef"]:
        """The treedefs of the root's children (none for a leaf)."""
        if self._node is None:
            return []
        return [PyTreeDef(child, _count_leaves(child)) for child in self._node[2]]

    def node_data(self):
        """`(type, aux_data)` of the root node; None for a leaf."""
        if self._node is None:
            return None
        node_type, aux, _ = self._node
        if node_type is _DICT:
            return dict, list(aux)
        return node_type.type, aux

    def unflatten(self, leaves: Iterable) -> Any:
        """Build the tree with this structure around `leaves` (in flattening order)."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        if len(leaves) != self._num_leaves:
            if len(leaves) < self._num_leaves:
                raise ValueError(
                    f"Too few leaves for PyTreeDef; expected {self._num_leaves}, got {len(leaves)}"
                )
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self._num_leaves}.")
        if self._node is None:
            return leaves[0]
        return _unflatten(self._node, iter(leaves).__next__)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` found where this (prefix) structure has its leaves.

        `tree` must have this structure down to those points; below them it may go on.
        """
        subtrees = []
        _flatten_up_to(self._node, tree, subtrees)
        return subtrees

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """The structure obtained by putting a copy of `inner` at every leaf of this one."""
        return PyTreeDef(
            _replace_leaves(self._node, inner._node), self._num_leaves * inner._num_leaves
        )

    def __eq__(self, other):
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self is other or (
            self._num_leaves == other._num_leaves and self._node == other._node
        )

    def __hash__(self):
        """Hashes the node types and the nesting only: custom nodes' aux data may be
        unhashable, and dict keys go along with it (as in JAX); equality still compares them."""
        if self._hash is None:
            self._hash = hash(_without_aux(self._node))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({_node_repr(self._node)})"


_LEAF_TREEDEF = PyTreeDef(None, 1)


def _flatten_up_to(node, tree, out):
    """Walk `node` (a prefix structure) and `tree` together, appending the subtrees of `tree`
    found at the prefix's leaves; raise ValueError where the two disagree."""
    if node is None:
        out.append(tree)
        return
    node_type, aux, children = node
    if node_type is _TUPLE or node_type is _LIST:
        name = "tuple" if node_type is _TUPLE else "list"
        if type(tree) is not node_type.type:
            raise ValueError(f"Expected {name}, got {tree!r}.")
        if len(tree) != len(children):
            raise ValueError(
                f"{name.capitalize()} arity mismatch: {len(tree)} != {len(children)};"
                f" {name}: {tree!r}."
            )
        values = tree
    elif node_type is _DICT:
        if type(tree) is not dict:
            raise ValueError(f"Expected dict, got {tree!r}.")
        keys = _sorted_keys(tree)
        if keys != aux:
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(aux)!r}; present keys: {list(keys)!r}."
            )
        values = [tree[key] for key in keys]
    elif node_type is _NONE:
        if tree is not None:
            raise ValueError(
                f"Expected None, got {tree!r}.\n\nNone is a pytree node without children, not a"
                " leaf, so it is a prefix of None only. To let a None in the first tree stand for"
                " any subtree, make it a leaf and skip it:\n"
                "  tree_map(lambda x, y: None if x is None else f(x, y), a, b,"
                " is_leaf=lambda x: x is None)"
            )
        return
    elif type(tree) is not node_type.type:
        if _namedtuple_types.get(node_type.type) is node_type:
            if not (isinstance(tree, tuple) and hasattr(type(tree), "_fields")):
                raise ValueError(f"Expected named tuple, got {tree!r}.")
            raise ValueError(
                f"Named tuple type mismatch: expected type: {node_type.type}, tuple: {tree!r}."
            )
        raise ValueError(
            f"Custom node type mismatch: expected type: {node_type.type}, value: {tree!r}."
        )
    else:
        values, tree_aux = node_type.flatten(tree)
        values = list(values)
        if len(values) != len(children):
            raise ValueError(
                f"Custom type arity mismatch: {len(values)} != {len(children)}; value: {tree!r}."
            )
        if tree_aux != aux:
            raise ValueError(
                f"Mismatch custom node data: {aux!r} != {tree_aux!r}; value: {tree!r}."
            )
    for child, value in zip(children, values, strict=True):
        _flatten_up_to(child, value, out)


# ---------------------------------------------------------------------------------------------
# Explaining structure mismatches between a prefix tree and a full tree, with key paths.


def _prefix_mismatch(prefix, full, name, is_leaf, takes_path, path=()) -> str | None:
    """Describe the first place where `prefix` is not a prefix of `full`, or return None."""
    if is_leaf is not None and (is_leaf(path, prefix) if takes_path else is_leaf(prefix)):
        return None
    node_type = _node_type_of(prefix)
    if node_type is _LEAF:
        return None
    difference = _type_difference(prefix, full, name, node_type)
    if difference is None:
        prefix_pairs, prefix_aux = node_type.flatten_with_keys(prefix)
        full_pairs, full_aux = node_type.flatten_with_keys(full)
        difference = _children_difference(
            prefix, name, prefix_pairs, full_pairs, prefix_aux, full_aux
        )
    if difference is not None:
        kind, explanation = difference
        return (
            f"pytree structure error: {kind} at key path\n    {name}{keystr(path)}\n" + explanation
        )
    for (key, prefix_child), (_, full_child) in zip(prefix_pairs, full_pairs, strict=True):
        message = _prefix_mismatch(
            prefix_child, full_child, name, is_leaf, takes_path, (*path, key)
        )
        if message is not None:
            return message
    return None


def _type_difference(prefix, full, name, node_type) -> tuple[str, str] | None:
    """(what differs, explanation) when the root nodes differ in type or sequence length."""
    if type(prefix) is not type(full):
        return "different types", (
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}."
        )
    if (node_type is _TUPLE or node_type is _LIST) and len(prefix) != len(full):
        kind = type(prefix).__name__
        return f"different lengths of {kind}", (
            f"At that key path, the prefix pytree {name} has a subtree of type {kind} of length"
            f" {len(prefix)}, but the full pytree has a subtree of the same type but of length"
            f" {len(full)}."
        )
    return None


def _children_difference(prefix, name, prefix_pairs, full_pairs, prefix_aux, full_aux):
    """(what differs, explanation) when root nodes of one type differ in their children's
    number or keys, or in their metadata; None when they agree."""
    prefix_keys = [_key_label(key) for key, _ in prefix_pairs]
    full_keys = [_key_label(key) for key, _ in full_pairs]
    subtree = (
        f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
    )
    same_type = "but at the same key path the full pytree has a subtree of the same type but with"
    if len(prefix_pairs) != len(full_pairs):
        difference = [k for k in prefix_keys if k not in full_keys]
        difference += [k for k in full_keys if k not in prefix_keys]
        return "different numbers of pytree children", (
            f"{subtree}with {len(prefix_keys)} child keys\n"
            f"    {' '.join(prefix_keys)}\n"
            f"{same_type} {len(full_keys)} child keys\n"
            f"    {' '.join(full_keys)}\n"
            "so the symmetric difference on key sets is\n"
            f"    {' '.join(difference)}"
        )
    if prefix_aux != full_aux:
        diff = "\n".join(
            "    " + line for line in difflib.ndiff([str(prefix_aux)], [str(full_aux)])
        )
        return "different pytree metadata", (
            f"{subtree}with metadata\n"
            f"    {prefix_aux}\n"
            f"{same_type} metadata\n"
            f"    {full_aux}\n"
            "so the diff in the metadata at these pytree nodes is\n"
            f"{diff}"
        )
    if prefix_keys != full_keys:
        return "different pytree keys", (
            f"{subtree}with keys\n    {' '.join(prefix_keys)}\n"
            f"{same_type} keys\n    {' '.join(full_keys)}"
        )
    return None


def _subtrees_matching(treedef, prefix, full, name, is_leaf=None, takes_path=False):
    """`treedef.flatten_up_to(full)`, with a key-path explanation when the structures differ
    (`treedef` is the structure of `prefix`, flattened with `is_leaf`)."""
    try:
        return treedef.flatten_up_to(full)
    except ValueError:
        message = _prefix_mismatch(prefix, full, name, is_leaf, takes_path)
        if message is None:
            raise
        raise ValueError(message) from None


# ---------------------------------------------------------------------------------------------
# The public functions.


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """`(leaves, treedef)`: the leaves of `tree` left to right (dicts in sorted key order) and
    its structure. `is_leaf(subtree)` returning True makes that subtree a leaf."""
    leaves = []
    if is_leaf is None:
        node = _flatten(tree, leaves)
    else:
        node = _flatten_is_leaf(tree, leaves, is_leaf)
    if node is None:
        return leaves, _LEAF_TREEDEF
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """The tree with structure `treedef` around `leaves`; inverse of `tree_flatten`."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, in `tree_flatten` order."""
    leaves = []
    if is_leaf is None:
        _flatten(tree, leaves)
    else:
        _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    """A tree shaped like `tree` whose leaves are `f(leaf, *matching leaves of rest)`.

    Each tree in `rest` must have the structure of `tree` down to its leaves, and may go deeper
    there: the whole subtree at that point is what `f` receives.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(leaf) for leaf in leaves])
    columns = [leaves]
    for other in rest:
        columns.append(_subtrees_matching(treedef, tree, other, "tree_map tree", is_leaf))
    return treedef.unflatten([f(*xs) for xs in zip(*columns, strict=True)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path=False):
    """`tree_flatten`, with each leaf paired with the key path leading to it.

    With `is_leaf_takes_path=True`, `is_leaf` is called as `is_leaf(key_path, subtree)`.
    """
    pairs = []
    node = _flatten_with_path(tree, (), pairs, is_leaf, is_leaf_takes_path)
    return pairs, PyTreeDef(node, len(pairs))


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path=False):
    """`(key_path, leaf)` pairs for the leaves of `tree`."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None, is_leaf_takes_path=False
) -> Any:
    """`tree_map` where `f` also receives the key path: `f(key_path, leaf, *others)`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[leaf for _, leaf in pairs]]
    name = "tree_map_with_path tree"
    for other in rest:
        columns.append(_subtrees_matching(treedef, tree, other, name, is_leaf, is_leaf_takes_path))
    paths = [path for path, _ in pairs]
    return treedef.unflatten([f(*xs) for xs in zip(paths, *columns, strict=True)])


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def tree_reduce(function: Callable, tree: Any, initializer=_MISSING, is_leaf=None) -> Any:
    """`functools.reduce(function, leaves, initializer)` over the leaves of `tree`."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf of `tree` is truthy (True for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every element of `iterable` is a leaf (None is not: it is a node)."""
    if is_leaf is None:
        return all(_node_type_of(x) is _LEAF for x in iterable)
    return all(is_leaf(x) or _node_type_of(x) is _LEAF for x in iterable)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose):
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    `[(1, 2), (3, 4)]` with outer `[*, *]` and inner `(*, *)` becomes `([1, 3], [2, 4])`.
    `inner_treedef=None` takes the structure of the first inner tree.
    """
    leaves, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [leaves[i * inner_size : (i + 1) * inner_size] for i in range(outer_size)]
    columns = zip(*rows, strict=True) if rows else [()] * inner_size
    return inner_treedef.unflatten([outer_treedef.unflatten(column) for column in columns])


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """A tree shaped like `full_tree` where each leaf of `prefix_tree` is repeated over the
    whole subtree of `full_tree` at its position: `((1, 2), ((3, 4), 5))` gives `((1, 1), 2)`."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = _subtrees_matching(prefix_def, prefix_tree, full_tree, "tree_broadcast", is_leaf)
    broadcast = []
    for leaf, subtree in zip(prefix_leaves, subtrees, strict=True):
        sub_def = tree_structure(subtree, is_leaf)
        broadcast.append(sub_def.unflatten([leaf] * sub_def.num_leaves))
    return prefix_def.unflatten(broadcast)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` has a single node: a leaf, but also None or an empty container (as
    in JAX, which counts nodes here)."""
    return treedef._node is None or not treedef._node[2]


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the given structures."""
    treedefs = list(treedefs)
    node = (_TUPLE, None, tuple([treedef._node for treedef in treedefs]))
    return PyTreeDef(node, sum(treedef.num_leaves for treedef in treedefs))


def flatten_one_level(tree: Any):
    """`(children, aux_data)` of the root node of `tree`; ValueError for a leaf."""
    node_type = _node_type_of(tree)
    if node_type is _LEAF:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return node_type.flatten(tree)


def flatten_one_level_with_keys(tree: Any):
    """`(children paired with their key entries, aux_data)` of the root node of `tree`;
    ValueError for a leaf."""
    node_type = _node_type_of(tree)
    if node_type is _LEAF:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    pairs, aux = node_type.flatten_with_keys(tree)
    return tuple(pairs), aux


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (built in, registered, or a namedtuple)."""
    return (_dispatch.get(typ) or _classify(typ)) is not _LEAF


def tree_reduce_associative(
    operation: Callable, tree: Any, *, identity=_MISSING, is_leaf: Callable | None = None
) -> Any:
    """The leaves of `tree` combined with the associative `operation` as a balanced tree of
    calls (`op(op(a, b), op(c, d))`), which keeps the depth of the computation logarithmic;
    `identity` is the result for a tree without leaves."""

    def reduce(leaves):
        if not leaves:
            if identity is _MISSING:
                raise TypeError("Must specify identity for parallel reduction of empty sequence.")
            return identity
        if len(leaves) == 1:
            return leaves[0]
        half = len(leaves) // 2
        return operation(reduce(leaves[:half]), reduce(leaves[half:]))

    return reduce(tree_leaves(tree, is_leaf=is_leaf))


class PyTreeRegistry:
    """JAX's `tree_util.default_registry` as an object: the registry's operations as methods,
    for code written against it. tracejit has one registry, so this is a view of it."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, is_leaf=leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree):
        """`(children, aux_data)`, or None for a leaf."""
        if _node_type_of(tree) is _LEAF:
            return None
        return flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        """`(key-child pairs, aux_data)`, or None for a leaf."""
        if _node_type_of(tree) is _LEAF:
            return None
        return flatten_one_level_with_keys(tree)

    def is_node(self, typ) -> bool:
        return is_tree_node(typ)

    def register_node(self, nodetype, to_iterable, from_iterable, to_iterable_with_keys=None):
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        register_dataclass(nodetype, data_fields, meta_fields)


default_registry = PyTreeRegistry()


# ---------------------------------------------------------------------------------------------
# Partial: a functools.partial whose bound arguments are pytree children.


@dataclasses.dataclass(frozen=True)
class _OpaqueCallable:
    """Wraps a partial used as the function of a `Partial`, so that `functools.partial` does not
    merge the two (which would move the inner partial's arguments into the outer's children).
    The inner partial then counts as static data, compared and hashed as itself."""

    wrapped: Callable

    def __call__(self, *args, **kwargs):
        return self.wrapped(*args, **kwargs)


class Partial(functools.partial):
    """`functools.partial` that is a pytree: the bound arguments are its children and the
    function its static data, so a `Partial` can cross a `jit` boundary as an argument or
    result with its bound arrays traced (the function must be hashable)."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            func = _OpaqueCallable(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda partial: ((partial.args, partial.keywords), partial.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
