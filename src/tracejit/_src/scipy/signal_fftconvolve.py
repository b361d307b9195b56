"""`scipy.signal.fftconvolve` over `jnp.fft`: the operands' spectra, zero-padded to the full
output length (`rfftn`/`irfftn` for real operands), multiplied, and the result cropped for
`mode`. (`signal.convolve`/`correlate` with `method='fft'` come here too.)"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import fft as jnp_fft
from tracejit._src.numpy import manipulation
from tracejit._src.numpy.promotion import promote_dtypes_inexact, to_operands

_MODES = ("full", "same", "valid")


def _convolved_axes(in1, in2, axes) -> tuple:
    """The axes convolved (default: all); the others must match, as JAX maps over them."""
    if axes is None:
        return tuple(range(in1.ndim))
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    axes = tuple(manipulation.normalize_axis(axis, in1.ndim) for axis in axes)
    mapped = [d for d in range(in1.ndim) if d not in axes]
    if len(set(axes)) != len(axes) or any(in1.shape[d] != in2.shape[d] for d in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={in1.shape} "
            f"in2.shape={in2.shape} axes={axes}"
        )
    return axes


def _centered(x, shape, axes):
    """The centre of `x` of `shape` along `axes` (SciPy's choice of the middle)."""
    index = [slice(None)] * x.ndim
    for axis in axes:
        start = (x.shape[axis] - shape[axis]) // 2
        index[axis] = slice(start, start + shape[axis])
    return x[tuple(index)]


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of `in1` and `in2` along `axes` computed by FFT; `mode` 'full',
    'same' (centred to in1's shape) or 'valid' (where they overlap completely)."""
    in1, in2 = promote_dtypes_inexact(*to_operands("fftconvolve", (in1, in2)))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    axes = _convolved_axes(in1, in2, axes)
    if not axes:
        return in1 * in2
    if mode == "valid":
        first_larger = all(in1.shape[d] >= in2.shape[d] for d in axes)
        if not first_larger and not all(in2.shape[d] >= in1.shape[d] for d in axes):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in every "
                "dimension."
            )
        if not first_larger:
            in1, in2 = in2, in1
    lengths = tuple(in1.shape[d] + in2.shape[d] - 1 for d in axes)
    if dtypes.is_complex(in1.dtype):
        product = jnp_fft.fftn(in1, lengths, axes) * jnp_fft.fftn(in2, lengths, axes)
        full = jnp_fft.ifftn(product, lengths, axes)
    else:
        product = jnp_fft.rfftn(in1, lengths, axes) * jnp_fft.rfftn(in2, lengths, axes)
        full = jnp_fft.irfftn(product, lengths, axes)
    if mode == "full":
        return full
    shape = list(full.shape)
    for d in axes:
        keep = in1.shape[d] if mode == "same" else in1.shape[d] - in2.shape[d] + 1
        shape[d] = keep
    return _centered(full, shape, axes)
