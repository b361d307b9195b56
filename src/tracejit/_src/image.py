"""`tracejit.image`: resampling images (`resize`, `scale_and_translate`), as JAX computes it.

Resampling is separable: along each spatial dimension that changes size, an input of length m
becomes an output of length n through an (m, n) weight matrix, and one einsum applies every
dimension's matrix at once. Output pixel j samples the input at

    sample_f[j] = (j + 0.5 - translation) / scale - 0.5

(pixel centres at half-integers), and input pixel i gets weight kernel(|sample_f[j] - i|),
the kernel widened by 1/scale when downsampling with `antialias` so that it averages instead
of skipping pixels. Each column is normalized to sum to 1; samples outside the input get
weight 0 (or, for "cubic-pytorch" without antialiasing, the edge pixels repeat). "nearest"
just picks pixels, and "area" weighs input pixels by how much of the output pixel they cover.
"""

from __future__ import annotations

import enum
import math
import string

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax.dot import Precision
from tracejit._src.numpy import reductions, ufuncs
from tracejit._src.numpy.creation import arange, asarray, zeros
from tracejit._src.numpy.einsum import einsum
from tracejit._src.numpy.promotion import promote_dtypes_inexact


def _lanczos_kernel(radius, x):
    y = radius * ufuncs.sin(np.pi * x) * ufuncs.sin(np.pi * x / radius)
    out = ufuncs.where(x > 1e-3, ufuncs.divide(y, ufuncs.where(x != 0, np.pi**2 * x**2, 1)), 1)
    return ufuncs.where(x > radius, 0.0, out)


def _keys_cubic_kernel(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = ufuncs.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return ufuncs.where(x >= 2.0, 0.0, out)


def _opencv_cubic_kernel(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = ufuncs.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return ufuncs.where(x >= 2.0, 0.0, out)


def _triangle_kernel(x):
    return ufuncs.maximum(0, 1 - ufuncs.abs(x))


_AREA_KERNEL = object()  # "area" is no kernel of the distance: its weights are overlaps


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (the Keys kernel),
    CUBIC_PYTORCH (PyTorch's bicubic) and AREA (averages of the covered input pixels)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
            "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "area": ResizeMethod.AREA,
        }
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return names[s]


_KERNELS = {  # method -> (radius, kernel)
    ResizeMethod.LINEAR: (1, _triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos_kernel(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos_kernel(5.0, x)),
    ResizeMethod.CUBIC: (2, _keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _AREA_KERNEL),
}


def _normalized(weights, total):
    """Columns divided by their sums; columns summing to (nearly) nothing become 0."""
    tiny = 1000.0 * float(np.finfo(np.float32).eps)
    safe = ufuncs.where(total != 0, total, 1)
    return ufuncs.where(ufuncs.abs(total) > tiny, ufuncs.divide(weights, safe), 0)


def compute_weight_mat(input_size, output_size, scale, translation, kernel, antialias,
                       edge_padding, radius):  # fmt: skip
    """The (input_size, output_size) resampling matrix of one dimension."""
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = ufuncs.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = _edge_width(scale, antialias, radius) if edge_padding else 0
    expanded = arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA_KERNEL:
        left = arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        input_left = arange(input_size, dtype=dtype)
        overlap = ufuncs.minimum((left + inv_scale)[None, :], (input_left + 1.0)[:, None])
        weights = ufuncs.maximum(0.0, overlap - ufuncs.maximum(left[None, :], input_left[:, None]))
    else:
        weights = kernel(ufuncs.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if edge_padding:  # the weights of samples past an edge go to the edge pixel
        clamped = ufuncs.clip(expanded.astype(np.int32), 0, input_size - 1)
        columns = arange(output_size)[None, :]
        weight_mat = zeros((input_size, output_size), dtype=dtype)
        weight_mat = weight_mat.at[clamped[:, None], columns].add(weights)
        return _normalized(weight_mat, reductions.sum(weight_mat, axis=0, keepdims=True))
    weights = _normalized(weights, reductions.sum(weights, axis=0, keepdims=True))
    inside = ufuncs.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return ufuncs.where(inside[None, :], weights, 0)


def _edge_width(scale, antialias: bool, radius: int) -> int:
    """How many pixels past each edge the kernel reaches: a size, so the scale must be known."""
    if not antialias:
        return radius
    if isinstance(scale, Tracer):
        scale = scale.to_concrete_value()
        if scale is None:
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: "
                "Antialiasing with edge padding requires a static scale."
            )
    return math.ceil(radius * max(1.0 / float(scale), 1.0))


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, kernel, antialias,
                         precision, edge_padding=False, radius=None):  # fmt: skip
    if not spatial_dims:
        return x
    letters = iter(string.ascii_letters)
    in_labels = [next(letters) for _ in output_shape]
    out_labels = list(in_labels)
    operands, subscripts = [x], ["".join(in_labels)]
    for i, d in enumerate(spatial_dims):
        d = d % x.ndim
        w = compute_weight_mat(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                               antialias, edge_padding, radius)  # fmt: skip
        out_labels[d] = next(letters)
        operands.append(w.astype(x.dtype))
        subscripts.append(in_labels[d] + out_labels[d])
    spec = ",".join(subscripts) + "->" + "".join(out_labels)
    return einsum(spec, *operands, precision=precision)


def _canonical_method(method, antialias: bool):
    """(radius, kernel, edge padding) of a resize method other than NEAREST."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC  # the two agree once the kernel is widened
    radius, kernel = _KERNELS[method]
    return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH and not antialias


def _check_shape(shape, image) -> tuple:
    shape = tuple(int(d) for d in shape)
    if len(shape) != image.ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image.shape}"
        )
    return shape


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=Precision.HIGHEST):  # fmt: skip
    """`image` resampled to `shape` by the map x -> x · scale + translation of each of
    `spatial_dims` (the inverse map gives the sample locations; samples outside the input give
    0). Every method but "nearest"."""
    image = asarray(image)
    shape = _check_shape(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported for scale_and_translate."
        )
    radius, kernel, edge_padding = _canonical_method(method, antialias)
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(asarray(scale), asarray(translation))
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel,
                                antialias, precision, edge_padding, radius)  # fmt: skip


def _resize_nearest(x, output_shape):
    for d, (m, n) in enumerate(zip(x.shape, output_shape, strict=True)):
        if m == n:
            continue
        offsets = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * m / n).astype(np.float32))
        index = [slice(None)] * x.ndim
        index[d] = offsets.astype(np.int32)
        x = x[tuple(index)]
    return x


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
    """`image` resampled to `shape` with `method` ("nearest", "linear", "cubic",
    "cubic-pytorch", "lanczos3", "lanczos5", "area" or a `ResizeMethod`). With `antialias`,
    downsampling widens the kernel so that the result averages, instead of skipping, pixels.
    Dimensions whose size stays are left alone."""
    image = asarray(image)
    shape = _check_shape(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    radius, kernel, edge_padding = _canonical_method(method, antialias)
    (image,) = promote_dtypes_inexact(image)
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims),
                                kernel, antialias, precision, edge_padding, radius)  # fmt: skip
