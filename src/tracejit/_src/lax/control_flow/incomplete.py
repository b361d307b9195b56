"""The incomplete gamma and beta functions: `igamma`, `igammac`, `igamma_grad_a` and
`regularized_incomplete_beta` (`lax.betainc`), one block each, computed by iteration as JAX
computes them.

XLA has no operation for them, so each is an algorithm written in lax operations whose
iterations are `while_loop`s (hence the module's place among the higher-order primitives),
staged once per operand types (`special.staged_algorithm`): eagerly its jaxpr is evaluated on
NumPy, compiled it is emitted inline, so both give JAX's values, edge cases included.

With ax = x^a e^-x / Gamma(a), the regularized lower incomplete gamma function P(a, x) is ax
times a power series (converging fast for x < a or x < 1), and Q = 1 - P is ax times a
continued fraction (fast for x > a and x > 1). Both carry their derivative in `a` along
(`DERIVATIVE` mode), which gives `igamma_grad_a`, and the implicit derivative of a Gamma sample
-(dP/da) / (dP/dx) (`SAMPLE_DERIVATIVE` mode), which `random_gamma_grad` uses. The incomplete
beta function I_x(a, b) is a continued fraction evaluated by the modified Lentz method, on x or
on 1 - x with a and b swapped, whichever converges fast (DLMF 8.17.22-23).

    c:f32[3] = igamma a b
"""

from __future__ import annotations

import enum
import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import (
    binary,
    bitwise,
    broadcasting,
    comparison,
    conversions,
    elementwise,
    reductions,
    selection,
    shapes,
    special,
)
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.lax.standard import elementwise_abstract_eval, is_float, weak_if_all_weak
from tracejit._src.lowering.lower import lowering_rules

