"""The gamma family of `tracejit.random`: gamma and loggamma over the `random_gamma`
primitive (`_src/random_gamma.py`), and the distributions made of gamma draws: beta,
dirichlet, chisquare, t, f, generalized_normal, ball."""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes, prng
from tracejit._src.lax import binary, conversions, shapes, slicing
from tracejit._src.nn.functions import softmax
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.manipulation import broadcast_to
from tracejit._src.random.distributions import (
    _exponential,
    _normal,
    _rademacher,
    check_all_safe_to_cast,
    check_broadcast_shapes,
    check_shape,
    check_sharding,
    parametrized,
    sampler_jit,
)
from tracejit._src.random.key_reuse import consumes_key
from tracejit._src.random.keys import canonical_shape, check_prng_key, split_in_two
from tracejit._src.random_gamma import random_gamma


@sampler_jit((2, 3), static_argnames=("log_space",))
def _gamma(typed, a, shape, dtype, *, log_space: bool = False):
    if shape is None:
        shape = np.shape(a)
    else:
        check_shape("gamma", shape, np.shape(a))
    a = conversions.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = broadcast_to(a, shape)
    return random_gamma(typed, a, log_space=log_space)


@consumes_key
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) values (Marsaglia and Tsang's rejection method), differentiable in `a` by
    implicit reparameterization (`random_gamma_grad`)."""
    typed, dtype = parametrized("gamma", key, dtype, out_sharding)
    return _gamma(typed, a, None if shape is None else canonical_shape(shape), dtype)


@consumes_key
def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """The logs of Gamma(a, 1) values, accurate where the values themselves underflow
    (small `a`)."""
    typed = check_prng_key("loggamma", key)
    check_sharding(out_sharding)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, "loggamma")
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    shape = None if shape is None else canonical_shape(shape)
    return _gamma(typed, a, shape, dtype, log_space=True)


@consumes_key
def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) values: G_a / (G_a + G_b) of two gamma values, scaled in log space."""
    typed, dtype = parametrized("beta", key, dtype, out_sharding)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    return _beta(typed, a, b, shape, dtype)


@sampler_jit((3, 4))
def _beta(key, a, b, shape, dtype):
    a = conversions.convert_element_type(a, dtype)
    b = conversions.convert_element_type(b, dtype)
    key_a, key_b = split_in_two(key)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    log_gamma_a = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, log_space=True)
    log_max = binary.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp_ufuncs.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp_ufuncs.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@consumes_key
def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) values along the last axis: the softmax of log-gamma values."""
    typed, dtype = parametrized("dirichlet", key, dtype, out_sharding)
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = np.shape(alpha)[:-1]
    else:
        shape = canonical_shape(shape)
        check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    return _dirichlet(typed, alpha, shape, dtype)


@sampler_jit((2, 3))
def _dirichlet(key, alpha, shape, dtype):
    alpha = conversions.convert_element_type(alpha, dtype)
    log_gamma = _gamma(key, alpha, shape + np.shape(alpha)[-1:], dtype, log_space=True)
    return softmax(log_gamma, -1)


@sampler_jit((2, 3))
def _chisquare(typed, df, shape, dtype):
    df = conversions.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    log_g = _gamma(typed, binary.div(df, two), shape, dtype, log_space=True)
    return binary.mul(jnp_ufuncs.exp(log_g), two)


@consumes_key
def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square values of `df` degrees of freedom: 2 Gamma(df / 2)."""
    typed, dtype = parametrized("chisquare", key, dtype, out_sharding)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_all_safe_to_cast("chisquare", dtype, df)
    return _chisquare(typed, df, shape, dtype)


@consumes_key
def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t values of `df` degrees of freedom: n sqrt((df / 2) / Gamma(df / 2))."""
    typed, dtype = parametrized("t", key, dtype, out_sharding)
    shape = check_broadcast_shapes("t", shape, df)
    check_all_safe_to_cast("t", dtype, df)
    return _t(typed, df, shape, dtype)


@sampler_jit((2, 3))
def _t(typed, df, shape, dtype):
    df = conversions.convert_element_type(df, dtype)
    key_n, key_g = split_in_two(typed)
    n = _normal(key_n, shape, dtype)
    half_df = binary.div(df, np.array(2, dtype))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * jnp_ufuncs.sqrt(half_df / g)


@consumes_key
def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F values: the ratio of two chi-square values, each over its degrees of freedom."""
    typed, dtype = parametrized("f", key, dtype, out_sharding)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_all_safe_to_cast("f", dtype, dfnum, dfden)
    return _f(typed, dfnum, dfden, shape, dtype)


@sampler_jit((3, 4))
def _f(typed, dfnum, dfden, shape, dtype):
    dfden = conversions.convert_element_type(dfden, dtype)
    dfnum = conversions.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = split_in_two(typed)
    chi_num = _chisquare(key_dfn, dfnum, shape, dtype)
    chi_den = _chisquare(key_dfd, dfden, shape, dtype)
    return binary.div(binary.div(chi_num, dfnum), binary.div(chi_den, dfden))


@consumes_key
def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal values of power `p` (density proportional to exp(-|x|**p)):
    a random sign times Gamma(1 / p) ** (1 / p)."""
    shape = canonical_shape(shape)
    typed, dtype = parametrized("generalized_normal", key, dtype, out_sharding)
    return _generalized_normal(typed, p, shape, dtype)


@sampler_jit((2, 3))
def _generalized_normal(key, p, shape, dtype):
    keys = prng.random_split(key, (2,))
    g = _gamma(_key_at(keys, 0), 1 / p, shape, dtype)
    r = _rademacher(_key_at(keys, 1), shape, dtype)
    return r * g ** (1 / p)


def _key_at(keys, i: int):
    """`keys[i]`, staged as JAX stages a static index: a slice without strides, squeezed."""
    return shapes.squeeze(slicing.slice(keys, (i,), (i + 1,)), (0,))


@consumes_key
def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Points uniformly distributed in the unit `p`-norm ball of dimension `d`."""
    shape = canonical_shape(shape)
    typed, dtype = parametrized("ball", key, dtype, out_sharding)
    return _ball(typed, operator.index(d), p, shape, dtype)


@sampler_jit((1, 3, 4))
def _ball(key, d, p, shape, dtype):
    k1, k2 = split_in_two(key)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    return g / (((jnp_ufuncs.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
