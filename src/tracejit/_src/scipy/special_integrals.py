"""The exponential integrals `expi`, `exp1`, `expn`, the sine, cosine and Fresnel integrals
`sici` and `fresnel`, and Spence's function (the dilogarithm) `spence`, of real operands, as JAX computes them (after
Cephes).

expi(x) for x > 0 is a rational approximation on (0, 2] (x P(x)/Q(x) + gamma + log x) and on
each of (2, 4], (4, 8], ..., (32, 64] and beyond (e^x/x (1 + P(1/x)/(x Q(1/x)))); for x < 0 it is
-E_1(-x). E_n(x) = expn(n, x) is, elementwise, the power series (x <= 1) or the continued
fraction (x > 1), each a loop to convergence, an asymptotic formula for n >= 5000, and its
closed forms at n = 0 and x = 0. Derivatives are closed forms (custom JVPs): expi' = e^x/x,
E_n' = -E_{n-1}, (Si, Ci)' = (sin x / x, cos x / x), spence'(x) = log(x)/(1 - x) through autodiff of its approximation.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax.control_flow.loops import fori_loop, while_loop
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.arithmetic import fmod, remainder
from tracejit._src.numpy.lib_math import piecewise, polyval
from tracejit._src.numpy.lib_vectorize import vectorize
from tracejit._src.numpy.promotion import asarray_operand, promote_args_inexact
from tracejit._src.scipy.special import gammaln

where, exp, log = jnp_ufuncs.where, jnp_ufuncs.exp, jnp_ufuncs.log


def _const(x, value):
    """`value` in `x`'s dtype; one too large for it is inf, silently (as XLA rounds it)."""
    with np.errstate(over="ignore"):
        return np.asarray(value, dtype=x.dtype)


def _primal(x):
    """An operand as an Array (the functions below are also called with Python scalars)."""
    return asarray_operand("scipy.special", x)


# --- expi ---------------------------------------------------------------------------------------

_EXPINT1_A = (
    -5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557,
    -331338.13311781443, 1592627.1633849454,
)  # fmt: skip
_EXPINT1_B = (
    1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726,
    -729494.9239640528, 1592627.1633849454,
)  # fmt: skip
_EXPINT2_A = (
    0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
    -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05,
)  # fmt: skip
_EXPINT2_B = (
    1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212,
    0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05,
)  # fmt: skip
_EXPINT3_A = (
    -1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
    0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05, 2.141783679522603e-06,
)  # fmt: skip
_EXPINT3_B = (
    1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877,
    0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06, 2.66519553739071e-06,
)  # fmt: skip
_EXPINT4_A = (
    -2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
    0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
    -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10,
)  # fmt: skip
_EXPINT4_B = (
    1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924, 0.002761106850817353,
    -0.00020891480122840484, 1.7085289388076754e-05, -4.4593117963566865e-07,
    1.3946349303538475e-08, 6.150865933977338e-10,
)  # fmt: skip
_EXPINT5_A = (
    -0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405,
    0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06, -4.239473659313765e-08,
)  # fmt: skip
_EXPINT5_B = (
    1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984, -0.01601745692712991,
    0.001496414899205908, -8.462452563778485e-05, 2.7289384034767266e-06, -4.239462431819542e-08,
)  # fmt: skip
_EXPINT6_A = (
    0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
    0.0015100821468651906, -2.5231370954995714e-05,
)  # fmt: skip
_EXPINT6_B = (
    1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008, 0.0015605448811273888,
    -2.5231370936032347e-05,
)  # fmt: skip
_EXPINT7_A = (
    -0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
    -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06, 1.218032765428652e-07,
    -1.0860761027932903e-09,
)  # fmt: skip
_EXPINT7_B = (
    1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805, 0.039308526882338234,
    -0.003414684558602365, 0.00018668443707035555, -6.345146083130515e-06, 1.239754287483207e-07,
    -1.0860761027931265e-09,
)  # fmt: skip


def _polyval(coefficients, x):
    return polyval(np.array(coefficients, x.dtype), x)


