"""Convolutions: the primitive `conv_general_dilated`, its dimension numbers and paddings.

`conv_general_dilated(lhs, rhs)` slides the kernel `rhs` over the image `lhs`, as XLA's
Convolution: in the layout (N, C, spatial...) of the image and (O, I, spatial...) of the kernel
that `dimension_numbers` names, each spatial dimension of the image is dilated (`lhs_dilation - 1`
zeros between its elements), padded (`padding`, negative pads crop), and each output element is
the dot product of the kernel, dilated by `rhs_dilation`, with one window of it, windows
`window_strides` apart:

    out[n, o, p] = sum_{i, k} padded[n, i, p * stride + k * rhs_dilation] * rhs[o, i, k]

`feature_group_count` G splits the image's features and the kernel's outputs into G groups,
each convolved on its own (G = C is a depthwise convolution); `batch_group_count` B splits the
image's batch and the kernel's outputs into B groups instead (what the kernel's gradient of a
grouped convolution needs). Groups are consecutive blocks: group g is `[g * size, (g+1) * size)`.

    { lambda ; a:f32[2,3,8,8] b:f32[4,3,3,3]. let
        c:f32[2,4,8,8] = conv_general_dilated[
          batch_group_count=1
          dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), ...)
          ...] a b
      in (c,) }

Eagerly, the padded image is viewed as its windows (`sliding_window_view`, strided), copied once
into a ((features, kernel taps) x output pixels) matrix per group, and multiplied by the kernel
in one `np.matmul` per call (BLAS); compiled, it is one `stablehlo.convolution`. The shape
helpers (`conv_shape_tuple`, ...) and the wrappers are in `convolution_wrappers`.

Derivatives: the convolution is bilinear, so its JVP is the sum of the convolutions with each
operand's tangent, and its transposes are convolutions again (see `_lhs_cotangent` and
`_rhs_cotangent`). Batching folds the vmapped axis into the batch, feature or output-feature
dimension, with a group count multiplied where operands are batched together.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import NamedTuple, Union

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import conversions, dot, shapes, sharding_constraints
from tracejit._src.lax.standard import (
    check_no_sharding,
    check_same_dtypes,
    quiet,
    weak_if_all_weak,
)
from tracejit._src.lax.windows import dilated, padtype_to_pads
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

# --------------------------------------------------------------------------------------------
# Dimension numbers


class ConvDimensionNumbers(NamedTuple):
    """Where the dimensions of a convolution's operands and result are: `lhs_spec` lists the
    image's (batch, feature, spatial...) dimensions, `rhs_spec` the kernel's (output feature,
    input feature, spatial...), `out_spec` the result's (batch, feature, spatial...)."""

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Union[  # noqa: UP007 (JAX's alias, spelled as JAX spells it)
    tuple[str, str, str], ConvDimensionNumbers, None
]


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings such as ('NHWC', 'HWIO', 'NHWC'), or a
    `ConvDimensionNumbers`) as a `ConvDimensionNumbers` for operands of these shapes; None is
    ('NCHW...', 'OIHW...', 'NCHW...')."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)):
        raise TypeError(
            "convolution dimension_numbers must be tuple/list or None, got "
            f"{type(dimension_numbers)}."
        )
    if len(dimension_numbers) != 3:
        raise TypeError(
            "convolution dimension_numbers list/tuple must be length 3, got "
            f"{len(dimension_numbers)}."
        )
    if not all(isinstance(spec, str) for spec in dimension_numbers):
        raise TypeError(
            "convolution dimension_numbers elements must be strings, got "
            f"{tuple(map(type, dimension_numbers))}."
        )
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(
                f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs "
                f"and rhs, got {len(spec)} for lhs and rhs shapes {tuple(lhs_shape)} and "
                f"{tuple(rhs_shape)}."
            )
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_permutations(dimension_numbers) -> tuple:
    """The permutations that put the operands and result of a convolution with string
    dimension numbers in (N, C, spatial...) / (O, I, spatial...) order, spatial dimensions in the
    order the kernel's string names them (so `window_strides[0]` goes with its first)."""
    lhs, rhs, out = dimension_numbers
    for i, (spec, letters) in enumerate(zip((lhs, rhs, out), ("NC", "OI", "NC"), strict=True)):
        if spec.count(letters[0]) != 1 or spec.count(letters[1]) != 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters "
                f"'{letters[0]}' and '{letters[1]}' exactly once, got {spec}."
            )
        if len(set(spec)) != len(spec):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}."
            )
    spatial = [c for c in rhs if c not in "OI"]
    if not set(spatial) == set(lhs) - set("NC") == set(out) - set("NC"):
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of spatial "
            f"characters, got {tuple(dimension_numbers)}."
        )

    def permutation(spec, first, second):
        return tuple(spec.index(c) for c in (first, second, *spatial))

    return permutation(lhs, "N", "C"), permutation(rhs, "O", "I"), permutation(out, "N", "C")


