"""What a pytree node is: the key path entries that name a node's children, the node types
that take nodes apart and rebuild them, and the registry that maps a Python type to its node
type (built-in containers, namedtuples, and the classes users register).

`tree_util` walks trees with this registry; it is kept apart so that the rules for *which*
values are nodes read in one place, away from the hot flattening loop. `_flatten` in
`tree_util` reads `_dispatch` directly (one dict lookup per value); every other lookup goes
through `_node_type_of`.
"""

import collections
import dataclasses
from collections.abc import Callable, Hashable
from typing import Any, TypeAlias

# ---------------------------------------------------------------------------------------------
# Key path entries: how one step from a node to a child is named.


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The position of a child in a tuple or list; prints as `[0]`."""

    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The key of a child in a dict (or OrderedDict, defaultdict); prints as `['a']`."""

    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute holding a child (namedtuples, dataclasses); prints as `.name`."""

    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The position of a child among a custom node's flattened children, for nodes registered
    without a key-aware flatten function; prints as `[<flat index 0>]`."""

    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry: TypeAlias = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | Any
KeyPath: TypeAlias = tuple[KeyEntry, ...]


def _key_label(key) -> str:
    """The bare name of a key entry (`0`, `a`, `name`), as `keystr(..., simple=True)` shows it."""
    if type(key) is SequenceKey:
        return str(key.idx)
    if type(key) is DictKey or type(key) is FlattenedIndexKey:
        return str(key.key)
    if type(key) is GetAttrKey:
        return key.name
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path: `['a'][0].x` by default, `a/0/x` with `simple=True, separator='/'`."""
    if simple:
        return separator.join(_key_label(key) for key in keys)
    return separator.join(str(key) for key in keys)


# ---------------------------------------------------------------------------------------------
# Node types and the registry.


class _NodeType:
    """How to take one kind of node apart and rebuild it.

    Compared by identity: two treedefs are equal only if their nodes came from the same entry.
    """

    __slots__ = ("_flatten_with_keys", "_label", "flatten", "type", "unflatten")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys=None, label=None):
        if flatten is None:  # derive it from the key-aware one by dropping the keys

            def flatten(node):
                pairs, aux = flatten_with_keys(node)
                return tuple([child for _, child in pairs]), aux

        self.type = nodetype
        self.flatten = flatten  # node -> (iterable of children, aux_data)
        self.unflatten = unflatten  # (aux_data, tuple of children) -> node
        self._flatten_with_keys = flatten_with_keys  # node -> (iterable of (key, child), aux)
        self._label = label  # aux_data -> "Name[...]" in CustomNode(...) reprs

    def flatten_with_keys(self, node):
        """Children paired with their key entries; flat indices when the type names none."""
        if self._flatten_with_keys is not None:
            pairs, aux = self._flatten_with_keys(node)
            return list(pairs), aux
        children, aux = self.flatten(node)
        return [(FlattenedIndexKey(i), child) for i, child in enumerate(children)], aux

    def label(self, aux) -> str:
        if self._label is not None:
            return self._label(aux)
        return f"{self.type.__name__}[{aux}]"

    def __repr__(self):
        return f"<pytree node type {self.type.__name__}>"


def _sorted_keys(mapping) -> tuple:
    try:
        return tuple(sorted(mapping))
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _dict_keys_with_children(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], keys


def _defaultdict_keys_with_children(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


def _enumerate_sequence(seq):
    return [(SequenceKey(i), child) for i, child in enumerate(seq)], None


_TUPLE = _NodeType(
    tuple, lambda t: (t, None), lambda aux, children: tuple(children), _enumerate_sequence
)
_LIST = _NodeType(
    list, lambda t: (t, None), lambda aux, children: list(children), _enumerate_sequence
)
_DICT = _NodeType(
    dict,
    None,
    lambda keys, children: dict(zip(keys, children, strict=True)),
    _dict_keys_with_children,
)
_NONE = _NodeType(
    type(None), lambda n: ((), None), lambda aux, children: None, lambda n: ((), None)
)
_ORDERED_DICT = _NodeType(
    collections.OrderedDict,
    None,
    lambda keys, children: collections.OrderedDict(zip(keys, children, strict=True)),
    lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)),
)
_DEFAULT_DICT = _NodeType(
    collections.defaultdict,
    None,
    lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children, strict=True)),
    _defaultdict_keys_with_children,
)

# Marks "this type is a leaf" in the dispatch table.
_LEAF = object()
# The encoded treedef of the None node (it has no children and no aux data).
_NONE_NODE = (_NONE, None, ())

# Types registered explicitly (built-ins included): registering one twice is an error.
_registry: dict[type, _NodeType] = {
    node_type.type: node_type
    for node_type in (_TUPLE, _LIST, _DICT, _NONE, _ORDERED_DICT, _DEFAULT_DICT)
}
# What `_flatten` looks up: the registry plus every type classified so far (leaf types and
# namedtuple classes), so that a leaf also costs a single dict lookup after its first visit.
_dispatch: dict[type, Any] = dict(_registry)
# Bounds `_dispatch` when a program creates classes on the fly; past it, classify each time.
_DISPATCH_CACHE_LIMIT = 4096
# Namedtuple node types live here so that a class keeps one `_NodeType` (treedef equality
# compares node types by identity) even when `_dispatch` was too full to remember it.
_namedtuple_types: dict[type, _NodeType] = {}


def _namedtuple_node_type(cls) -> _NodeType:
    node_type = _namedtuple_types.get(cls)
    if node_type is None:
        fields = cls._fields
        node_type = _NodeType(
            cls,
            lambda t: (t, None),
            lambda aux, children: cls(*children),
            lambda t: ([(GetAttrKey(name), child) for name, child in zip(fields, t)], None),
            lambda aux: f"namedtuple[{cls.__name__}]",
        )
        _namedtuple_types[cls] = node_type
    return node_type


def _classify(cls):
    """The node type of an unregistered class: namedtuples are nodes, everything else a leaf."""
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        node_type = _namedtuple_node_type(cls)
    else:
        node_type = _LEAF
    if len(_dispatch) < _DISPATCH_CACHE_LIMIT:
        _dispatch[cls] = node_type
    return node_type


def _node_type_of(x):
    """`_LEAF` or the `_NodeType` that takes `x` apart."""
    return _dispatch.get(type(x)) or _classify(type(x))


def _register(node_type: _NodeType, what: str = "") -> None:
    cls = node_type.type
    if cls in _registry:
        raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for {cls}.")
    _registry[cls] = node_type
    _dispatch[cls] = node_type


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable,
    unflatten_func: Callable,
    flatten_with_keys_func: Callable | None = None,
) -> None:
    """Make instances of `nodetype` pytree nodes instead of leaves.

    `flatten_func(x) -> (children, aux_data)` splits a node into the children that
    transformations see (arrays, usually) and hashable static data that becomes part of the
    treedef; `unflatten_func(aux_data, children)` rebuilds it (children arrive as a tuple).
    `flatten_with_keys_func(x) -> (((key, child), ...), aux_data)` names the children for key
    paths; without it they are named `FlattenedIndexKey(i)`.
    """
    _register(_NodeType(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable,
    unflatten_func: Callable,
    flatten_func: Callable | None = None,
) -> None:
    """`register_pytree_node` led by the key-aware flatten function; the plain one (used on the
    fast path) defaults to dropping the keys from it."""
    _register(_NodeType(nodetype, flatten_func, unflatten_func, flatten_with_keys))


def register_pytree_node_class(cls):
    """Class decorator: register `cls` through its `tree_flatten()` method and its
    `tree_unflatten(aux_data, children)` classmethod."""
    register_pytree_node(cls, lambda node: node.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: like `register_pytree_node_class`, with a `tree_flatten_with_keys()`
    method naming the children (and `tree_flatten()` used when the class defines it)."""
    flatten_func = (lambda node: node.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, lambda node: node.tree_flatten_with_keys(), cls.tree_unflatten, flatten_func
    )
    return cls


