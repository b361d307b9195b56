"""`jnp.pad` in every NumPy mode, built axis by axis from slices, flips, repeats and
`concatenate` (and one `pad` primitive for constants), so that every mode differentiates,
batches and compiles like the ops it stages, as JAX's does.

- 'constant' is the `pad` primitive (one per side and axis when the values differ by side);
- 'edge', 'maximum', 'minimum', 'mean', 'median' repeat one slice per side: the edge, or a
  statistic of the whole axis (or of its first/last `stat_length` entries), rounded for
  integer arrays;
- 'wrap' concatenates copies of the axis; 'reflect' and 'symmetric' concatenate flipped
  slices, repeatedly when the padding is longer than the axis (`reflect_type='odd'`
  reflects the values through the edge, `2 * edge - x`);
- 'linear_ramp' is a `linspace` from `end_values` to the edge;
- 'empty' pads with zeros (JAX's `empty` is `zeros`);
- a callable `mode` is NumPy's protocol: the array is zero-padded, then
  `mode(vector, (before, after), axis, kwargs)` is applied to every 1-D slice along each
  axis in turn (vmapped, as `apply_along_axis` does).

Widths, `stat_length` and `end_values` must be concrete (they decide shapes, or are read as
Python numbers, as in JAX); `constant_values` may be traced.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.numpy import (
    creation,
    lib,
    manipulation,
    promotion,
    reductions,
    sorting,
    statistics,
    ufuncs,
)
from tracejit._src.numpy.promotion import asarray_operand
from tracejit._src.tree_util import tree_map

_ALLOWED_KWARGS = {
    "empty": (),
    "edge": (),
    "wrap": (),
    "constant": ("constant_values",),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}
_STATISTICS = {
    "maximum": reductions.amax,
    "minimum": reductions.amin,
    "mean": reductions.mean,
    "median": statistics.median,
}


def pad(array, pad_width, mode="constant", **kwargs):
    """`array` padded by `pad_width` (an int, a (before, after) pair, or one pair per axis)
    in NumPy's `mode` (a name or a function), with the mode's options as keywords:
    `constant_values`, `stat_length`, `end_values`, `reflect_type`."""
    x = asarray_operand("pad", array)
    widths = _pairs(pad_width, x.ndim, "pad_width")
    if widths and not all(isinstance(w, (int, np.integer)) for pair in widths for w in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_with_function(x, widths, mode, kwargs)
    if mode not in _ALLOWED_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if x.ndim == 0:
        return x
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        values = creation.asarray(kwargs.get("constant_values", 0))
        return _pad_constant(x, widths, values)
    if mode == "wrap":
        return _pad_wrap(x, widths)
    if mode in ("symmetric", "reflect"):
        return _pad_reflect(x, widths, mode, kwargs.get("reflect_type", "even"))
    if mode == "edge":
        return _pad_edge(x, widths)
    if mode == "linear_ramp":
        return _pad_linear_ramp(
            x, widths, _pairs(kwargs.get("end_values", 0), x.ndim, "end_values")
        )
    if mode == "empty":
        return _pad_constant(x, widths, asarray_operand("pad", 0))
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = _pairs(stat_length, x.ndim, "stat_length")
    return _pad_statistic(x, widths, stat_length, _STATISTICS[mode])


def _pairs(values, ndim: int, name: str) -> tuple:
    """`values` (a scalar, a pair, or one pair per axis; concrete) as one pair per axis."""

    def concrete(v):
        if isinstance(v, Tracer):
            value = sorting.concrete_value(v)
            if value is None:
                raise _concretization_error(v, name)
            return value
        return v

    try:
        array = np.asarray(tree_map(concrete, values))
    except ValueError as e:
        if "inhomogeneous" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
        raise
    if array.ndim > 2 or (array.ndim and array.dtype == object):
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if array.shape == (ndim, 2):
        return tuple((lo.item(), hi.item()) for lo, hi in array)
    if array.shape in ((1, 2), (2,)):
        pair = tuple(v.item() for v in array.reshape(2))
        return (pair,) * ndim
    if array.shape in ((1,), ()):
        v = array.reshape(()).item()
        return ((v, v),) * ndim
    raise ValueError(
        f"jnp.pad: {name} with nd={ndim} has unsupported shape {array.shape}. Valid shapes are "
        f"({ndim}, 2), (1, 2), (2,), (1,), or ()."
    )


def _concretization_error(x, name: str):
    return sorting.concretization_error(
        x, "pad", name, f"The {name} argument of jnp.pad must be static."
    )


def _check_no_padding(pair, mode: str):
    if pair[0] > 0 or pair[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _along(x, start, stop, axis: int):
    return lax_slicing.slice_in_dim(x, start, stop, 1, axis)


def _pad_constant(x, widths, values):
    """The `pad` primitive: once for a scalar value, else once per side and axis."""
    values = promotion.convert_element_type(values, x.dtype, x.weak_type)
    if values.ndim == 0 or values.shape == (1,):
        config = tuple((lo, hi, 0) for lo, hi in widths)
        return lax_shapes.pad(x, manipulation.reshape(values, ()), config)
    if values.ndim == 1 and values.shape[-1] != 2:
        raise ValueError(
            f"jnp.pad: constant_values has unsupported shape {values.shape}. If the shape is "
            "1D or 2D, the last dimension must be of size 1 or 2."
        )
    values = manipulation.broadcast_to(values, (x.ndim, 2))
    for i, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * x.ndim
                config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                x = lax_shapes.pad(x, values[i, side], tuple(config))
    return x


def _pad_wrap(x, widths):
    for i, (lo, hi) in enumerate(widths):
        size = x.shape[i]
        if size == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        left_repeats, left_rest = divmod(lo, size)
        right_repeats, right_rest = divmod(hi, size)
        parts = [_along(x, size - left_rest, size, i)] if left_rest else []
        parts += [x] * (left_repeats + right_repeats + 1)
        parts += [_along(x, 0, right_rest, i)] if right_rest else []
        x = lax_shapes.concatenate(parts, i) if len(parts) > 1 else x
    return x


def _pad_reflect(x, widths, mode: str, reflect_type: str):
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for i, (lo, hi) in enumerate(widths):
        if x.shape[i] == 0:
            _check_no_padding((lo, hi), mode)
            continue
        size = x.shape[i]
        x = _reflect_side(x, i, size, lo, mode, reflect_type, before=True)
        x = _reflect_side(x, i, size, hi, mode, reflect_type, before=False)
    return x


def _reflect_side(x, axis: int, size: int, padding: int, mode, reflect_type, before: bool):
    """`x` with `padding` reflected entries on one side of `axis`: flipped slices of at most
    the axis's original `size`, repeated (each reflecting the last) until the padding is
    filled."""
    offset = 1 if (mode == "reflect" and size > 1) else 0
    edge = _along(x, 0, 1, axis) if before else _along(x, -1, None, axis)
    while padding > 0:
        step = min(padding, size - offset)
        padding -= step
        if before:
            start, stop = offset, offset + step
        else:
            start = -(step + offset)
            stop = None if (mode == "symmetric" or size == 1) else -1
        part = manipulation.flip(_along(x, start, stop, axis), axis)
        if reflect_type == "odd":
            part = ufuncs.subtract(ufuncs.multiply(2, edge), part)
            if size > 1:
                edge = _along(part, 0, 1, axis) if before else _along(part, -1, None, axis)
        x = lax_shapes.concatenate([part, x] if before else [x, part], axis)
    return x


def _pad_edge(x, widths):
    for i, (lo, hi) in enumerate(widths):
        n = x.shape[i]
        if n == 0:
            _check_no_padding((lo, hi), "edge")
            continue
        before = lib.repeat(_along(x, 0, 1, i), lo, axis=i)
        after = lib.repeat(_along(x, n - 1, n, i), hi, axis=i)
        x = lax_shapes.concatenate([before, x, after], i)
    return x


def _pad_linear_ramp(x, widths, end_values):
    for i, (lo, hi) in enumerate(widths):
        first = manipulation.squeeze(_along(x, 0, 1, i), i)
        last = manipulation.squeeze(_along(x, -1, None, i), i)
        ramps = []
        for end, edge, num in ((end_values[i][0], first, lo), (end_values[i][1], last, hi)):
            ramp = creation.linspace(end, edge, num, endpoint=False, dtype=x.dtype, axis=i)
            ramps.append(promotion.convert_element_type(ramp, x.dtype, x.weak_type))
        x = lax_shapes.concatenate([ramps[0], x, manipulation.flip(ramps[1], i)], i)
    return x


def _pad_statistic(x, widths, stat_length, statistic):
    for i, (lo, hi) in enumerate(widths):
        if stat_length is None:
            before = after = statistic(x, axis=i, keepdims=True)
        else:
            length_before, length_after = stat_length[i]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            length_before = min(length_before, x.shape[i])
            length_after = min(length_after, x.shape[i])
            before = statistic(_along(x, 0, length_before, i), axis=i, keepdims=True)
            after = statistic(_along(x, -length_after, None, i), axis=i, keepdims=True)
        if dtypes.is_int(x.dtype) and x.dtype != np.dtype(bool):
            before, after = ufuncs.round(before), ufuncs.round(after)
        before = promotion.convert_element_type(before, x.dtype, x.weak_type)
        after = promotion.convert_element_type(after, x.dtype, x.weak_type)
        x = lax_shapes.concatenate(
            [lib.repeat(before, lo, axis=i), x, lib.repeat(after, hi, axis=i)], i
        )
    return x


def _pad_with_function(x, widths, function, kwargs):
    """NumPy's protocol for a callable mode: zero-pad, then let `function` rewrite every 1-D
    slice along each axis in turn."""
    widths = tuple((int(lo), int(hi)) for lo, hi in widths)
    padded = _pad_constant(x, widths, asarray_operand("pad", 0))
    for axis in range(padded.ndim):
        padded = lib.apply_along_axis(function, axis, padded, widths[axis], axis, kwargs)
    return padded