def _canonical_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """The `dimension_numbers` param: tuples of Python ints, each a permutation of the axes."""
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return ConvDimensionNumbers(*(tuple(map(operator.index, spec)) for spec in dnums))


# --------------------------------------------------------------------------------------------
# Shapes


def window_count(padded: int, window: int, stride: int) -> int:
    """Windows of `window` elements, `stride` apart, that fit in `padded` elements."""
    return max((padded - window) // stride + 1, 0)


def in_layout(shape, spec) -> tuple:
    return tuple(int(shape[d]) for d in spec)


def from_layout(shape_in_layout, spec) -> tuple:
    out = [0] * len(spec)
    for size, d in zip(shape_in_layout, spec, strict=True):
        out[d] = size
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Checks of the params (shared by the wrapper and the abstract evaluation)


def _check_spec(which: str, spec, ndim: int) -> None:
    if sorted(spec) != list(range(ndim)):
        raise TypeError(
            f"conv_general_dilated: dimension_numbers.{which} must be a permutation of the "
            f"{ndim} axes of the operands, got {tuple(spec)}"
        )


def _check_window(lhs_sizes, rhs_sizes, params) -> None:
    """Window params of the right lengths and signs, pads that leave something to convolve."""
    nsp = len(lhs_sizes) - 2
    window = ("window_strides", "lhs_dilation", "rhs_dilation", "padding")
    for name in window:
        if len(params[name]) != nsp:
            raise ValueError(
                f"conv_general_dilated window and {name} must have the same number of "
                f"dimensions, but got {nsp} and {len(params[name])}"
            )
    if any(s <= 0 for s in params["window_strides"]):
        raise ValueError(
            f"conv_general_dilated window_strides must be positive, got {params['window_strides']}"
        )
    for name in ("lhs_dilation", "rhs_dilation"):
        if any(d <= 0 for d in params[name]):
            raise TypeError(f"All dilations must be positive, got {params[name]}.")
    sizes = [dilated(n, a) for n, a in zip(lhs_sizes[2:], params["lhs_dilation"], strict=True)]
    padding = params["padding"]
    if any(
        -lo > n or -hi > n or n + lo + hi < 0 for n, (lo, hi) in zip(sizes, padding, strict=True)
    ):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: got "
            f"padding={padding} for lhs_shape[2:]={tuple(lhs_sizes[2:])}"
        )


