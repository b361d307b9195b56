"""`random_gamma`: Gamma(a, 1) samples by Marsaglia and Tsang's rejection method, one primitive.

Each element of `a` gets its own key, split from the primitive's key, and runs its own
rejection loop (a `while_loop` inside a `while_loop`: the inner one redraws a normal until
`1 + c x > 0`). The algorithm is written once, on key words (`_gamma_words`), as in
`_src/prng.py`: the eager implementation evaluates its jaxpr (the elements' loops vectorized
by `vmap`), the lowering emits it. Shapes `a < 1` are boosted: a sample of `a + 1` times
`u ** (1 / a)`. `log_space` (for `loggamma`, `beta`, `dirichlet`) returns the log of the
sample, computed so that small `a` do not underflow to `log(0)`.

Its derivative in `a` is implicit reparameterization: dx/da = -(dF/da) / (dF/dx) for the
Gamma CDF F (the regularized incomplete gamma function), which `random_gamma_grad(a, x)`
computes by the series of `igamma` (x small) or its continued fraction (x large), iterated to
convergence in a `while_loop` with the derivative carried along, as JAX computes it.

The module sits with the higher-order primitives: its algorithms stage loops.

    b:f32[3] = random_gamma[log_space=False] a c
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tracejit._src import dtypes, prng
from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, vmap_flat
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import (
    binary,
    bitwise,
    broadcasting,
    comparison,
    elementwise,
    reductions,
    selection,
    shapes,
    special,
)
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.lowering.lower import lowering_rules, takes_key_words

# The series below read as formulas: lax's operations under short names.
add, sub, mul, div = binary.add, binary.sub, binary.mul, binary.div
neg, abs_, log = elementwise.neg, elementwise.abs, elementwise.log
and_, or_, not_, select = bitwise.and_, bitwise.or_, bitwise.not_, selection.select


def _const(x, value):
    return np.array(value, get_aval(x).dtype)


def _full_like(x, value):
    return shapes.broadcast_in_dim(_const(x, value), shape_of(x), ())


def split_words(words, n: int):
    """`n` key words split from one key's words."""
    typed = prng.random_wrap(words, impl="fry")
    split = prng.random_unwrap(prng.random_split(typed, (n,)))
    return [shapes.reshape(split[i], (2,)) for i in range(n)]


def _gamma_one(words, alpha, *, log_space: bool):
    """One Gamma(alpha) sample (JAX's operation order, so that compiled results agree)."""
    dtype = get_aval(alpha).dtype
    zero, one, two, minus_one = (np.array(v, dtype) for v in (0, 1, 2, -1))
    one_over_two, one_over_three = np.array(0.5, dtype), np.array(1.0 / 3.0, dtype)
    squeeze_const = np.array(0.0331, dtype)

    boost_mask = comparison.ge(alpha, one)
    alpha_orig = alpha
    alpha = selection.select(boost_mask, alpha, binary.add(alpha, one))
    d = binary.sub(alpha, one_over_three)
    c = binary.div(one_over_three, elementwise.sqrt(d))

    def rejected(state):
        _, x_sq, v, u = state
        squeeze = comparison.ge(
            u, binary.sub(one, binary.mul(squeeze_const, binary.mul(x_sq, x_sq)))
        )
        log_test = comparison.ge(
            elementwise.log(u),
            binary.add(
                binary.mul(x_sq, one_over_two),
                binary.mul(d, binary.add(binary.sub(one, v), elementwise.log(v))),
            ),
        )
        return bitwise.and_(squeeze, log_test)

    def next_normal(state):
        key, subkey = split_words(state[0], 2)
        x = prng.normal_real(prng.random_wrap(subkey, impl="fry"), (), dtype)
        return key, x, binary.add(one, binary.mul(x, c))

    def propose(state):
        key, x_key, u_key = split_words(state[0], 3)
        _, x, v = while_loop(
            lambda s: comparison.le(s[2], zero), next_normal, (x_key, zero, minus_one)
        )
        u = prng.uniform(prng.random_wrap(u_key, impl="fry"), (), dtype, 0.0, 1.0)
        return key, binary.mul(x, x), binary.mul(binary.mul(v, v), v), u

    key, subkey = split_words(words, 2)
    _, _, v, _ = while_loop(rejected, propose, (key, zero, one, two))
    sub = prng.random_wrap(subkey, impl="fry")
    if log_space:
        u = prng.uniform(sub, (), dtype, 0.0, 1.0)
        # minus an exponential sample: -(-log1p(-u)), negated twice as JAX computes it
        log_samples = elementwise.neg(elementwise.neg(elementwise.log1p(elementwise.neg(u))))
        no_boost = bitwise.or_(boost_mask, comparison.eq(log_samples, zero))
        log_boost = selection.select(
            no_boost, zero, binary.mul(log_samples, binary.div(one, alpha_orig))
        )
        return binary.add(binary.add(elementwise.log(d), elementwise.log(v)), log_boost)
    samples = binary.sub(one, prng.uniform(sub, (), dtype, 0.0, 1.0))
    boost = selection.select(boost_mask, one, binary.pow(samples, binary.div(one, alpha_orig)))
    return binary.mul(binary.mul(d, v), boost)


