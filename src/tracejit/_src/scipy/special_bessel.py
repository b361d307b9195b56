"""The modified Bessel functions of the first kind (`i0`, `i0e`, `i1`, `i1e`, and `jnp.i0`) and
the Bessel functions of the first kind of integer order (`bessel_jn`).

The exponentially scaled ones are lax's primitives; I_n(x) = e^|x| i_ne(x), which overflows
for |x| beyond about 88 (float32) or 713 (float64), as in JAX. `jnp.i0` is the same value with
JAX's own derivative: 0 at x = 0, where the composite would give the sign's kink.

`bessel_jn` runs Miller's backward recurrence J_{k-1} = (2k / z) J_k - J_{k+1} from order
`n_iter` down to 0 (a reverse `scan`), normalized by the identity
J_0 + 2 (J_2 + J_4 + ...) = 1, as JAX does (and SciPy's `BJNDD`).
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api import jvp
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import special as lax_special
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.numpy import manipulation
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.arithmetic import fmod
from tracejit._src.numpy.creation import zeros_like
from tracejit._src.numpy.promotion import promote_args_inexact, promote_dtypes_inexact, to_operand
from tracejit._src.vmap import vmap


def i0e(x):
    r"""Exponentially scaled modified Bessel function of order 0: :math:`e^{-|x|} I_0(x)`."""
    (x,) = promote_args_inexact("i0e", x)
    return lax_special.bessel_i0e(x)


def i0(x):
    r"""Modified Bessel function of order 0: :math:`I_0(x) = \sum_k (x^2/4)^k / (k!)^2`."""
    (x,) = promote_args_inexact("i0", x)
    return lax_elementwise.exp(lax_elementwise.abs(x)) * lax_special.bessel_i0e(x)


def i1e(x):
    r"""Exponentially scaled modified Bessel function of order 1: :math:`e^{-|x|} I_1(x)`."""
    (x,) = promote_args_inexact("i1e", x)
    return lax_special.bessel_i1e(x)


def i1(x):
    r"""Modified Bessel function of order 1:
    :math:`I_1(x) = \frac{x}{2}\sum_k (x^2/4)^k / (k! (k+1)!)`."""
    (x,) = promote_args_inexact("i1", x)
    return lax_elementwise.exp(lax_elementwise.abs(x)) * lax_special.bessel_i1e(x)


@custom_jvp
def _i0(x):
    abs_x = lax_elementwise.abs(x)
    return lax_elementwise.exp(abs_x) * lax_special.bessel_i0e(abs_x)


def _i0_jvp(primals, tangents):
    primal_out, tangent_out = jvp(_i0.fun, primals, tangents)
    return primal_out, jnp_ufuncs.where(primals[0] == 0, 0.0, tangent_out)


_i0.defjvp(_i0_jvp)


def numpy_i0(x):
    r"""`jnp.i0`: the modified Bessel function of order 0 of real input, whose derivative at 0
    is 0 (a custom JVP, as in JAX)."""
    (x,) = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return _i0(x)


def _bessel_jn_step(carry, k):
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0
    bs = jnp_ufuncs.where(fmod(k, 2.0) == 0, bs + 2.0 * f, bs)
    return (f1, f, bs, z), f


def _bessel_jn_of_scalar(z, *, v: int, n_iter: int):
    zero = zeros_like(z)
    init = (zero, zero + 1e-16, zero, z)
    orders = lax_shapes.iota(z.dtype, n_iter + 1)
    (_, _, bs, _), j_vals = scan(_bessel_jn_step, init, orders, reverse=True)
    return j_vals[: v + 1] / (bs - j_vals[0])


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind of orders 0, 1, ..., `v` (a static int) at real `z`:
    an array of shape `(v + 1, *z.shape)`. `n_iter` (static) is where the backward recurrence
    starts; it must exceed `v` and grow with |z| (JAX's rule of thumb: the smallest n with
    0.5 log10(6.28 + n) - n log10(1.36 + |z| / n) > 20)."""
    (z,) = promote_dtypes_inexact(to_operand("bessel_jn", z))
    if dtypes.issubdtype(z.dtype, np.complexfloating):  # JAX's check misses it; its rem refuses
        raise TypeError(f"bessel_jn does not accept dtype {z.dtype}: complex input not supported.")
    v, n_iter = operator.index(v), int(n_iter)

    def jn(z):
        return _bessel_jn_of_scalar(z, v=v, n_iter=n_iter)

    for _ in range(z.ndim):
        jn = vmap(jn)
    return manipulation.moveaxis(jn(z), -1, 0)
