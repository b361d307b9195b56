"""`tracejit.scipy.special`: SciPy's special functions over tracejit's primitives.

Most are the `lax.special` primitives (erf, lgamma, digamma, ...) behind SciPy's names, with
NumPy's promotion of integer input to floats. The others are composites whose care is all in
the edge cases:

- `xlogy`/`xlog1py` define 0 * log(0) = 0 (the convention entropy needs) with a `where`, and
  give their derivative by a custom rule, so that the unused branch's infinite slope cannot turn
  into NaN in the gradient.
- The normal CDF `ndtr` picks between `1 + erf` and `erfc` so that neither tail cancels;
  `log_ndtr` follows the asymptotic series for the far lower tail (where `ndtr` underflows to 0)
  and `-ndtr(-x)` for the upper tail (where `ndtr` rounds to 1); `ndtri` inverts it by Newton
  steps on `log_ndtr`, which keeps relative accuracy for tiny probabilities.

The normal-distribution functions accept only float32 and float64 (as in JAX): their segment
boundaries and series are tuned to those precisions.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import special as lax_special
from tracejit._src.lax.control_flow import incomplete as lax_incomplete
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.nn.functions import log_softmax as _nn_log_softmax
from tracejit._src.nn.functions import logsumexp
from tracejit._src.nn.functions import softmax as _nn_softmax
from tracejit._src.numpy import reductions
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.arithmetic import fmod
from tracejit._src.numpy.creation import zeros_like
from tracejit._src.numpy.promotion import asarray_operand, promote_args_inexact

where, log, log1p, exp = jnp_ufuncs.where, jnp_ufuncs.log, jnp_ufuncs.log1p, jnp_ufuncs.exp
abs_, sqrt, square = jnp_ufuncs.abs, jnp_ufuncs.sqrt, jnp_ufuncs.square


def _inexact(name, *args):
    return promote_args_inexact(name, *args)


def _real(name, x):
    """`_inexact` for functions of real values only, with JAX's error for complex ones."""
    (x,) = _inexact(name, x)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return (x,)


def _const(x, value):
    """A strongly typed constant of x's dtype (so results do not inherit a weak type)."""
    return np.asarray(value, dtype=x.dtype)


# --------------------------------------------------------------------------------------------
# The lax primitives under SciPy's names


def expit(x):
    r"""Logistic sigmoid :math:`1 / (1 + e^{-x})`."""
    (x,) = _inexact("expit", x)
    return lax_elementwise.logistic(x)


@custom_jvp
def _logit(x):
    return log(x / (1 - x))


# d/dx log(x / (1 - x)) = 1 / (x (1 - x)): +inf at 0 and 1 (where autodiff of the quotient
# would give NaN), -0 at +-inf.
_logit.defjvps(lambda t, ans, x: t / (x * (1 - x)))


def logit(x):
    r"""Inverse of `expit`: :math:`\log(x / (1 - x))` (-inf at 0, inf at 1, NaN outside)."""
    (x,) = _inexact("logit", x)
    return _logit(x)


def erf(x):
    r"""Error function :math:`\frac{2}{\sqrt\pi}\int_0^x e^{-t^2} dt`."""
    (x,) = _inexact("erf", x)
    return lax_special.erf(x)


def erfc(x):
    r"""Complementary error function :math:`1 - \mathrm{erf}(x)`, accurate in the upper tail."""
    (x,) = _inexact("erfc", x)
    return lax_special.erfc(x)


def erfinv(x):
    r"""Inverse error function on [-1, 1] (+-inf at +-1, NaN outside)."""
    (x,) = _inexact("erfinv", x)
    return lax_special.erf_inv(x)


def gammaln(x):
    r""":math:`\log|\Gamma(x)|`."""
    (x,) = _inexact("gammaln", x)
    return lax_special.lgamma(x)


def digamma(x):
    r"""Digamma :math:`\psi(x) = \frac{d}{dx}\log\Gamma(x)`."""
    (x,) = _inexact("digamma", x)
    return lax_special.digamma(x)


