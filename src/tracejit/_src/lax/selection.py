"""Choosing between values: select_n and clamp, one block each.

`select_n(which, *cases)` picks, element by element, the case `which` names (bool for two
cases, int otherwise, clamped into range); `lax.select(p, x, y)` is `select_n(p, y, x)`:

    lax.select(p, x, y)             c:f32[3] = select_n p y x

The result is weak when all cases are.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules, move_batch_dim
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import bitwise, broadcasting, comparison, shapes
from tracejit._src.lax.standard import check_same_dtypes, weak_if_all_weak
from tracejit._src.lowering.lower import lowering_rules

# --- select_n -------------------------------------------------------------------------------
select_n_p = Primitive("select_n")


def select_n(which, *cases):
    """Elementwise choice among `cases` (same shape and dtype): `cases[which]`. `which` is bool
    (two cases at most) or an integer, scalar or of the cases' shape; an out-of-range integer
    picks the nearest case, as XLA does."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """Elementwise `on_true if pred else on_false`: `select_n(pred, on_false, on_true)`."""
    return select_n_p.bind(pred, on_false, on_true)


@select_n_p.def_impl
def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        if which.size >= _BITWISE_SELECT_MIN_SIZE and cases[0].dtype in _BIT_VIEWS:
            return _bitwise_select(which, *cases)
        return np.where(which, cases[1], cases[0])
    if not which.shape:
        return cases[min(max(int(which), 0), len(cases) - 1)]
    if len(cases) <= 32:  # NumPy's limit on choose's choices
        return np.choose(which, cases, mode="clip")
    which = np.clip(which, 0, len(cases) - 1)
    return np.select([which == i for i in range(len(cases))], cases)


# np.where branches per element: on an unpredictable mask it takes 10x the time of one pass
# (3.8 ms for 10^6 float32). Selecting on the bits takes three passes whatever the mask, which
# pays from about a thousand elements. Every bit is copied, NaN payloads and signed zeros too.
_BITWISE_SELECT_MIN_SIZE = 1024
_BIT_VIEWS = {
    np.dtype(d): np.dtype(f"u{np.dtype(d).itemsize}")
    for d in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64, np.float16, np.float32, np.float64, dtypes.bfloat16)
}  # fmt: skip


def _bitwise_select(which, on_false, on_true):
    """`on_true` where `which`, else `on_false`: ((t ^ f) * which) ^ f on their bits."""
    unsigned = _BIT_VIEWS[on_false.dtype]
    false_bits = on_false.view(unsigned)
    out = np.bitwise_xor(on_true.view(unsigned), false_bits)
    out *= which
    out ^= false_bits
    return out.view(on_false.dtype)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise ValueError("select_n() must have at least one case")
    if len({case.shape for case in cases}) != 1:
        raise TypeError(
            f"select cases must have the same shapes, got {[case.shape for case in cases]}."
        )
    check_same_dtypes("select", *cases)
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` shape "
            f"{which.shape} but case shape {cases[0].shape}."
        )
    if not (which.dtype == np.bool_ or dtypes.is_int(which.dtype)):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype.name}.")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    weak = all(case.weak_type for case in cases)  # `which` does not count
    return ShapedArray(cases[0].shape, cases[0].dtype, weak)


select_n_p.def_weak_type_rule(lambda weak_types, params: all(weak_types[1:]))


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]  # `which` is an integer or a boolean: no derivative
    if all(type(t) is ad.Zero for t in case_tangents):
        return out, ad.Zero.from_primal_value(out)
    return out, select_n_p.bind(which, *map(ad.instantiate_zeros, case_tangents))


def _select_n_transpose(ct, which, *cases):
    if len(cases) == 1:
        return [None, ct if is_undefined_primal(cases[0]) else None]
    zeros = ad.zeros_like_aval(ad.get_aval(ct))
    return [None] + [
        select_n_p.bind(which, *(ct if j == i else zeros for j in range(len(cases))))
        if is_undefined_primal(case)
        else None
        for i, case in enumerate(cases)
    ]


ad.jvp_rules[select_n_p] = _select_n_jvp
ad.mark_linear(select_n_p)  # in the cases, not the selector
transpose_rules[select_n_p] = _select_n_transpose


def _select_n_lowering(ctx, which, *cases):
    if len(cases) == 1:
        return cases[0]
    aval = ctx.avals_in[0]
    if aval.dtype == np.bool_:
        return ctx.op("stablehlo.select", [which, cases[1], cases[0]])
    # An out-of-range `which` picks the nearest case: case i wherever which >= i, in order.
    out = cases[0]
    for i, case in enumerate(cases[1:], 1):
        pred = ctx.block.compare(which, ctx.block.full_like(which, i), "GE")
        out = ctx.op("stablehlo.select", [pred, case, out])
    return out


lowering_rules[select_n_p] = _select_n_lowering


def _same_shape_batch(values, dims, scalar_ok):
    """Batch dimensions first; operands at positions in `scalar_ok` may stay unbatched
    scalars, the others (and batched scalars) are broadcast to the full batched shape."""
    size = shapes.batch_size(values, dims)
    ranks = [len(shape_of(v)) - (d is not None) for v, d in zip(values, dims, strict=True)]
    rank_max = max(ranks)
    full = None
    for v, d, r in zip(values, dims, ranks, strict=True):
        if r == rank_max:
            shape = tuple(shape_of(v))
            full = (size, *(shape[:d] + shape[d + 1 :] if d is not None else shape))
            break
    out = []
    for i, (v, d, r) in enumerate(zip(values, dims, ranks, strict=True)):
        if d is None and r == 0 and i in scalar_ok:
            out.append(v)
        elif d is None:
            out.append(shapes.broadcast_in_dim(v, full, tuple(range(1, r + 1)) if r else ()))
        else:
            v = move_batch_dim(v, d, 0)
            if r < rank_max:  # a batched scalar among arrays
                v = shapes.broadcast_in_dim(v, full, (0,))
            out.append(v)
    return out


def _select_n_batch(values, dims):
    which, *cases = _same_shape_batch(values, dims, scalar_ok=(0,))
    return select_n_p.bind(which, *cases), 0


batch_rules[select_n_p] = _select_n_batch

# --- clamp ----------------------------------------------------------------------------------
clamp_p = Primitive("clamp")


def clamp(min, x, max):
    """Elementwise `min(max(x, min), max)`; `min` and `max` are scalars or of `x`'s shape."""
    return clamp_p.bind(min, x, max)


