"""The geometry of windows, shared by `windowed_reductions`, `window_selection` and
`convolution`: result shapes, padding from 'SAME'/'VALID' (`padtype_to_pads`), the checks of JAX's messages,
the eager views of every window, the lowering's attributes and the batch axis as a window.

A window slides over the operand as in XLA: the operand is first dilated (`base_dilation - 1`
holes between neighbours), then padded (a (low, high) pair per dimension, negative to crop); a
window of `window_dimensions` elements, `window_dilation` apart, starts every `window_strides`.
Eagerly, the dilated and padded operand is one NumPy array (`padded`), and the element at one
window position in all windows at once is a strided view of it (`at_offset`): reductions loop
over window positions at most, never over result elements.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tracejit._src.lax import shapes
from tracejit._src.lax.standard import static_ints
from tracejit._src.lowering import stablehlo as hlo


def dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The result shape of a windowed reduction: windows that fit in the dilated, padded
    operand (none where the window is larger)."""
    ndim = len(operand_shape)
    base_dilation = (1,) * ndim if base_dilation is None else base_dilation
    window_dilation = (1,) * ndim if window_dilation is None else window_dilation
    padding = padding_pairs(padding, ndim)
    out = []
    for size, window, stride, (lo, hi), base, dilation in zip(
        operand_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = dilated(size, base) + lo + hi
        out.append(max(0, (padded - dilated(window, dilation)) // stride + 1))
    return tuple(out)


def padding_pairs(padding, ndim: int) -> tuple:
    try:
        pairs = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            f"reduce_window padding must be a sequence of (low, high) integer pairs, got "
            f"{padding!r}"
        ) from None
    if len(pairs) != ndim:
        raise ValueError(
            f"reduce_window got {len(pairs)} padding pairs for an operand of rank {ndim}: {pairs}"
        )
    return pairs


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """The explicit (low, high) pads of the padding 'VALID' (none), 'SAME' (the output has
    ceil(size / stride) elements, the odd pad element at the end) or 'SAME_LOWER' (odd one at
    the start), for inputs, windows and strides of these sizes."""
    if not isinstance(padding, str):
        raise TypeError(f"Unknown padding type: {padding}.")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
        )
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        size, window, stride = int(size), int(window), int(stride)
        if stride <= 0:
            raise ValueError(f"padtype_to_pads: window strides must be positive, got {stride}")
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def window_params(
    name, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> dict:
    """The params of a windowed reduction from user input: tuples of ints, padding as pairs
    (SAME computed from the operand's undilated shape and the dilated window, as JAX)."""
    ndim = len(window_dimensions)
    window = static_ints(name, "window_dimensions", window_dimensions)
    strides = (1,) * ndim if window_strides is None else window_strides
    strides = static_ints(name, "window_strides", strides)
    base = static_ints(
        name, "base_dilation", (1,) * ndim if base_dilation is None else base_dilation
    )
    dilation = (1,) * ndim if window_dilation is None else window_dilation
    dilation = static_ints(name, "window_dilation", dilation)
    if isinstance(padding, str):
        check_geometry(name, shape, window, strides, ((0, 0),) * ndim, base, dilation)
        extents = [dilated(w, d) for w, d in zip(window, dilation, strict=True)]
        padding = tuple(padtype_to_pads(shape, extents, strides, padding))
    return {
        "window_dimensions": window,
        "window_strides": strides,
        "padding": padding_pairs(padding, len(shape)),
        "base_dilation": base,
        "window_dilation": dilation,
    }


def check_geometry(name, shape, window, strides, padding, base_dilation, window_dilation):
    if len(window) != len(shape):
        raise TypeError(
            f"{name} got the wrong number of window_dimensions for operand: got operand shape "
            f"{tuple(shape)} with window_dimensions {window}."
        )
    for what, values in [
        ("window_strides", strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ]:
        if len(values) != len(window):
            raise TypeError(
                f"{name} got inconsistent {what} and window_dimensions: got {what} {values} "
                f"and window_dimensions {window}."
            )
    if len(padding) != len(window):
        raise ValueError(
            f"{name} got inconsistent padding and window_dimensions: got padding {padding} "
            f"and window_dimensions {window}."
        )
    for what, values in [("window_dimensions", window), ("window_strides", strides)]:
        if any(v <= 0 for v in values):
            raise TypeError(
                f"{name} {what} must have every element be strictly positive, got {values}."
            )
    for values in (base_dilation, window_dilation):
        if any(v <= 0 for v in values):
            raise TypeError(f"All dilations must be positive, got {values}.")


def window_shape(
    name, aval, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> tuple:
    check_geometry(
        name,
        aval.shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    return reduce_window_shape_tuple(
        aval.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )


# --- eager windows: strided views of the dilated, padded operand ------------------------------


def padded(x, fill, padding, base_dilation=None):
    """`x` dilated and padded (negative padding crops), holes and padding set to `fill`."""
    base_dilation = base_dilation or (1,) * x.ndim
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=True))
    return shapes.pad_p.impl(x, np.asarray(fill, x.dtype), padding_config=config)


def at_offset(padded, offset, out_shape, strides, window_dilation):
    """The element at window position `offset` of every window: a strided view."""
    return padded[
        tuple(
            slice(k * d, k * d + (n - 1) * s + 1, s)
            for k, n, s, d in zip(offset, out_shape, strides, window_dilation, strict=True)
        )
    ]


def window_view(padded, out_shape, window_dimensions, strides, window_dilation):
    """A view of shape `out_shape + window_dimensions`: every window's elements."""
    extents = tuple(dilated(w, d) for w, d in zip(window_dimensions, window_dilation, strict=True))
    view = sliding_window_view(padded, extents)
    index = tuple(slice(0, (n - 1) * s + 1, s) for n, s in zip(out_shape, strides, strict=True))
    return view[index + tuple(slice(None, None, d) for d in window_dilation)]


def geometry_attributes(
    window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
) -> dict:
    attributes = {
        "window_dimensions": hlo.i64_array(window_dimensions),
        "window_strides": hlo.i64_array(window_strides),
    }
    if base_dilation is not None:
        attributes["base_dilations"] = hlo.i64_array(base_dilation)
        attributes["window_dilations"] = hlo.i64_array(window_dilation)
    attributes["padding"] = hlo.dense_attribute(np.array(padding, np.int64).reshape(-1, 2))
    return attributes


def with_batch_window(params: dict, bdim: int) -> dict:
    """The params with the batch axis inserted at `bdim` as a window of one element."""
    out = dict(params)
    for key, value in [
        ("window_dimensions", 1),
        ("window_strides", 1),
        ("padding", (0, 0)),
        ("base_dilation", 1),
        ("window_dilation", 1),
    ]:
        if key in params:
            out[key] = params[key][:bdim] + (value,) + params[key][bdim:]
    return out
