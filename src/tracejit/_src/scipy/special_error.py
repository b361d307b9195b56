"""The scaled complementary error function `erfcx` and Dawson's integral `dawsn`, of real
operands, as JAX computes them.

erfcx(x) = e^{x^2} erfc(x) is that product while e^{x^2} is finite, and beyond (x above
sqrt(log(max float)), about 9.4 in float32 and 26.6 in float64) the asymptotic series
1/(sqrt(pi) x) (1 - 1/(2x^2) + 3/(4x^4) - ...), of 5 or 9 terms. dawsn is Cody, Paciorek and
Thacher's rational approximations on [0, 3.25), [3.25, 6.25) and beyond, made odd; each branch
reads a safe operand so that the unused ones cannot overflow into NaN. Half-precision operands
are computed in float32. Both have closed-form derivatives (custom JVPs): erfcx' = 2x erfcx(x)
- 2/sqrt(pi), dawsn' = 1 - 2x dawsn(x).

The Faddeeva function wofz(z) = e^{-z^2} erfc(-iz) is Weideman's (1994) rational approximation
of 32 terms in the upper half plane, and w(z) = 2 e^{-z^2} - w(-z) in the lower one; its
derivative is w' = -2z w + 2i/sqrt(pi). The complex erfcx is wofz(iz), as in JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import special as lax_special
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.lib_math import polyval
from tracejit._src.numpy.promotion import (
    asarray_operand,
    promote_args_inexact,
    promote_dtypes_inexact,
)

where = jnp_ufuncs.where


def _const(x, value):
    return np.asarray(value, dtype=x.dtype)


def _primal(x):
    """An operand as an Array (the functions below are also called with Python scalars)."""
    return asarray_operand("scipy.special", x)


def _in_float32(impl, x):
    """`impl(x)` for float32/float64; half precision computed in float32 and rounded back."""
    x = _primal(x)
    if x.dtype in (np.float32, np.float64):
        return impl(x)
    return impl(x.astype(np.float32)).astype(x.dtype)


# --- erfcx ------------------------------------------------------------------------------------

# c_k = (-1)^k (2k - 1)!! / 2^k, highest degree first
_ERFCX_ASYMPTOTIC = (
    7918.06640625,
    -1055.7421875,
    162.421875,
    -29.53125,
    6.5625,
    -1.875,
    0.75,
    -0.5,
    1.0,
)


def erfcx(x):
    r"""Scaled complementary error function :math:`e^{x^2}\mathrm{erfc}(x)` of real x, finite
    where erfc underflows (about 1/(sqrt(pi) x) for large x)."""
    x = asarray_operand("erfcx", x)
    (x,) = promote_dtypes_inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _wofz(lax_binary.complex(-jnp_ufuncs.imag(x), jnp_ufuncs.real(x)))
    return _erfcx(x)


def _erfcx_impl(x):
    terms = 9 if x.dtype == np.float64 else 5
    large = x > _const(x, np.sqrt(np.log(dtypes.finfo(x.dtype).max)))
    safe_x = where(large, _const(x, 1.0), x)
    direct = jnp_ufuncs.exp(jnp_ufuncs.square(safe_x)) * lax_special.erfc(safe_x)
    t = _const(x, 1.0) / jnp_ufuncs.square(x)
    series = polyval(np.array(_ERFCX_ASYMPTOTIC[-terms:], x.dtype), t)
    return where(large, series / (x * _const(x, np.sqrt(np.pi))), direct)


@custom_jvp
def _erfcx(x):
    return _in_float32(_erfcx_impl, x)


def _erfcx_jvp(g, ans, x):
    return g * (2 * x * ans - _const(x, 2.0 / np.sqrt(np.pi)))


_erfcx.defjvps(_erfcx_jvp)


# --- wofz -------------------------------------------------------------------------------------

# Weideman (1994), N = 32: w(z) = 2 P(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with
# Z = (L + iz) / (L - iz), for Im(z) >= 0; P's coefficients highest degree first.
_WOFZ_L = 4.7568284600108841
_WOFZ_C = (
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282, 0.14060716226893755,
    0.29544451071508743, 0.54601397206393376, 0.9019254893648001, 1.3455441692345449,
    1.8256696296324815, 2.2635372999002676, 2.5722534081245696,
)  # fmt: skip

_COMPLEX_OF_REAL = {np.dtype(np.float64): np.dtype(np.complex128)}


def wofz(z):
    r"""Faddeeva function :math:`e^{-z^2}\mathrm{erfc}(-iz)`, always complex (complex64 for
    float32 and half-precision input, complex128 for float64)."""
    z = asarray_operand("wofz", z)
    (z,) = promote_dtypes_inexact(z)
    if not dtypes.issubdtype(z.dtype, np.complexfloating):
        z = z.astype(_COMPLEX_OF_REAL.get(z.dtype, np.dtype(np.complex64)))
    return _wofz(z)


def _wofz_upper(z):
    re = jnp_ufuncs.real(z)
    big_l = lax_binary.complex(_const(re, _WOFZ_L), _const(re, 0.0))
    iz = lax_binary.complex(-jnp_ufuncs.imag(z), re)
    denominator = big_l - iz
    p = polyval(np.array(_WOFZ_C, z.dtype), (big_l + iz) / denominator)
    return 2 * p / (denominator * denominator) + _const(z, 1 / np.sqrt(np.pi)) / denominator


@custom_jvp
def _wofz(z):
    z = _primal(z)
    upper = jnp_ufuncs.imag(z) >= _const(jnp_ufuncs.real(z), 0.0)
    w_upper = _wofz_upper(where(upper, z, -z))
    return where(upper, w_upper, 2 * jnp_ufuncs.exp(-(z * z)) - w_upper)


def _wofz_jvp(g, ans, z):
    return g * (-(2 * z * ans) + _const(z, 2j / np.sqrt(np.pi)))


_wofz.defjvps(_wofz_jvp)


# --- dawsn ------------------------------------------------------------------------------------

# Cody, Paciorek and Thacher (1970): on [0, 3.25), x P(x^2) / Q(x^2); beyond, with t = 1/x^2,
# (1 + t P(t) / Q(t)) / (2x), one pair of polynomials on [3.25, 6.25) and one above.
_DAWSN_AN = (
    1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08,
    9.531517412544844e-07, 3.078283098749132e-06, 0.00035251336852028877,
    -0.0008501498467244109, 0.04226182230055466, -0.09174803717734524, 1.0,
)  # fmt: skip
_DAWSN_AD = (
    2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08,
    1.2725847827318697e-06, 2.324902498207895e-05, 0.00032552474182605793,
    0.003488058146571626, 0.027944853119882897, 0.15887424196012057, 0.5749186294893204, 1.0,
)  # fmt: skip
_DAWSN_BN = (
    0.5089551564179009, -0.24475441814269785, 0.09415123353035344, -0.021871125514203903,
    0.003662076123295692, -0.0004232091144603888, 3.5964130479389666e-05,
    -2.1464035171996896e-06, 9.100107800763914e-08, -2.4027452082825098e-09,
    3.592333854409284e-11,
)  # fmt: skip
_DAWSN_BD = (
    1.0, -0.6318398698733682, 0.2367067882282487, -0.053180636700322324, 0.008480417185862954,
    -0.0009479967684866654, 7.810255929445524e-05, -4.558751532524426e-06,
    1.8910035811142186e-07, -4.913246913319206e-09, 7.184664032357345e-11,
)  # fmt: skip
_DAWSN_CN = (
    -0.5905928605347732, 0.6292352427243688, -0.17285897538038814, 0.016483704782518965,
    -0.0004868276130204627,
)  # fmt: skip
_DAWSN_CD = (
    1.0, -2.698200571975449, 1.7327079904594784, -0.3937085822819395, 0.03442789240412334,
    -0.0009736552260409412,
)  # fmt: skip


def dawsn(x):
    r"""Dawson's integral :math:`e^{-x^2}\int_0^x e^{t^2}\,dt` of real x."""
    x = asarray_operand("dawsn", x)
    (x,) = promote_dtypes_inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return _dawsn(x)


