"""The confluent and Gauss hypergeometric functions `hyp1f1` and `hyp2f1` of real operands, as
JAX computes them (Pearson, Olver and Porter, "Numerical methods for the computation of the
confluent and Gauss hypergeometric functions", 2014, arXiv:1407.7786).

Each is an elementwise function (`vectorize`) of loops that stop at machine precision or after
250 terms:

- 1F1 sums its Taylor series for |x| < 100 and the asymptotic series in 1/x beyond; a = 0 gives
  1, a = b gives e^x and b = 0 gives inf (JAX's convention: 1 also for a = b = 0).
- 2F1 sums its Taylor series, which terminates when a or b is a non-positive integer; near
  x = 1 (x > 0.9) it uses the digamma transformation (AMS 55, 15.3.10-12); for c - a - b <= -1
  Euler's transformation s^(c-a-b) 2F1(c-a, c-b; c; x) with s = 1 - x; the closed forms
  (1-x)^(-a) for b = c, Gauss's sum at x = 1, and inf at poles and for x > 1.

Their derivatives in every parameter are the series of the parameter derivatives of the terms
(digamma differences), and in x the contiguous function: a/b 1F1(a+1; b+1; x) and
ab/c 2F1(a+1, b+1; c+1; x) (custom JVPs, as JAX's). Values that grow large lose precision in
float32, as in JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax.control_flow.conditionals import cond
from tracejit._src.lax.control_flow.loops import fori_loop, while_loop
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.arithmetic import remainder
from tracejit._src.numpy.lib_vectorize import vectorize
from tracejit._src.numpy.promotion import asarray_operand, promote_args_inexact
from tracejit._src.scipy.special import digamma, gamma

where, abs_, exp = jnp_ufuncs.where, jnp_ufuncs.abs, jnp_ufuncs.exp

_MAX_TERMS = 250


def _const(x, value):
    return np.asarray(value, dtype=x.dtype)


def _primals(name, *args):
    """A custom rule's primals as Arrays of their common inexact dtype."""
    return promote_args_inexact(name, *[asarray_operand(name, x) for x in args])


def _sum_series(first_term, ratio, weight=None):
    """sum_k w_k t_k over k >= 1, with t_1 = `first_term`, t_{k+1} = t_k ratio(k) and weight
    w_k = weight(k) (1 without one, where the sum starts from the k = 0 term 1), until a term
    falls below machine precision relative to the sum, or after 250 terms."""
    eps = _const(first_term, dtypes.finfo(first_term.dtype).eps)
    one = _const(first_term, 1.0)
    start = one if weight is None else _const(first_term, 0.0)

    def body(state):
        total, k, term = state
        total = total + (term if weight is None else term * weight(k))
        return total, k + one, term * ratio(k)

    def not_converged(state):
        total, k, term = state
        return (k < _const(k, _MAX_TERMS)) & (abs_(term) / abs_(total) > eps)

    return while_loop(not_converged, body, (start, one, first_term))[0]


# --- hyp1f1 -----------------------------------------------------------------------------------