def _gamma_words(words, a, *, log_space: bool):
    """Samples of the shape of `a`: each key (words `K + (2,)`) split into one key per element
    of `a` past the keys' dimensions, each element's rejection loop run by `vmap`."""
    keys_shape, a_shape = shape_of(words)[:-1], shape_of(a)
    if not math.prod(a_shape):
        return a
    count = math.prod(a_shape[len(keys_shape) :])
    typed = prng.random_wrap(words, impl="fry")
    keys = prng.random_unwrap(prng.random_split(typed, (count,)))
    keys = shapes.reshape(keys, (math.prod(a_shape), 2))
    alphas = shapes.reshape(a, (math.prod(a_shape),))
    (samples,), (dim,) = vmap_flat(
        lambda w, al: [_gamma_one(w, al, log_space=log_space)],
        [keys, alphas],
        [0, 0],
        math.prod(a_shape),
    )
    if dim is None:  # every element alike: the loop did not depend on the batch
        samples = shapes.broadcast_in_dim(samples, (math.prod(a_shape),), ())
    return shapes.reshape(samples, a_shape)


# --- random_gamma -----------------------------------------------------------------------------
random_gamma_p = Primitive("random_gamma")


def random_gamma(keys, a, *, log_space: bool = False):
    """Gamma(a, 1) samples (their logs for `log_space`), of `a`'s shape, from the typed keys
    `keys` (whose shape is a prefix of `a`'s)."""
    return random_gamma_p.bind(keys, a, log_space=log_space)


random_gamma_p.def_impl(prng.words_impl(_gamma_words, returns_keys=False))


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(keys, a, *, log_space):
    if keys.dtype != dtypes.key_fry:
        raise TypeError(f"random_gamma accepts a typed key array, got {keys.str_short()}")
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma requires a floating-point a, got {a.str_short()}")
    if a.shape[: len(keys.shape)] != keys.shape:
        raise TypeError(
            f"random_gamma: the keys' shape {keys.shape} must be a prefix of a's {a.shape}"
        )
    return ShapedArray(a.shape, a.dtype)


def _random_gamma_jvp(primals, tangents, *, log_space):
    keys, a = primals
    a_dot = tangents[1]
    sample = random_gamma_p.bind(keys, a, log_space=log_space)
    if type(a_dot) is Zero:
        return sample, Zero.from_primal_value(sample)
    if log_space:  # d log(x) = dx / x, with x = exp(log x) kept above 0
        x = elementwise.exp(sample)
        tiny = dtypes.finfo(get_aval(a).dtype).tiny
        x = selection.select(comparison.eq(x, _const(x, 0)), _full_like(x, tiny), x)
        grad = binary.div(random_gamma_grad(a, x), x)
    else:
        grad = random_gamma_grad(a, sample)
    return sample, binary.mul(a_dot, grad)


ad.jvp_rules[random_gamma_p] = _random_gamma_jvp
lowering_rules[random_gamma_p] = prng.words_lowering(_gamma_words)
takes_key_words(random_gamma_p)


