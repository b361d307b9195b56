"""`tracejit.random`: JAX's random numbers, bit for bit, on raw `uint32[2]` keys.

A key is an array of two uint32 words (`PRNGKey(0)` is `[0, 0]`). Every function here wraps it
into a typed key (`prng.random_wrap`), draws bits with the key primitives of `_src/prng.py`
and shapes them into the distribution the same way JAX 0.10.2 does, so that the same key, shape
and dtype give the same values as JAX, eagerly and under every transformation. Functions that
return keys (`split`, `fold_in`) unwrap them again.

Typed keys (`random.key`) and the distributions not written here are absent, not stubbed.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Sequence

import numpy as np

from tracejit._src import dtypes, prng
from tracejit._src.accel import accel
from tracejit._src.array import Array, make_array
from tracejit._src.core import Tracer, current_trace, get_aval
from tracejit._src.interpreters.eval import eval_trace
from tracejit._src.jit import library_jit
from tracejit._src.lax import (
    binary,
    bitwise,
    comparison,
    conversions,
    elementwise,
    selection,
    shapes,
    special,
    trigonometric,
)
from tracejit._src.lax import sort as lax_sort
from tracejit._src.numpy import reductions as jnp_reductions
from tracejit._src.numpy import sorting as jnp_sorting
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.advanced_indexing import take
from tracejit._src.numpy.arithmetic import power
from tracejit._src.numpy.creation import arange, asarray, zeros
from tracejit._src.numpy.linalg_spectral import norm
from tracejit._src.numpy.manipulation import broadcast_to, moveaxis, normalize_axis
from tracejit._src.numpy.ufuncs import clip, where
from tracejit._src.random.fast_path import KEY_TYPES, STATE
from tracejit._src.random.key_reuse import consumes_key
from tracejit._src.random.keys import canonical_shape, check_prng_key, split_in_two

# --- argument checks ----------------------------------------------------------------------


def check_arraylike(name: str, *args) -> None:
    """JAX's TypeError for arguments that are neither arrays nor scalars (a list, say)."""
    arraylike = (bool, int, float, complex, np.ndarray, np.generic, Array, Tracer)
    for position, arg in enumerate(args):
        if not isinstance(arg, arraylike):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(arg)} at position "
                f"{position}."
            )


def check_sharding(out_sharding) -> None:
    """Samplers take JAX's `out_sharding`: None, or a sharding that keeps the whole sample on
    each device (what `typeof(x).sharding` gives for an unsharded x); splitting samples over
    devices is not built."""
    if out_sharding is None or getattr(out_sharding, "is_fully_replicated", False):
        return
    raise NotImplementedError(
        f"out_sharding={out_sharding}: random samples sharded over devices are not built yet"
    )


def _float_dtype(name: str, dtype, accepts_complex: bool = False) -> np.dtype:
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, name)
    if not (dtypes.is_float(dtype) or (accepts_complex and dtypes.is_complex(dtype))):
        kind = "a float or complex" if accepts_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dtype}")
    return dtype


# --- the samplers ---------------------------------------------------------------------------
# As in JAX, each sampler runs as its own `jit` with static shape and dtype: jaxprs print it as
# `jit[name=_uniform ...]`, and an eager draw is one compiled program, not one NumPy pass per
# primitive. (The common samplers on a concrete key first try the C accelerator's one call:
# `fast_path`.)
def sampler_jit(static_argnums=(1, 2), **options):
    """The decorator of a sampler: `library_jit`, compiled eagerly, static shape and dtype."""
    return functools.partial(
        library_jit, compiles_eagerly=True, static_argnums=static_argnums, **options
    )


@sampler_jit()
def _uniform(key, shape, dtype, minval, maxval):
    return prng.uniform(key, shape, dtype, minval, maxval)


@sampler_jit()
def _normal_real(key, shape, dtype):
    return prng.normal_real(key, shape, dtype, uniform=_uniform)


@sampler_jit()
def _normal(key, shape, dtype):
    """Complex dtypes get independent real and imaginary parts of variance 1/2 each."""
    if not dtypes.is_complex(dtype):
        return _normal_real(key, shape, dtype)
    real_dtype = np.array(0, dtype).real.dtype
    key_re, key_im = split_in_two(key)
    re = conversions.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
    im = conversions.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
    return binary.div(
        binary.add(re, binary.mul(np.array(1j, dtype), im)), np.array(np.sqrt(2), dtype)
    )


