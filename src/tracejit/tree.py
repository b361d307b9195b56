"""The short names of the pytree functions (`jax.tree`): `tree.map` is `tree_util.tree_map`.

`all` and `map` shadow the builtins inside this module, as in JAX; import the module rather than
the names (`from tracejit import tree; tree.map(...)`).
"""

from tracejit._src import tree_util as _tree_util

all = _tree_util.tree_all
broadcast = _tree_util.tree_broadcast
flatten = _tree_util.tree_flatten
flatten_with_path = _tree_util.tree_flatten_with_path
leaves = _tree_util.tree_leaves
leaves_with_path = _tree_util.tree_leaves_with_path
map = _tree_util.tree_map
map_with_path = _tree_util.tree_map_with_path
reduce = _tree_util.tree_reduce
reduce_associative = _tree_util.tree_reduce_associative
static = _tree_util.static
structure = _tree_util.tree_structure
transpose = _tree_util.tree_transpose
unflatten = _tree_util.tree_unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