# The algorithms read as formulas: lax's operations under short names.
add, sub, mul, div = binary.add, binary.sub, binary.mul, binary.div
neg, abs_, log, exp = elementwise.neg, elementwise.abs, elementwise.log, elementwise.exp
eq, ne, lt, le, gt, ge = (getattr(comparison, n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
and_, or_, not_, select = bitwise.and_, bitwise.or_, bitwise.not_, selection.select


def _const(x, value):
    return np.array(value, get_aval(x).dtype)


def _full_like(x, value):
    return shapes.broadcast_in_dim(_const(x, value), shape_of(x), ())


def _weak_like(x, value):
    """`value` in x's shape, dtype and weak type (a derivative of weakly typed operands stays
    weakly typed, as JAX's `full_like` keeps it)."""
    aval = get_aval(x)
    constant = conversions.convert_element_type_p.bind(
        np.array(value, aval.dtype), new_dtype=aval.dtype, weak_type=aval.weak_type
    )
    return broadcasting.broadcast_to_shape(constant, aval.shape)


def _is_nan(x):
    return ne(x, x)


def _any_of(*predicates):
    return functools.reduce(or_, predicates)


def _any(predicate):
    """Whether any element holds: a loop runs while any element has not converged."""
    return reductions.reduce_or(predicate, tuple(range(len(shape_of(predicate)))))


def _eps(x):
    return _const(x, dtypes.finfo(get_aval(x).dtype).eps)


def _log_ax(a, x):
    """log(x^a e^-x / Gamma(a)), the factor in front of both expansions of P and Q."""
    return sub(sub(mul(a, log(x)), x), special.lgamma(a))


def _underflows(log_ax):
    largest = dtypes.finfo(get_aval(log_ax).dtype).max
    return lt(log_ax, _const(log_ax, -np.log(largest)))


# --- the expansions of P and Q -----------------------------------------------------------------


class IgammaMode(enum.Enum):
    """What the expansions of P and Q return: the value, its derivative in a, or the
    derivative of a Gamma(a) sample x in a, -(dP/da) / (dP/dx)."""

    VALUE = 1
    DERIVATIVE = 2
    SAMPLE_DERIVATIVE = 3


def igamma_series(ax, x, a, enabled, mode: IgammaMode):
    """P(a, x) = ax / a * sum_n x^n / ((a + 1) ... (a + n)), with its derivative in a, summed
    until the terms fall below eps (of the value or of the derivative, as `mode` needs)."""
    eps = _eps(x)

    def body(vals):
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = add(r, _const(r, 1.0))
        dc_da = sub(mul(dc_da, div(x, r)), div(mul(c, x), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        c = mul(c, div(x, r))
        ans = add(ans, c)
        if mode == IgammaMode.VALUE:
            going = and_(enabled, gt(div(c, ans), eps))
        else:
            going = and_(enabled, gt(abs_(div(dc_da, dans_da)), eps))
        new = (r, c, ans, x, dc_da, dans_da)
        return (going, *(select(enabled, n, o) for n, o in zip(new, vals[1:], strict=True)))

    ones, zeros = _full_like(a, 1), _full_like(a, 0)
    vals = while_loop(lambda v: _any(v[0]), body, (enabled, a, ones, ones, x, zeros, zeros))
    ans, dans_da = vals[3], vals[6]
    if mode == IgammaMode.VALUE:
        return div(mul(ans, ax), a)
    dlogax_da = sub(log(x), special.digamma(add(a, _const(a, 1))))
    if mode == IgammaMode.DERIVATIVE:
        return div(mul(ax, add(mul(ans, dlogax_da), dans_da)), a)
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _igammac_fraction_step(vals, mode: IgammaMode):
    """One step of the continued fraction of Q (Cephes' igamc), its derivative in a carried
    along; numerators and denominators rescaled by eps before they overflow."""
    (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2) = vals[:10]
    dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da = vals[10:]
    eps = _eps(ans)
    c = add(c, _const(c, 1))
    y = add(y, _const(y, 1))
    z = add(z, _const(z, 2))
    yc = mul(y, c)
    pk = sub(mul(pkm1, z), mul(pkm2, yc))
    qk = sub(mul(qkm1, z), mul(qkm2, yc))
    qk_is_nonzero = ne(qk, _const(qk, 0))
    r = div(pk, qk)
    t = select(qk_is_nonzero, abs_(div(sub(ans, r), r)), _full_like(r, 1))
    ans = select(qk_is_nonzero, r, ans)
    dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, c))
    dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, c))
    dans_da_new = select(qk_is_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
    grad_conditional = select(qk_is_nonzero, abs_(sub(dans_da_new, dans_da)), _full_like(r, 1))
    pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
    dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
    rescale = gt(abs_(pk), div(_const(pk, 1), eps))
    pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
        select(rescale, mul(v, eps), v)
        for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)
    )
    if mode == IgammaMode.VALUE:
        going = and_(enabled, gt(t, eps))
    else:
        going = and_(enabled, gt(grad_conditional, eps))
    new = (ans, t, y, z, None, pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)
    new += (dans_da_new,)
    # the step count `c` (a scalar) advances for every element; the rest only where enabled
    kept = [c if n is None else select(enabled, n, o) for n, o in zip(new, vals[1:], strict=True)]
    return (going, *kept)


def igammac_continued_fraction(ax, x, a, enabled, mode: IgammaMode):
    """Q(a, x) = ax times a continued fraction (at most 2000 steps), or the derivatives that
    `mode` asks for (of Q: the callers negate them for P)."""
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
        lambda v: and_(lt(v[5], _const(v[5], 2000)), _any(v[0])),
        lambda v: _igammac_fraction_step(v, mode),
        init,
    )
    ans, dans_da = vals[1], vals[14]
    if mode == IgammaMode.VALUE:
        return mul(ans, ax)
    dlogax_da = sub(log(x), special.digamma(a))
    if mode == IgammaMode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), dans_da))
    return mul(neg(add(dans_da, mul(ans, dlogax_da))), x)


# --- igamma ------------------------------------------------------------------------------------
igamma_p = Primitive("igamma")


def igamma(a, x):
    r"""Elementwise regularized lower incomplete gamma function
    :math:`P(a, x) = \frac{1}{\Gamma(a)}\int_0^x t^{a-1} e^{-t}\,dt` (NaN for x < 0, a < 0,
    a = x = 0; 1 at x = inf)."""
    return igamma_p.bind(a, x)