def hyp1f1(a, b, x):
    r"""Confluent hypergeometric function
    :math:`{}_1F_1(a; b; x) = \sum_k \frac{(a)_k}{(b)_k k!} x^k` of real operands (1 for
    a = b = 0, unlike SciPy)."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    return _hyp1f1(a, b, x)


def _hyp1f1_taylor(a, b, x):
    return _sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1))


def _hyp1f1_asymptotic(a, b, x):
    one = _const(x, 1.0)
    total = _sum_series(
        (b - a) * (one - a) / x, lambda k: (b - a + k) * (one - a + k) / (k + 1) / x
    )
    return gamma(b) / gamma(a) * exp(x) * x ** (a - b) * total


@vectorize
def _hyp1f1_elementwise(a, b, x):
    value = cond(abs_(x) < _const(x, 100), _hyp1f1_taylor, _hyp1f1_asymptotic, a, b, x)
    zero = _const(x, 0.0)
    case = (
        (a == zero).astype(np.int32)
        + ((a == b) & (a != zero)).astype(np.int32) * 2
        + ((b == zero) & (a != zero)).astype(np.int32) * 3
    )
    return lax_selection.select_n(case, value, _const(x, 1.0), exp(x), _const(x, np.inf))


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_elementwise(a, b, x)


@vectorize
def _hyp1f1_a_derivative(a, b, x):
    return _sum_series(
        a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), lambda k: digamma(a + k) - digamma(a)
    )


@vectorize
def _hyp1f1_b_derivative(a, b, x):
    return _sum_series(
        a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), lambda k: digamma(b) - digamma(b + k)
    )


def _hyp1f1_jvp(primals, tangents):
    a, b, x = _primals("hyp1f1", *primals)
    da, db, dx = tangents
    one = _const(x, 1.0)
    slopes = (
        _hyp1f1_a_derivative(a, b, x),
        _hyp1f1_b_derivative(a, b, x),
        a / b * _hyp1f1(a + one, b + one, x),
    )
    out = _hyp1f1(a, b, x)
    tangent = sum(s * t for s, t in zip(slopes, (da, db, dx), strict=True))
    return out, tangent.astype(out.dtype)


_hyp1f1.defjvp(_hyp1f1_jvp)


# --- hyp2f1 -----------------------------------------------------------------------------------


def hyp2f1(a, b, c, x):
    r"""Gauss hypergeometric function
    :math:`{}_2F_1(a, b; c; x) = \sum_k \frac{(a)_k (b)_k}{(c)_k k!} x^k` of real operands (inf
    for x > 1 and at the poles c = 0, -1, ...)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)


def _near_integer(v):
    return abs_(v - jnp_ufuncs.round(v)) < _const(v, 50 * dtypes.finfo(v.dtype).eps)


def _is_pole(c):
    return (c == _const(c, 0)) | ((c < _const(c, 0)) & (remainder(c, _const(c, 1)) == _const(c, 0)))


def _hyp2f1_terminal(a, b, c, x):
    """The finite Taylor series when a or b is a non-positive integer, summed to the larger
    (in magnitude) of them that does not pass a pole c."""
    one = _const(x, 1.0)
    swap = (b < a) & _near_integer(b) & ~(_is_pole(c) & (c > b))
    a, b = where(swap, b, a), where(swap, a, b)
    a = abs_(a)

    def body(i, state):
        total, term = state
        term = term * (-(a - i + one) / (c + i - one) * (b + i - one) / i * x)
        return total + term, term

    return fori_loop(one, a + one, body, (one, one))[0]


def _hyp2f1_taylor(a, b, c, x):
    one = _const(x, 1.0)
    eps = _const(x, dtypes.finfo(x.dtype).eps)

    def body(state):
        total, k, term = state
        return total + term, k + one, term * ((a + k - one) * (b + k - one) / (c + k - one) / k * x)

    def not_converged(state):
        total, k, term = state
        return (k < _const(k, _MAX_TERMS)) & (abs_(term) > eps * abs_(total))

    return while_loop(not_converged, body, (_const(x, 0.0), one, one))[0]


def _hyp2f1_digamma_series(a, b, e, d1, s):
    """The logarithmic series of the digamma transformation (AMS 55, 15.3.10-12) for
    integer c - a - b = +-e."""
    one = _const(s, 1.0)
    eps = _const(s, dtypes.finfo(s.dtype).eps)
    log_s = jnp_ufuncs.log(s)
    y = digamma(one) + digamma(one + e) - digamma(a + d1) - digamma(b + d1) - log_s
    y = y / gamma(e + one)
    p = (a + d1) * (b + d1) * s / gamma(e + 2 * one)

    def body(state):
        p, _, t, y = state
        r = digamma(one + t) + digamma(one + t + e) - digamma(a + t + d1) - digamma(b + t + d1)
        q = p * (r - log_s)
        p = p * s * (a + t + d1) / (t + one) * (b + t + d1) / (t + one + e)
        return p, q, t + one, y + q

    def not_converged(state):
        _, q, t, y = state
        return (t < _const(t, _MAX_TERMS)) & (abs_(q) >= eps * abs_(y))

    return while_loop(not_converged, body, (p, y, one, y))[3]