def _random_gamma_batch(values, dims, *, log_space):
    (keys, a), (keys_dim, a_dim) = values, dims
    size = shape_of(keys)[keys_dim] if keys_dim is not None else shape_of(a)[a_dim]
    if keys_dim is None:  # the same keys for every member: broadcast as words
        words = batch_at_front(prng.random_unwrap(keys), None, size)
        keys = prng.random_wrap(words, impl="fry")
    else:
        keys = prng.keys_at_front(keys, keys_dim)
    return random_gamma_p.bind(keys, batch_at_front(a, a_dim, size), log_space=log_space), 0


batch_rules[random_gamma_p] = _random_gamma_batch


# --- random_gamma_grad ----------------------------------------------------------------------
# The derivative of a Gamma(a) sample x in a: -(dF/da)(a, x) / (dF/dx)(a, x) for the Gamma CDF
# F(a, x) = P(a, x). With ax = x**a exp(-x) / Gamma(a), both series give P as ax times a sum;
# the derivative of that sum in a is carried along (`dans_da`). Each loop runs on whole arrays:
# `enabled` freezes the elements that converged.


def _any(predicate):
    return reductions.reduce_or(predicate, tuple(range(len(shape_of(predicate)))))


def _igamma_series_sample_derivative(x, a, enabled):
    """-(dP/da) / (dP/dx) by P's power series (x <= 1 or x <= a)."""
    eps = _const(x, dtypes.finfo(get_aval(x).dtype).eps)

    def body(vals):
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = add(r, _const(r, 1.0))
        dc_da = sub(mul(dc_da, div(x, r)), div(mul(c, x), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        c = mul(c, div(x, r))
        ans = add(ans, c)
        going = and_(enabled, comparison.gt(abs_(div(dc_da, dans_da)), eps))
        new = (r, c, ans, x, dc_da, dans_da)
        return (going, *(select(enabled, n, o) for n, o in zip(new, vals[1:], strict=True)))

    ones, zeros = _full_like(a, 1), _full_like(a, 0)
    vals = while_loop(lambda v: _any(v[0]), body, (enabled, a, ones, ones, x, zeros, zeros))
    ans, dans_da = vals[3], vals[6]
    dlogax_da = sub(log(x), special.digamma(add(a, _const(a, 1))))
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _igammac_fraction_step(vals, eps):
    """One step of the continued fraction of Q, its derivative in a carried along."""
    (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2) = vals[:10]
    dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da = vals[10:]
    c = add(c, _const(c, 1))
    y = add(y, _const(y, 1))
    z = add(z, _const(z, 2))
    yc = mul(y, c)
    pk = sub(mul(pkm1, z), mul(pkm2, yc))
    qk = sub(mul(qkm1, z), mul(qkm2, yc))
    qk_is_nonzero = comparison.ne(qk, _const(qk, 0))
    r = div(pk, qk)
    t = select(qk_is_nonzero, abs_(div(sub(ans, r), r)), _full_like(r, 1))
    ans = select(qk_is_nonzero, r, ans)
    dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, c))
    dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, c))
    dans_da_new = select(qk_is_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
    grad_conditional = select(qk_is_nonzero, abs_(sub(dans_da_new, dans_da)), _full_like(r, 1))
    pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
    dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
    rescale = comparison.gt(abs_(pk), div(_const(pk, 1), eps))
    pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
        select(rescale, mul(v, eps), v)
        for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)
    )
    going = and_(enabled, comparison.gt(grad_conditional, eps))
    new = (ans, t, y, z, None, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)
    new += (dans_da_new,)
    # the step count `c` (a scalar) advances for every element; the rest only where enabled
    kept = [c if n is None else select(enabled, n, o) for n, o in zip(new, vals[1:], strict=True)]
    return (going, *kept)


