"""`tracejit.example_libraries.stax`: JAX's minimal neural-network library.

A layer is a pair of functions `(init_fun, apply_fun)`:

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, *, rng=None, **kwargs) -> outputs

Combinators (`serial`, `parallel`, `FanOut`, ...) make layers of layers; `serial` splits the
key it is given into one per layer, so that a network's initial parameters (and its dropout
masks) are the same numbers as in JAX for the same key. Image layers use the NHWC layout
unless given `dimension_numbers`/`spec`.
"""

from __future__ import annotations

import functools
import operator

import tracejit.numpy as jnp
from tracejit import lax, random
from tracejit.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from tracejit.nn import log_softmax as logsoftmax  # noqa: F401
from tracejit.nn.initializers import glorot_normal, normal, ones, zeros

glorot = glorot_normal
randn = normal
_DENSE_WEIGHTS, _DENSE_BIASES, _CONV_BIASES = glorot_normal(), normal(), normal(1e-6)


def _check_rank(layer: str, shape, rank: int, layout: str) -> None:
    if len(shape) != rank:
        raise ValueError(
            f"{layer}: expected inputs of rank {rank} (layout {layout}), got shape {tuple(shape)}"
        )


# --- layers with parameters -----------------------------------------------------------------


def Dense(out_dim, W_init=_DENSE_WEIGHTS, b_init=_DENSE_BIASES):
    """A fully connected layer: inputs @ W + b over the last axis."""

    def init_fun(rng, input_shape):
        if len(input_shape) == 0:
            raise ValueError("Dense: inputs must have at least one axis, got shape ()")
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return (*input_shape[:-1], out_dim), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        if jnp.shape(inputs)[-1:] != W.shape[:1]:
            raise ValueError(
                f"Dense: inputs of shape {jnp.shape(inputs)} do not match weights of shape "
                f"{W.shape} (the last axis must have length {W.shape[0]})"
            )
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape):
    lhs_spec, rhs_spec, _ = dimension_numbers
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec)


def _general_conv_layer(name, shape_tuple, conv):
    """GeneralConv and GeneralConvTranspose: they differ only in the output shape and the
    convolution they apply."""

    def layer(
        dimension_numbers,
        out_chan,
        filter_shape,
        strides=None,
        padding="VALID",
        W_init=None,
        b_init=_CONV_BIASES,
    ):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        strides = strides or (1,) * len(filter_shape)
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            _check_rank(name, input_shape, len(lhs_spec), lhs_spec)
            kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
            output_shape = shape_tuple(
                input_shape, kernel_shape, strides, padding, dimension_numbers
            )
            bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
            k1, k2 = random.split(rng)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            _check_rank(name, jnp.shape(inputs), len(lhs_spec), lhs_spec)
            return conv(inputs, W, strides, padding, dimension_numbers) + b

        return init_fun, apply_fun

    layer.__name__ = layer.__qualname__ = name
    return layer


GeneralConv = _general_conv_layer(
    "GeneralConv",
    lambda *args: lax.conv_general_shape_tuple(*args),
    lambda x, W, strides, padding, dnums: lax.conv_general_dilated(
        x, W, strides, padding, (1,) * len(strides), (1,) * len(strides), dnums
    ),
)
GeneralConvTranspose = _general_conv_layer(
    "GeneralConvTranspose",
    lambda *args: lax.conv_transpose_shape_tuple(*args),
    lambda x, W, strides, padding, dnums: lax.conv_transpose(
        x, W, strides, padding, dimension_numbers=dnums
    ),
)
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones
):
    """Batch normalization over `axis`, with a learned shift (`center`) and scale (`scale`)
    per remaining coordinate. It normalizes by the batch's own statistics (no running
    averages: stax has no state)."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


# --- layers without parameters --------------------------------------------------------------


def elementwise(fun, **fun_kwargs):
    """The layer that applies `fun` to each input element."""
    init_fun = lambda rng, input_shape: (input_shape, ())
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec, rank: int) -> tuple[int, int]:
    return (0, rank - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(name, reducer, init_val, rescaler=None):
    """MaxPool, SumPool and AvgPool: `reduce_window` over the spatial axes (given by `spec`,
    NHWC by default)."""

    def layer(window_shape, strides=None, padding="VALID", spec=None):
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        window, window_strides = tuple(window_shape), tuple(strides)
        for i in sorted(_non_spatial_axes(spec, len(window_shape) + 2)):
            window = window[:i] + (1,) + window[i:]
            window_strides = window_strides[:i] + (1,) + window_strides[i:]
        layout = spec or f"N{'HW'[: len(window_shape)] if len(window_shape) <= 2 else '...'}C"

        def init_fun(rng, input_shape):
            _check_rank(name, input_shape, len(window), layout)
            pads = lax.padtype_to_pads(input_shape, window, window_strides, padding)
            unit = (1,) * len(window)
            shape = lax.reduce_window_shape_tuple(
                input_shape, window, window_strides, pads, unit, unit
            )
            return shape, ()

        def apply_fun(params, inputs, **kwargs):
            _check_rank(name, jnp.shape(inputs), len(window), layout)
            out = lax.reduce_window(inputs, init_val, reducer, window, window_strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    layer.__name__ = layer.__qualname__ = name
    return layer


def _normalize_by_window_size(window_shape, strides, padding):
    """Divides each window's sum by the number of input elements in it (fewer at padded
    edges)."""

    def rescale(outputs, inputs, spec):
        non_spatial = _non_spatial_axes(spec, inputs.ndim)
        spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
        counts = lax.reduce_window(
            jnp.ones(spatial_shape, inputs.dtype), 0.0, lax.add, window_shape, strides, padding
        )
        for i in sorted(non_spatial):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


MaxPool = _pooling_layer("MaxPool", lax.max, -jnp.inf)
SumPool = _pooling_layer("SumPool", lax.add, 0.0)
AvgPool = _pooling_layer("AvgPool", lax.add, 0.0, _normalize_by_window_size)


def _flatten():
    """Flattens every axis but the first (the batch)."""

    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
Identity = (lambda rng, input_shape: (input_shape, ()), lambda params, inputs, **kw: inputs)


def Dropout(rate, mode="train"):
    """Dropout that keeps each element with probability `rate` (stax's `rate` is the keep
    rate) and scales the kept ones by 1/rate; the identity in any mode but 'train'. Applying
    it needs a key: `apply_fun(params, inputs, rng=key)`."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout: apply_fun needs a PRNG key as its keyword argument `rng`, e.g. "
                "apply_fun(params, inputs, rng=jax.random.key(0))"
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# --- combinators ----------------------------------------------------------------------------


def FanOut(num):
    """Copies its input `num` times, for `parallel` layers to take."""
    init_fun = lambda rng, input_shape: ([input_shape] * num, ())
    apply_fun = lambda params, inputs, **kwargs: [inputs] * num
    return init_fun, apply_fun


FanInSum = (
    lambda rng, input_shape: (input_shape[0], ()),
    lambda params, inputs, **kwargs: sum(inputs),
)


def FanInConcat(axis=-1):
    """Joins a list of inputs along `axis`."""

    def init_fun(rng, input_shape):
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return (*first[:ax], size, *first[ax + 1 :]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def serial(*layers):
    """The layers one after the other; each gets its own key, split from the one given."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for apply, layer_params, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = apply(layer_params, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: the i-th applied to the i-th of a sequence of inputs (pair it
    with `FanOut` and a fan-in layer)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape, strict=True)]
        return tuple(shape for shape, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [
            apply(p, x, rng=r, **kwargs)
            for apply, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by the input's shape: `make_layer(input_shape)` gives the layer."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