def _hyp2f1_digamma_transform(a, b, c, x):
    zero, one = _const(x, 0.0), _const(x, 1.0)
    d = c - a - b
    s = one - x
    rd = jnp_ufuncs.round(d)
    nonnegative = rd >= zero
    e = where(nonnegative, d, -d)
    d1, d2 = where(nonnegative, d, zero), where(nonnegative, zero, d)
    order = where(nonnegative, rd, -rd).astype(np.int32)
    y = _hyp2f1_digamma_series(a, b, e, d1, s)

    def finite_body(i, state):
        p, t, y1 = state
        p = p * s * (a + t + d2) * (b + t + d2) / (one - e + t)
        t = t + one
        p = p / t
        return p, t, y1 + p

    y1 = fori_loop(np.int32(1), order, finite_body, (one, zero, one))[2]
    gamma_c = gamma(c)
    y1 = y1 * gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1))
    y_scaled = y * gamma_c / (gamma(a + d2) * gamma(b + d2))
    y_scaled = where((order & np.int32(1)) != np.int32(0), -y_scaled, y_scaled)
    q = s**rd
    summed = where(rd > zero, y_scaled * q + y1, y_scaled + y1 * q)
    return where(rd == zero, y * gamma_c / (gamma(a) * gamma(b)), summed)


def _hyp2f1_terminal_or_taylor(a, b, c, x):
    zero = _const(x, 0.0)
    d = c - a - b
    terminates = ((a <= zero) & _near_integer(a)) | ((b <= zero) & _near_integer(b))
    near_one = (x > _const(x, 0.9)) & ~terminates
    case = where(near_one, where(_near_integer(d), 1, 0), where(terminates, 2, 0))
    return lax_selection.select_n(
        case.astype(np.int32),
        _hyp2f1_taylor(a, b, c, x),
        _hyp2f1_digamma_transform(a, b, c, x),
        _hyp2f1_terminal(a, b, c, x),
    )


def _hyp2f1_case(a, b, c, x):
    """Which of `_hyp2f1_elementwise`'s seven values applies, in JAX's order of precedence."""
    zero, one = _const(x, 0.0), _const(x, 1.0)
    d = c - a - b
    cases = [
        (x == zero) | (((a == zero) | (b == zero)) & (c != zero)),
        _is_pole(c),
        (d <= -one) & ~(~_near_integer(d) & (x > one)),
        (d <= zero) & (x == one),
        (x < one) & (b == c),
        (x < one) & (a == c),
        x > one,
        x == one,
    ]
    values = [0, 1, 2, 1, 3, 4, 1, 5]
    case = np.int32(6)
    for where_case, value in reversed(list(zip(cases, values, strict=True))):
        case = where(where_case, np.int32(value), case)
    return case


@vectorize
def _hyp2f1_elementwise(a, b, c, x):
    one = _const(x, 1.0)
    d, s = c - a - b, one - x
    return lax_selection.select_n(
        _hyp2f1_case(a, b, c, x),
        one,
        _const(x, np.inf),
        s**d * _hyp2f1_terminal_or_taylor(c - a, c - b, c, x),
        s ** (-a),
        s ** (-b),
        gamma(c) * gamma(d) / (gamma(c - a) * gamma(c - b)),
        _hyp2f1_terminal_or_taylor(a, b, c, x),
    )


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_elementwise(a, b, c, x)


def _hyp2f1_parameter_derivative(weight):
    """The series of d/dp 2F1 for the parameter p whose term weights `weight` gives."""

    @vectorize
    def derivative(a, b, c, x):
        one = _const(x, 1.0)
        ratio = lambda k: (a + k) * (b + k) / (c + k) / (k + one) * x
        return _sum_series(a * b / c * x, ratio, lambda k: weight(a, b, c, k))

    return derivative


_HYP2F1_PARAMETER_DERIVATIVES = (
    _hyp2f1_parameter_derivative(lambda a, b, c, k: digamma(a + k) - digamma(a)),
    _hyp2f1_parameter_derivative(lambda a, b, c, k: digamma(b + k) - digamma(b)),
    _hyp2f1_parameter_derivative(lambda a, b, c, k: digamma(c) - digamma(c + k)),
)


def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = _primals("hyp2f1", *primals)
    one = _const(x, 1.0)
    slopes = [derivative(a, b, c, x) for derivative in _HYP2F1_PARAMETER_DERIVATIVES]
    slopes.append(a * b / c * _hyp2f1(a + one, b + one, c + one, x))
    out = _hyp2f1(a, b, c, x)
    tangent = sum(s * t for s, t in zip(slopes, tangents, strict=True))
    return out, tangent.astype(out.dtype)


_hyp2f1.defjvp(_hyp2f1_jvp)
