"""`tracejit.nn.initializers`: functions that make a layer's initial parameters, as
`jax.nn.initializers` does: each takes `(key, shape, dtype)` and returns the values drawn with
`tracejit.random`, so that the same key gives JAX's parameters.

The factories (`normal(stddev)`, `variance_scaling(scale, mode, distribution)`, ...) return the
initializer; `zeros`/`ones` are initializers themselves. The variance-scaling family scales
its draws by the layer's fans, found from the weight's shape (`_compute_fans`).
`orthogonal` reshapes the weight to a matrix (its `column_axis` against the rest) drawn by
`random.orthogonal`; `delta_orthogonal` puts one at the centre of a convolution kernel.
"""

from __future__ import annotations

import math
import typing

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import manipulation as jnp_manipulation
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.creation import array, full
from tracejit._src.numpy.creation import ones as _ones
from tracejit._src.numpy.creation import zeros as _zeros
from tracejit._src.random import distributions as _random
from tracejit._src.random import keys as _keys
from tracejit._src.random import matrices as _random_matrices


@typing.runtime_checkable
class Initializer(typing.Protocol):
    """What every initializer is: `init(key, shape, dtype=None, out_sharding=None)`."""

    def __call__(self, key, shape, dtype=None, out_sharding=None): ...


def _default(dtype):
    return dtypes.default_float_dtype() if dtype is None else dtype


def _check_sharding(out_sharding) -> None:
    if out_sharding is not None:
        raise NotImplementedError("out_sharding: tracejit runs on one device")


def zeros(key, shape, dtype=None, out_sharding=None):
    """An initializer of zeros (the key is not used)."""
    _check_sharding(out_sharding)
    return _zeros(shape, _default(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An initializer of ones (the key is not used)."""
    _check_sharding(out_sharding)
    return _ones(shape, _default(dtype))


def constant(value, dtype=None):
    """An initializer filling with `value`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        _check_sharding(out_sharding)
        return full(shape, value, dtype=_default(dtype))

    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer of values uniform in [0, scale)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        return _random.uniform(key, shape, dtype, out_sharding=out_sharding) * array(scale, dtype)

    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer of normal values of standard deviation `stddev`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        return _random.normal(key, shape, dtype, out_sharding=out_sharding) * array(stddev, dtype)

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer of normal values truncated to [lower, upper], then scaled by `stddev`
    (the result's standard deviation is below `stddev`)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        values = _random.truncated_normal(
            key, lower, upper, shape, dtype, out_sharding=out_sharding
        )
        return values * array(stddev, dtype)

    return init


def _size(shape, axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight: the sizes of its input and output axes, each times the
    receptive field (the axes that are neither, nor batch axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly."
        )
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_dtype(dtype) -> tuple[np.dtype, np.dtype]:
    """(real dtype, complex dtype) of a complex `dtype`."""
    real = np.array(0, dtype).real.dtype
    return real, np.result_type(real, np.complex64)


def _complex_uniform(key, shape, dtype):
    """Complex values uniform in the disk of radius sqrt(2) (variance 1)."""
    key_r, key_theta = _keys.split(key)
    real, dtype = _complex_dtype(dtype)
    r = jnp_ufuncs.sqrt(2 * _random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * _random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp_ufuncs.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Complex normal values whose modulus is truncated to `upper`."""
    key_r, key_theta = _keys.split(key)
    real, dtype = _complex_dtype(dtype)
    t = (1 - jnp_ufuncs.exp(array(-(upper**2), dtype))) * _random.uniform(
        key_r, shape, real
    ).astype(dtype)
    r = jnp_ufuncs.sqrt(-jnp_ufuncs.log(1 - t))
    theta = 2 * np.pi * _random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp_ufuncs.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose values have variance `scale / n`, n the fan `mode` names
    (`fan_in`, `fan_out`, their mean `fan_avg` or geometric mean `fan_geo_avg`), drawn from
    `distribution`: `truncated_normal` (rescaled to that variance), `normal` or `uniform`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _keys.canonical_shape(shape)
        dtype = _default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode not in _MODES:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        denominator = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo_avg": (fan_in * fan_out) ** 0.5,
        }[mode]
        variance = array(scale / denominator, dtype=dtype)
        real = dtypes.is_float(dtype)
        if distribution == "truncated_normal":
            if real:
                # the standard deviation of a standard normal truncated to [-2, 2]
                stddev = jnp_ufuncs.sqrt(variance) / array(0.87962566103423978, dtype)
                values = _random.truncated_normal(
                    key, -2, 2, shape, dtype, out_sharding=out_sharding
                )
                return values * stddev
            stddev = jnp_ufuncs.sqrt(variance) / array(0.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            values = _random.normal(key, shape, dtype, out_sharding=out_sharding)
            return values * jnp_ufuncs.sqrt(variance)
        if distribution == "uniform":
            if real:
                values = _random.uniform(key, shape, dtype, -1, out_sharding=out_sharding)
                return values * jnp_ufuncs.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp_ufuncs.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot's (Xavier's) initializer: variance 2 / (fan_in + fan_out), uniform."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot's (Xavier's) initializer: variance 2 / (fan_in + fan_out), truncated normal."""
    return variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun's initializer: variance 1 / fan_in, uniform."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun's initializer: variance 1 / fan_in, truncated normal."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He's (Kaiming's) initializer: variance 2 / fan_in, uniform."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He's (Kaiming's) initializer: variance 2 / fan_in, truncated normal."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of weights whose matrix form (the `column_axis` against all the other
    axes) has orthonormal rows or columns, times `scale`."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix = _random_matrices.orthogonal(key, n_rows, (), dtype, m=n_cols,
                                             out_sharding=out_sharding)  # fmt: skip
        others = tuple(np.delete(np.array(shape), column_axis))
        weights = jnp_manipulation.moveaxis(matrix.reshape((*others, n_cols)), -1, column_axis)
        return scale * weights

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of 1-D, 2-D or 3-D convolution kernels (spatial axes first, then
    input and output features) that are zero but at the window's centre, where they hold an
    orthogonal matrix times `scale` (Xiao et al. 2018): the convolution starts as an
    isometry."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:], out_sharding=out_sharding)
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return _zeros(shape, dtype).at[centre].set(matrix)

    return init


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]