def _igammac_fraction_sample_derivative(x, a, enabled):
    """The same by the continued fraction of Q = 1 - P (x > 1 and x > a), negated; at most
    2000 steps."""
    eps = _const(x, dtypes.finfo(get_aval(x).dtype).eps)
    y = sub(_const(a, 1), a)
    z = add(add(x, y), _const(x, 1))
    pkm1 = add(x, _const(x, 1))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    zeros = _full_like(x, 0)
    dqkm1_da = neg(x)
    dans_da = div(sub(zeros, mul(ans, dqkm1_da)), qkm1)
    init = (enabled, ans, _full_like(x, 1), y, z, _const(x, 0), pkm1, qkm1, _full_like(x, 1), x)
    init += (zeros, zeros, zeros, dqkm1_da, dans_da)
    vals = while_loop(
        lambda v: and_(comparison.lt(v[5], _const(v[5], 2000)), _any(v[0])),
        lambda v: _igammac_fraction_step(v, eps),
        init,
    )
    dlogax_da = sub(log(x), special.digamma(a))
    return mul(neg(add(vals[14], mul(vals[1], dlogax_da))), x)


def _gamma_grad_values(a, x):
    """JAX's `random_gamma_grad_impl`: the series or the continued fraction, NaN outside the
    domain (x < 0 or a <= 0), 0 at x = 0."""
    is_nan = or_(comparison.ne(a, a), comparison.ne(x, x))
    x_is_zero = comparison.eq(x, _const(x, 0))
    domain_error = or_(comparison.lt(x, _const(x, 0)), comparison.le(a, _const(a, 0)))
    use_igammac = and_(comparison.gt(x, _const(x, 1)), comparison.gt(x, a))
    ax = sub(sub(mul(a, log(x)), x), special.lgamma(a))
    largest = _const(ax, dtypes.finfo(get_aval(a).dtype).max)
    underflow = comparison.lt(ax, neg(log(largest)))
    enabled = not_(or_(or_(or_(x_is_zero, domain_error), underflow), is_nan))
    output = select(
        use_igammac,
        neg(_igammac_fraction_sample_derivative(x, a, and_(enabled, use_igammac))),
        _igamma_series_sample_derivative(x, a, and_(enabled, not_(use_igammac))),
    )
    output = select(x_is_zero, _full_like(output, 0), output)
    return select(or_(domain_error, is_nan), _full_like(a, np.nan), output)


@functools.lru_cache(maxsize=64)
def _staged_grad(aval: ShapedArray):
    return trace_to_jaxpr(
        lambda a, x: [_gamma_grad_values(a, x)],
        [aval, aval],
        DebugInfo(random_gamma_grad, "random_gamma_grad"),
    )


random_gamma_grad_p = Primitive("random_gamma_grad")


def random_gamma_grad(a, x):
    """The derivative in `a` of the Gamma(a) sample `x`, elementwise (same shapes and float
    dtypes)."""
    return random_gamma_grad_p.bind(a, x)


@random_gamma_grad_p.def_impl
def _random_gamma_grad_impl(a, x):
    closed = _staged_grad(ShapedArray(a.shape, a.dtype))
    return eval_jaxpr_numpy(closed.jaxpr, closed.consts, [a, x])[0]


@random_gamma_grad_p.def_abstract_eval
def _random_gamma_grad_abstract_eval(a, x):
    if a.shape != x.shape or a.dtype != x.dtype or not dtypes.is_float(a.dtype):
        raise TypeError(
            "random_gamma_grad requires floating-point operands of one shape and dtype, got "
            f"{a.str_short()} and {x.str_short()}"
        )
    return ShapedArray(a.shape, a.dtype)


ad.not_differentiable(
    random_gamma_grad_p,
    "JAX differentiates its series, whose while loops only forward mode goes through; "
    "second derivatives of gamma samples are not built",
)


def _random_gamma_grad_lowering(ctx, a, x):
    closed = _staged_grad(ctx.avals_in[0].strip_weak_type())
    return ctx.lower_sub_jaxpr(ctx.block, closed, [a, x])[0]


lowering_rules[random_gamma_grad_p] = _random_gamma_grad_lowering
batch_rules[random_gamma_grad_p] = broadcasting.broadcasting_batch_rule(random_gamma_grad_p)