def register_static(cls):
    """Make instances of `cls` nodes without children: the whole value is static aux data, so it
    must be hashable, and transformations treat it as a compile-time constant."""
    register_pytree_node(cls, lambda node: ((), node), lambda aux, children: aux)
    return cls


def static(**kwargs):
    """A `dataclasses.field` marked `static=True` in its metadata (same arguments as
    `dataclasses.field`): `register_dataclass` makes such a field metadata, not a child."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a class whose fields split into data (children) and metadata (static aux).

    With neither list given `nodetype` must be a dataclass: fields whose metadata says
    `static=True` are metadata, the others data. For a dataclass, the two lists together must
    name exactly its `init=True` fields less `drop_fields` (dropped fields are neither, and take
    their defaults when the node is rebuilt). Nodes are rebuilt by calling
    `nodetype(**fields)`. Usable as a decorator.
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when nodetype is"
                f" not a dataclass. Got nodetype={nodetype!r}."
            )
        data_fields, meta_fields = [], []
        for field in dataclasses.fields(nodetype):
            static = field.metadata.get("static", False)
            (meta_fields if static else data_fields).append(field.name)
    elif data_fields is None or meta_fields is None:
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must both be specified when either"
            f" is specified. Got data_fields={data_fields!r} meta_fields={meta_fields!r}."
        )
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten(node):
        return (
            tuple([getattr(node, name) for name in data_fields]),
            tuple([getattr(node, name) for name in meta_fields]),
        )

    def flatten_with_keys(node):
        children = [(GetAttrKey(name), getattr(node, name)) for name in data_fields]
        return children, tuple([getattr(node, name) for name in meta_fields])

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta, strict=True))
        kwargs.update(zip(data_fields, data, strict=True))
        return nodetype(**kwargs)

    _register(_NodeType(nodetype, flatten, unflatten, flatten_with_keys), "dataclass ")
    return nodetype


def _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
    expected = {field.name for field in dataclasses.fields(nodetype) if field.init}
    expected.difference_update(drop_fields)
    given = set(data_fields) | set(meta_fields)
    if given == expected:
        return
    message = (
        "data_fields and meta_fields must include all dataclass fields with ``init=True`` and"
        " only them."
    )
    if missing := expected - given:
        message += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
    if unexpected := given - expected:
        message += f" Unexpected fields: {unexpected}."
    raise ValueError(message)