def _igamma_values(a, x):
    x_is_zero, x_is_inf = eq(x, _const(x, 0)), eq(x, _const(x, np.inf))
    both_zero = and_(eq(a, _const(a, 0)), x_is_zero)
    negative = or_(lt(x, _const(x, 0)), lt(a, _const(a, 0)))
    domain_error = _any_of(negative, both_zero, _is_nan(a), _is_nan(x))
    use_igammac = and_(ge(x, _const(x, 1)), gt(x, a))
    log_ax = _log_ax(a, x)
    ax = exp(log_ax)
    enabled = not_(_any_of(x_is_zero, domain_error, _underflows(log_ax), x_is_inf))
    fraction = igammac_continued_fraction(ax, x, a, and_(enabled, use_igammac), IgammaMode.VALUE)
    series = igamma_series(ax, x, a, and_(enabled, not_(use_igammac)), IgammaMode.VALUE)
    out = select(use_igammac, sub(_const(a, 1), fraction), series)
    out = select(x_is_zero, _full_like(a, 0), out)
    out = select(x_is_inf, _full_like(a, 1), out)
    return select(domain_error, _full_like(a, np.nan), out)


_igamma_impl, _igamma_lowering = special.staged_algorithm(_igamma_values)
igamma_p.def_impl(_igamma_impl)
igamma_p.def_abstract_eval(elementwise_abstract_eval("igamma", is_float))
igamma_p.def_weak_type_rule(weak_if_all_weak)


def _igamma_jvp_a(t, a, x):
    return mul(t, igamma_grad_a(a, x))


def _igamma_jvp_x(t, a, x):
    return mul(t, exp(sub(add(neg(x), mul(sub(a, _weak_like(a, 1)), log(x))), special.lgamma(a))))


ad.defjvp(igamma_p, _igamma_jvp_a, _igamma_jvp_x)
lowering_rules[igamma_p] = _igamma_lowering
batch_rules[igamma_p] = broadcasting.broadcasting_batch_rule(igamma_p)

# --- igammac -----------------------------------------------------------------------------------
igammac_p = Primitive("igammac")


def igammac(a, x):
    r"""Elementwise regularized upper incomplete gamma function :math:`Q(a, x) = 1 - P(a, x)`,
    accurate where P is close to 1 (NaN for x < 0, a < 0, a = x = 0; 0 at x = inf or a = 0)."""
    return igammac_p.bind(a, x)


def _igammac_values(a, x):
    a_is_zero, x_is_inf = eq(a, _const(a, 0)), eq(x, _const(x, np.inf))
    both_zero = and_(a_is_zero, eq(x, _const(x, 0)))
    negative = or_(lt(x, _const(x, 0)), lt(a, _const(a, 0)))
    domain_error = _any_of(negative, both_zero, _is_nan(a), _is_nan(x))
    use_igamma = or_(lt(x, _const(x, 1)), lt(x, a))
    log_ax = _log_ax(a, x)
    ax = exp(log_ax)
    enabled = not_(_any_of(domain_error, _underflows(log_ax), x_is_inf, a_is_zero))
    series = igamma_series(ax, x, a, and_(enabled, use_igamma), IgammaMode.VALUE)
    fraction = igammac_continued_fraction(
        ax, x, a, and_(enabled, not_(use_igamma)), IgammaMode.VALUE
    )
    out = select(use_igamma, sub(_const(a, 1), series), fraction)
    out = select(or_(x_is_inf, a_is_zero), _full_like(out, 0), out)
    return select(domain_error, _full_like(a, np.nan), out)


_igammac_impl, _igammac_lowering = special.staged_algorithm(_igammac_values)
igammac_p.def_impl(_igammac_impl)
igammac_p.def_abstract_eval(elementwise_abstract_eval("igammac", is_float))
igammac_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp(
    igammac_p,
    lambda t, a, x: neg(_igamma_jvp_a(t, a, x)),
    lambda t, a, x: neg(_igamma_jvp_x(t, a, x)),
)
lowering_rules[igammac_p] = _igammac_lowering
batch_rules[igammac_p] = broadcasting.broadcasting_batch_rule(igammac_p)


# --- igamma_grad_a -----------------------------------------------------------------------------
igamma_grad_a_p = Primitive("igamma_grad_a")


def igamma_grad_a(a, x):
    r"""Elementwise derivative of :math:`P(a, x)` in `a` (NaN for x < 0 or a <= 0)."""
    return igamma_grad_a_p.bind(a, x)


