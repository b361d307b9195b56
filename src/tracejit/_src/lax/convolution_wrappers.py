"""The lax functions made of `conv_general_dilated`: `conv`, `conv_with_general_padding`,
`conv_transpose`, `conv_general_dilated_patches`, `conv_general_dilated_local`, and the shape
helpers `conv_shape_tuple`, `conv_general_shape_tuple`, `conv_transpose_shape_tuple`.

`conv_transpose` is a fractionally strided convolution: the image is dilated by the strides
(`lhs_dilation`) and convolved with stride 1. Its string paddings name the padding of the
forward convolution it undoes (from an image `stride` times larger), so its pads are those of
that convolution's image cotangent (see `convolution._lhs_cotangent`): `window - 1 - low` before,
`stride - 1 + low` (plus the forward image's extra end) after.

Patches are a depthwise convolution with a one-hot kernel (one output feature per input
feature and window position); an unshared ("local") convolution contracts the patches with a
kernel per output position (`dot_general` batched over the positions).
"""

from __future__ import annotations

import math

import numpy as np

from tracejit._src.core import get_aval, shape_of
from tracejit._src.lax import dot, shapes
from tracejit._src.lax.convolution import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_general_dilated,
    from_layout,
    in_layout,
    window_count,
)
from tracejit._src.lax.windows import dilated, padtype_to_pads


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """The result shape of a convolution of operands in (N, C, spatial...) and (O, I,
    spatial...) layout: (N / batch_group_count, O, windows per spatial dimension)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    if lhs_shape[0] % batch_group_count:
        raise ValueError(
            f"conv_shape_tuple: batch_group_count {batch_group_count} does not divide the lhs "
            f"batch dimension size {lhs_shape[0]}"
        )
    spatial = tuple(
        window_count(int(size) + int(lo) + int(hi), int(window), int(stride))
        for size, window, stride, (lo, hi) in zip(
            lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True
        )
    )
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0]), *spatial)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The result shape of `conv_general_dilated` without dilations or groups."""
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(
        in_layout(lhs_shape, lhs_spec), in_layout(rhs_shape, rhs_spec), window_strides, padding
    )
    return from_layout(out, out_spec)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The result shape of `conv_transpose` (without kernel dilation): each spatial size times
    its stride for 'SAME', plus the kernel's overhang `max(window - stride, 0)` for 'VALID';
    explicit pads apply to the image dilated by the strides."""
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_sizes, rhs_sizes = in_layout(lhs_shape, lhs_spec), in_layout(rhs_shape, rhs_spec)
    if isinstance(padding, str) and padding not in ("SAME", "VALID"):
        raise ValueError(f"conv_transpose: padding must be 'SAME' or 'VALID', got {padding!r}")
    pads = _transpose_pads(lhs_sizes[2:], rhs_sizes[2:], window_strides, padding, False)
    spatial = [
        window_count(dilated(size, stride) + lo + hi, window, 1)
        for size, window, stride, (lo, hi) in zip(
            lhs_sizes[2:], rhs_sizes[2:], window_strides, pads, strict=True
        )
    ]
    return from_layout((lhs_sizes[0], rhs_sizes[0], *spatial), out_spec)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """`conv_general_dilated` in the layout ('NCHW', 'OIHW', 'NCHW') without dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """`conv_general_dilated` in the layout ('NCHW', 'OIHW', 'NCHW')."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


_TENSORFLOW_LAYOUTS = {
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def _transpose_pads(sizes, windows, strides, padding, use_consistent_padding):
    """The pads of the stride-dilated image in `conv_transpose` (see the module doc)."""
    if not isinstance(padding, str):
        pads = [(int(lo), int(hi)) for lo, hi in padding]
        if use_consistent_padding:  # pads of the forward convolution, as PyTorch's
            return [(w - 1 - lo, w - 1 - hi) for w, (lo, hi) in zip(windows, pads, strict=True)]
        return pads
    if padding not in ("SAME", "VALID"):  # the convolution's own padding, as JAX has it
        return padding
    valid = padding == "VALID"
    forward_sizes = [
        n * s + (max(w - s, 0) if valid else 0)
        for n, w, s in zip(sizes, windows, strides, strict=True)
    ]
    forward_pads = padtype_to_pads(forward_sizes, windows, strides, padding)
    return [
        (w - 1 - lo, f - 1 - (n - 1) * s + lo)
        for n, f, w, s, (lo, _) in zip(
            sizes, forward_sizes, windows, strides, forward_pads, strict=True
        )
    ]


def conv_transpose(
    lhs,
    rhs,
    strides,
    padding,
    rhs_dilation=None,
    dimension_numbers=None,
    transpose_kernel=False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding=False,
):
    """The N-d "transposed" convolution, computed directly as a fractionally strided one.

    `padding` 'SAME'/'VALID' is the padding of the forward convolution this one transposes;
    other strings are this convolution's own (as JAX, only without strides); explicit pairs
    pad the stride-dilated image (with `use_consistent_padding`, they too are the forward
    convolution's, as in PyTorch). `dimension_numbers` defaults to
    TensorFlow's ('NHWC', 'HWIO', 'NHWC') and its kin of rank 3 and 5. `transpose_kernel`
    flips the kernel's spatial axes and swaps its input and output features, which makes this
    the gradient of `conv_general_dilated` with the same kernel (Keras' Conv2DTranspose).
    """
    ndim = len(shape_of(lhs))
    if dimension_numbers is None:
        if ndim not in _TENSORFLOW_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TENSORFLOW_LAYOUTS[ndim]
    dnums = conv_dimension_numbers(shape_of(lhs), shape_of(rhs), dimension_numbers)
    lhs_spec, rhs_spec, out_spec = (tuple(spec) for spec in dnums)
    if transpose_kernel:
        rhs = shapes.rev(rhs, rhs_spec[2:])
        rhs_spec = (rhs_spec[1], rhs_spec[0], *rhs_spec[2:])
    nsp = ndim - 2
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    windows = [
        dilated(k, r)
        for k, r in zip(in_layout(shape_of(rhs), rhs_spec)[2:], rhs_dilation, strict=True)
    ]
    sizes = in_layout(shape_of(lhs), lhs_spec)[2:]
    pads = _transpose_pads(sizes, windows, tuple(strides), padding, use_consistent_padding)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * nsp,
        pads,
        lhs_dilation=tuple(strides),
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_patches(
    lhs,
    filter_shape,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """The image patches that `conv_general_dilated` with a kernel of spatial shape
    `filter_shape` (in the kernel spec's order) would meet, flattened into the result's feature
    dimension in the order (input feature, then window positions in the kernel spec's order)."""
    lhs_shape = shape_of(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dnums = conv_dimension_numbers(lhs_shape, (1, 1, *filter_shape), dimension_numbers)
    features = lhs_shape[dnums.lhs_spec[1]]
    taps = math.prod(filter_shape)
    one_hot = np.eye(taps, dtype=get_aval(lhs).dtype).reshape(taps, 1, *filter_shape)
    kernel = np.tile(one_hot, (features,) + (1,) * (len(filter_shape) + 1))  # (O, I, window...)
    return conv_general_dilated(
        lhs,
        kernel.transpose(np.argsort(dnums.rhs_spec)),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dnums,
        feature_group_count=features,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs,
    rhs,
    window_strides,
    padding,
    filter_shape,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
):
    """An unshared convolution: a kernel of its own at each output position. `rhs`'s spatial
    dimensions are the output's positions and its input-feature dimension holds (input
    feature, window position), in the order `conv_general_dilated_patches` gives them."""
    dnums = conv_dimension_numbers(shape_of(lhs), shape_of(rhs), dimension_numbers)
    lhs_spec, rhs_spec, out_spec = dnums
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dnums, precision
    )
    nsp = len(lhs_spec) - 2
    # patches in (spatial..., N, C), rhs in (spatial..., I, O): the positions batch the product
    patches = shapes.transpose(patches, (*out_spec[2:], out_spec[0], out_spec[1]))
    kernel = shapes.transpose(rhs, (*rhs_spec[2:], rhs_spec[1], rhs_spec[0]))
    batch = tuple(range(nsp))
    out = dot.dot_general(
        patches, kernel, (((nsp + 1,), (nsp,)), (batch, batch)), precision=precision
    )  # (spatial..., N, O)
    canonical = (nsp, nsp + 1, *batch)  # where each role (N, O, spatial...) is in `out`
    return shapes.transpose(out, tuple(np.array(canonical)[np.argsort(out_spec)]))