def _dawsn_tail(ax, t, inside, numerator, denominator):
    """(1 + t P(t) / Q(t)) / (2 ax) where `inside`, on safe operands (1) elsewhere."""
    one = _const(ax, 1.0)
    safe_t, safe_ax = where(inside, t, one), where(inside, ax, one)
    p = polyval(np.array(numerator, ax.dtype), safe_t)
    q = polyval(np.array(denominator, ax.dtype), safe_t)
    return (_const(ax, 0.5) / safe_ax) * (one + safe_t * p / q)


def _dawsn_impl(x):
    ax = jnp_ufuncs.abs(x)
    t = _const(x, 1.0) / jnp_ufuncs.square(ax)
    near, middle_end = ax < _const(x, 3.25), ax < _const(x, 6.25)
    safe_ax = where(near, ax, _const(x, 1.0))
    safe_ax2 = jnp_ufuncs.square(safe_ax)
    p = polyval(np.array(_DAWSN_AN, x.dtype), safe_ax2)
    value_near = safe_ax * p / polyval(np.array(_DAWSN_AD, x.dtype), safe_ax2)
    middle = _dawsn_tail(ax, t, ~near & middle_end, _DAWSN_BN, _DAWSN_BD)
    far = _dawsn_tail(ax, t, ~middle_end, _DAWSN_CN, _DAWSN_CD)
    return jnp_ufuncs.sign(x) * where(near, value_near, where(middle_end, middle, far))


