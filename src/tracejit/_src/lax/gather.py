"""Gather and scatter: slices and updates at many run-time start indices at once.

`gather` takes a window of static shape `slice_sizes` out of `operand` at every start index of
`start_indices`, an integer array whose last dimension is the index vector (one component per
operand dimension named in `start_index_map`, the others start at 0). StableHLO's
`dimension_numbers` say where things go:

- `offset_dims`: the result dimensions that run over each window (its dimensions that are not
  in `collapsed_slice_dims` or `operand_batching_dims`, in order); the other result dimensions
  are the batch dimensions of `start_indices` (all but the index vector), in order;
- `collapsed_slice_dims`: window dimensions of size 1 that the result leaves out;
- `operand_batching_dims` with `start_indices_batching_dims`: pairs of an operand dimension and
  an index batch dimension that run together (batch member i gathers from operand slice i),
  which is how vmap gathers with a batched operand and batched indices:

    vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(xs, idx)    xs: f32[4,5], idx: i32[4]
        f:i32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e    (e: idx, wrapped)
        g:f32[4,2] = gather[dimension_numbers=GatherDimensionNumbers(offset_dims=(1,),
          collapsed_slice_dims=(), start_index_map=(1,), operand_batching_dims=(0,),
          start_indices_batching_dims=(0,)) ... mode=GatherScatterMode.CLIP
          slice_sizes=(1, 2) unique_indices=False] a f

The scatters (`scatter.py`) are gather's mirror: `scatter_add` and `scatter` add (or write)
the windows of `updates` into `operand` at the start indices, with `update_window_dims`,
`inserted_window_dims` and `scatter_dims_to_operand_dims` in the roles of the three above. The
transpose of gather is a scatter_add into zeros and that of scatter_add a gather, so each family
member's derivative is another member.

Out-of-bounds windows follow `mode`, as in JAX: `GatherScatterMode.CLIP` clamps each window start
into `[0, operand_dim - window_dim]` (as dynamic_slice does, and as XLA's gather does by
itself); `FILL_OR_DROP` gives `fill_value` for a gathered window that does not fit and drops
an update window that does not fit (XLA's scatter does so by itself); `PROMISE_IN_BOUNDS` is
the caller's promise that every window fits, computed as CLIP. As in JAX, `mode=None` means
PROMISE_IN_BOUNDS for `gather` and FILL_OR_DROP for the scatters.
"""

from __future__ import annotations

import enum
import math
from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules, move_batch_dim
from tracejit._src.lax import scatter, sharding_constraints
from tracejit._src.lax.standard import int_bounds, static_ints
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

# --------------------------------------------------------------------------------------------
# Parameters


class GatherDimensionNumbers(NamedTuple):
    """Where the windows and the index batch dimensions of a gather go (see the module doc)."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """Where the windows and the index batch dimensions of a scatter come from."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that does not fit in the operand: CLIP
    moves it inside, FILL_OR_DROP fills the gathered window (drops the update),
    PROMISE_IN_BOUNDS assumes it never happens."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    @staticmethod
    def from_any(mode):
        """The mode from a `GatherScatterMode`, 'clip', 'fill'/'drop', 'promise_in_bounds' or
        None (FILL_OR_DROP, JAX's default)."""
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode == "clip":
            return GatherScatterMode.CLIP
        if mode is None or mode in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if mode == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"Unknown gather mode {mode!r}")

    def __repr__(self):
        return f"GatherScatterMode.{self.name}"

    __str__ = __repr__


def canonical_dnums(cls, name: str, dimension_numbers):
    """`dimension_numbers` as `cls` with tuples of Python ints (a hashable param)."""
    if not isinstance(dimension_numbers, cls):
        raise TypeError(
            f"{name}: dimension_numbers must be a {cls.__name__}, got "
            f"{type(dimension_numbers).__name__}"
        )
    return cls(
        *(
            static_ints(name, field, value)
            for field, value in zip(cls._fields, dimension_numbers, strict=True)
        )
    )


