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
convergence with the derivative carried along, as JAX computes it (the expansions of
`lax/control_flow/incomplete.py`).

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
    selection,
    shapes,
)
from tracejit._src.lax.control_flow import incomplete
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
# F(a, x) = P(a, x), by the series of P or the continued fraction of Q that `igamma` sums, in
# their SAMPLE_DERIVATIVE mode (`lax/control_flow/incomplete.py`).


def _gamma_grad_values(a, x):
    return incomplete.incomplete_gamma_derivative(a, x, incomplete.IgammaMode.SAMPLE_DERIVATIVE)


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


def _random_gamma_grad_jvp(primals, tangents):
    """Forward mode through the series, as JAX differentiates them: second derivatives of
    samples by `jacfwd`, while reverse mode meets the series' while loops (JAX's error too)."""
    outs, out_dots = ad.jvp_flat(lambda a, x: [_gamma_grad_values(a, x)], primals, tangents)
    return outs[0], out_dots[0]


ad.jvp_rules[random_gamma_grad_p] = _random_gamma_grad_jvp


def _random_gamma_grad_lowering(ctx, a, x):
    closed = _staged_grad(ctx.avals_in[0].strip_weak_type())
    return ctx.lower_sub_jaxpr(ctx.block, closed, [a, x])[0]


lowering_rules[random_gamma_grad_p] = _random_gamma_grad_lowering
batch_rules[random_gamma_grad_p] = broadcasting.broadcasting_batch_rule(random_gamma_grad_p)
