"""Special functions: erf, erfc, erf_inv, lgamma, digamma and polygamma, one block each.

Eagerly they run SciPy (imported on first use), computing in the operand's dtype or casting
back to it; compiled, they lower to CHLO operations, which XLA expands. Their derivatives are
each other: lgamma' = digamma, digamma' = polygamma(1, .), polygamma(m, .)' = polygamma(m+1, .).
The rule pieces they share with the other unary primitives come from `elementwise`.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import binary, broadcasting, elementwise
from tracejit._src.lax.standard import (
    constant_like,
    elementwise_abstract_eval,
    is_float,
    jvp_using_result,
    keep_dtype,
    lower_unary,
    quiet,
    scipy_special,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules

# --- erf ------------------------------------------------------------------------------------
erf_p = Primitive("erf")


def erf(x):
    r"""Elementwise error function: :math:`\mathrm{erf}(x)`."""
    return erf_p.bind(x)


erf_p.def_impl(keep_dtype(lambda x: scipy_special().erf(x)))
erf_p.def_abstract_eval(elementwise_abstract_eval("erf", is_float))
erf_p.def_weak_type_rule(weak_if_all_weak)


def _erf_jvp(t, x):
    return binary.mul(
        constant_like(x, 2 / np.sqrt(np.pi)),
        binary.mul(t, elementwise.exp(elementwise.neg(elementwise.square(x)))),
    )


ad.defjvp(erf_p, _erf_jvp)
lowering_rules[erf_p] = lower_unary("chlo.erf")
batch_rules[erf_p] = vectorized_batch_rule(erf_p)

# --- erfc -----------------------------------------------------------------------------------
erfc_p = Primitive("erfc")


def erfc(x):
    r"""Elementwise complementary error function: :math:`1 - \mathrm{erf}(x)`."""
    return erfc_p.bind(x)


erfc_p.def_impl(keep_dtype(lambda x: scipy_special().erfc(x)))
erfc_p.def_abstract_eval(elementwise_abstract_eval("erfc", is_float))
erfc_p.def_weak_type_rule(weak_if_all_weak)


def _erfc_jvp(t, x):
    return binary.mul(
        constant_like(x, -2 / np.sqrt(np.pi)),
        binary.mul(t, elementwise.exp(elementwise.neg(elementwise.square(x)))),
    )


ad.defjvp(erfc_p, _erfc_jvp)
lowering_rules[erfc_p] = lower_unary("chlo.erfc")
batch_rules[erfc_p] = vectorized_batch_rule(erfc_p)

# --- erf_inv --------------------------------------------------------------------------------
erf_inv_p = Primitive("erf_inv")


def erf_inv(x):
    r"""Elementwise inverse error function: :math:`\mathrm{erf}^{-1}(x)`."""
    return erf_inv_p.bind(x)


_erfinv = keep_dtype(lambda x: scipy_special().erfinv(x))


@erf_inv_p.def_impl
def _erf_inv_impl(x):
    return np.where(x == 0, x, _erfinv(x))  # SciPy's erfinv(-0.) is +0., XLA's -0.


erf_inv_p.def_abstract_eval(elementwise_abstract_eval("erf_inv", is_float))
erf_inv_p.def_weak_type_rule(weak_if_all_weak)


def _erf_inv_jvp(t, ans, x):
    return binary.mul(
        constant_like(x, np.sqrt(np.pi) / 2),
        binary.mul(t, elementwise.exp(elementwise.square(ans))),
    )


ad.jvp_rules[erf_inv_p] = jvp_using_result(erf_inv_p, _erf_inv_jvp)
lowering_rules[erf_inv_p] = lower_unary("chlo.erf_inv")
batch_rules[erf_inv_p] = vectorized_batch_rule(erf_inv_p)

# --- lgamma ---------------------------------------------------------------------------------
lgamma_p = Primitive("lgamma")


def lgamma(x):
    r"""Elementwise log of the absolute value of the gamma function: :math:`\log|\Gamma(x)|`."""
    return lgamma_p.bind(x)


@lgamma_p.def_impl
def _lgamma_impl(x):
    out = scipy_special().gammaln(x)
    out = np.where(x == -np.inf, np.inf, out)  # SciPy gives -inf there, XLA +inf
    return out if out.dtype == x.dtype else out.astype(x.dtype)


lgamma_p.def_abstract_eval(elementwise_abstract_eval("lgamma", is_float))
lgamma_p.def_weak_type_rule(weak_if_all_weak)


def _lgamma_jvp(t, x):
    return binary.mul(t, digamma(x))


ad.defjvp(lgamma_p, _lgamma_jvp)
lowering_rules[lgamma_p] = lower_unary("chlo.lgamma")
batch_rules[lgamma_p] = vectorized_batch_rule(lgamma_p)

# --- digamma --------------------------------------------------------------------------------
digamma_p = Primitive("digamma")


def digamma(x):
    r"""Elementwise digamma function: :math:`\psi(x) = \frac{d}{dx}\log\Gamma(x)` (nan at
    the poles 0, -1, -2, ...)."""
    return digamma_p.bind(x)


@digamma_p.def_impl
def _digamma_impl(x):
    out = scipy_special().digamma(x)
    out = np.where(x == 0, np.nan, out)  # SciPy gives -+inf at +-0, XLA nan like other poles
    return out if out.dtype == x.dtype else out.astype(x.dtype)


digamma_p.def_abstract_eval(elementwise_abstract_eval("digamma", is_float))
digamma_p.def_weak_type_rule(weak_if_all_weak)


def _digamma_jvp(t, x):
    return binary.mul(t, polygamma(constant_like(x, 1), x))


ad.defjvp(digamma_p, _digamma_jvp)
lowering_rules[digamma_p] = lower_unary("chlo.digamma")
batch_rules[digamma_p] = vectorized_batch_rule(digamma_p)

# --- polygamma ------------------------------------------------------------------------------
polygamma_p = Primitive("polygamma")


def polygamma(m, x):
    r"""Elementwise polygamma function :math:`\psi^{(m)}(x)`, the m-th derivative of digamma.
    `m` has x's floating dtype and broadcasts with it as lax allows; it must hold a
    non-negative integer (nan otherwise). At the poles x = 0, -1, -2, ... the result is inf for
    odd m and nan for even m; at x = inf it is nan for m > 0."""
    return polygamma_p.bind(m, x)


@polygamma_p.def_impl
@quiet
def _polygamma_impl(m, x):
    m, x = np.broadcast_arrays(m, x)
    order = np.where(np.isfinite(m) & (m >= 0) & (m == np.floor(m)), m, np.nan)
    out = np.where(order == 0, _digamma_impl(x), scipy_special().polygamma(order, x))
    pole = (x <= 0) & (x == np.floor(x))
    odd = np.fmod(order, 2) == 1
    out = np.where(pole, np.where(odd, np.inf, np.nan), out)
    out = np.where((x == np.inf) & (order != 0), np.nan, out)
    return out.astype(x.dtype, copy=False)


polygamma_p.def_abstract_eval(elementwise_abstract_eval("polygamma", is_float))
polygamma_p.def_weak_type_rule(weak_if_all_weak)


def _polygamma_jvp_m(t, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


def _polygamma_jvp_x(t, m, x):
    return binary.mul(t, polygamma(binary.add(m, constant_like(m, 1)), x))


ad.defjvp(polygamma_p, _polygamma_jvp_m, _polygamma_jvp_x)
lowering_rules[polygamma_p] = lambda ctx, m, x: ctx.op(
    "chlo.polygamma", ctx.broadcast_operands(m, x)
)
batch_rules[polygamma_p] = broadcasting.broadcasting_batch_rule(polygamma_p)