def polygamma(n, x):
    r"""Polygamma :math:`\psi^{(n)}(x)`, the n-th derivative of digamma; `n` must have an
    integer dtype (a non-integer order has no meaning here, and JAX refuses it)."""
    n_dtype = np.result_type(np.asarray(n).dtype if not hasattr(n, "dtype") else n.dtype)
    if not np.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = _inexact("polygamma", asarray_operand("polygamma", n), asarray_operand("polygamma", x))
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax_special.polygamma(n, x)


def gammainc(a, x):
    r"""Regularized lower incomplete gamma function
    :math:`P(a, x) = \frac{1}{\Gamma(a)}\int_0^x t^{a-1}e^{-t}\,dt` (`lax.igamma`)."""
    a, x = _inexact("gammainc", a, x)
    return lax_incomplete.igamma(a, x)


def gammaincc(a, x):
    r"""Regularized upper incomplete gamma function :math:`Q(a, x) = 1 - P(a, x)`
    (`lax.igammac`), accurate where P is close to 1."""
    a, x = _inexact("gammaincc", a, x)
    return lax_incomplete.igammac(a, x)


def betainc(a, b, x):
    r"""Regularized incomplete beta function
    :math:`I_x(a, b) = \frac{1}{B(a, b)}\int_0^x t^{a-1}(1-t)^{b-1}\,dt` (`lax.betainc`);
    differentiable in x only, as in JAX."""
    a, b, x = _inexact("betainc", a, b, x)
    if np.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax_incomplete.betainc(a, b, x)


def gammasgn(x):
    r"""The sign of :math:`\Gamma(x)`: 1 for x > 0 (and +0), alternating between the poles for
    x < 0 (-1 on (-1, 0), including -0), NaN at the poles (non-positive integers) and -inf."""
    (x,) = _real("gammasgn", x)
    floor_neg = jnp_ufuncs.floor(-x)
    odd = fmod(floor_neg, _const(x, 2)) != 0
    negative_sign = where(odd, _const(x, 1), _const(x, -1))
    is_pole = (x < 0) & (floor_neg == -x)
    out = where(x > 0, _const(x, 1), negative_sign)
    out = where(x == 0, where(jnp_ufuncs.signbit(x), _const(x, -1), _const(x, 1)), out)
    return where(is_pole | jnp_ufuncs.isnan(x), _const(x, np.nan), out)


def gamma(x):
    r""":math:`\Gamma(x)` as gammasgn(x) * exp(gammaln(x)) (inf at 0 with 0's sign, NaN at the
    negative poles, overflowing to inf above about 35 in float32); for complex x, the
    exponential of Lanczos' log Gamma (NaN at the poles)."""
    (x,) = _inexact("gamma", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        unsafe = _is_complex_pole(x) | jnp_ufuncs.isnan(x)
        value = exp(_lanczos_loggamma(where(unsafe, _const(x, 1.0), x)))
        return where(unsafe, _const(x, complex(np.nan, np.nan)), value)
    return gammasgn(x) * exp(lax_special.lgamma(x))


def factorial(n, exact=False):
    r""":math:`n! = \Gamma(n + 1)` for real n >= 0, 0 for n < 0. `exact=True` (integer
    arithmetic) is not supported, as in JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact("factorial", n)
    return where(n < 0, 0, exp(lax_special.lgamma(n + 1)))


def loggamma(x):
    r"""Principal branch of :math:`\log\Gamma(x)`: for real x, gammaln where x > 0 and NaN
    elsewhere; for complex x, SciPy's branch (one cut, along the negative real axis)."""
    (x,) = _inexact("loggamma", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return _complex_loggamma(x)
    return where(x > 0, lax_special.lgamma(x), np.nan)


# Lanczos (1964) with g = 7 and 9 terms, GSL's coefficients (specfunc/gamma.c, lanczos_7_c)
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
])  # fmt: skip