def _default_fill_value(dtype: np.dtype):
    """JAX's: NaN for inexact dtypes, the most negative (signed) or largest (unsigned)
    integer, True for booleans."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == np.bool_:
        return True
    if dtype == dtypes.key_fry:  # a key whose words are the largest uint32, as JAX fills
        return np.array((np.iinfo(np.uint32).max,) * 2, np.uint32).view(dtype)[0]
    low, high = int_bounds(dtype)
    return low if dtypes.issubdtype(dtype, np.signedinteger) else high


# --------------------------------------------------------------------------------------------
# The index arithmetic the NumPy impls share


def _window_starts(operand_shape, indices, start_index_map, window_sizes, mode):
    """Per index vector component k: the window starts along operand dimension
    `start_index_map[k]`, clamped into the operand, and for FILL_OR_DROP the mask of the
    windows that fit without clamping (else None)."""
    starts, in_bounds = [], None
    for k, d in enumerate(start_index_map):
        start = indices[..., k].astype(np.int64)
        high = operand_shape[d] - window_sizes[d]
        if mode is GatherScatterMode.FILL_OR_DROP:
            ok = (start >= 0) & (start <= high)
            in_bounds = ok if in_bounds is None else in_bounds & ok
        starts.append(np.clip(start, 0, max(high, 0)))
    return starts, in_bounds


def operand_index(operand_shape, indices, dims, window_sizes, mode):
    """NumPy advanced indices into the operand for each (batch..., window...) position, where
    the batch dimensions are those of `indices` without its last and the window dimensions the
    operand's that are neither collapsed nor batching, in order; and the in-bounds mask.

    `dims` is (collapsed, start_index_map, operand_batching_dims, indices_batching_dims): the
    last four fields of either kind of dimension numbers, which line up."""
    collapsed, start_index_map, operand_batching, indices_batching = dims
    batch_shape = indices.shape[:-1]
    nb = len(batch_shape)
    window_dims = [d for d in range(len(operand_shape)) if d not in collapsed + operand_batching]
    nw = len(window_dims)
    starts, in_bounds = _window_starts(operand_shape, indices, start_index_map, window_sizes, mode)
    index = []
    for d in range(len(operand_shape)):
        position = np.zeros((1,) * (nb + nw), np.int64)
        if d in start_index_map:
            position = position + starts[start_index_map.index(d)].reshape(batch_shape + (1,) * nw)
        if d in operand_batching:
            j = indices_batching[operand_batching.index(d)]
            shape = [1] * (nb + nw)
            shape[j] = batch_shape[j]
            position = position + np.arange(batch_shape[j]).reshape(shape)
        if d in window_dims:
            shape = [1] * (nb + nw)
            shape[nb + window_dims.index(d)] = window_sizes[d]
            position = position + np.arange(window_sizes[d]).reshape(shape)
        index.append(position)
    return tuple(index), in_bounds, window_dims


def _to_result_order(result_rank: int, window_positions) -> tuple:
    """The permutation from (batch..., window...) order to a layout with the window dimensions
    at `window_positions` and the batch dimensions elsewhere, in order."""
    batch_positions = [r for r in range(result_rank) if r not in window_positions]
    nb = len(batch_positions)
    source = [0] * result_rank
    for k, r in enumerate(batch_positions):
        source[r] = k
    for k, r in enumerate(window_positions):
        source[r] = nb + k
    return tuple(source)


def check_dims(name: str, what: str, dims, bound: int, sorted_=False) -> None:
    if any(not 0 <= d < bound for d in dims) or len(set(dims)) != len(dims):
        raise TypeError(f"{name}: {what} {dims} must be distinct and in [0, {bound})")
    if sorted_ and list(dims) != sorted(dims):
        raise TypeError(f"{name}: {what} {dims} must be sorted")


def check_indices(name: str, indices: ShapedArray, count: int, batching, operand, op_batching):
    if not dtypes.is_int(indices.dtype):
        raise TypeError(f"{name}: indices must have an integer dtype, got {indices.dtype.name}")
    if indices.ndim < 1 or indices.shape[-1] != count:
        raise TypeError(
            f"{name}: the last dimension of the indices (shape {indices.shape}) is the index "
            f"vector and must have {count} entries, one per mapped operand dimension"
        )
    check_dims(name, "indices batching dims", batching, indices.ndim - 1)
    if len(batching) != len(op_batching):
        raise TypeError(
            f"{name}: operand and indices batching dims {op_batching} and {batching} must pair up"
        )
    for d, j in zip(op_batching, batching, strict=True):
        if operand.shape[d] != indices.shape[j]:
            raise TypeError(
                f"{name}: operand batching dim {d} (size {operand.shape[d]}) and indices "
                f"batching dim {j} (size {indices.shape[j]}) must have the same size"
            )


def batched_dnums(dn, operand_batched: bool, indices_batched: bool):
    """Dimension numbers (either kind) for operands with a batch dimension in front: with
    unbatched indices it is one more window dimension, the first; with batched indices one
    more index batch dimension, paired with the operand's when that is batched too."""

    def up(ds):
        return tuple(d + 1 for d in ds)

    window, skipped, start_map, op_batching, idx_batching = dn
    if not indices_batched:
        return type(dn)((0, *up(window)), up(skipped), up(start_map), up(op_batching), idx_batching)
    if not operand_batched:
        return type(dn)(up(window), skipped, start_map, op_batching, up(idx_batching))
    return type(dn)(up(window), up(skipped), up(start_map), (0, *up(op_batching)),
                    (0, *up(idx_batching)))  # fmt: skip


