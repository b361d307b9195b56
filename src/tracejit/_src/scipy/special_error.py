"""The scaled complementary error function `erfcx` and Dawson's integral `dawsn`, of real
operands, as JAX computes them.

erfcx(x) = e^{x^2} erfc(x) is that product while e^{x^2} is finite, and beyond (x above
sqrt(log(max float)), about 9.4 in float32 and 26.6 in float64) the asymptotic series
1/(sqrt(pi) x) (1 - 1/(2x^2) + 3/(4x^4) - ...), of 5 or 9 terms. dawsn is Cody, Paciorek and
Thacher's rational approximations on [0, 3.25), [3.25, 6.25) and beyond, made odd; each branch
reads a safe operand so that the unused ones cannot overflow into NaN. Half-precision operands
are computed in float32. Both have closed-form derivatives (custom JVPs): erfcx' = 2x erfcx(x)
- 2/sqrt(pi), dawsn' = 1 - 2x dawsn(x).

The complex erfcx of JAX is the Faddeeva function `wofz`, which is not built here.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import special as lax_special
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.lib_math import polyval
from tracejit._src.numpy.promotion import asarray_operand, promote_dtypes_inexact

where = jnp_ufuncs.where


def _const(x, value):
    return np.asarray(value, dtype=x.dtype)


def _primal(x):
    """A custom rule's primal as an Array: `grad` at a Python scalar hands the scalar itself
    to the rule."""
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
        raise NotImplementedError("erfcx of complex input (the Faddeeva function wofz)")
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
    x = _primal(x)
    return g * (2 * x * ans - _const(x, 2.0 / np.sqrt(np.pi)))


_erfcx.defjvps(_erfcx_jvp)


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
    x = _primal(x)
    return g * (_const(x, 1.0) - _const(x, 2.0) * x * ans)


_dawsn.defjvps(_dawsn_jvp)
