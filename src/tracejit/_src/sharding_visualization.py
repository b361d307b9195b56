"""`jax.debug.visualize_sharding`: which device holds which block of an array, drawn as text.

An array of rank 1 or 2 is drawn as a grid of boxes, one per block, labelled with the devices
holding it (`CPU 0,1`: a block held by two replicas). A box's size follows its block's share
of the array: `scale * 10` lines for the whole height, and for the whole width 2.5 characters
per line times the array's aspect ratio, clamped to `[min_width, max_width]`; a 1-D array's
boxes are one line high. The label is centred in its box.

JAX draws the table with the `rich` package (which it does not depend on). tracejit draws
the same table itself, as rich prints it without colours (`use_color=False`, or when output is
not a terminal):

    ┌──────────┬──────────┐
    │          │          │
    │  CPU 0   │  CPU 1   │          P('x', 'y') over a 2x2 mesh, shape (4, 4)
    │          │          │
    │          │          │
    ├──────────┼──────────┤
    ...

Colours are not drawn; a table wider than `max_width` (which rich squeezes, cropping labels)
raises NotImplementedError.
"""

from __future__ import annotations

import builtins

from tracejit._src import dispatch, spmd
from tracejit._src.core import Primitive, current_trace
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.eval import EvalTrace
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.sharding import SingleDeviceSharding
from tracejit._src.tree_util import tree_leaves

_LINES_PER_HEIGHT = 10  # lines for the array's whole height, at scale 1
_CHARACTERS_PER_LINE = 2.5  # a character is about 2.5 times as tall as it is wide


def visualize_array_sharding(arr, **kwargs) -> None:
    """Prints how `arr` is laid out over its devices (see `visualize_sharding`)."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


def visualize_sharding(
    shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80, color_map=None
) -> None:
    """Prints the blocks of an array of `shape` (rank 1 or 2) laid out as `sharding` says,
    each labelled with the devices holding it."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    blocks = _blocks(shape, sharding)
    base_height = int(_LINES_PER_HEIGHT * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    cells = {}
    for (row, column), (height_share, width_share, devices) in blocks.items():
        label = f"{devices[0][0]} " + ",".join(str(i) for _, i in devices)
        width = int(width_share * base_width * _CHARACTERS_PER_LINE)
        width = min(max(width, min_width), max_width)
        height = 1 if height_share is None else int(height_share * base_height)
        left, extra = divmod(width - len(label) - 2, 2)
        top, lower = divmod(height - 2, 2)
        cells[row, column] = (
            label,
            max(left, 0),
            max(left + extra, 0),
            max(top, 0),
            max(top + lower, 0),
        )
    builtins.print(_table(cells, max_width))


def _blocks(shape, sharding) -> dict:
    """(row, column) of each block -> (its share of the height (None for rank 1), of the width,
    the (platform, id) of the devices holding it, sorted by id)."""
    indices = sharding.devices_indices_map(shape)
    starts = [
        sorted({index[d].start or 0 for index in indices.values()}) for d in range(len(shape))
    ]
    blocks = {}
    for device, index in indices.items():
        sizes = [
            ((s.stop if s.stop is not None else n) - (s.start or 0)) / n
            for s, n in zip(index, shape, strict=True)
        ]
        position = tuple(starts[d].index(s.start or 0) for d, s in enumerate(index))
        if len(shape) == 1:
            key, shares = (0, position[0]), (None, sizes[0])
        else:
            key, shares = position, (sizes[0], sizes[1])
        held = blocks.setdefault(key, (*shares, []))[2]
        held.append((getattr(device, "platform", "cpu").upper(), device.id))
    for _, _, held in blocks.values():
        held.sort(key=lambda d: d[1])
    return blocks


def _table(cells: dict, max_width: int) -> str:
    """The boxes, as rich draws a table of padded, centred labels with lines between rows."""
    rows = 1 + max(r for r, _ in cells)
    columns = 1 + max(c for _, c in cells)
    widths = [
        max(
            left + len(label) + right
            for (label, left, right, _, _) in (cells[r, c] for r in range(rows))
        )
        for c in range(columns)
    ]
    if sum(widths) + columns + 1 > max_width:
        raise NotImplementedError(
            f"visualize_sharding: a table {sum(widths) + columns + 1} characters wide, over "
            f"max_width={max_width} (rich squeezes its columns, cropping labels: not reproduced)"
        )
    rule = lambda left, middle, right: left + middle.join("─" * w for w in widths) + right
    lines = [rule("┌", "┬", "┐")]
    for r in range(rows):
        height = max(
            top + 1 + bottom for (_, _, _, top, bottom) in (cells[r, c] for c in range(columns))
        )
        text = []
        for c, width in enumerate(widths):
            label, left, right, top, _ = cells[r, c]
            excess = width - left - right - len(label)  # (centred, the odd space right)
            body = " " * (left + excess // 2) + label + " " * (right + excess - excess // 2)
            column = [" " * width] * top + [body] + [" " * width] * (height - top - 1)
            text.append(column)
        lines += ["│" + "│".join(column[k] for column in text) + "│" for k in range(height)]
        lines.append(rule("├", "┼", "┤") if r < rows - 1 else rule("└", "┴", "┘"))
    return "\n".join(lines)


def inspect_array_sharding(value, *, callback) -> None:
    """Calls `callback` with the sharding of each array of the pytree `value`: eagerly at
    once; in a traced function when it is compiled, with the sharding XLA chose for the value
    (`inspect_sharding` equations, below)."""
    if type(current_trace()) is EvalTrace:
        for leaf in tree_leaves(value):
            callback(leaf.sharding)
        return
    for leaf in tree_leaves(value):
        inspect_sharding_p.bind(leaf, callback=callback)


# --- inspect_sharding -------------------------------------------------------------------------
inspect_sharding_p = Primitive("inspect_sharding", multiple_results=True)
"""`inspect_sharding[callback=f] x`: no results; compiling the program calls `f` with the
sharding XLA chose for `x` (`spmd.PartitionedProgram` compiles a probe returning the inspected
values to read it), the one device's for a program on one device. Defined here, above the
primitives' layers, because its rules need devices and shardings of the compilation layer."""
inspect_sharding_p.has_side_effects = True


def _inspect_sharding_impl(x, *, callback):
    """(A jaxpr evaluated eagerly: its values are on the default device.)"""
    callback(SingleDeviceSharding(dispatch.devices()[0]))
    return []


def _inspect_sharding_lowering(ctx, x, *, callback):
    """On one device, the callback is called as the program is lowered; a partitioned
    program's probe reports the shardings instead (`spmd.PartitionedProgram`)."""
    if ctx.module.num_partitions == 1 and ctx.module.num_replicas == 1:
        callback(SingleDeviceSharding(dispatch.devices()[0]))
    return []


inspect_sharding_p.def_impl(_inspect_sharding_impl)
inspect_sharding_p.def_abstract_eval(lambda x, *, callback: [])
ad.jvp_rules[inspect_sharding_p] = lambda primals, tangents, **params: (
    inspect_sharding_p.bind(*primals, **params),
    [],
)
batch_rules[inspect_sharding_p] = lambda values, dims, **params: (
    inspect_sharding_p.bind(*values, **params),
    [],
)
lowering_rules[inspect_sharding_p] = _inspect_sharding_lowering
spmd.inspected_primitives.add(inspect_sharding_p)