def _check_groups(lhs_sizes, rhs_sizes, feature_group_count, batch_group_count) -> None:
    name = "conv_general_dilated"
    for what, count in (("feature", feature_group_count), ("batch", batch_group_count)):
        if not isinstance(count, int) or count <= 0:
            raise ValueError(f"{name} {what}_group_count must be a positive integer, got {count}.")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={batch_group_count} and "
            f"feature_group_count={feature_group_count}"
        )
    (n, c), (o, i) = lhs_sizes[:2], rhs_sizes[:2]
    if c % feature_group_count:
        raise ValueError(
            f"{name} feature_group_count must divide lhs feature dimension size, but "
            f"{feature_group_count} does not divide {c}."
        )
    if c // feature_group_count != i:
        raise ValueError(
            f"{name} lhs feature dimension size divided by feature_group_count must equal the "
            f"rhs input feature dimension size, but {c} // {feature_group_count} != {i}."
        )
    if o % feature_group_count:
        raise ValueError(
            f"{name} rhs output feature dimension size must be a multiple of "
            f"feature_group_count, but {o} is not a multiple of {feature_group_count}."
        )
    if n % batch_group_count:
        raise ValueError(
            f"{name} batch_group_count must divide lhs batch dimension size, but "
            f"{batch_group_count} does not divide {n}."
        )
    if o % batch_group_count:
        raise ValueError(
            f"{name} rhs output feature dimension size must be a multiple of "
            f"batch_group_count, but {o} is not a multiple of {batch_group_count}."
        )


def _bits(dtype: np.dtype) -> int:
    return 1 if dtype == np.bool_ else dtype.itemsize * 8


def _check_preferred(dtype: np.dtype, preferred: np.dtype) -> None:
    """Integers may accumulate in wider integers or in floats, floats in wider floats, complex
    numbers in wider complex numbers."""
    integral = dtype == np.bool_ or dtypes.is_int(dtype)
    compatible = (
        (integral and (preferred == np.bool_ or dtypes.is_int(preferred)))
        or (integral and dtypes.is_float(preferred))
        or (dtypes.is_float(dtype) and dtypes.is_float(preferred))
        or (dtypes.is_complex(dtype) and dtypes.is_complex(preferred))
    )
    if not compatible:
        raise TypeError(
            "conv_general_dilated: Input type is incompatible with `preferred_element_type`. "
            "The compatible combinations of (input_type, preferred_element_type) are "
            "(integral, integral), (integral, floating), (floating, floating), "
            f"(complex, complex); got ({dtype.name}, {preferred.name})."
        )
    if _bits(preferred) < _bits(dtype) and not (integral and dtypes.is_float(preferred)):
        raise TypeError(
            "conv_general_dilated: `preferred_element_type` must not be narrower than the "
            f"original type, got {preferred.name} for inputs of {dtype.name}."
        )


def _canonical_window(lhs_sizes, rhs_sizes, window_strides, padding, lhs_dilation, rhs_dilation):
    """The window params as tuples of ints; string padding made explicit."""
    nsp = len(lhs_sizes) - 2
    name = "conv_general_dilated"
    window_strides = tuple(map(operator.index, window_strides))
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(map(operator.index, lhs_dilation))
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(map(operator.index, rhs_dilation))
    if len(window_strides) != nsp:
        raise ValueError(
            f"{name} window and window_strides must have the same number of dimensions, but "
            f"got {nsp} and {len(window_strides)}"
        )
    if any(s <= 0 for s in window_strides):
        raise ValueError(f"{name} window_strides must be positive, got {window_strides}")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError(
                "String padding is not implemented for transposed convolution using this op. "
                "Please either exactly specify the required padding or use conv_transpose."
            )
        if len(rhs_dilation) != nsp or any(d <= 0 for d in rhs_dilation):
            raise TypeError(f"All dilations must be positive, got {rhs_dilation}.")
        kernel = [dilated(k, r) for k, r in zip(rhs_sizes[2:], rhs_dilation, strict=True)]
        padding = padtype_to_pads(lhs_sizes[2:], kernel, window_strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            f"padding argument to {name} should be a string or a sequence of (low, high) "
            f"pairs, got {padding}"
        ) from None
    return window_strides, padding, lhs_dilation, rhs_dilation


# --------------------------------------------------------------------------------------------
# The convolution in NumPy