def incomplete_gamma_derivative(a, x, mode: IgammaMode):
    """dP/da (`DERIVATIVE`) or the derivative of a Gamma(a) sample x (`SAMPLE_DERIVATIVE`): the
    series or the continued fraction, NaN outside the domain (x < 0 or a <= 0), 0 at x = 0."""
    is_nan = or_(_is_nan(a), _is_nan(x))
    x_is_zero = eq(x, _const(x, 0))
    domain_error = or_(lt(x, _const(x, 0)), le(a, _const(a, 0)))
    use_igammac = and_(gt(x, _const(x, 1)), gt(x, a))
    log_ax = _log_ax(a, x)
    ax = exp(log_ax)
    enabled = not_(_any_of(x_is_zero, domain_error, _underflows(log_ax), is_nan))
    fraction = igammac_continued_fraction(ax, x, a, and_(enabled, use_igammac), mode)
    series = igamma_series(ax, x, a, and_(enabled, not_(use_igammac)), mode)
    out = select(use_igammac, neg(fraction), series)
    out = select(x_is_zero, _full_like(out, 0), out)
    return select(or_(domain_error, is_nan), _full_like(a, np.nan), out)


def _igamma_grad_a_values(a, x):
    return incomplete_gamma_derivative(a, x, IgammaMode.DERIVATIVE)


_igamma_grad_a_impl, _igamma_grad_a_lowering = special.staged_algorithm(_igamma_grad_a_values)
igamma_grad_a_p.def_impl(_igamma_grad_a_impl)
igamma_grad_a_p.def_abstract_eval(elementwise_abstract_eval("igamma_grad_a", is_float))
igamma_grad_a_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(
    igamma_grad_a_p,
    "JAX defines no derivative of igamma's derivative in a (nor of igamma's "
    "second derivative in a)",
)
lowering_rules[igamma_grad_a_p] = _igamma_grad_a_lowering
batch_rules[igamma_grad_a_p] = broadcasting.broadcasting_batch_rule(igamma_grad_a_p)


# --- regularized_incomplete_beta ---------------------------------------------------------------
regularized_incomplete_beta_p = Primitive("regularized_incomplete_beta")