def _lanczos_loggamma(z):
    """log Gamma(z) of complex z by Lanczos' approximation, with the reflection formula for
    Re z < 1/2 (whose branch cuts are not SciPy's)."""
    reflect = jnp_ufuncs.real(z) < 0.5
    zz = where(reflect, 1.0 - z, z) - 1.0
    coeffs = _LANCZOS_COEFFS.astype(z.dtype)
    series = coeffs[0] + reductions.sum(
        coeffs[1:] / (zz[..., None] + np.arange(1, 9, dtype=z.dtype)), axis=-1
    )
    t = zz + _LANCZOS_G + 0.5
    lanczos = _const(z, 0.5 * np.log(2.0 * np.pi)) + (zz + 0.5) * log(t) - t + log(series)
    # a safe operand for the unused reflection, whose NaN would reach the gradient
    z_reflected = where(reflect, z, _const(z, 0.5))
    sine = jnp_ufuncs.sin(np.pi * z_reflected)
    return where(reflect, _const(z, np.log(np.pi)) - log(sine) - lanczos, lanczos)


def _is_complex_pole(z):
    real = jnp_ufuncs.real(z)
    return (jnp_ufuncs.imag(z) == 0) & (real == jnp_ufuncs.floor(real)) & (real <= 0)


def _complex_loggamma(z):
    """Shifted into the right half plane, log Gamma(z) = log Gamma(z + n) - sum log(z + k),
    which keeps SciPy's single cut; NaN at the poles 0, -1, ... and for NaN, as JAX."""
    unsafe = _is_complex_pole(z) | jnp_ufuncs.isnan(z)
    z = where(unsafe, _const(z, 1.0), z)
    n = jnp_ufuncs.maximum(0, jnp_ufuncs.ceil(0.5 - jnp_ufuncs.real(z)).astype(int))

    def shift(state):
        k, sum_log = state
        inside = k < n
        term = where(inside, log(where(inside, z + k, _const(z, 1.0))), _const(z, 0.0))
        return k + 1, sum_log + term

    start = (np.asarray(0, n.dtype), zeros_like(z))
    _, sum_log = while_loop(lambda state: reductions.any(state[0] < n), shift, start)
    return where(unsafe, _const(z, complex(np.nan, np.nan)), _lanczos_loggamma(z + n) - sum_log)


def comb(N, k, *, repetition=False):
    r"""The number of combinations of N things taken k at a time,
    :math:`\binom{N}{k} = \exp(\log\Gamma(N+1) - \log\Gamma(k+1) - \log\Gamma(N-k+1))`,
    in floating point (0 for N < 0, k < 0 or k > N; with `repetition`,
    :math:`\binom{N+k-1}{k}`)."""
    N, k = _inexact("comb", N, k)
    if repetition:
        return where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = where(valid, N, 0.0), where(valid, k, 0.0)
    log_comb = gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k)
    return where(valid, exp(log_comb), 0.0)


def multigammaln(a, d):
    r"""Log of the multivariate gamma function of dimension `d` (a Python integer):
    :math:`\frac{d(d-1)}{4}\log\pi + \sum_{j=0}^{d-1} \log\Gamma(a - j/2)`."""
    d = operator.index(d)
    (a,) = _inexact("multigammaln", a)
    out = _const(a, d * (d - 1) / 4 * np.log(np.pi))
    for j in range(d):
        out = out + lax_special.lgamma(a - _const(a, j / 2))
    return out


# Stirling's series: log Gamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + omega(x), with
# omega(x) = sum_k B_2k / (2k (2k - 1) x^(2k - 1)); five terms are accurate to ~2e-14 for
# x >= 10.
_STIRLING_MIN = 10.0
_STIRLING_COEFFS = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)
_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))


def _stirling_remainder(x):
    inv_x = 1.0 / x
    inv_x2 = inv_x * inv_x
    total = _STIRLING_COEFFS[-1]
    for c in reversed(_STIRLING_COEFFS[:-1]):
        total = total * inv_x2 + c
    return total * inv_x