def _expint_near_zero(x):
    """0 < x <= 2."""
    f = _polyval(_EXPINT1_A, x) / _polyval(_EXPINT1_B, x)
    return x * f + _const(x, np.euler_gamma) + log(x)


def _expint_interval(a, b):
    """e^x / x (1 + w P(w) / Q(w)) with w = 1/x, for one of the intervals beyond 2."""

    def expint(x):
        one = _const(x, 1.0)
        w = one / x
        f = w * (_polyval(a, w) / _polyval(b, w)) + one
        return exp(x) * w * f

    return expint


_EXPINT_PIECES = [
    _expint_near_zero,
    _expint_interval(_EXPINT2_A, _EXPINT2_B),
    _expint_interval(_EXPINT3_A, _EXPINT3_B),
    _expint_interval(_EXPINT4_A, _EXPINT4_B),
    _expint_interval(_EXPINT5_A, _EXPINT5_B),
    _expint_interval(_EXPINT6_A, _EXPINT6_B),
    _expint_interval(_EXPINT7_A, _EXPINT7_B),
]


def _expi_positive(x):
    conds = [(_const(x, 0) < x) & (x <= _const(x, 2))]
    conds += [(_const(x, 2**i) < x) & (x <= _const(x, 2 ** (i + 1))) for i in range(1, 6)]
    return piecewise(x, conds, _EXPINT_PIECES)