# --- bits and uniform -----------------------------------------------------------------------


@consumes_key
def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniformly random unsigned integers of `dtype` (default: uint32, uint64 under x64)."""
    state = STATE[0]
    if (
        state is not None
        and out_sharding is None
        and type(key) in KEY_TYPES
        and current_trace() is eval_trace
    ):
        value = accel.bits(key._value, shape, dtype, state)
        if value is not None:
            return make_array(value)
    typed = check_prng_key("bits", key)
    check_sharding(out_sharding)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.check_user_dtype(dtype, "bits")
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return prng.random_bits(typed, dtype.itemsize * 8, canonical_shape(shape))


@consumes_key
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Floats uniformly distributed in [minval, maxval)."""
    state = STATE[0]
    if (
        state is not None
        and out_sharding is None
        and type(key) in KEY_TYPES
        and current_trace() is eval_trace
    ):
        value = accel.uniform(key._value, shape, dtype, minval, maxval, state)
        if value is not None:
            return make_array(value)
    typed = check_prng_key("uniform", key)
    check_sharding(out_sharding)
    dtype = _float_dtype("uniform", dtype)
    return _uniform(typed, canonical_shape(shape), dtype, minval, maxval)


# --- distributions over uniform -------------------------------------------------------------


@consumes_key
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal values. (No eager fast path: a C erfinv could not give XLA's values to
    the last bit, and eager values equal to `jit`'s matter more.)"""
    typed = check_prng_key("normal", key)
    check_sharding(out_sharding)
    return _normal(typed, canonical_shape(shape), _float_dtype("normal", dtype, True))


def _sampler(name: str, shape, dtype, key, out_sharding):
    typed = check_prng_key(name, key)
    check_sharding(out_sharding)
    return typed, canonical_shape(shape), _float_dtype(name, dtype)


@consumes_key
def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    """Exponential values of rate 1: -log(1 - u)."""
    return _exponential(*_sampler("exponential", shape, dtype, key, out_sharding))


@sampler_jit()
def _exponential(key, shape, dtype):
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    return elementwise.neg(elementwise.log1p(elementwise.neg(u)))


@consumes_key
def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    """Laplace values of scale 1: sign(u) log(1 - |u|), u uniform in (-1, 1)."""
    return _laplace(*_sampler("laplace", shape, dtype, key, out_sharding))


@sampler_jit()
def _laplace(key, shape, dtype):
    u = _uniform(key, shape, dtype, np.array(-1.0 + dtypes.finfo(dtype).epsneg, dtype), 1.0)
    return binary.mul(elementwise.sign(u), elementwise.log1p(elementwise.neg(elementwise.abs(u))))


@consumes_key
def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard logistic values: log(x) - log(1 - x)."""
    return _logistic(*_sampler("logistic", shape, dtype, key, out_sharding))


@sampler_jit()
def _logistic(key, shape, dtype):
    x = _uniform(key, shape, dtype, np.array(dtypes.finfo(dtype).tiny, dtype), 1.0)
    return binary.sub(elementwise.log(x), elementwise.log1p(elementwise.neg(x)))


@consumes_key
def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard Cauchy values: tan(pi (u - 1/2))."""
    return _cauchy(*_sampler("cauchy", shape, dtype, key, out_sharding))


@sampler_jit()
def _cauchy(key, shape, dtype):
    u = _uniform(key, shape, dtype, np.array(dtypes.finfo(dtype).eps, dtype), 1.0)
    return trigonometric.tan(
        binary.mul(np.array(np.pi, dtype), binary.sub(u, np.array(0.5, dtype)))
    )


@consumes_key
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel values: -log(-log(u)); mode 'high' draws two uniforms for more
    resolution near 0."""
    typed, shape, dtype = _sampler("gumbel", shape, dtype, key, out_sharding)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    info = dtypes.finfo(dtype)
    if mode == "highest" and dtype == np.float32:
        raise NotImplementedError("gumbel mode='highest' for float32 is not built")
    if mode == "low":
        return _gumbel(typed, shape, dtype)
    both = _uniform(typed, (2, *shape), dtype, 0.0, 1.0)
    high, low = both[0], both[1]
    refined = binary.add(
        binary.add(high, binary.mul(np.array(2.0**-info.nmant, dtype), low)),
        np.array(info.tiny, dtype),
    )
    x = selection.select(comparison.ge(high, np.array(0.5, dtype)), high, refined)
    return elementwise.neg(elementwise.log(elementwise.neg(elementwise.log1p(elementwise.neg(x)))))


@sampler_jit()
def _gumbel(key, shape, dtype):
    # (keywords, which JAX's jaxprs list sorted: maxval first)
    u = _uniform(key, shape, dtype, minval=np.array(dtypes.finfo(dtype).tiny, dtype), maxval=1.0)
    return elementwise.neg(elementwise.log(elementwise.neg(elementwise.log(u))))


@consumes_key
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal values truncated to (lower, upper), by inverting the CDF of a uniform draw
    between the CDF's values at the bounds."""
    typed = check_prng_key("truncated_normal", key)
    check_sharding(out_sharding)
    dtype = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        shape = canonical_shape(shape)
        check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    return _truncated_normal(typed, lower, upper, shape, dtype)


@sampler_jit((3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = conversions.convert_element_type(lower, dtype)
    upper = conversions.convert_element_type(upper, dtype)
    a = special.erf(binary.div(lower, sqrt2))
    b = special.erf(binary.div(upper, sqrt2))
    u = _uniform(key, shape, dtype, a, b)
    out = binary.mul(sqrt2, special.erf_inv(u))
    return clip(
        out,
        binary.nextafter(shapes.stop_gradient(lower), np.array(np.inf, dtype)),
        binary.nextafter(shapes.stop_gradient(upper), np.array(-np.inf, dtype)),
    )


def check_shape(name: str, shape: tuple, *param_shapes) -> None:
    """JAX's ValueError when the parameters do not broadcast to exactly `shape`."""
    result = np.broadcast_shapes(shape, *param_shapes)
    if result != shape:
        raise ValueError(
            f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
            "result of broadcasting the shapes must equal the shape argument, but got result "
            f"{result} for shape argument {shape}."
        )


# --- discrete distributions ------------------------------------------------------------------


@consumes_key
def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans, True with probability `p`: u < p; mode 'high' compares with two uniforms for
    probabilities below the float's resolution."""
    state = STATE[0]
    if (
        state is not None
        and mode == "low"
        and out_sharding is None
        and type(key) in KEY_TYPES
        and current_trace() is eval_trace
    ):
        value = accel.bernoulli(key._value, p, shape, state)
        if value is not None:
            return make_array(value)
    if shape is not None:
        shape = canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    typed = check_prng_key("bernoulli", key)
    check_sharding(out_sharding)
    dtype = dtypes.dtype_of(p)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    # (a concrete p is converted here, not staged: JAX's jaxprs show it as a literal)
    p = conversions.convert_element_type(p, dtype) if isinstance(p, Tracer) else asarray(p, dtype)
    if shape is None:
        shape = np.shape(p)
    else:
        check_shape("bernoulli", shape, np.shape(p))
    if mode == "low":
        return _bernoulli(typed, shape, p)
    both = _uniform(typed, (2, *shape), dtype, 0.0, 1.0)
    u2 = binary.mul(both[1], np.array(2.0 ** -dtypes.finfo(dtype).nmant, dtype))
    return u2 < p - both[0]


@sampler_jit((1,))
def _bernoulli(key, shape, p):
    return _uniform(key, shape, p.dtype, 0.0, 1.0) < p


@consumes_key
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """-1 or 1 with equal probability."""
    typed = check_prng_key("rademacher", key)
    check_sharding(out_sharding)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "rademacher")
    shape = canonical_shape(shape)
    return _rademacher(typed, shape, dtype)


@sampler_jit()
def _rademacher(key, shape, dtype):
    p = np.array(0.5, dtypes.default_float_dtype())
    heads = conversions.convert_element_type(_bernoulli(key, shape, p), dtype)
    return (2 * heads - 1).astype(dtype)


def _convert_and_clip_integer(value, dtype):
    """`value` (integers) clipped to what both its dtype and `dtype` hold (bounds as weakly
    typed as `value`), then converted."""
    aval = get_aval(value)
    value_info, info = dtypes.iinfo(aval.dtype), dtypes.iinfo(dtype)
    low, high = max(info.min, value_info.min), min(info.max, value_info.max)
    if not aval.weak_type:
        low, high = np.array(low, aval.dtype), np.array(high, aval.dtype)
    return conversions.convert_element_type(clip(value, low, high), dtype)


def _integer_operand(value):
    value = asarray(value)
    if not dtypes.is_int(value.dtype):
        value = value.astype(int)
    return value


@sampler_jit((1, 4))
def _randint(key, shape, minval, maxval, dtype):
    """Integers in [minval, maxval): two words of random bits reduced modulo the span (biased
    when the span is no power of two, less so for the second word)."""
    minval, maxval = _integer_operand(minval), _integer_operand(maxval)
    # A maxval beyond the dtype (randint(key, shape, 0, 256, uint8)) makes the span one larger.
    dtype_max = _convert_and_clip_integer(np.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = comparison.gt(maxval, dtype_max)
    minval, maxval = (
        _convert_and_clip_integer(minval, dtype),
        _convert_and_clip_integer(maxval, dtype),
    )
    minval = shapes.broadcast_to_rank(minval, len(shape))
    maxval = shapes.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    key1, key2 = split_in_two(key)
    higher_bits = prng.random_bits(key1, nbits, shape)
    lower_bits = prng.random_bits(key2, nbits, shape)
    unsigned = prng.UINT_DTYPES[nbits]
    span = conversions.convert_element_type(binary.sub(maxval, minval), unsigned)
    empty = comparison.le(maxval, minval)
    ones = shapes.broadcast_in_dim(np.array(1, unsigned), span.shape, ())
    span = selection.select(empty, ones, span)
    grow = bitwise.and_(maxval_out_of_range, comparison.gt(maxval, minval))
    span = selection.select(grow, binary.add(span, np.array(1, unsigned)), span)
    # (a 2**nbits + b) % span without overflow: 2**nbits % span as (2**(nbits/2) % span)**2.
    multiplier = binary.rem(np.array(2 ** (nbits // 2), unsigned), span)
    multiplier = binary.rem(binary.mul(multiplier, multiplier), span)
    offset = binary.add(
        binary.mul(binary.rem(higher_bits, span), multiplier), binary.rem(lower_bits, span)
    )
    offset = binary.rem(offset, span)
    return binary.add(minval, conversions.convert_element_type(offset, dtype))


@consumes_key
def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Integers uniformly distributed in [minval, maxval) (`minval` where maxval <= minval)."""
    state = STATE[0]
    if (
        state is not None
        and out_sharding is None
        and type(key) in KEY_TYPES
        and current_trace() is eval_trace
    ):
        value = accel.randint(key._value, shape, minval, maxval, dtype, state)
        if value is not None:
            return make_array(value)
    typed = check_prng_key("randint", key)
    check_sharding(out_sharding)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "randint")
    shape = canonical_shape(shape)
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    check_arraylike("randint", minval, maxval)
    info = dtypes.iinfo(dtype)
    if info.bits >= 32:
        return _randint(typed, shape, minval, maxval, dtype)
    # Narrow integers are drawn as int32 between bounds clipped to the dtype.
    int32 = np.dtype(np.int32)
    minval = clip(asarray(minval).astype(int32), int(info.min), int(info.max))
    maxval = clip(asarray(maxval).astype(int32), int(info.min), int(info.max) + 1)
    return _randint(typed, shape, minval, maxval, int32).astype(dtype)


# --- permutations and choices ---------------------------------------------------------------


@sampler_jit((2,))
def _shuffle(typed, x, axis: int):
    """`x` permuted along `axis` by sorting it by random 32-bit keys, in as many rounds as
    make ties unlikely (3 log n / log(2**32 - 1); none for one element)."""
    size = math.prod(np.shape(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        typed, subkey = split_in_two(typed)
        sort_keys = prng.random_bits(subkey, 32, tuple(np.shape(x)))
        _, x = lax_sort.sort_key_val(sort_keys, x, axis)
    return x


@consumes_key
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of `range(x)` (an integer `x`) or of `x`'s slices along `axis`
    (`independent`: each slice along `axis` permuted on its own)."""
    typed = check_prng_key("permutation", key)
    check_sharding(out_sharding)
    check_arraylike("permutation", x)
    axis = normalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.is_int(dtypes.dtype_of(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(typed, arange(int(x)), axis)
    if independent or np.ndim(x) == 1:
        return _shuffle(typed, x, axis)
    order = _shuffle(typed, arange(np.shape(x)[axis]), 0)
    return take(x, order, axis, unique_indices=True)


def _top_k_indices(x, k: int):
    """The indices of the `k` largest values along the last axis, largest first and the lower
    index first among equals (XLA's TopK): a stable sort of the negated values."""
    n = np.shape(x)[-1]
    positions = shapes.broadcasted_iota(np.int32, np.shape(x), len(np.shape(x)) - 1)
    _, order = lax_sort.sort_key_val(elementwise.neg(x), positions, -1)
    return order[..., :k] if k < n else order


@consumes_key
def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random elements of `a` (or of `range(a)`, an integer), with or without replacement,
    uniformly or with probabilities `p`."""
    typed = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = normalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = canonical_shape(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(typed, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else take(arr, ind, axis)
        else:
            slices = (builtins.slice(None),) * axis + (builtins.slice(n_draws),)
            result = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = jnp_reductions.cumsum(p_arr)
            u = _uniform(typed, shape, p_cuml.dtype, 0.0, 1.0)
            r = binary.mul(p_cuml[-1], binary.sub(np.array(1, p_cuml.dtype), u))
            ind = jnp_sorting.searchsorted(p_cuml, r).astype(int)
        else:
            g = binary.add(gumbel(key, (n_inputs,), p_arr.dtype, mode), elementwise.log(p_arr))
            ind = _top_k_indices(g, n_draws).astype(int)
        result = ind if arr.ndim == 0 else take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1 :]
    return result.reshape(out_shape)


@consumes_key
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """Indices drawn from the categorical distributions of `logits` along `axis`: the argmax of
    logits plus Gumbel noise (without replacement: the top `k`)."""
    key = check_prng_key("categorical", key)
    check_sharding(out_sharding)
    check_arraylike("categorical", logits)
    logits_arr = asarray(logits)
    axis = normalize_axis(axis, logits_arr.ndim)
    batch_shape = tuple(np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        check_shape("categorical", shape, batch_shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis, logits_arr.shape[axis])
        noise = gumbel(key, (*prefix, *logits_shape), logits_arr.dtype, mode)
        expanded = shapes.expand_dims(logits_arr, tuple(range(len(prefix))))
        return jnp_reductions.argmax(binary.add(noise, expanded), axis=axis + len(prefix))
    noisy = binary.add(logits_arr, gumbel(key, logits_arr.shape, logits_arr.dtype, mode))
    k = math.prod(prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits_arr.shape[axis]})."
        )
    indices = _top_k_indices(moveaxis(noisy, axis, -1), k)
    rank = indices.ndim
    return shapes.reshape(indices, shape, (rank - 1, *range(rank - 1)))


# --- distributions with parameters ------------------------------------------------------------


def check_broadcast_shapes(name: str, shape, *args) -> tuple:
    """The sample shape: `shape`, which the parameters' shapes must broadcast to, or theirs."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return np.broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonical_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_all_safe_to_cast(name: str, dtype, *args) -> None:
    """JAX's TypePromotionError for parameters that `dtype` cannot hold without loss (a float64
    array for float32 samples)."""
    for arg in args:
        if dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{asarray(arg).dtype} to {dtype}"
            )


def parametrized(name: str, key, dtype, out_sharding=None):
    """(typed key, float dtype) of a sampler's arguments, checked."""
    typed = check_prng_key(name, key)
    check_sharding(out_sharding)
    return typed, _float_dtype(name, dtype)


@consumes_key
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh values: scale sqrt(-2 log u)."""
    typed, dtype = parametrized("rayleigh", key, dtype, out_sharding)
    shape = check_broadcast_shapes("rayleigh", shape, scale)
    check_all_safe_to_cast("rayleigh", dtype, scale)
    return _rayleigh(typed, scale, shape, dtype)


@sampler_jit((2, 3))
def _rayleigh(key, scale, shape, dtype):
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    scale = broadcast_to(conversions.convert_element_type(scale, dtype), shape)
    root = elementwise.sqrt(binary.mul(elementwise.log(u), np.array(-2, dtype)))
    return binary.mul(scale, root)


@consumes_key
def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """Maxwell values: the norm of three standard normals."""
    typed, dtype = parametrized("maxwell", key, dtype, out_sharding)
    return _maxwell(typed, canonical_shape(shape), dtype)


@sampler_jit()
def _maxwell(key, shape, dtype):
    return norm(_normal(key, (*shape, 3), dtype), axis=-1)


@consumes_key
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell values with a random sign, scaled and shifted; the sample shape is `shape`
    followed by the parameters' broadcast shape."""
    typed, dtype = parametrized("double_sided_maxwell", key, dtype)
    shape = canonical_shape(shape)
    params_shape = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = (shape or params_shape) + params_shape
    return _double_sided_maxwell(typed, loc, scale, shape, dtype)


@sampler_jit((3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    maxwell_key, rademacher_key = split_in_two(key)
    magnitude = _maxwell(maxwell_key, shape, dtype)
    sign = _rademacher(rademacher_key, shape, dtype)
    signed = binary.mul(sign, magnitude)
    scaled = jnp_ufuncs.multiply(signed, conversions.convert_element_type(scale, dtype))
    return jnp_ufuncs.add(scaled, conversions.convert_element_type(loc, dtype))


@consumes_key
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto values of shape `b`: exp(e / b), e exponential."""
    typed, dtype = parametrized("pareto", key, dtype, out_sharding)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_all_safe_to_cast("pareto", dtype, b)
    return _pareto(typed, b, shape, dtype)


@sampler_jit((2, 3))
def _pareto(key, b, shape, dtype):
    b = conversions.convert_element_type(b, dtype)
    return elementwise.exp(binary.div(_exponential(key, shape, dtype), b))


@consumes_key
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull values: scale (-log(1 - u)) ** (1 / concentration)."""
    typed, dtype = parametrized("weibull_min", key, dtype)
    shape = canonical_shape(shape)
    return _weibull_min(typed, scale, concentration, shape, dtype)


@sampler_jit((3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform(key, shape, dtype, 0, 1)
    return power(-jnp_ufuncs.log1p(-u), 1.0 / concentration) * scale


@consumes_key
def lognormal(
    key,
    sigma=np.float32(1),  # noqa: B008  (JAX's default)
    shape=None,
    dtype=None,
    *,
    out_sharding=None,
):
    """Log-normal values: exp(sigma n), n standard normal."""
    typed = check_prng_key("lognormal", key)
    check_sharding(out_sharding)
    dtype = _float_dtype("lognormal", dtype, accepts_complex=True)
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dtype, sigma)
    sigma = conversions.convert_element_type(sigma, dtype)
    scaled = _normal(typed, shape, dtype) * sigma
    return elementwise.exp(scaled)


@consumes_key
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular values on [left, right] peaking at `mode`, by inverting the CDF."""
    typed, dtype = parametrized("triangular", key, dtype, out_sharding)
    shape = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_all_safe_to_cast("triangular", dtype, left, mode, right)
    left, right, mode = (
        broadcast_to(conversions.convert_element_type(v, dtype), shape) for v in (left, right, mode)
    )
    fc = (mode - left) / (right - left)
    u = _uniform(typed, shape, dtype, 0.0, 1.0)
    out1 = left + elementwise.sqrt(u * (right - left) * (mode - left))
    out2 = right - elementwise.sqrt((1 - u) * (right - left) * (right - mode))
    return selection.select(comparison.lt(u, fc), out1, out2)


@consumes_key
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) values of scale 1 (Michael, Schucany and Haas's method)."""
    typed, dtype = parametrized("wald", key, dtype, out_sharding)
    shape = check_broadcast_shapes("wald", shape, mean)
    check_all_safe_to_cast("wald", dtype, mean)
    return _wald(typed, mean, shape, dtype)


@sampler_jit((2, 3))
def _wald(key, mean, shape, dtype):
    key1, key2 = split_in_two(key)
    mean = broadcast_to(conversions.convert_element_type(mean, dtype), shape)
    v = _normal(key1, shape, dtype)
    z = _uniform(key2, shape, dtype, 0.0, 1.0)
    y = elementwise.integer_pow(v, 2)
    y_sq = elementwise.integer_pow(y, 2)
    mean_sq = elementwise.integer_pow(mean, 2)
    sqrt_term = elementwise.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return selection.select(comparison.le(z, mean / (mean + x)), x, mean_sq / x)


@consumes_key
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric values (trials until the first success, from 1): floor(log u / log(1 - p)) + 1."""
    typed = check_prng_key("geometric", key)
    check_sharding(out_sharding)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "geometric")
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    check_arraylike("geometric", p)
    return _geometric(typed, p, shape, dtype)


@sampler_jit((2, 3))
def _geometric(key, p, shape, dtype):
    p = asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float_dtype())
    u = _uniform(key, shape, p.dtype, 0.0, 1.0)
    u = where(u == 0, 1, u)
    log_u = elementwise.log(u)
    log_one_minus_p = broadcast_to(elementwise.log1p(-p), shape)
    g = elementwise.floor(binary.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)
