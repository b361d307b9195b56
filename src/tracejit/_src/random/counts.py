"""The counting samplers: poisson, binomial and multinomial, as JAX 0.10.2 draws them.

Each loops until every element has its value, in one `while_loop` over the whole array (its
key words in the carry): Knuth's product of uniforms for small Poisson rates and the
inversion of geometric gaps for small binomial means, Hörmann's transformed rejection (PTRS,
BTRS) for large ones; both branches are computed and `select` picks each element's.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes, prng
from tracejit._src.lax import cumulative, selection, special
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.creation import asarray, full, full_like, zeros_like
from tracejit._src.numpy.manipulation import broadcast_to, moveaxis
from tracejit._src.random.distributions import (
    _uniform,
    check_arraylike,
    check_shape,
    check_sharding,
)
from tracejit._src.random.key_reuse import consumes_key
from tracejit._src.random.keys import canonical_shape, check_prng_key, split
from tracejit._src.random_gamma import split_words


def _uniform_of_words(words, shape, dtype):
    return _uniform(prng.random_wrap(words, impl="fry"), shape, dtype, 0.0, 1.0)


# --- poisson ----------------------------------------------------------------------------------


def _poisson_knuth(words, lam, shape, dtype, max_iters):
    """Counts the uniforms whose running product stays above exp(-lam) (small rates)."""

    def body(carry):
        i, k, words, log_prod = carry
        words, subkey = split_words(words, 2)
        k = selection.select(log_prod > -lam, k + 1, k)
        u = _uniform_of_words(subkey, shape, np.float32)
        return i + 1, k, words, log_prod + jnp_ufuncs.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = full(shape, 0, dtype)
    log_rate_init = full(shape, 0, np.float32)
    k = while_loop(cond, body, (0, k_init, words, log_rate_init))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(words, lam, shape, dtype, max_iters):
    """Hörmann's PTRS: transformed rejection with squeeze (rates of 10 and more)."""
    log_lam = jnp_ufuncs.log(lam)
    b = 0.931 + 2.53 * jnp_ufuncs.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, words = carry
        words, subkey_0, subkey_1 = split_words(words, 3)
        u = _uniform_of_words(subkey_0, shape, lam.dtype) - 0.5
        v = _uniform_of_words(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = jnp_ufuncs.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = jnp_ufuncs.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - special.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, selection.select(accept, k, k_out), accepted | accept, words

    def cond(carry):
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)

    k_init = full(shape, -1, lam.dtype)
    accepted = full(shape, False, np.bool_)
    k = while_loop(cond, body, (0, k_init, accepted, words))[1]
    return k.astype(dtype)


