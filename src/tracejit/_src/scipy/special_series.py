"""The Hurwitz zeta function, the Bernoulli numbers and the Pochhammer symbol.

`zeta(x, q)` is lax's primitive, which has no derivative; JAX differentiates it through the
Euler-Maclaurin expansion of Johansson (2015, formula 5), which the custom JVP here evaluates
with autodiff: sum_{k<N} (q + k)^-x + (q + N)^(1-x) / (x - 1) + (q + N)^-x (1/2 + sum_{j<M}
T_j / (2j)!-type Bernoulli coefficients), with N = M = 8 terms in float32 and 16 in float64.

`bernoulli(n)` follows Chowla and Hartung: B_2k = 2 (2k)! zeta(2k) / (2 pi)^2k with alternating
signs, the zeta sum truncated at 50 terms (2^-50 < 1e-15).
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api import jvp
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import special as lax_special
from tracejit._src.numpy import manipulation, reductions
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.creation import arange, array, zeros
from tracejit._src.numpy.promotion import promote_args_inexact
from tracejit._src.scipy.special import digamma, gamma

# (2j)! / B_2j for j = 1 .. 16: the Bernoulli numbers' reciprocals in the expansion's tail.
_BERNOULLI_COEFS = np.array(
    [
        12,
        -720,
        30240,
        -1209600,
        47900160,
        -1307674368000 / 691,
        74724249600,
        -10670622842880000 / 3617,
        5109094217170944000 / 43867,
        -802857662698291200000 / 174611,
        14101100039391805440000 / 77683,
        -1693824136731743669452800000 / 236364091,
        186134520519971831808000000 / 657931,
        -37893265687455865519472640000000 / 3392780147,
        759790291646040068357842010112000000 / 1723168255201,
        -134196726836183700385281186201600000000 / 7709321041217,
    ]
)


def _riemann_refused():
    return NotImplementedError(
        "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta "
        "function."
    )


@custom_jvp
def zeta(x, q=None):
    r"""Hurwitz zeta function :math:`\zeta(x, q) = \sum_{n \ge 0} (n + q)^{-x}` (the Riemann
    zeta function, q = None, is not implemented, as in JAX)."""
    if q is None:
        raise _riemann_refused()
    x, q = promote_args_inexact("zeta", x, q)
    return lax_special.zeta(x, q)


def _zeta_series_expansion(x, q=None):
    if q is None:
        raise _riemann_refused()
    s, a = promote_args_inexact("zeta", x, q)
    dtype = a.dtype.type
    terms = 8 if a.dtype == np.float32 else 16
    n = dtype(terms)
    s_, a_ = manipulation.expand_dims(s, -1), manipulation.expand_dims(a, -1)
    k = np.arange(terms, dtype=a.dtype).reshape((1,) * a.ndim + (terms,))
    head = reductions.sum((a_ + k) ** -s_, -1)
    integral = (a + n) ** (dtype(1) - s) / (s - dtype(1))
    t0 = (a + n) ** -s
    m = np.arange(2 * terms, dtype=a.dtype).reshape((1,) * s.ndim + (2 * terms,))
    t1 = reductions.cumprod((s_ + m) / (a_ + n), -1)[..., ::2]
    t1 = jnp_ufuncs.clip(t1, max=dtypes.finfo(a.dtype).max)
    coefs = _BERNOULLI_COEFS[: t1.shape[-1]].astype(a.dtype).reshape((1,) * a.ndim + (-1,))
    tail = t0 * (dtype(0.5) + reductions.sum(t1 / coefs, -1))
    return head + integral + tail


zeta.defjvp(lambda primals, tangents: jvp(_zeta_series_expansion, primals, tangents))


def bernoulli(n):
    """The first n + 1 Bernoulli numbers B_0 .. B_n (with B_1 = -1/2), for a static n."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[: n + 1]
    bn = zeros(n + 1).at[:3].set(b3)
    m = arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1.0 / np.pi**2) * reductions.cumprod(-(m - 1) * m / 4 / np.pi**2)
    k = arange(2, 50, dtype=bn.dtype)
    q2 = reductions.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))


@custom_jvp
def poch(z, m):
    r"""Pochhammer symbol :math:`(z)_m = \Gamma(z + m) / \Gamma(z)` (1 where m = 0), real
    operands only."""
    z, m = promote_args_inexact("poch", z, m)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return jnp_ufuncs.where(m == 0.0, array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


# d/dz (z)_m = (psi(z + m) - psi(z)) (z)_m and d/dm (z)_m = psi(z + m) (z)_m
poch.defjvps(
    lambda z_dot, primal_out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, primal_out, z, m: digamma(z + m) * poch(z, m) * m_dot,
)