def _dilate_and_pad(x, dilation, padding):
    """`x` (N, C, spatial...) with `dilation - 1` zeros between spatial elements, then padded
    (negative pads crop)."""
    if all(d == 1 for d in dilation) and all(p == (0, 0) for p in padding):
        return x
    grown = tuple(
        dilated(n, d) + max(lo, 0) + max(hi, 0)
        for n, d, (lo, hi) in zip(x.shape[2:], dilation, padding, strict=True)
    )
    out = np.zeros(x.shape[:2] + grown, x.dtype)
    place = tuple(
        slice(max(lo, 0), max(lo, 0) + dilated(n, d), d)
        for n, d, (lo, _) in zip(x.shape[2:], dilation, padding, strict=True)
    )
    out[(slice(None), slice(None), *place)] = x
    crop = tuple(
        slice(max(-lo, 0), size - max(-hi, 0))
        for size, (lo, hi) in zip(grown, padding, strict=True)
    )
    return out[(slice(None), slice(None), *crop)]


def _windows(x, kernel, rhs_dilation, strides):
    """A strided view (N, C, out spatial..., kernel spatial...) of the padded image `x`."""
    nsp = len(kernel)
    spans = tuple(dilated(k, r) for k, r in zip(kernel, rhs_dilation, strict=True))
    view = np.lib.stride_tricks.sliding_window_view(x, spans, axis=tuple(range(2, 2 + nsp)))
    return view[
        (slice(None), slice(None))
        + tuple(slice(None, None, s) for s in strides)
        + tuple(slice(None, None, r) for r in rhs_dilation)
    ]