@consumes_key
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson counts of rate `lam` (computed in float32)."""
    typed = check_prng_key("poisson", key)
    check_sharding(out_sharding)
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "poisson")
    shape = np.shape(lam) if shape is None else canonical_shape(shape)
    lam = broadcast_to(lam, shape).astype(np.float32)
    words = prng.random_unwrap(typed)
    use_knuth = jnp_ufuncs.isnan(lam) | (lam < 10)
    lam_knuth = selection.select(use_knuth, lam, full_like(lam, 0.0))
    lam_rejection = selection.select(use_knuth, full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)  # in effect, until every one is accepted
    result = selection.select(
        use_knuth,
        _poisson_knuth(words, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(words, lam_rejection, shape, dtype, max_iters),
    )
    return selection.select(lam == 0, zeros_like(result), result)


# --- binomial ---------------------------------------------------------------------------------


def _binomial_inversion(words, count, prob, shape, dtype, max_iters):
    """Counts the geometric gaps between successes that fit in `count` trials."""
    log1minusprob = jnp_ufuncs.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, words = carry
        subkey, words = split_words(words, 2)
        num_geom_out = selection.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform_of_words(subkey, shape, prob.dtype)
        geom = jnp_ufuncs.ceil(jnp_ufuncs.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, words

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = full(shape, 0, prob.dtype)
    geom_sum_init = full(shape, 0, prob.dtype)
    k = while_loop(cond, body, (0, num_geom_init, geom_sum_init, words))[1]
    return (k - 1).astype(dtype)


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k):
    """log(k!) minus its Stirling approximation: tabulated to 9, a series beyond."""
    tail_values = asarray(np.array(_STIRLING_TAIL), dtype=k.dtype)
    use_tail_values = k <= 9
    k = jnp_ufuncs.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp_ufuncs.floor(k)
    return selection.select(use_tail_values, tail_values[asarray(k, dtype="int32")], approx)


def _btrs(words, count, prob, shape, dtype, max_iters):
    """Hörmann's BTRS: transformed rejection with squeeze (means count * prob above 10)."""
    stddev = jnp_ufuncs.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp_ufuncs.floor((count + 1) * prob)
    log = jnp_ufuncs.log

    def body(carry):
        i, k_out, accepted, words = carry
        words, subkey_0, subkey_1 = split_words(words, 3)
        u = _uniform_of_words(subkey_0, shape, prob.dtype)
        v = _uniform_of_words(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp_ufuncs.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp_ufuncs.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, selection.select(accept, k, k_out), accepted | accept, words

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = full(shape, -1, prob.dtype)
    carry = (0, k_init, full(shape, False, bool), words)
    return while_loop(cond, body, carry)[1].astype(dtype)


@consumes_key
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial counts of `n` trials of success probability `p` (floats, as JAX's: NaN for
    invalid parameters, inf for infinitely many trials)."""
    typed = check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, "binomial")
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    if shape is None:
        shape = np.broadcast_shapes(np.shape(n), np.shape(p))
    else:
        shape = canonical_shape(shape)
        check_shape("binomial", shape, np.shape(n), np.shape(p))
    prob = asarray(p)
    if not dtypes.is_inexact(prob.dtype):
        prob = prob.astype(dtypes.default_float_dtype())
    count = broadcast_to(asarray(n).astype(prob.dtype), shape)
    prob = broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = selection.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp_ufuncs.isnan(count) | (count < 0.0)
    count_inf = jnp_ufuncs.isinf(count)
    q_is_nan = jnp_ufuncs.isnan(q)
    q_l_0 = q < 0.0
    q = selection.select(q_is_nan | q_l_0, full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp_ufuncs.floor(count)
    count_inv = selection.select(use_inversion, count, full_like(count, 0.0))
    count_btrs = selection.select(use_inversion, full_like(count, 1e4), count)
    q_btrs = selection.select(use_inversion, full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    words = prng.random_unwrap(typed)
    samples = selection.select(
        use_inversion,
        _binomial_inversion(words, count_inv, q, shape, dtype, max_iters),
        _btrs(words, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = selection.select(invalid, full_like(samples, np.nan, dtype), samples)
    samples = selection.select(count_inf & (~invalid), full_like(samples, np.inf, dtype), samples)
    flipped = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return selection.select(flipped, samples, count.astype(dtype) - samples)


@consumes_key
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of `n` draws among the categories of the last axis of `p`: a binomial draw per
    category from what the previous ones left."""
    check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = asarray(n), asarray(p)
    inexact = dtypes.result_type(n, p, dtypes.default_float_dtype())
    if not dtypes.is_inexact(n.dtype) or not dtypes.is_inexact(p.dtype):
        n, p = n.astype(inexact), p.astype(inexact)
    if shape is None:
        shape = p.shape
    n = broadcast_to(n, shape[:-1])
    p = broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, subkey = ratio_key
        count = binomial(subkey, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = moveaxis(p, -1, 0)
    remaining_probs = cumulative.cumsum(p, 0, reverse=True)
    ratios = p / jnp_ufuncs.where(remaining_probs == 0, 1, remaining_probs)
    keys = split(key, ratios.shape[0])
    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return moveaxis(counts, 0, -1).astype(dtypes.default_float_dtype() if dtype is None else dtype)