def betaln(a, b):
    r""":math:`\log|B(a, b)| = \log|\Gamma(a)| + \log|\Gamma(b)| - \log|\Gamma(a + b)|`.

    That sum cancels catastrophically once a or b is large (each term grows like x log x while
    the result may be small), so with p = min(a, b), q = max(a, b), s = a + b: if q >= 10,
    Stirling's series turns log Gamma(q) - log Gamma(s) into
    :math:`(q - \tfrac12)\,\mathrm{log1p}(-p/s) - p \log s + p + \omega(q) - \omega(s)`, and
    if p >= 10 too, log Gamma(p) is expanded as well; small and negative arguments use the sum.
    """
    a, b = _inexact("betaln", a, b)
    p, q = jnp_ufuncs.minimum(a, b), jnp_ufuncs.maximum(a, b)
    direct = lax_special.lgamma(a) + lax_special.lgamma(b) - lax_special.lgamma(a + b)
    # Safe operands: the branches not taken must not produce NaN (their gradients would leak).
    large_q, large_p = (q >= _STIRLING_MIN) & (p > 0), p >= _STIRLING_MIN
    q_s = where(large_q, q, _STIRLING_MIN)
    p_s = where(large_q, p, 1.0)
    s = p_s + q_s
    log1p_term = (q_s - 0.5) * log1p(-p_s / s)
    gamma_q_over_s = (
        log1p_term - p_s * log(s) + p_s + _stirling_remainder(q_s) - _stirling_remainder(s)
    )
    one_large = lax_special.lgamma(p_s) + gamma_q_over_s
    p_l = where(large_p, p_s, _STIRLING_MIN)
    s_l = p_l + q_s
    both_large = (
        _HALF_LOG_2PI
        - 0.5 * log(s_l)
        + (p_l - 0.5) * log(p_l / s_l)
        + (q_s - 0.5) * log1p(-p_l / s_l)
        + _stirling_remainder(p_l)
        + _stirling_remainder(q_s)
        - _stirling_remainder(s_l)
    )
    return where(large_p, both_large, where(large_q, one_large, direct))


def beta(a, b):
    r"""Beta function :math:`B(a, b) = \Gamma(a)\Gamma(b)/\Gamma(a + b)`, as its sign (from
    `gammasgn`) times exp(betaln(a, b))."""
    a, b = _inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * exp(betaln(a, b))


# --------------------------------------------------------------------------------------------
# x log y with 0 log 0 = 0


@custom_jvp
def xlogy(x, y):
    r""":math:`x \log y`, defined as 0 where x = 0 (even for y = 0; but NaN for y = NaN), the
    convention entropy terms need.

    Its derivative is :math:`(\log y,\ x / y)`, given by a custom rule, as in JAX: at
    x = y = 0 that is (-inf, NaN).
    """
    x, y = _inexact("xlogy", x, y)
    return where((x != 0) | jnp_ufuncs.isnan(y), x * log(y), 0)


def _xlogy_jvp(primals, tangents):
    x, y = _inexact("xlogy", *primals)
    x_dot, y_dot = tangents
    out = xlogy(x, y)
    return out, (x_dot * log(y) + y_dot * x / y).astype(out.dtype)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
    r""":math:`x \log(1 + y)`, 0 where x = 0 (even for y = -1). Derivative
    :math:`(\log(1+y),\ x / (1 + y))` by a custom rule."""
    x, y = _inexact("xlog1py", x, y)
    return where((x != 0) | jnp_ufuncs.isnan(y), x * log1p(y), 0)