# --- gather ---------------------------------------------------------------------------------
gather_p = Primitive("gather")


def gather(
    operand,
    start_indices,
    dimension_numbers,
    slice_sizes,
    *,
    unique_indices=False,
    indices_are_sorted=False,
    mode=None,
    fill_value=None,
):
    """The windows of shape `slice_sizes` of `operand` at each index vector (last dimension) of
    `start_indices`, laid out as `dimension_numbers` (a `GatherDimensionNumbers`) says; see the
    module doc. `mode` says what out-of-bounds windows give (None: PROMISE_IN_BOUNDS, computed
    as CLIP); `fill_value` is theirs under FILL_OR_DROP (None: NaN for inexact dtypes, the
    integer dtype's most negative or largest value, True)."""
    dimension_numbers = canonical_dnums(GatherDimensionNumbers, "gather", dimension_numbers)
    # (None is FILL_OR_DROP for scatters, but PROMISE_IN_BOUNDS here, as in JAX)
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    dtype = np.dtype(ad.get_aval(operand).dtype)
    if fill_value is None and mode is GatherScatterMode.FILL_OR_DROP and dtype != dtypes.key_fry:
        fill_value = _default_fill_value(dtype)  # recorded resolved, as JAX records it
    if fill_value is not None:  # a hashable param: a Python scalar
        fill_value = np.asarray(fill_value).item()
        if isinstance(fill_value, float) and math.isnan(fill_value):  # one NaN object: equal params
            fill_value = math.nan
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=static_ints("gather", "slice_sizes", slice_sizes),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=mode,
        fill_value=fill_value,
    )