@clamp_p.def_impl
def _clamp_impl(min, x, max):
    if x.size > 4096 and x.dtype.kind not in "bcV":  # np.clip: one pass, but slow to call
        return np.clip(x, min, max)
    return np.minimum(np.maximum(x, min), max)


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(min, x, max):
    check_same_dtypes("clamp", min, x, max)
    for name, bound in (("min", min), ("max", max)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape == (), got "
                f"{name}.shape={bound.shape}, operand.shape={x.shape}."
            )
    return ShapedArray(x.shape, x.dtype, min.weak_type and x.weak_type and max.weak_type)


clamp_p.def_weak_type_rule(weak_if_all_weak)


def _clamp_jvp(primals, tangents):
    # As JAX: `x` passes its tangent strictly inside (min, max), `min` where it is the result
    # (and below max), `max` where x exceeds it; at a tie (x == min or x == max) none does.
    min, x, max = primals
    out = clamp_p.bind(min, x, max)
    masks = (
        lambda: bitwise.bitwise_and(comparison.gt(min, x), comparison.lt(min, max)),
        lambda: bitwise.bitwise_and(comparison.gt(x, min), comparison.lt(x, max)),
        lambda: comparison.lt(max, x),
    )
    contributions = []
    for mask, t in zip(masks, tangents, strict=True):
        if type(t) is not ad.Zero:  # a scalar bound's tangent is broadcast to x's shape
            t = broadcasting.broadcast_to_shape(t, out.shape)
            contributions.append(select_n_p.bind(mask(), ad.zeros_like_aval(ad.get_aval(t)), t))
    tangent_out = ad.Zero.from_primal_value(out)
    for contribution in contributions:
        tangent_out = ad.add_tangents(tangent_out, contribution)
    return out, tangent_out


ad.jvp_rules[clamp_p] = _clamp_jvp


def _clamp_lowering(ctx, lo, x, hi):
    dtype = ctx.avals_in[1].dtype
    if dtypes.is_complex(dtype):  # min(max(x, lo), hi) in the impl's lexicographic order
        lo, x, hi = ctx.broadcast_operands(lo, x, hi)
        shape = ctx.avals_out[0].shape
        above = comparison.lower_complex_chooser(ctx.block, x, lo, dtype, True, shape)
        return comparison.lower_complex_chooser(ctx.block, above, hi, dtype, False, shape)
    if not dtypes.is_inexact(dtype):
        return ctx.op("stablehlo.clamp", [lo, x, hi])
    # Ours is NaN where any of the three is (maximum, then minimum); XLA's clamp is not always
    # (a NaN operand gives `min`, a NaN `max` is ignored): select a NaN there.
    clamped = ctx.op("stablehlo.clamp", [lo, x, hi])
    lo, x, hi = ctx.broadcast_operands(lo, x, hi)
    aval = ctx.avals_out[0]
    isnan = [ctx.block.compare(v, v, "NE") for v in (lo, x, hi)]
    bool_aval = [aval.update(dtype=np.dtype(np.bool_), weak_type=False)]
    any_nan = ctx.op("stablehlo.or", isnan[:2], result_avals=bool_aval)
    any_nan = ctx.op("stablehlo.or", [any_nan, isnan[2]], result_avals=bool_aval)
    nan = ctx.op("stablehlo.add", [ctx.op("stablehlo.add", [lo, x]), hi])  # NaN where one is
    return ctx.op("stablehlo.select", [any_nan, nan, clamped])


lowering_rules[clamp_p] = _clamp_lowering


def _clamp_batch(values, dims):
    return clamp_p.bind(*_same_shape_batch(values, dims, scalar_ok=(0, 2))), 0


batch_rules[clamp_p] = _clamp_batch