def betainc(a, b, x):
    r"""Elementwise regularized incomplete beta function
    :math:`I_x(a, b) = \frac{1}{B(a, b)}\int_0^x t^{a-1}(1-t)^{b-1}\,dt` (NaN outside
    0 <= x <= 1 or for negative a, b; differentiable in x only, as in JAX)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def _lentz(numerator, denominator, num_iterations: int, tiny):
    """The continued fraction b0 + a1 / (b1 + a2 / (b2 + ...)) by the modified Lentz method,
    `numerator(n)`/`denominator(n)` giving a_n/b_n; stops once every element's last factor is
    within `tiny` of 1, or after `num_iterations` steps."""

    def step(vals):
        n, _, c, d, h = vals
        a_n, b_n = numerator(n), denominator(n)
        c = add(b_n, div(a_n, c))
        c = select(lt(abs_(c), tiny), _full_like(c, tiny), c)
        d = add(b_n, mul(a_n, d))
        d = div(_const(d, 1), select(lt(abs_(d), tiny), _full_like(d, tiny), d))
        delta = mul(c, d)
        unconverged = _any(ge(abs_(sub(delta, _const(delta, 1))), tiny))
        return add(n, np.int32(1)), unconverged, c, d, mul(h, delta)

    b_0 = denominator(np.int32(0))
    h = select(lt(abs_(b_0), tiny), _full_like(b_0, tiny), b_0)
    init = (np.int32(1), np.bool_(True), h, _full_like(h, 0), h)
    return while_loop(lambda v: and_(lt(v[0], np.int32(num_iterations)), v[1]), step, init)[4]


def _betainc_fraction(a, b, x):
    """The continued fraction of DLMF 8.17.22: a_1 = 1, a_{2m+1} = m (b - m) x /
    ((a + 2m - 1)(a + 2m)), a_{2m+2} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)); b_0 = 0,
    b_n = 1 for n > 0."""
    one, two = _full_like(a, 1), _full_like(a, 2)

    def numerator(n):
        dtype = get_aval(x).dtype
        m = conversions.convert_element_type(div(sub(n, np.int32(1)), np.int32(2)), dtype)
        even = select(
            eq(m, _const(m, 0)),
            div(mul(neg(add(a, b)), x), add(a, one)),  # more accurate for a near zero
            div(
                mul(mul(neg(add(a, m)), add(add(a, b), m)), x),
                mul(add(a, mul(two, m)), add(add(a, mul(two, m)), one)),
            ),
        )
        odd = div(
            mul(mul(m, sub(b, m)), x), mul(sub(add(a, mul(two, m)), one), add(a, mul(two, m)))
        )
        out = select(eq(binary.rem(n, np.int32(2)), np.int32(0)), even, odd)
        return select(eq(n, np.int32(1)), _full_like(x, 1), out)

    def denominator(n):
        return select(eq(n, np.int32(0)), _full_like(x, 0), _full_like(x, 1))

    double = get_aval(x).dtype == np.float64
    tiny = _const(x, dtypes.finfo(get_aval(x).dtype).eps / 2)
    return _lentz(numerator, denominator, 600 if double else 200, tiny)


def _betainc_values(a, b, x):
    zero, one = _full_like(a, 0), _full_like(a, 1)
    a_is_zero = or_(eq(a, zero), eq(b, _const(b, np.inf)))
    b_is_zero = or_(eq(b, zero), eq(a, _const(a, np.inf)))
    x_is_zero, x_is_one = eq(x, zero), eq(x, one)
    result_is_zero = or_(and_(b_is_zero, not_(x_is_one)), and_(a_is_zero, x_is_zero))
    result_is_one = or_(and_(a_is_zero, not_(x_is_zero)), and_(b_is_zero, x_is_one))
    out_of_domain = _any_of(lt(a, zero), lt(b, zero), lt(x, zero), gt(x, one))
    is_nan = _any_of(_is_nan(a), _is_nan(b), _is_nan(x))
    result_is_nan = _any_of(out_of_domain, and_(a_is_zero, b_is_zero), is_nan)
    # The fraction converges fast for x < (a + 1) / (a + b + 2); elsewhere it is evaluated for
    # I_{1-x}(b, a) = 1 - I_x(a, b).
    direct = lt(x, div(add(a, one), add(add(a, b), _const(b, 2))))
    a, b = select(direct, a, b), select(direct, b, a)
    x = select(direct, x, sub(one, x))
    fraction = _betainc_fraction(a, b, x)
    # x^a (1 - x)^b / (a B(a, b)), with a Gamma(a) -> 1 as a -> 0 for tiny a
    lbeta_without_a = sub(special.lgamma(b), special.lgamma(add(a, b)))
    lbeta = add(special.lgamma(a), lbeta_without_a)
    log1p_neg_x = elementwise.log1p(neg(x))
    factor = select(
        lt(a, _const(a, dtypes.finfo(get_aval(a).dtype).tiny * 2)),
        exp(sub(mul(log1p_neg_x, b), lbeta_without_a)),
        div(exp(sub(add(mul(log(x), a), mul(log1p_neg_x, b)), lbeta)), a),
    )
    out = mul(fraction, factor)
    out = select(direct, out, sub(one, out))
    out = select(result_is_zero, zero, out)
    out = select(result_is_one, one, out)
    return select(result_is_nan, _full_like(a, np.nan), out)


_betainc_impl, _betainc_lowering = special.staged_algorithm(_betainc_values)
regularized_incomplete_beta_p.def_impl(_betainc_impl)
regularized_incomplete_beta_p.def_abstract_eval(
    elementwise_abstract_eval("regularized_incomplete_beta", is_float)
)
regularized_incomplete_beta_p.def_weak_type_rule(weak_if_all_weak)


def _betainc_jvp_a_b(t, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_jvp_x(t, a, b, x):
    lbeta = sub(add(special.lgamma(a), special.lgamma(b)), special.lgamma(add(a, b)))
    log_density = add(
        mul(sub(b, _weak_like(b, 1)), elementwise.log1p(neg(x))),
        mul(sub(a, _weak_like(a, 1)), log(x)),
    )
    return mul(exp(sub(log_density, lbeta)), t)


ad.defjvp(regularized_incomplete_beta_p, _betainc_jvp_a_b, _betainc_jvp_a_b, _betainc_jvp_x)
lowering_rules[regularized_incomplete_beta_p] = _betainc_lowering
batch_rules[regularized_incomplete_beta_p] = broadcasting.broadcasting_batch_rule(
    regularized_incomplete_beta_p
)