@gather_p.def_impl
def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value, **_):
    dn = dimension_numbers
    index, in_bounds, window_dims = operand_index(operand.shape, indices, dn[1:], slice_sizes, mode)
    windows = tuple(slice_sizes[d] for d in window_dims)
    out = np.broadcast_to(operand[index], indices.shape[:-1] + windows)
    if in_bounds is not None:
        fill = _default_fill_value(operand.dtype) if fill_value is None else fill_value
        mask = in_bounds.reshape(in_bounds.shape + (1,) * len(windows))
        out = np.where(mask, out, np.asarray(fill).astype(operand.dtype))
    result_rank = len(indices.shape) - 1 + len(windows)
    out = out.transpose(_to_result_order(result_rank, dn.offset_dims))
    return out if out.flags.c_contiguous else out.copy()  # (ascontiguousarray makes 0-d 1-d)


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes, **_):
    dn, name = dimension_numbers, "gather"
    rank = operand.ndim
    check_dims(name, "collapsed_slice_dims", dn.collapsed_slice_dims, rank, sorted_=True)
    check_dims(name, "operand_batching_dims", dn.operand_batching_dims, rank, sorted_=True)
    check_dims(name, "start_index_map", dn.start_index_map, rank)
    if set(dn.operand_batching_dims) & set(dn.collapsed_slice_dims + dn.start_index_map):
        raise TypeError(
            f"{name}: operand_batching_dims {dn.operand_batching_dims} must be "
            "disjoint from collapsed_slice_dims and start_index_map"
        )
    check_indices(
        name,
        indices,
        len(dn.start_index_map),
        dn.start_indices_batching_dims,
        operand,
        dn.operand_batching_dims,
    )
    # (batching dims slice 1 of each member, which fits even a dim of size 0)
    batching = set(dn.operand_batching_dims)
    if len(slice_sizes) != rank or any(
        not 0 <= s <= (max(n, 1) if d in batching else n)
        for d, (s, n) in enumerate(zip(slice_sizes, operand.shape, strict=True))
    ):
        raise TypeError(
            f"{name}: slice_sizes {slice_sizes} must have one size per dimension "
            f"of the operand (shape {operand.shape}), each at most its size"
        )
    if any(slice_sizes[d] > 1 for d in dn.collapsed_slice_dims + dn.operand_batching_dims):
        raise TypeError(
            f"{name}: slice_sizes {slice_sizes} must be 1 (or 0) in the collapsed "
            "and operand batching dims"
        )
    windows = [
        slice_sizes[d]
        for d in range(rank)
        if d not in dn.collapsed_slice_dims + dn.operand_batching_dims
    ]
    result_rank = indices.ndim - 1 + len(windows)
    if len(dn.offset_dims) != len(windows):
        raise TypeError(
            f"{name}: offset_dims {dn.offset_dims} must name one result dimension "
            f"per window dimension ({len(windows)})"
        )
    check_dims(name, "offset_dims", dn.offset_dims, result_rank, sorted_=True)
    batch = iter(indices.shape[:-1])
    window = iter(windows)
    shape = tuple(next(window) if r in dn.offset_dims else next(batch) for r in range(result_rank))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


gather_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])  # the operand's


def _gather_jvp(primals, tangents, **params):
    """Linear in the operand (the indices are integers), except that a filled window is
    constant: its tangent is filled with zeros."""
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, gather_p.bind(tangents[0], indices, **{**params, "fill_value": 0})


ad.jvp_rules[gather_p] = _gather_jvp
ad.mark_linear(gather_p, 0)  # in the operand; the indices are integers


def _gather_transpose(
    ct, operand, indices, *, dimension_numbers, slice_sizes, fill_value, **params
):
    """A scatter_add of the cotangent's windows into zeros (its mode drops the windows that a
    FILL_OR_DROP gather filled)."""

    zeros = sharding_constraints.laid_out_as(operand.aval, lambda: ad.zeros_like_aval(operand.aval))
    scatter_dn = ScatterDimensionNumbers(*dimension_numbers)  # the same fields, renamed
    return [
        scatter.scatter_add_p.bind(zeros, indices, ct, dimension_numbers=scatter_dn, **params),
        None,
    ]


transpose_rules[gather_p] = _gather_transpose


def _gather_batch(values, dims, *, dimension_numbers, slice_sizes, **params):
    """The batch becomes a window dimension (only the operand batched), a leading index batch
    dimension (only the indices batched), or a pair of batching dimensions (both)."""
    (operand, indices), (operand_bd, indices_bd) = values, dims
    new = batched_dnums(dimension_numbers, operand_bd is not None, indices_bd is not None)
    if operand_bd is not None:
        operand = move_batch_dim(operand, operand_bd, 0)
        size = shape_of(operand)[0]
        slice_sizes = (1 if indices_bd is not None else size, *slice_sizes)
    if indices_bd is not None:
        indices = move_batch_dim(indices, indices_bd, 0)
    out = gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes, **params)
    return out, 0


batch_rules[gather_p] = _gather_batch