@custom_jvp
def expi(x):
    r"""Exponential integral :math:`\mathrm{Ei}(x) = \int_{-\infty}^x e^t / t\,dt` of real x."""
    (x,) = promote_args_inexact("expi", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    return piecewise(x, [x < 0], [lambda v: -exp1(-v), _expi_positive])


def _expi_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return expi(x), exp(x) / x * x_dot


expi.defjvp(_expi_jvp)


# --- expn ---------------------------------------------------------------------------------------


def _expn_series(x, n):
    """x <= 1: the power series of E_n, with psi(n) summed up to n."""
    zero, one = _const(x, 0.0), _const(x, 1.0)
    eps = _const(x, dtypes.finfo(x.dtype).eps)
    psi = -_const(x, np.euler_gamma) - log(x)
    psi = fori_loop(_const(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = where(n == _const(n, 1), one + one, n)
    init = {
        "x": x, "z": -x, "xk": zero, "yk": one, "pk": one - n,
        "ans": where(n == _const(n, 1), zero, one / (one - n1)), "t": _const(x, np.inf),
    }  # fmt: skip

    def body(d):
        d = dict(d)
        d["xk"] = d["xk"] + one
        d["yk"] = d["yk"] * d["z"] / d["xk"]
        d["pk"] = d["pk"] + one
        d["ans"] = d["ans"] + where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = where(d["ans"] != zero, jnp_ufuncs.abs(d["yk"] / d["ans"]), one)
        return d

    d = while_loop(lambda d: (d["x"] > zero) & (d["t"] > eps), body, init)
    return d["z"] ** (n - _const(n, 1)) * psi / exp(gammaln(n)) - d["ans"]


def _expn_fraction(x, n):
    """x > 1: the continued fraction of E_n, rescaled before it overflows."""
    zero, one = _const(x, 0.0), _const(x, 1.0)
    big, eps = _const(x, 1.44115188075855872e17), _const(x, dtypes.finfo(x.dtype).eps)
    init = {
        "k": _const(n, 1), "pkm2": one, "qkm2": x, "pkm1": one, "qkm1": x + n, "ans": one / (x + n),
        "t": _const(x, np.inf), "r": zero, "x": x,
    }  # fmt: skip

    def body(d):
        d = dict(d)
        x = d["x"]
        k = d["k"] = d["k"] + _const(d["k"], 1)
        odd = remainder(k, _const(k, 2)) == _const(k, 1)
        yk = where(odd, one, x)
        xk = where(odd, n + (k - _const(k, 1)) / _const(k, 2), k / _const(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nonzero = qk != zero
        r = d["r"] = where(nonzero, pk / qk, d["r"])
        d["t"] = where(nonzero, jnp_ufuncs.abs((d["ans"] - r) / r), one)
        d["ans"] = where(nonzero, r, d["ans"])
        d["pkm2"], d["pkm1"], d["qkm2"], d["qkm1"] = d["pkm1"], pk, d["qkm1"], qk
        is_big = jnp_ufuncs.abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = where(is_big, d[key] / big, d[key])
        return d

    d = while_loop(lambda d: (d["x"] > _const(d["k"], 0)) & (d["t"] > eps), body, init)
    return d["ans"] * exp(-x)


def _expn_large_order(x, n):
    """n >= 5000: the leading terms of the asymptotic expansion in 1/(x + n)."""
    one = _const(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    ans = yk * n * (_const(x, 6) * x * x - _const(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _const(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + one) * exp(-x) / xk


@vectorize
def _expn_elementwise(n, x):
    zero, one = _const(x, 0), _const(x, 1)
    conds = [
        (n < _const(n, 0)) | (x < zero),
        (x == zero) & (n < _const(n, 2)),
        (x == zero) & (n >= _const(n, 2)),
        (n == _const(n, 0)) & (x >= zero),
        n >= _const(n, 5000),
        x > one,
    ]
    n1 = where(n == _const(n, 1), n + n, n)
    # Every branch is evaluated (under vmap as in JAX): each loop gets an operand in its own
    # domain, where it converges, in place of the elements it does not compute.
    fraction = lambda x, n: _expn_fraction(where(x > one, x, _const(x, 2.0)), n)
    series = lambda x, n: _expn_series(where(x > one, _const(x, 0.5), x), n)
    values = [np.nan, np.inf, one / n1, exp(-x) / x, _expn_large_order, fraction]
    return piecewise(x, conds, [*values, series], n=n)


def _expn(n, x):
    n, x = promote_args_inexact("expn", n, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    return _expn_elementwise(n, x)


expn = custom_jvp(_expn)
expn.__doc__ = r"""Generalized exponential integral
:math:`E_n(x) = x^{n-1}\int_x^\infty e^{-t} t^{-n}\,dt` (NaN for n < 0 or x < 0); its
derivative in x is :math:`-E_{n-1}(x)`, in n zero (as JAX has it)."""


def _expn_jvp_x(x_dot, ans, n, x):
    n = _primal(n)  # (exp1 passes n as the Python int 1)
    return -x_dot * expn(n - _const(n, 1), x)


expn.defjvps(None, _expn_jvp_x)


def exp1(x):
    r"""Exponential integral :math:`E_1(x) = \int_x^\infty e^{-t} / t\,dt` of real x."""
    (x,) = promote_args_inexact("exp1", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(1, x)


# --- spence -------------------------------------------------------------------------------------

_SPENCE_A = (
    4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903, 0.8796913117545303,
    2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0,
)  # fmt: skip
_SPENCE_B = (
    0.0006909904889125533, 0.02540437639325444, 0.2829748606025681, 1.4117259775183106,
    3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0,
)  # fmt: skip


def _spence_poly(w):
    return -w * _polyval(_SPENCE_A, w) / _polyval(_SPENCE_B, w)


def _spence_calc(x):
    inverted = x > 2.0
    x = piecewise(x, [inverted], [lambda v: 1.0 / v, lambda v: v])
    above, below = x > 1.5, x < 0.5
    inverted = inverted | above
    w = piecewise(x, [above, below], [lambda v: 1.0 / v - 1.0, lambda v: -v, lambda v: v - 1.0])
    y = _spence_poly(w)
    y = where(below, np.pi**2 / 6.0 - log(x) * log(1.0 - x) - y, y)
    return where(inverted, -0.5 * log(x) ** 2 - y, y)


def spence(x):
    r"""Spence's function :math:`\int_1^x \log(t) / (1 - t)\,dt` for real x >= 0 (NaN below);
    float32 and float64 only, as in JAX."""
    x = asarray_operand("spence", x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")
    return piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi**2 / 6, _spence_calc])


# --- sici -------------------------------------------------------------------------------------

# Cephes' rational approximations: Si and Ci as series in x^2 on [0, 4]; beyond, with
# z = 1/x^2, Si = pi/2 - f cos x - g sin x and Ci = f sin x - g cos x for f and g rational in z,
# one pair on (4, 8) and one from 8; above 1e9, the leading terms.
_SICI_SN = (
    -8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06, 0.0009769454381704354,
    -0.04134703162294066, 1.0,
)  # fmt: skip
_SICI_SD = (
    2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07, 9.964121220438756e-05,
    0.01420852393261499, 1.0,
)  # fmt: skip
_SICI_CN = (
    2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06,
    -0.0004740072068734079, 0.028915965260755523, -1.0,
)  # fmt: skip
_SICI_CD = (
    4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06, 0.00031744202477503275,
    0.051002805623644606, 4.0,
)  # fmt: skip
_SICI_FN4 = (
    4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304,
    0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07,
)  # fmt: skip
_SICI_FD4 = (
    1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499,
    0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07,
)  # fmt: skip
_SICI_GN4 = (
    0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691,
    0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06, 7.825790407440903e-09,
)  # fmt: skip
_SICI_GD4 = (
    1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888, 0.006223963454417684,
    0.0001732210814741771, 2.0265918208634397e-06, 7.825792189335346e-09,
)  # fmt: skip
_SICI_FN8 = (
    0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244,
    0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08, 9.41779576128513e-11,
    9.70507110881952e-14,
)  # fmt: skip
_SICI_FD8 = (
    1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129, 0.00035869648188185157,
    4.924350643178815e-06, 3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14,
)  # fmt: skip
_SICI_GN8 = (
    0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479,
    3.4894116550227946e-05, 3.471311670841167e-07, 1.7040445278204452e-09, 3.859459254302766e-12,
    3.1404009894636335e-15,
)  # fmt: skip
_SICI_GD8 = (
    1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258, 0.0019028442667439953,
    3.684755044425611e-05, 3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12,
    3.1404009894636335e-15,
)  # fmt: skip


def _sici_series(x):
    t = x * x
    si = x * _polyval(_SICI_SN, t) / _polyval(_SICI_SD, t)
    ci = np.euler_gamma + log(x) + t * _polyval(_SICI_CN, t) / _polyval(_SICI_CD, t)
    return where(x == 0, 0.0, si), where(x == 0, -np.inf, ci)


def _sici_asymptotic(x):
    s, c = jnp_ufuncs.sin(x), jnp_ufuncs.cos(x)
    z = 1.0 / (x * x)
    f4 = _polyval(_SICI_FN4, z) / (x * _polyval(_SICI_FD4, z))
    g4 = z * _polyval(_SICI_GN4, z) / _polyval(_SICI_GD4, z)
    f8 = _polyval(_SICI_FN8, z) / (x * _polyval(_SICI_FD8, z))
    g8 = z * _polyval(_SICI_GN8, z) / _polyval(_SICI_GD8, z)
    below_8 = x < 8.0
    f, g = where(below_8, f4, f8), where(below_8, g4, g8)
    return (np.pi / 2) - f * c - g * s, f * s - g * c


def _sici_far(x):
    at_inf = jnp_ufuncs.isposinf(x)
    si = where(at_inf, np.pi / 2, (np.pi / 2) - jnp_ufuncs.cos(x) / x)
    return si, where(at_inf, 0.0, jnp_ufuncs.sin(x) / x)


@custom_jvp
def sici(x):
    r"""Sine and cosine integrals of real x: :math:`(\mathrm{Si}(x), \mathrm{Ci}(x))` with
    :math:`\mathrm{Si}(x) = \int_0^x \sin t / t\,dt` and
    :math:`\mathrm{Ci}(x) = \gamma + \log x + \int_0^x (\cos t - 1) / t\,dt`."""
    (x,) = promote_args_inexact("sici", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    x_abs = jnp_ufuncs.abs(x)
    near, middle = x_abs <= 4, (x_abs > 4) & (x_abs <= 1e9)
    (si_near, ci_near), (si_mid, ci_mid) = _sici_series(x_abs), _sici_asymptotic(x_abs)
    si_far, ci_far = _sici_far(x_abs)
    si = where(near, si_near, where(middle, si_mid, si_far))
    ci = where(near, ci_near, where(middle, ci_mid, ci_far))
    return jnp_ufuncs.sign(x) * si, where(jnp_ufuncs.isneginf(x), np.nan, ci)


def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sici(x), (jnp_ufuncs.sinc(x / np.pi) * t, jnp_ufuncs.cos(x) / x * t)


sici.defjvp(_sici_jvp)


# --- fresnel ----------------------------------------------------------------------------------

# Cephes' `fresnl` (float64) and `fresnlf` (float32, also for half precision, upcast): a series
# in x^4 for x^2 < 2.5625, auxiliary functions f and g in 1/(pi x^2) up to 36974, the limits
# (and in float64 their first correction) beyond.
_FRESNL_SN_32 = (
    1.6476294637887e-09, -1.522754752581096e-07, 8.4247488085024e-06, -0.0003120693124703272,
    0.007244727626597022, -0.09228055941124598, 0.5235987735681432,
)  # fmt: skip
_FRESNL_SN_64 = (
    -2991.8191940101983, 708840.0452577386, -62974148.62058625, 2548908805.7337637,
    -44297951805.96978, 318016297876.5678,
)  # fmt: skip
_FRESNL_CN_32 = (
    1.416802502367354e-08, -1.157231412229871e-06, 5.387223446683264e-05, -0.001604381798862293,
    0.02818489036795073, -0.2467398198317899, 0.9999999760004487,
)  # fmt: skip
_FRESNL_CN_64 = (
    -4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651, 0.018884331939670384,
    -0.20552590095501388, 1.0,
)  # fmt: skip
_FRESNL_FN_32 = (
    -1903009855649.792, 135594238805.0252, -4158143148.511033, 73438484.63587323,
    -873235.6681548485, 8560.51546627547, -103.2877601091159, 2.999401847870011,
)  # fmt: skip
_FRESNL_FN_64 = (
    0.4215435550436775, 0.1434079197807589, 0.011522095507358577, 0.000345017939782574,
    4.6361374928786735e-06, 3.055689837902576e-08, 1.0230451416490724e-10, 1.7201074326816183e-13,
    1.3428327623306275e-16, 3.763297112699879e-20,
)  # fmt: skip
_FRESNL_GN_32 = (
    -186084399762.465, 12783506733.93208, -377938771.3202229, 6492611.570598858,
    -77877.89623358162, 860.2931494734327, -14.93439396592284, 0.9999841934744914,
)  # fmt: skip
_FRESNL_GN_64 = (
    0.5044420736433832, 0.1971028335255234, 0.018764858409257526, 0.0006840793809153931,
    1.1513882611188428e-05, 9.828524436884223e-08, 4.4534441586175015e-10, 1.0826804113902088e-12,
    1.375554606332618e-15, 8.363544356306774e-19, 1.8695871016278324e-22,
)  # fmt: skip
_FRESNL_SD_64 = (
    1.0, 281.3762688899943, 45584.78108065326, 5173438.887700964, 419320245.8981112,
    22441179564.534092, 607366389490.0846,
)  # fmt: skip
_FRESNL_CD_64 = (
    3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07, 1.2226278902417902e-05,
    0.0008680295429417843, 0.04121420907221998, 1.0,
)  # fmt: skip
_FRESNL_FD_64 = (
    1.0, 0.7515863983533789, 0.11688892585919138, 0.0064405152650885865, 0.00015593440916415301,
    1.8462756734893055e-06, 1.1269922476399903e-08, 3.6014002958937136e-11, 5.887545336215784e-14,
    4.5200143407412973e-17, 1.2544323709001127e-20,
)  # fmt: skip
_FRESNL_GD_64 = (
    1.0, 1.4749575992512833, 0.33774898912002, 0.02536037414203388, 0.0008146791071843061,
    1.2754507566772912e-05, 1.0431458965757199e-07, 4.6068072814652043e-10,
    1.1027321506624028e-12, 1.3879653125957886e-15, 8.391588162831187e-19, 1.8695871016278324e-22,
)  # fmt: skip


def _sincos_pi_x2_half(x):
    """sin(pi x^2 / 2) and cos(pi x^2 / 2), accurately for large x: with s = x mod 2, the
    argument mod 2 is s (x - s/2) mod 2 (SciPy's sinpi and cospi)."""
    x = jnp_ufuncs.abs(x)
    s = fmod(x, 2.0)
    r = fmod(s * (x - s / 2), 2.0)
    sin = jnp_ufuncs.sin
    sinpi = where(
        r < 0.5, sin(np.pi * r), where(r > 1.5, sin(np.pi * (r - 2.0)), -sin(np.pi * (r - 1.0)))
    )
    cospi = where(r == 0.5, 0.0, where(r < 1.0, -sin(np.pi * (r - 0.5)), sin(np.pi * (r - 1.5))))
    return sinpi, cospi


def _fresnel_parts(x, x2):
    """(S, C) of |x| for small and middle x, in float32 or float64."""
    t = x2 * x2
    if x.dtype == np.float32:
        s_small = x * x2 * _polyval(_FRESNL_SN_32, t)
        c_small = x * _polyval(_FRESNL_CN_32, t)
    else:
        s_small = x * x2 * _polyval(_FRESNL_SN_64[:6], t) / _polyval(_FRESNL_SD_64[:7], t)
        c_small = x * _polyval(_FRESNL_CN_64[:6], t) / _polyval(_FRESNL_CD_64[:7], t)
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if x.dtype == np.float32:
        f = 1.0 - u * _polyval(_FRESNL_FN_32, u)
        g = t * _polyval(_FRESNL_GN_32, u)
    else:
        f = 1.0 - u * _polyval(_FRESNL_FN_64, u) / _polyval(_FRESNL_FD_64, u)
        g = t * _polyval(_FRESNL_GN_64, u) / _polyval(_FRESNL_GD_64, u)
    return (s_small, c_small), (f, g)


@custom_jvp
def fresnel(x):
    r"""The Fresnel integrals :math:`(S(x), C(x))`, :math:`S(x) = \int_0^x \sin(\pi t^2/2)\,dt`,
    :math:`C(x) = \int_0^x \cos(\pi t^2/2)\,dt`, of real x (accurate on [-10, 10], as
    Cephes)."""
    (xxa,) = promote_args_inexact("fresnel", x)
    original_dtype = xxa.dtype
    if dtypes.issubdtype(xxa.dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if xxa.dtype != np.float64:
        xxa = xxa.astype(np.float32)
    x = jnp_ufuncs.abs(xxa)
    x2 = x * x
    (s_small, c_small), (f, g) = _fresnel_parts(x, x2)
    sinpi, cospi = _sincos_pi_x2_half(x)
    if x.dtype == np.float32:
        s_large = c_large = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sinpi
        s_large = 0.5 - 1 / (np.pi * x) * cospi
    t = np.pi * x
    c_other = 0.5 + (f * sinpi - g * cospi) / t
    s_other = 0.5 - (f * cospi + g * sinpi) / t
    isinf, small, large = jnp_ufuncs.isinf(xxa), x2 < 2.5625, x > 36974.0
    s = where(isinf, 0.5, where(small, s_small, where(large, s_large, s_other)))
    c = where(isinf, 0.5, where(small, c_small, where(large, c_large, c_other)))
    negative = xxa < 0.0
    s, c = where(negative, -s, s), where(negative, -c, c)
    return s.astype(original_dtype), c.astype(original_dtype)


def _fresnel_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    sinpi, cospi = _sincos_pi_x2_half(x)
    return fresnel(x), (sinpi * x_dot, cospi * x_dot)


fresnel.defjvp(_fresnel_jvp)