def _xlog1py_jvp(primals, tangents):
    x, y = _inexact("xlog1py", *primals)
    x_dot, y_dot = tangents
    out = xlog1py(x, y)
    return out, (x_dot * log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


# d/dx x log x = log x + 1: -inf at 0, where xlogy's rule would add 0 * (1/0) = NaN.
_xlogx.defjvps(lambda t, ans, x: t * (log(x) + 1))


def entr(x):
    r"""Elementwise entropy :math:`-x \log x` for x > 0, 0 at 0, -inf for x < 0 (NaN stays
    NaN). Its derivative :math:`-(\log x + 1)` is +inf at 0."""
    (x,) = _real("entr", x)
    return where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p, q):
    r"""Relative entropy term :math:`p \log(p / q)` for p, q > 0; 0 where p = 0 and q >= 0;
    inf elsewhere (including NaN p, as in JAX). Masked entries get zero gradient."""
    p, q = _inexact("rel_entr", p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p, safe_q = where(both_positive, p, 1.0), where(both_positive, q, 1.0)
    value = xlogy(safe_p, safe_p) - xlogy(safe_p, safe_q)
    return where(both_positive, value, where((p == 0) & (q >= 0), 0.0, np.inf))


def kl_div(p, q):
    r"""Kullback-Leibler divergence term :math:`p \log(p/q) - p + q` (`rel_entr` plus the
    terms that make it non-negative and its gradient in q one where p = 0)."""
    p, q = _inexact("kl_div", p, q)
    return rel_entr(p, q) - p + q


def boxcox(x, lmbda):
    r"""Box-Cox transform :math:`(x^\lambda - 1)/\lambda`, :math:`\log x` at
    :math:`\lambda = 0`; computed as expm1(lambda log x) / lambda, accurate for small lambda."""
    x, lmbda = _inexact("boxcox", x, lmbda)
    return _boxcox_of_log(log(x), lmbda)


def boxcox1p(x, lmbda):
    r"""Box-Cox transform of 1 + x, with log1p: accurate for small x."""
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(log1p(x), lmbda)


def _boxcox_of_log(log_x, lmbda):
    zero = lmbda == 0
    safe_lmbda = where(zero, 1.0, lmbda)
    return where(zero, log_x, jnp_ufuncs.expm1(safe_lmbda * log_x) / safe_lmbda)


# --------------------------------------------------------------------------------------------
# Softmax, SciPy's way: normalized over all axes unless told otherwise


def softmax(x, /, *, axis=None):
    r"""Softmax over `axis` (all axes by default, as in SciPy); see `tracejit.nn.softmax`."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    r"""Log-softmax over `axis` (all axes by default); see `tracejit.nn.log_softmax`."""
    return _nn_log_softmax(x, axis=axis)


# --------------------------------------------------------------------------------------------
# The normal distribution


def _normal_operand(name, x):
    """`x` as float32/float64; other dtypes (integers, half precision) are refused, as in JAX,
    because the segments and series below are tuned to those two precisions."""
    x = asarray_operand(name, x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: x.dtype={x.dtype} is not supported; use float32 or float64.")
    return x


def _ndtr(x):
    # With z = x / sqrt2: Phi(x) = (1 + erf(z)) / 2 near 0; in the tails erfc avoids the
    # cancellation of 1 + erf(z) (lower tail) and rounds correctly to 1 (upper tail).
    z = x * _const(x, 1 / np.sqrt(2))
    abs_z = abs_(z)
    y = where(
        abs_z < _const(x, 1 / np.sqrt(2)),
        _const(x, 1) + lax_special.erf(z),
        where(z > 0, _const(x, 2) - lax_special.erfc(abs_z), lax_special.erfc(abs_z)),
    )
    return _const(x, 0.5) * y


def ndtr(x):
    r"""Standard normal CDF :math:`\Phi(x) = \frac{1}{2}(1 + \mathrm{erf}(x/\sqrt2))`
    (float32/float64 only)."""
    return _ndtr(_normal_operand("ndtr", x))


def _log_ndtr_lower(x, series_order):
    """log Phi(x) for very negative x from the asymptotic series
    Phi(x) ~ exp(-x^2/2) / (-x sqrt(2 pi)) * (1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    x_2 = square(x)
    log_scale = -_const(x, 0.5) * x_2 - log(-x) - _const(x, 0.5 * np.log(2 * np.pi))
    even_sum, odd_sum = _const(x, 0), _const(x, 0)
    x_2n = x_2  # x^(2n)
    for n in range(1, series_order + 1):
        term = _const(x, _double_factorial(2 * n - 1)) / x_2n
        if n % 2:
            odd_sum = odd_sum + term
        else:
            even_sum = even_sum + term
        x_2n = x_2n * x_2
    return log_scale + log1p(even_sum - odd_sum)


def _double_factorial(n: int) -> float:
    return float(np.prod(np.arange(n, 0, -2, dtype=np.float64)))


def _log_ndtr_value(x, series_order):
    if x.dtype == np.float64:
        lower, upper = -20.0, 8.0
    else:
        lower, upper = -10.0, 5.0
    # Each branch gets a safe operand, so that the unused ones never see inf/NaN-making input;
    # NaN falls through to the series, which propagates it.
    upper_part = -_ndtr(-where(x > _const(x, upper), x, _const(x, upper)))
    middle = log(_ndtr(where(x > _const(x, lower), x, _const(x, 0))))
    tail = _log_ndtr_lower(where(x > _const(x, lower), _const(x, lower), x), series_order)
    return where(x > _const(x, upper), upper_part, where(x > _const(x, lower), middle, tail))


def log_ndtr(x, series_order=3):
    r""":math:`\log \Phi(x)`, accurate where :math:`\Phi(x)` underflows or rounds to 1.

    Three segments: above 5 (float32) or 8 (float64), :math:`\log(1 - q) \approx -q` with
    q = ndtr(-x); below -10 or -20, the asymptotic series of the lower tail to `series_order`
    terms; between, `log(ndtr(x))`. The derivative :math:`\phi(x) / \Phi(x)` is computed as
    :math:`\exp(-x^2/2 - \log\Phi(x)) / \sqrt{2\pi}`, which stays finite (about -x) far in the
    lower tail where both factors underflow.
    """
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr(_normal_operand("log_ndtr", x), series_order)


def _log_ndtr_impl(x, series_order):
    return _log_ndtr_value(x, series_order)


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _log_ndtr(x, series_order)
    slope = exp(-_const(x, 0.5) * square(x) - out) * _const(x, 1 / np.sqrt(2 * np.pi))
    return out, t * slope


_log_ndtr.defjvp(_log_ndtr_jvp)


@custom_jvp
def _ndtri(p):
    # Start from the inverse error function, which is accurate where 2p - 1 is not close to
    # -1 or 1; in the tails, from the leading terms of the asymptotic inverse of log Phi.
    # Newton steps on log Phi(x) = log p (slope phi(x)/Phi(x)) then polish both: in log space
    # the relative accuracy of tiny p carries over to x. Upper-tail p use the symmetry
    # ndtri(p) = -ndtri(1 - p) only where 1 - p is exact enough (p > 1/2 loses nothing there).
    q = where(p > _const(p, 0.5), _const(p, 1) - p, p)  # the lower-tail probability
    q_safe = where((q > 0) & (q <= _const(p, 0.5)), q, _const(p, 0.25))
    central = _const(p, np.sqrt(2)) * lax_special.erf_inv(_const(p, 2) * q_safe - _const(p, 1))
    t = -_const(p, 2) * log(q_safe)
    tail = -sqrt(t - log(t) - _const(p, np.log(2 * np.pi)))
    x = where(q_safe < _const(p, 1e-3), tail, central)
    log_q = log(q_safe)
    for _ in range(6):
        lphi = _log_ndtr_value(x, 3)
        slope = exp(-_const(p, 0.5) * square(x) - lphi) * _const(p, 1 / np.sqrt(2 * np.pi))
        x = x - (lphi - log_q) / slope
    x = where(p > _const(p, 0.5), -x, x)
    x = where(p == 0, _const(p, -np.inf), x)
    x = where(p == 1, _const(p, np.inf), x)
    x = where(p == _const(p, 0.5), _const(p, 0), x)
    return where((p < 0) | (p > 1) | jnp_ufuncs.isnan(p), _const(p, np.nan), x)


def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    # dx/dp = 1 / phi(x) = sqrt(2 pi) exp(x^2 / 2); JAX's derivative is 0 at p = 0 and 1.
    slope = _const(p, np.sqrt(2 * np.pi)) * exp(_const(p, 0.5) * square(x))
    slope = where(jnp_ufuncs.isinf(x), _const(p, 0), slope)
    return x, t * slope


_ndtri.defjvp(_ndtri_jvp)


def ndtri(p):
    r"""Inverse of the standard normal CDF: the x with :math:`\Phi(x) = p` (-inf at 0, inf at
    1, NaN outside [0, 1]); float32/float64 only."""
    return _ndtri(_normal_operand("ndtri", p))


__all__ = [
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "factorial",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
]