def dims_attr(name: str, fields) -> str:
    """`#stablehlo.<name><field = [..], ...>`, leaving out empty lists as StableHLO prints."""
    parts = [
        f"{key} = [{', '.join(map(str, value))}]"
        if isinstance(value, tuple)
        else f"{key} = {value}"
        for key, value in fields
        if value != ()
    ]
    return f"#stablehlo.{name}<{', '.join(parts)}>"


def index_bounds(block, aval, operand_shape, start_index_map, window_sizes) -> tuple:
    """Tensors of the indices' shape holding, along the index vector, each component's lowest
    and highest start that keeps a window inside the operand."""
    highs = [operand_shape[d] - window_sizes[d] for d in start_index_map]
    bounds = []
    for values in ([0] * len(highs), highs):
        vector = block.constant(np.asarray(values, aval.dtype).reshape(len(highs)))
        bounds.append(block.op1("stablehlo.broadcast_in_dim", [vector],
                                hlo.tensor_type(aval.shape, aval.dtype),
                                {"broadcast_dimensions": hlo.i64_array([aval.ndim - 1])}))  # fmt: skip
    return tuple(bounds)


def _in_bounds_mask(ctx, indices, aval, operand_shape, start_index_map, window_sizes, shape, dims):
    """An i1 tensor of `shape`: whether the window at each index vector fits in the operand,
    broadcast along the result dimensions `dims` (those of the index batch dimensions)."""
    block = ctx.block
    bool_type = hlo.tensor_type(aval.shape, np.bool_)
    low, high = index_bounds(block, aval, operand_shape, start_index_map, window_sizes)
    last = [aval.ndim - 1]
    ok = block.op1(
        "stablehlo.and",
        [block.compare(indices, low, "GE"), block.compare(indices, high, "LE")],
        bool_type,
    )
    scalar = hlo.tensor_type((), np.bool_)
    region = block.region([scalar, scalar])
    (both,) = region.op("stablehlo.and", region.args, [scalar])
    region.ret([both])
    batch_type = hlo.tensor_type(aval.shape[:-1], np.bool_)
    all_ok = block.op1(
        "stablehlo.reduce",
        [ok, block.constant(np.asarray(True))],
        batch_type,
        {"dimensions": hlo.i64_array(last)},
        [region],
    )
    return block.op1(
        "stablehlo.broadcast_in_dim",
        [all_ok],
        hlo.tensor_type(shape, np.bool_),
        {"broadcast_dimensions": hlo.i64_array(dims)},
    )


def _gather_lowering(
    ctx,
    operand,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    mode,
    fill_value,
    indices_are_sorted,
    **_,
):
    """stablehlo.gather, which clamps its window starts as CLIP does; FILL_OR_DROP then selects
    the fill value for the windows that did not fit."""
    dn = dimension_numbers
    operand_aval, indices_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    if out_aval.size == 0:  # (StableHLO refuses windows of one in the empty batch of a vmap)
        return ctx.constant(np.zeros(out_aval.shape, out_aval.dtype), out_aval.dtype)
    fields = [
        ("offset_dims", dn.offset_dims),
        ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims),
        ("start_index_map", dn.start_index_map),
        ("index_vector_dim", indices_aval.ndim - 1),
    ]
    out = ctx.op(
        "stablehlo.gather",
        [operand, indices],
        {
            "dimension_numbers": dims_attr("gather", fields),
            "slice_sizes": hlo.i64_array(slice_sizes),
            "indices_are_sorted": "true" if indices_are_sorted else "false",
        },
    )
    if mode is not GatherScatterMode.FILL_OR_DROP or not dn.start_index_map:
        return out
    batch_dims = [r for r in range(out_aval.ndim) if r not in dn.offset_dims]
    mask = _in_bounds_mask(
        ctx,
        indices,
        indices_aval,
        operand_aval.shape,
        dn.start_index_map,
        slice_sizes,
        out_aval.shape,
        batch_dims,
    )
    fill = _default_fill_value(operand_aval.dtype) if fill_value is None else fill_value
    return ctx.op("stablehlo.select", [mask, out, ctx.block.full_like(out, fill)])


lowering_rules[gather_p] = _gather_lowering