@custom_jvp
def _dawsn(x):
    return _in_float32(_dawsn_impl, x)


def _dawsn_jvp(g, ans, x):
    return g * (_const(x, 1.0) - _const(x, 2.0) * x * ans)


_dawsn.defjvps(_dawsn_jvp)


# --- owens_t ----------------------------------------------------------------------------------

# Patefield and Tandy's (2000) method T5: a 13-point Gauss-type rule for
# T(h, a) = (1/2pi) int_0^a exp(-h^2 (1 + u^2) / 2) / (1 + u^2) du after u^2 = a^2 t, whose
# weights absorb 1/(2pi) and the Jacobian: T ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i)/2) / (1 + a^2 t_i).
_OWENS_T_POINTS = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704,
])  # fmt: skip
_OWENS_T_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090,
])  # fmt: skip


def owens_t(h, a):
    r"""Owen's T function
    :math:`T(h, a) = \frac{1}{2\pi}\int_0^a \frac{e^{-h^2(1+x^2)/2}}{1+x^2}\,dx`, by a 13-point
    quadrature for |a| <= 1 and the reciprocal identity beyond, as JAX computes it."""
    h, a = promote_args_inexact("owens_t", h, a)
    return _owens_t(h, a)


def _owens_t_quadrature(h, a):
    # the rule's float64 points promote half-precision operands to float32 (as in JAX)
    r = jnp_ufuncs.square(a)[..., None] * _OWENS_T_POINTS
    integrand = jnp_ufuncs.exp(-0.5 * jnp_ufuncs.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ _OWENS_T_WEIGHTS)


@custom_jvp
def _owens_t(h, a):
    h, a = _primal(h), _primal(a)
    h, abs_a = jnp_ufuncs.abs(h), jnp_ufuncs.abs(a)
    root_2 = _const(h, np.sqrt(2))
    h_normed = h / root_2
    small_a = abs_a <= 1.0
    modified_a = where(small_a, abs_a, 1.0 / abs_a)
    modified_h = where(small_a, h, abs_a * h)
    result = _owens_t_quadrature(modified_h, modified_a)
    # exact at h = 0 and at a = 1
    result = where(modified_h == 0.0, jnp_ufuncs.arctan(modified_a) / (2 * np.pi), result)
    erfc = lax_special.erfc
    at_one = 0.125 * erfc(-modified_h / root_2) * erfc(modified_h / root_2)
    result = where(modified_a == 1.0, at_one, result)
    # T(h, a) = (Phi(h) + Phi(ah))/2 - Phi(h) Phi(ah) - T(ah, 1/a) for |a| > 1
    normh, normah = erfc(h_normed), erfc(abs_a * h_normed)
    erf = lax_special.erf
    near = 0.25 - 0.25 * erf(h_normed) * erf(abs_a * h_normed) - result
    far = 0.25 * (normh + normah - normh * normah) - result
    result = where(abs_a > 1.0, where(abs_a * h <= 0.67, near, far), result)
    result = jnp_ufuncs.sign(a) * result
    return where(jnp_ufuncs.isnan(a) | jnp_ufuncs.isnan(h), np.nan, result)


def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = primals, tangents
    result = _owens_t(h, a)
    root_2 = _const(h, np.sqrt(2))
    # dT/dh = -exp(-h^2/2) erf(ah/sqrt2) / (2 sqrt(2pi)); dT/da = exp(-(a^2+1)h^2/2) / (2pi(a^2+1))
    dout_dh = (
        -jnp_ufuncs.exp(-0.5 * jnp_ufuncs.square(h))
        * lax_special.erf(a * h / root_2)
        / (2.0 * _const(h, np.sqrt(2.0 * np.pi)))
    )
    a2_1 = jnp_ufuncs.square(a) + 1.0
    dout_da = jnp_ufuncs.exp(-0.5 * a2_1 * jnp_ufuncs.square(h)) / (2.0 * np.pi * a2_1)
    return result, (dout_dh * dh + dout_da * da).astype(result.dtype)


_owens_t.defjvp(_owens_t_jvp)
