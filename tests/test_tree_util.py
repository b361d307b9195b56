"""Pytrees, checked against JAX's documented behaviour (expected reprs and messages are JAX's)."""

import collections
import dataclasses
import functools

import numpy as np
import pytest

from tracejit import tree
from tracejit import tree_util as tu
from tracejit.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

Point = collections.namedtuple("Point", "x y")
Other = collections.namedtuple("Other", "x y")


class Box:
    """A registered class with children and static metadata."""

    def __init__(self, *items, tag="meta"):
        self.items = items
        self.tag = tag

    def __eq__(self, other):
        return type(other) is Box and (self.items, self.tag) == (other.items, other.tag)

    def __repr__(self):
        return f"Box{self.items}"


tu.register_pytree_node(Box, lambda b: (b.items, b.tag), lambda tag, items: Box(*items, tag=tag))


class Pair:
    """A class registered with named children."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __eq__(self, other):
        return type(other) is Pair and (self.first, self.second) == (other.first, other.second)


tu.register_pytree_with_keys(
    Pair,
    lambda p: (((GetAttrKey("first"), p.first), (GetAttrKey("second"), p.second)), None),
    lambda aux, children: Pair(*children),
)


@tu.register_pytree_node_class
class Scaled:
    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


@tu.register_pytree_with_keys_class
class Named:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("a"), self.a), (GetAttrKey("b"), self.b)), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_dataclass
@dataclasses.dataclass
class State:
    params: object
    step: int = dataclasses.field(metadata={"static": True})
    momentum: object = 0.0


@functools.partial(tu.register_dataclass, data_fields=["x"], meta_fields=["name"])
@dataclasses.dataclass
class Explicit:
    x: object
    name: str


@tu.register_static
@dataclasses.dataclass(frozen=True)
class Config:
    size: int


def roundtrip(value):
    leaves, treedef = tu.tree_flatten(value)
    return tu.tree_unflatten(treedef, leaves)


# --- flatten / unflatten of every node type ---------------------------------------------------


@pytest.mark.parametrize(
    "value, leaves, structure",
    [
        (1, [1], "PyTreeDef(*)"),
        (None, [], "PyTreeDef(None)"),
        ((), [], "PyTreeDef(())"),
        ([], [], "PyTreeDef([])"),
        ({}, [], "PyTreeDef({})"),
        ((1,), [1], "PyTreeDef((*,))"),
        ((1, [2, 3]), [1, 2, 3], "PyTreeDef((*, [*, *]))"),
        ({"b": 1, "a": 2}, [2, 1], "PyTreeDef({'a': *, 'b': *})"),
        ((1, {"a": 2, "b": None}), [1, 2], "PyTreeDef((*, {'a': *, 'b': None}))"),
        ({0: 1, 2: None}, [1], "PyTreeDef({0: *, 2: None})"),
        ([None, (None,)], [], "PyTreeDef([None, (None,)])"),
        (Point(1, [2]), [1, 2], "PyTreeDef(CustomNode(namedtuple[Point], [*, [*]]))"),
        (
            collections.OrderedDict(b=1, a=2),
            [1, 2],
            "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
        ),
        (
            collections.defaultdict(list, b=1, a=2),
            [2, 1],
            "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))",
        ),
        (Box(1, (2,)), [1, 2], "PyTreeDef(CustomNode(Box[meta], [*, (*,)]))"),
        (State([1, 2], 7, 3.0), [1, 2, 3.0], "PyTreeDef(CustomNode(State[(7,)], [[*, *], *]))"),
        (Explicit(1, "n"), [1], "PyTreeDef(CustomNode(Explicit[('n',)], [*]))"),
        ((Config(3), 1), [1], "PyTreeDef((CustomNode(Config[Config(size=3)], []), *))"),
    ],
)
def test_flatten_leaves_structure_and_roundtrip(value, leaves, structure):
    flat, treedef = tu.tree_flatten(value)
    assert flat == leaves
    assert repr(treedef) == str(treedef) == structure
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, flat)
    assert type(rebuilt) is type(value)
    assert rebuilt == value


def test_leaves_are_passed_through_untouched():
    x, y = np.ones(3), np.zeros(2)
    leaves, treedef = tu.tree_flatten({"w": x, "b": [y, 1.5]})
    assert leaves[0] is y and leaves[1] == 1.5 and leaves[2] is x
    assert tu.tree_unflatten(treedef, leaves)["w"] is x


def test_dict_rebuilt_in_sorted_key_order_ordered_dict_in_insertion_order():
    assert list(roundtrip({"b": 1, "a": 2})) == ["a", "b"]
    assert list(roundtrip(collections.OrderedDict(b=1, a=2))) == ["b", "a"]


def test_defaultdict_keeps_its_factory():
    rebuilt = roundtrip(collections.defaultdict(list, {"a": 1}))
    assert type(rebuilt) is collections.defaultdict and rebuilt.default_factory is list
    assert rebuilt["missing"] == []


def test_namedtuple_rebuilt_as_its_class():
    rebuilt = roundtrip(Point(1, 2))
    assert type(rebuilt) is Point and rebuilt == Point(1, 2)


def test_unregistered_subclasses_of_containers_are_leaves():
    class MyTuple(tuple):
        pass

    class MyDict(dict):
        pass

    value = [MyTuple((1, 2)), MyDict(a=1)]
    assert tu.tree_leaves(value) == value


def test_none_is_a_node_without_children_not_a_leaf():
    assert tu.tree_leaves([None, 1, None]) == [1]
    assert tu.tree_structure(None).num_leaves == 0
    assert tu.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]


def test_unflatten_accepts_any_iterable():
    treedef = tu.tree_structure((1, [2]))
    assert tu.tree_unflatten(treedef, iter("ab")) == ("a", ["b"])


def test_dict_keys_that_cannot_be_sorted():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree"):
        tu.tree_flatten({1: "a", "b": 2})


# --- is_leaf -----------------------------------------------------------------------------------


def test_is_leaf_stops_the_descent():
    leaves, treedef = tu.tree_flatten(
        [None, (1, 2), [3]], is_leaf=lambda x: x is None or type(x) is tuple
    )
    assert leaves == [None, (1, 2), 3]
    assert repr(treedef) == "PyTreeDef([*, *, [*]])"
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_map(lambda x: 0, [None, 1], is_leaf=lambda x: x is None) == [0, 0]


# --- treedefs ----------------------------------------------------------------------------------


def test_treedef_counts_children_and_node_data():
    treedef = tu.tree_structure((1, {"a": 2, "b": None}))
    assert treedef.num_leaves == 2
    assert treedef.num_nodes == 5  # tuple, leaf, dict, leaf, None
    assert [repr(c) for c in treedef.children()] == [
        "PyTreeDef(*)",
        "PyTreeDef({'a': *, 'b': None})",
    ]
    assert treedef.node_data() == (tuple, None)
    assert treedef.children()[1].node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(Box(1)).node_data() == (Box, "meta")
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(1).children() == []
    assert tu.treedef_children(treedef) == treedef.children()


def test_treedef_equality_and_hash():
    def structure(x):
        return tu.tree_structure(x)

    assert structure({"a": 1, "b": 2}) == structure({"b": 3, "a": np.ones(2)})
    assert hash(structure((1, [2]))) == hash(structure(("x", ["y"])))
    assert structure((1, 2)) != structure([1, 2])
    assert structure((1, 2)) != structure((1, 2, 3))
    assert structure((1, None)) != structure((1, 2))
    assert structure(Point(1, 2)) != structure(Other(1, 2))
    assert structure(Box(1)) != structure(Box(1, tag="other"))
    assert structure(collections.OrderedDict(a=1, b=2)) != structure(
        collections.OrderedDict(b=1, a=2)
    )
    assert not structure((1, 2)) == (1, 2)  # noqa: SIM201 - JAX answers False to both == and !=
    cache = {structure((1, {"a": 2})): "hit"}
    assert cache[structure((5, {"a": 6}))] == "hit"


def test_treedef_compose_and_tuple():
    outer, inner = tu.tree_structure((1, 2)), tu.tree_structure([1, None])
    assert repr(outer.compose(inner)) == "PyTreeDef(([*, None], [*, None]))"
    assert outer.compose(inner).num_leaves == 2
    leaf, pair = tu.tree_structure(1), tu.tree_structure([1, 2])
    assert repr(tu.treedef_tuple([leaf, pair])) == "PyTreeDef((*, [*, *]))"
    assert tu.treedef_tuple([leaf, pair]).num_leaves == 3


def test_treedef_is_leaf_counts_nodes_like_jax():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))


def test_flatten_one_level():
    assert tu.flatten_one_level((1, [2])) == ((1, [2]), None)
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)


def test_flatten_up_to_returns_subtrees_at_the_prefix_leaves():
    treedef = tu.tree_structure((1, [2, 3]))
    assert treedef.flatten_up_to(({"a": 1}, [(2,), None])) == [{"a": 1}, (2,), None]


@pytest.mark.parametrize(
    "prefix, full, message",
    [
        ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
        ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
        ([1], [1, 2], "List arity mismatch: 2 != 1; list: [1, 2]."),
        ([1], 1, "Expected list, got 1."),
        ({"a": 1}, [1], "Expected dict, got [1]."),
        ({"a": 1}, {"b": 1}, "Dict key mismatch; expected keys: ['a']; present keys: ['b']."),
        (None, 1, "Expected None, got 1."),
        (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
        (
            Point(1, 2),
            Other(1, 2),
            f"Named tuple type mismatch: expected type: {Point}, tuple: Other(x=1, y=2).",
        ),
        (
            Box(1, 2),
            (1, 2),
            f"Custom node type mismatch: expected type: {Box}, value: (1, 2).",
        ),
        (Box(1, 2), Box(1, 2, 3), "Custom type arity mismatch: 3 != 2; value: Box(1, 2, 3)."),
        (Box(1), Box(1, tag="x"), "Mismatch custom node data: 'meta' != 'x'; value: Box(1,)."),
    ],
)
def test_flatten_up_to_errors(prefix, full, message):
    with pytest.raises(ValueError) as info:
        tu.tree_structure(prefix).flatten_up_to(full)
    assert str(info.value).startswith(message)


def test_unflatten_with_wrong_leaf_count():
    treedef = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 2, got 1$"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 2\.$"):
        tu.tree_unflatten(treedef, [1, 2, 3])


# --- tree_map and friends ---------------------------------------------------------------------


def test_tree_map_over_one_and_several_trees():
    assert tu.tree_map(lambda x: x * 10, {"a": (1, 2), "b": None}) == {"a": (10, 20), "b": None}
    summed = tu.tree_map(
        lambda a, b, c: a + b + c, [1, {"x": 2}], [10, {"x": 20}], [100, {"x": 200}]
    )
    assert summed == [111, {"x": 222}]


def test_tree_map_rest_trees_may_be_deeper_at_the_first_tree_leaves():
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), (3, [4, 5])) == ((1, 3), (2, [4, 5]))
    assert tu.tree_map(lambda a, b: b, (1, 2), (1, None)) == (1, None)


def test_tree_map_type_mismatch_names_both_types():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])
    assert str(info.value) == (
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'list'>."
    )


def test_tree_map_length_mismatch_reports_the_key_path():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, [1, {"a": (1, 2)}], [1, {"a": (1,)}])
    assert str(info.value) == (
        "pytree structure error: different lengths of tuple at key path\n"
        "    tree_map tree[1]['a']\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of length"
        " 2, but the full pytree has a subtree of the same type but of length 1."
    )


def test_tree_map_dict_key_mismatch():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, {"a": 1}, {"a": 1, "b": 2})
    assert str(info.value) == (
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with 1 child keys\n"
        "    a\n"
        "but at the same key path the full pytree has a subtree of the same type but with 2"
        " child keys\n"
        "    a b\n"
        "so the symmetric difference on key sets is\n"
        "    b"
    )
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    message = str(info.value)
    assert message.startswith("pytree structure error: different pytree metadata at key path\n")
    assert "with metadata\n    ('a', 'b')\n" in message
    assert "but with metadata\n    ('a', 'c')\n" in message


def test_tree_map_custom_node_metadata_mismatch():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, Box(1, 2), Box(1, 2, tag="other"))
    assert str(info.value).endswith(
        "so the diff in the metadata at these pytree nodes is\n    - meta\n    + other"
    )


def test_tree_map_none_against_a_leaf():
    with pytest.raises(ValueError, match=r"(?s)tree_map tree\[1\].*NoneType.*<class 'int'>"):
        tu.tree_map(lambda a, b: a, (1, None), (1, 2))


def test_tree_reduce():
    assert tu.tree_reduce(lambda a, b: a + b, [1, None, (2, 3)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 5) == 5
    assert tu.tree_reduce(lambda a, b: a + b, {"a": [1]}, 10) == 11
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])


def test_tree_all_and_all_leaves():
    assert tu.tree_all([1, (True, 2)]) is True
    assert tu.tree_all([1, 0]) is False
    assert tu.tree_all([]) is True
    assert tu.all_leaves([1, np.ones(2)])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None])
    assert tu.all_leaves([None], is_leaf=lambda x: x is None)


def test_tree_transpose():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    value = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, value) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, value) == ([1, 4], [2, 5], [3, 6])
    dicts = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    inner = tu.tree_structure({"a": 0, "b": 0})
    assert tu.tree_transpose(outer, inner, dicts) == {"a": [1, 3], "b": [2, 4]}


def test_tree_transpose_mismatch():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    with pytest.raises(TypeError) as info:
        tu.tree_transpose(outer, inner, [(1, 2, 3), (4, 5)])
    assert str(info.value) == (
        "Mismatch\nPyTreeDef([(*, *, *), (*, *)])\n != \nPyTreeDef([(*, *, *), (*, *, *)])"
    )


def test_tree_broadcast():
    assert tu.tree_broadcast((1, 2), ((3, 4), 5)) == ((1, 1), 2)
    assert tu.tree_broadcast({"a": 0}, {"a": [None, 7]}) == {"a": [None, 0]}


# --- key paths ---------------------------------------------------------------------------------


def test_key_entries_print_like_jax():
    assert [str(k) for k in (SequenceKey(0), DictKey("a"), GetAttrKey("x"))] == [
        "[0]",
        "['a']",
        ".x",
    ]
    assert str(FlattenedIndexKey(3)) == "[<flat index 3>]"
    assert repr(SequenceKey(0)) == "SequenceKey(idx=0)"
    assert repr(DictKey("a")) == "DictKey(key='a')"
    assert repr(GetAttrKey("x")) == "GetAttrKey(name='x')"
    assert repr(FlattenedIndexKey(3)) == "FlattenedIndexKey(key=3)"
    assert DictKey("a") == DictKey("a") and hash(DictKey("a")) == hash(DictKey("a"))
    assert DictKey(0) != SequenceKey(0)


def test_flatten_with_path_names_every_step():
    value = {
        "b": [1, (2,)],
        "a": Point(3, None),
        "c": collections.OrderedDict(z=4),
        "d": Box(5),
        "e": State(6, 0),
    }
    pairs, treedef = tu.tree_flatten_with_path(value)
    assert treedef == tu.tree_structure(value)
    assert pairs == [
        ((DictKey("a"), GetAttrKey("x")), 3),
        ((DictKey("b"), SequenceKey(0)), 1),
        ((DictKey("b"), SequenceKey(1), SequenceKey(0)), 2),
        ((DictKey("c"), DictKey("z")), 4),
        ((DictKey("d"), FlattenedIndexKey(0)), 5),
        ((DictKey("e"), GetAttrKey("params")), 6),
        ((DictKey("e"), GetAttrKey("momentum")), 0.0),
    ]
    paths = [path for path, _ in pairs]
    assert [tu.keystr(p) for p in paths][:4] == ["['a'].x", "['b'][0]", "['b'][1][0]", "['c']['z']"]
    assert tu.keystr(paths[4]) == "['d'][<flat index 0>]"
    assert [tu.keystr(p, simple=True, separator="/") for p in paths][:5] == [
        "a/x",
        "b/0",
        "b/1/0",
        "c/z",
        "d/0",
    ]
    assert tu.keystr(()) == ""
    assert tu.keystr((DictKey(1), DictKey("k")), separator="/") == "[1]/['k']"


def test_registered_keys_are_used_in_paths():
    assert tu.tree_leaves_with_path(Pair(1, [2])) == [
        ((GetAttrKey("first"),), 1),
        ((GetAttrKey("second"), SequenceKey(0)), 2),
    ]
    assert tu.tree_leaves(Pair(1, [2])) == [1, 2]  # plain flatten derived from the keyed one
    assert tu.tree_leaves_with_path(Named(1, 2)) == [
        ((GetAttrKey("a"),), 1),
        ((GetAttrKey("b"),), 2),
    ]


def test_tree_map_with_path():
    result = tu.tree_map_with_path(
        lambda path, x, y: (tu.keystr(path), x, y), {"a": (1, 2)}, {"a": (3, [4])}
    )
    assert result == {"a": (("['a'][0]", 1, 3), ("['a'][1]", 2, [4]))}
    with pytest.raises(ValueError, match="tree_map_with_path tree"):
        tu.tree_map_with_path(lambda p, x, y: x, [1], (1,))


def test_is_leaf_taking_the_path():
    pairs = tu.tree_leaves_with_path(
        {"a": [1, 2], "b": 3}, is_leaf=lambda path, x: len(path) == 1, is_leaf_takes_path=True
    )
    assert pairs == [((DictKey("a"),), [1, 2]), ((DictKey("b"),), 3)]


# --- registration ------------------------------------------------------------------------------


def test_registered_class_roundtrip_and_map():
    mapped = tu.tree_map(lambda x: x + 1, Box(1, [2], tag="t"))
    assert mapped == Box(2, [3], tag="t")
    scaled = tu.tree_map(lambda x: x * 2, Scaled(3, scale=10))
    assert (scaled.value, scaled.scale) == (6, 10)
    assert repr(tu.tree_structure(Scaled(3, 10))) == "PyTreeDef(CustomNode(Scaled[10], [*]))"


def test_unflatten_func_receives_a_tuple():
    seen = []

    class Recorder:
        def __init__(self, *children):
            self.children = children

    tu.register_pytree_node(
        Recorder,
        lambda r: (list(r.children), None),
        lambda aux, children: seen.append(children) or Recorder(*children),
    )
    tu.tree_map(lambda x: x, Recorder(1, 2))
    assert seen == [(1, 2)]


def test_registering_twice_is_an_error():
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration for"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda aux, ch: Box())
    with pytest.raises(ValueError, match="registration for <class 'tuple'>"):
        tu.register_pytree_node(tuple, lambda b: ((), None), lambda aux, ch: ())
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type"):
        tu.register_dataclass(State)


def test_register_static_makes_the_value_part_of_the_structure():
    assert tu.tree_leaves([Config(1), 2]) == [2]
    assert tu.tree_structure(Config(1)) == tu.tree_structure(Config(1))
    assert tu.tree_structure(Config(1)) != tu.tree_structure(Config(2))
    assert roundtrip(Config(4)) == Config(4)


def test_register_dataclass_infers_static_fields():
    assert tu.tree_leaves(State([1, 2], 7, 3.0)) == [1, 2, 3.0]
    assert tu.tree_map(lambda x: x * 10, State(1, 7, 2)) == State(10, 7, 20)
    assert tu.tree_structure(State(1, 7)) != tu.tree_structure(State(1, 8))
    assert tu.tree_map(lambda x: -x, Explicit(1, "n")) == Explicit(-1, "n")


def test_register_dataclass_drop_fields_and_validation():
    @dataclasses.dataclass
    class WithDerived:
        x: int
        cache: int = 0
        derived: int = dataclasses.field(init=False, default=5)

    tu.register_dataclass(WithDerived, data_fields=["x"], meta_fields=[], drop_fields=["cache"])
    assert tu.tree_flatten(WithDerived(1, 2))[0] == [1]
    assert roundtrip(WithDerived(1, 2)) == WithDerived(1, 0)  # dropped field takes its default

    @dataclasses.dataclass
    class Fields:
        x: int
        y: int
        z: int = dataclasses.field(init=False, default=5)

    prefix = "data_fields and meta_fields must include all dataclass fields with ``init=True``"
    with pytest.raises(ValueError) as info:
        tu.register_dataclass(Fields, data_fields=["x"], meta_fields=["q"])
    assert str(info.value) == (
        f"{prefix} and only them. Missing fields: {{'y'}}. Add them to drop_fields to suppress"
        " this error. Unexpected fields: {'q'}."
    )
    with pytest.raises(ValueError, match=r"Unexpected fields: \{'z'\}\.$"):
        tu.register_dataclass(Fields)  # inferred fields include init=False ones, as in JAX
    with pytest.raises(TypeError, match="must both be specified when either is specified"):
        tu.register_dataclass(Fields, data_fields=["x"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(Box)


def test_register_dataclass_on_a_plain_class_calls_its_constructor():
    class Plain:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["b"])
    mapped = tu.tree_map(lambda x: x * 2, Plain(1, "static"))
    assert (type(mapped), mapped.a, mapped.b) == (Plain, 2, "static")


# --- Partial -----------------------------------------------------------------------------------


def add(a, b, c=0):
    return a + b + c


def test_partial_is_a_pytree_of_its_bound_arguments():
    partial = tu.Partial(add, 1, c=3)
    leaves, treedef = tu.tree_flatten(partial)
    assert leaves == [1, 3]
    assert repr(treedef).startswith("PyTreeDef(CustomNode(Partial[<function add")
    doubled = tu.tree_map(lambda x: x * 2, partial)
    assert isinstance(doubled, tu.Partial) and doubled(5) == 2 + 5 + 6
    assert partial(5) == 9
    assert tu.tree_structure(tu.Partial(add)) == tu.tree_structure(tu.Partial(add))
    assert tu.tree_structure(tu.Partial(add)) != tu.tree_structure(tu.Partial(print))


def test_partial_of_a_partial_keeps_the_inner_one_static():
    inner = functools.partial(add, 1)
    outer = tu.Partial(inner, 2)
    assert tu.tree_leaves(outer) == [2]
    assert outer(3) == 6
    assert tu.tree_map(lambda x: x * 10, outer)(3) == 24


# --- the tracejit.tree aliases -----------------------------------------------------------------


def test_tree_module_aliases():
    assert tree.map(lambda x: x + 1, [1, (2,)]) == [2, (3,)]
    assert tree.leaves({"b": 1, "a": 2}) == [2, 1]
    assert tree.structure((1,)) == tu.tree_structure((5,))
    leaves, treedef = tree.flatten([1, 2])
    assert tree.unflatten(treedef, leaves) == [1, 2]
    assert tree.reduce(lambda a, b: a * b, [2, 3], 1) == 6
    assert tree.all([1, 1]) and not tree.all([1, 0])
    assert tree.transpose(tree.structure([0, 0]), tree.structure((0, 0)), [(1, 2), (3, 4)]) == (
        [1, 3],
        [2, 4],
    )
    assert tree.leaves_with_path([1]) == [((SequenceKey(0),), 1)]
    assert tree.flatten_with_path([1])[0] == [((SequenceKey(0),), 1)]
    assert tree.map_with_path(lambda p, x: p[0].idx + x, [10, 20]) == [10, 21]
    assert tree.broadcast((1, 2), ((3, 4), 5)) == ((1, 1), 2)


def test_treedef_hash_leaves_aux_data_out():
    """As in JAX: custom nodes' aux data (possibly unhashable) and dict keys are not hashed,
    so such a treedef can key a cache; equality still compares them."""

    @tu.register_pytree_node_class
    class Tagged:
        def __init__(self, x, meta):
            self.x, self.meta = x, meta

        def tree_flatten(self):
            return (self.x,), self.meta

        @classmethod
        def tree_unflatten(cls, meta, children):
            return cls(children[0], meta)

    one, other = tu.tree_structure(Tagged(1, [1, 2])), tu.tree_structure(Tagged(1, [3]))
    assert hash(one) == hash(other) and one != other
    assert one == tu.tree_structure(Tagged(2, [1, 2]))
    assert hash(tu.tree_structure({"a": 1})) == hash(tu.tree_structure({"b": 1}))
    assert len({one, other, tu.tree_structure(Tagged(5, [1, 2]))}) == 2