def _grouped_product(windows, kernel, feature_group_count, batch_group_count):
    """out (N / B, O, out spatial...) from windows (N, C, out spatial..., taps...) and kernel
    (O, I, taps...): one matrix product per group, kernel rows times a ((features, taps) x
    (batch, pixels)) copy of the windows, whose innermost run is a row of output pixels (the
    image's own contiguous axis, when the stride is 1)."""
    n, c = windows.shape[:2]
    nsp = kernel.ndim - 2
    out_spatial = windows.shape[2 : 2 + nsp]
    g, b = feature_group_count, batch_group_count
    groups = g * b
    o = kernel.shape[0]
    split = windows.reshape((b, n // b, g, c // g) + windows.shape[2:])
    spatial_axes = tuple(range(4, 4 + nsp))
    tap_axes = tuple(range(4 + nsp, 4 + 2 * nsp))
    columns = split.transpose((0, 2, 3, *tap_axes, 1, *spatial_axes)).reshape(
        groups, kernel[0].size, (n // b) * math.prod(out_spatial)
    )
    out = np.matmul(kernel.reshape(groups, o // groups, -1), columns)
    out = out.reshape((b, g, o // groups, n // b, *out_spatial))
    out = out.transpose((3, 0, 1, 2, *range(4, 4 + nsp)))
    return out.reshape((n // b, o, *out_spatial))


def _compute_dtype(dtype: np.dtype, out_dtype: np.dtype) -> np.dtype:
    """The dtype the convolution multiplies in (as dot_general's: float32 for half floats,
    integers wrapping in a native width)."""
    return dot._compute_dtype(dtype, dtype, out_dtype)


# --- conv_general_dilated -------------------------------------------------------------------
conv_general_dilated_p = Primitive("conv_general_dilated")


def conv_general_dilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count=1,
    batch_group_count=1,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """General n-dimensional convolution of the image `lhs` with the kernel `rhs`.

    `padding` is 'SAME', 'SAME_LOWER', 'VALID' or one (low, high) pair per spatial dimension;
    `lhs_dilation` (transposed convolution) and `rhs_dilation` (atrous convolution) give one
    factor per spatial dimension; `dimension_numbers` is None (('NCHW', 'OIHW', 'NCHW') and its
    kin in other ranks), three strings naming each operand's dimensions ('N' batch, 'C'
    feature, 'O'/'I' the kernel's output/input features, any other letters the spatial
    dimensions, in the order the kernel's string gives them) or a `ConvDimensionNumbers`.
    `feature_group_count`/`batch_group_count` split features/batch into groups convolved apart
    (see the module doc). `precision` is recorded; `preferred_element_type` sets the result
    dtype.
    """
    check_no_sharding("conv_general_dilated", out_sharding)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = _canonical_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    _check_spec("lhs_spec", dnums.lhs_spec, len(lhs_shape))
    _check_spec("rhs_spec", dnums.rhs_spec, len(rhs_shape))
    window_strides, padding, lhs_dilation, rhs_dilation = _canonical_window(
        in_layout(lhs_shape, dnums.lhs_spec),
        in_layout(rhs_shape, dnums.rhs_spec),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
    )
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=dot._canonical_precision("conv_general_dilated", precision),
        preferred_element_type=dtypes.check_user_dtype(
            preferred_element_type, "conv_general_dilated"
        ),
        out_sharding=None,
    )


def _conv_general_dilated_impl(lhs, rhs, **params):
    out_dtype = params["preferred_element_type"]
    if out_dtype is None:  # (not `or`: a NumPy dtype without fields is falsy)
        out_dtype = lhs.dtype
    compute = _compute_dtype(lhs.dtype, out_dtype)
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    image = lhs.transpose(lhs_spec).astype(compute, copy=False)
    kernel = rhs.transpose(rhs_spec).astype(compute, copy=False)
    out_shape = in_layout(_conv_shape(lhs.shape, rhs.shape, params), out_spec)
    if 0 in out_shape[2:]:  # no window fits
        out = np.zeros(out_shape, compute)
    else:
        padded = _dilate_and_pad(image, params["lhs_dilation"], params["padding"])
        windows = _windows(
            padded, kernel.shape[2:], params["rhs_dilation"], params["window_strides"]
        )
        out = _grouped_product(
            windows, kernel, params["feature_group_count"], params["batch_group_count"]
        )
    out = out.transpose(np.argsort(out_spec))
    if out_dtype == np.bool_:  # any product true (the bools were multiplied as integers)
        return out != 0
    return out.astype(out_dtype, copy=False)


conv_general_dilated_p.def_impl(quiet(_conv_general_dilated_impl))


def _conv_shape(lhs_shape, rhs_shape, params) -> tuple:
    """The result shape; raises for params that do not fit the operands."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if len(lhs_shape) < 2:
        raise TypeError(
            "conv_general_dilated requires operands of rank at least 2 (batch and feature "
            f"dimensions), got shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}"
        )
    specs = params["dimension_numbers"]
    for which, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), specs, strict=True):
        _check_spec(which, spec, len(lhs_shape))
    lhs_sizes, rhs_sizes = in_layout(lhs_shape, lhs_spec), in_layout(rhs_shape, rhs_spec)
    _check_window(lhs_sizes, rhs_sizes, params)
    _check_groups(lhs_sizes, rhs_sizes, params["feature_group_count"], params["batch_group_count"])
    spatial = tuple(
        window_count(dilated(n, a) + lo + hi, dilated(k, r), s)
        for n, k, s, (lo, hi), a, r in zip(
            lhs_sizes[2:],
            rhs_sizes[2:],
            params["window_strides"],
            params["padding"],
            params["lhs_dilation"],
            params["rhs_dilation"],
            strict=True,
        )
    )
    out = (lhs_sizes[0] // params["batch_group_count"], rhs_sizes[0], *spatial)
    return from_layout(out, out_spec)


@conv_general_dilated_p.def_abstract_eval
def _conv_general_dilated_abstract_eval(lhs, rhs, **params):
    check_same_dtypes("conv_general_dilated", lhs, rhs)
    if lhs.dtype == dtypes.key_fry:
        raise TypeError("conv_general_dilated does not accept dtype key<fry>")
    shape = _conv_shape(lhs.shape, rhs.shape, params)
    dtype = lhs.dtype
    if params["preferred_element_type"] is not None:
        _check_preferred(np.dtype(dtype), params["preferred_element_type"])
        dtype = params["preferred_element_type"]
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


conv_general_dilated_p.def_weak_type_rule(weak_if_all_weak)

# The convolution is bilinear: its tangent is the convolution with one operand's tangent plus
# the convolution with the other's.
ad.defjvp(
    conv_general_dilated_p,
    lambda t, lhs, rhs, **params: conv_general_dilated_p.bind(t, rhs, **params),
    lambda t, lhs, rhs, **params: conv_general_dilated_p.bind(lhs, t, **params),
)
ad.mark_linear(conv_general_dilated_p, 0, 1)


def _conv_general_dilated_transpose(ct, lhs, rhs, **params):
    if is_undefined_primal(lhs) == is_undefined_primal(rhs):
        raise TypeError("conv_general_dilated is linear in each operand only: transposing both")
    x, y = (lhs, rhs) if is_undefined_primal(lhs) else (rhs, lhs)
    if get_aval(y).dtype != get_aval(ct).dtype:  # (preferred_element_type): in ct's dtype
        y = conversions.convert_element_type(y, get_aval(ct).dtype)

    def cotangent():
        if x is lhs:
            out = _lhs_cotangent(ct, y, x.aval.shape, **params)
        else:
            out = _rhs_cotangent(ct, y, x.aval.shape, **params)
        if get_aval(out).dtype != x.aval.dtype:
            out = conversions.convert_element_type_p.bind(
                out, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type
            )
        return out

    out = sharding_constraints.laid_out_as(x.aval, cotangent)  # (on Explicit mesh axes)
    return [out, None] if x is lhs else [None, out]


def _lhs_cotangent(ct, rhs, lhs_shape, **params):
    """The image's cotangent: the result's cotangent, dilated by the strides, convolved with the
    spatially reversed kernel (input and output features swapping roles, groups of output
    features regrouped into the input features), windows `lhs_dilation` apart. Pads put each
    kernel tap back over the image element it met; a batch-grouped convolution's groups come
    out as features and go back to the batch."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    groups = params["feature_group_count"] * params["batch_group_count"]
    rhs_shape = shape_of(rhs)
    kernel = shapes.rev(rhs, rhs_spec[2:])
    if groups > 1:
        kernel = _regroup(kernel, rhs_spec[0], rhs_spec[1], groups)
    padding = tuple(
        (dilated(k, r) - 1 - lo, (n - 1) * a - (m - 1) * s + lo)
        for n, k, m, s, (lo, _), a, r in zip(
            in_layout(lhs_shape, lhs_spec)[2:],
            in_layout(rhs_shape, rhs_spec)[2:],
            in_layout(shape_of(ct), out_spec)[2:],
            params["window_strides"],
            params["padding"],
            params["lhs_dilation"],
            params["rhs_dilation"],
            strict=True,
        )
    )
    out = conv_general_dilated_p.bind(
        ct,
        kernel,
        window_strides=params["lhs_dilation"],
        padding=padding,
        lhs_dilation=params["window_strides"],
        rhs_dilation=params["rhs_dilation"],
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_first(rhs_spec), lhs_spec),
        feature_group_count=groups,
        batch_group_count=1,
        precision=params["precision"],
        preferred_element_type=params["preferred_element_type"],
        out_sharding=None,
    )
    if params["batch_group_count"] > 1:  # features (group, feature) -> batch (group, batch)
        out = _regroup(out, lhs_spec[1], lhs_spec[0], params["batch_group_count"])
    return out


def _rhs_cotangent(ct, lhs, rhs_shape, **params):
    """The kernel's cotangent: the image (features as batch, batch as features) convolved with
    the result's cotangent (its batch as input features), windows `rhs_dilation` apart and the
    cotangent dilated by the strides; feature groups become batch groups and batch groups
    feature groups. The high pads drop the image's elements no window reached."""
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    padding = tuple(
        (lo, dilated(k, r) + dilated(m, s) - 1 - dilated(n, a) - lo)
        for n, k, m, s, (lo, _), a, r in zip(
            in_layout(shape_of(lhs), lhs_spec)[2:],
            in_layout(rhs_shape, rhs_spec)[2:],
            in_layout(shape_of(ct), out_spec)[2:],
            params["window_strides"],
            params["padding"],
            params["lhs_dilation"],
            params["rhs_dilation"],
            strict=True,
        )
    )
    return conv_general_dilated_p.bind(
        lhs,
        ct,
        window_strides=params["rhs_dilation"],
        padding=padding,
        lhs_dilation=params["lhs_dilation"],
        rhs_dilation=params["window_strides"],
        dimension_numbers=ConvDimensionNumbers(
            _swap_first(lhs_spec), _swap_first(out_spec), _swap_first(rhs_spec)
        ),
        feature_group_count=params["batch_group_count"],
        batch_group_count=params["feature_group_count"],
        precision=params["precision"],
        preferred_element_type=params["preferred_element_type"],
        out_sharding=None,
    )


def _swap_first(spec) -> tuple:
    return (spec[1], spec[0], *spec[2:])


transpose_rules[conv_general_dilated_p] = _conv_general_dilated_transpose


def _regroup(x, src: int, dst: int, groups: int):
    """`x` with axis `src` split into (groups, rest) and the groups moved into axis `dst` as its
    major part: sizes (.., G*a, .., b, ..) -> (.., a, .., G*b, ..)."""
    shape = list(shape_of(x))
    split = shape[:src] + [groups, shape[src] // groups] + shape[src + 1 :]
    x = shapes.reshape(x, tuple(split))
    dst_in_split = dst + (dst > src)
    return _fold(x, src, dst_in_split)


def _fold(x, src: int, dst: int):
    """`x` with axis `src` merged into axis `dst` as its major part (one axis fewer)."""
    shape = shape_of(x)
    order = [d for d in range(len(shape)) if d != src]
    at = order.index(dst)
    order.insert(at, src)
    new_shape = [shape[d] for d in order if d != src]
    new_shape[at] *= shape[src]
    return shapes.reshape(x, tuple(new_shape), tuple(order))


def _unfold(x, dim: int, size: int, groups: int = 1):
    """The inverse of folding an axis of `size` into axis `dim` of `x` (after splitting it into
    `groups`): `x` with that axis split out again, placed at `dim`, `dim`'s rest after it."""
    shape = list(shape_of(x))
    rest = shape[dim] // (groups * size)
    if groups == 1:
        return shapes.reshape(x, tuple(shape[:dim] + [size, rest] + shape[dim + 1 :]))
    split = shape[:dim] + [groups, size, rest] + shape[dim + 1 :]
    x = shapes.reshape(x, tuple(split))
    order = list(range(len(split)))
    order[dim], order[dim + 1] = dim + 1, dim  # (size, groups, rest), then merge the last two
    merged = shape[:dim] + [size, groups * rest] + shape[dim + 1 :]
    return shapes.reshape(x, tuple(merged), tuple(order))


def _conv_general_dilated_lowering(ctx, lhs, rhs, **params):
    """One stablehlo.convolution, in the dtype the NumPy impl multiplies in (operands converted
    to it, the result converted back; booleans as int32, any product nonzero)."""
    lhs_aval = ctx.avals_in[0]
    out_aval = ctx.avals_out[0]
    out_dtype = np.dtype(out_aval.dtype)
    compute = _compute_dtype(np.dtype(lhs_aval.dtype), out_dtype)
    if compute == np.bool_:
        compute = np.dtype(np.int32)
    block = ctx.block
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    padding = np.array(params["padding"], np.int64).reshape(len(params["padding"]), 2)
    attributes = {
        "batch_group_count": f"{params['batch_group_count']} : i64",
        "dimension_numbers": (
            f"#stablehlo.conv<{_dims_text(lhs_spec, 'bf')}x{_dims_text(rhs_spec, 'oi')}"
            f"->{_dims_text(out_spec, 'bf')}>"
        ),
        "feature_group_count": f"{params['feature_group_count']} : i64",
        "lhs_dilation": hlo.i64_array(params["lhs_dilation"]),
        "padding": hlo.dense_attribute(padding),
        "precision_config": _precision_config(params["precision"]),
        "rhs_dilation": hlo.i64_array(params["rhs_dilation"]),
        "window_strides": hlo.i64_array(params["window_strides"]),
    }
    out = block.op1(
        "stablehlo.convolution",
        [block.convert(lhs, compute), block.convert(rhs, compute)],
        hlo.tensor_type(out_aval.shape, compute),
        attributes,
    )
    if out_dtype == np.bool_:
        return block.compare(out, block.full_like(out, 0), "NE")
    return block.convert(out, out_dtype)


def _dims_text(spec, letters: str) -> str:
    """`[b, f, 0, 1]`: each axis of an operand named by its role."""
    names = [""] * len(spec)
    names[spec[0]], names[spec[1]] = letters
    for i, d in enumerate(spec[2:]):
        names[d] = str(i)
    return f"[{', '.join(names)}]"


def _precision_config(precision) -> str:
    pair = precision if isinstance(precision, tuple) else (dot.Precision.DEFAULT,) * 2
    return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in pair) + "]"


lowering_rules[conv_general_dilated_p] = _conv_general_dilated_lowering


def _conv_general_dilated_batch_rule(values, dims, **params):
    """The vmapped axis joins the image's batch (lhs batched), the kernel's output features
    (rhs batched), or, both batched, a group count multiplied by the batch size: the feature
    groups (the image's features, the kernel's outputs), or the batch groups when the
    convolution already has some."""
    (lhs, rhs), (lhs_bdim, rhs_bdim) = values, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]

    def at(spec_dim, bdim):  # an operand's axis, counted in its batched array
        return spec_dim + (spec_dim >= bdim)

    if lhs_bdim is not None and rhs_bdim is not None:
        size = shape_of(lhs)[lhs_bdim]
        if b > 1:
            lhs = _fold(lhs, lhs_bdim, at(lhs_spec[0], lhs_bdim))
            params = {**params, "batch_group_count": b * size}
        else:
            lhs = _fold(lhs, lhs_bdim, at(lhs_spec[1], lhs_bdim))
            params = {**params, "feature_group_count": g * size}
        rhs = _fold(rhs, rhs_bdim, at(rhs_spec[0], rhs_bdim))
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _unfold(out, out_spec[1], size), out_spec[1]
    if lhs_bdim is not None:
        size = shape_of(lhs)[lhs_bdim]
        if b > 1:  # each batch group takes its members of every vmapped image
            lhs = _move_into_groups(lhs, lhs_bdim, at(lhs_spec[0], lhs_bdim), b)
        else:
            lhs = _fold(lhs, lhs_bdim, at(lhs_spec[0], lhs_bdim))
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _unfold(out, out_spec[0], size), out_spec[0]
    size = shape_of(rhs)[rhs_bdim]
    groups = g * b
    if groups > 1:  # each group's outputs take their members of every vmapped kernel
        rhs = _move_into_groups(rhs, rhs_bdim, at(rhs_spec[0], rhs_bdim), groups)
    else:
        rhs = _fold(rhs, rhs_bdim, at(rhs_spec[0], rhs_bdim))
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    return _unfold(out, out_spec[1], size, groups), out_spec[1]


def _move_into_groups(x, src: int, dst: int, groups: int):
    """`x` with axis `src` (V) folded into axis `dst` (G*a) behind its `groups` major blocks,
    as (G*V*a), so that each group of `dst` holds all V of its own."""
    shape = list(shape_of(x))
    x = shapes.reshape(x, tuple(shape[:dst] + [groups, shape[dst] // groups] + shape[dst + 1 :]))
    x = _fold(x, src + (src > dst), dst + 1)
    g = dst - (src < dst)  # the groups axis, now followed by the (V*a) axis
    folded = list(shape_of(x))
    return shapes.reshape(x, tuple(folded[:g] + [folded[g] * folded[g + 1]] + folded[g + 2 :]))


batch_rules[conv_general_dilated_p] = _conv_general_dilated_batch_rule
