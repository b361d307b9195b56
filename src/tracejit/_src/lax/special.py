"""Special functions: erf, erfc, erf_inv, lgamma, digamma, polygamma, zeta and the
exponentially scaled Bessel functions bessel_i0e and bessel_i1e, one block each.

Eagerly most run SciPy (imported on first use), computing in the operand's dtype or casting
back to it, with XLA's values where the two disagree at the edges; compiled, they lower to CHLO
operations, which XLA expands. Their derivatives are each other: lgamma' = digamma,
digamma' = polygamma(1, .), polygamma(m, .)' = polygamma(m+1, .), and i0e' and i1e' are made of
i0e and i1e. The rule pieces they share with the other unary primitives come from `elementwise`.

XLA has no operation for bessel_i0e: it is JAX's algorithm (Cephes' Chebyshev series) in lax
operations, staged once per operand type by `staged_algorithm`, which evaluates the jaxpr
eagerly and emits it inline when compiled, so that both agree with JAX. The incomplete gamma
and beta functions (`lax/control_flow/incomplete.py`) are built the same way.
"""

from __future__ import annotations

import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import (
    binary,
    broadcasting,
    comparison,
    conversions,
    elementwise,
    selection,
    shapes,
)
from tracejit._src.lax.standard import (
    broadcast_shapes,
    constant_like,
    elementwise_abstract_eval,
    is_float,
    jvp_using_result,
    keep_dtype,
    lower_binary,
    lower_unary,
    quiet,
    scipy_special,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules


def _upcast_and_broadcast(algorithm, operands):
    """`algorithm` on operands broadcast to one shape, in float32 for the half-precision
    dtypes (too few digits for the algorithms' coefficients and stopping rules), as JAX
    computes it."""
    out_shape = broadcast_shapes(algorithm.__name__, *map(get_aval, operands))
    operands = [broadcasting.broadcast_to_shape(x, out_shape) for x in operands]
    dtype = get_aval(operands[0]).dtype
    if dtype.itemsize >= 4:
        return algorithm(*operands)
    wide = [conversions.convert_element_type(x, np.float32) for x in operands]
    return conversions.convert_element_type(algorithm(*wide), dtype)


def staged_algorithm(algorithm):
    """The impl and lowering rules of an elementwise primitive computed by `algorithm`, a
    function of its operands in lax operations (loops included): its jaxpr, staged once per
    operand types, is evaluated on NumPy eagerly and lowered inline when compiled."""

    @functools.lru_cache(maxsize=64)
    def staged(avals):
        return trace_to_jaxpr(
            lambda *xs: [_upcast_and_broadcast(algorithm, xs)],
            list(avals),
            DebugInfo(algorithm, algorithm.__name__),
        )

    def impl(*operands):
        closed = staged(tuple(ShapedArray(np.shape(x), np.dtype(x.dtype)) for x in operands))
        return eval_jaxpr_numpy(closed.jaxpr, closed.consts, list(operands))[0]

    def lowering(ctx, *operands):
        closed = staged(tuple(aval.strip_weak_type() for aval in ctx.avals_in))
        return ctx.lower_sub_jaxpr(ctx.block, closed, list(operands))[0]

    return impl, lowering


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

# --- zeta ---------------------------------------------------------------------------------------
zeta_p = Primitive("zeta")


def zeta(x, q):
    r"""Elementwise Hurwitz zeta function :math:`\zeta(x, q) = \sum_{n \ge 0} (n + q)^{-x}`
    (inf at x = 1; NaN for x < 1, x = inf or q = inf; at the poles q = 0, -1, ... inf for
    even integer x, NaN otherwise, as XLA computes it). Not differentiable, as in JAX."""
    return zeta_p.bind(x, q)


@zeta_p.def_impl
@quiet
def _zeta_impl(x, q):
    out = scipy_special().zeta(x, q)
    at_pole = (q <= 0) & (q == np.floor(q))
    even = x == 2 * np.floor(x / 2)
    out = np.where(at_pole, np.where(even | (x == 1), np.inf, np.nan), out)
    out = np.where((x == np.inf) | (q == np.inf), np.nan, out)
    return np.asarray(out, dtype=np.result_type(x, q))


zeta_p.def_abstract_eval(elementwise_abstract_eval("zeta", is_float))
zeta_p.def_weak_type_rule(weak_if_all_weak)
ad.not_differentiable(zeta_p, "JAX defines none (scipy.special.zeta differentiates a series)")
lowering_rules[zeta_p] = lower_binary("chlo.zeta")
batch_rules[zeta_p] = broadcasting.broadcasting_batch_rule(zeta_p)

# --- bessel_i0e ---------------------------------------------------------------------------------
bessel_i0e_p = Primitive("bessel_i0e")


def bessel_i0e(x):
    r"""Elementwise exponentially scaled modified Bessel function of order 0:
    :math:`e^{-|x|} I_0(x)`."""
    return bessel_i0e_p.bind(x)


# Cephes' Chebyshev coefficients of i0e on [0, 8] (in x/2 - 2) and on (8, inf) (in 32/x - 2,
# times sqrt(x)); float32 uses the tails of the float64 series.
_I0E_NEAR = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
_I0E_FAR = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip
_I0E_TERMS = {np.dtype(np.float32): (18, 7), np.dtype(np.float64): (30, 25)}


def _chebyshev(x, coefficients):
    """sum_k' c_k T_k(x/2) by Clenshaw's recurrence (Cephes' `chbevl`)."""
    b0 = b1 = b2 = constant_like(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = binary.add(binary.sub(binary.mul(x, b1), b2), constant_like(x, c))
    return binary.mul(constant_like(x, 0.5), binary.sub(b0, b2))


def _bessel_i0e_values(x):
    near_terms, far_terms = _I0E_TERMS[get_aval(x).dtype]
    x = elementwise.abs(x)
    near = _chebyshev(
        binary.sub(binary.mul(constant_like(x, 0.5), x), constant_like(x, 2)),
        _I0E_NEAR[-near_terms:],
    )
    far = binary.div(
        _chebyshev(
            binary.sub(binary.div(constant_like(x, 32), x), constant_like(x, 2)),
            _I0E_FAR[-far_terms:],
        ),
        elementwise.sqrt(x),
    )
    return selection.select(comparison.le(x, constant_like(x, 8)), near, far)


_bessel_i0e_impl, _bessel_i0e_lowering = staged_algorithm(_bessel_i0e_values)
bessel_i0e_p.def_impl(_bessel_i0e_impl)
bessel_i0e_p.def_abstract_eval(elementwise_abstract_eval("bessel_i0e", is_float))
bessel_i0e_p.def_weak_type_rule(weak_if_all_weak)


def _bessel_i0e_jvp(t, ans, x):
    return binary.mul(t, binary.sub(bessel_i1e(x), binary.mul(elementwise.sign(x), ans)))


ad.jvp_rules[bessel_i0e_p] = jvp_using_result(bessel_i0e_p, _bessel_i0e_jvp)
lowering_rules[bessel_i0e_p] = _bessel_i0e_lowering
batch_rules[bessel_i0e_p] = vectorized_batch_rule(bessel_i0e_p)

# --- bessel_i1e ---------------------------------------------------------------------------------
bessel_i1e_p = Primitive("bessel_i1e")


def bessel_i1e(x):
    r"""Elementwise exponentially scaled modified Bessel function of order 1:
    :math:`e^{-|x|} I_1(x)` (odd: -0 at -0)."""
    return bessel_i1e_p.bind(x)


_i1e = keep_dtype(lambda x: scipy_special().i1e(x))


@bessel_i1e_p.def_impl
def _bessel_i1e_impl(x):
    return np.where(x == 0, x, _i1e(x))  # SciPy's i1e(-0.) is +0., XLA's -0.


bessel_i1e_p.def_abstract_eval(elementwise_abstract_eval("bessel_i1e", is_float))
bessel_i1e_p.def_weak_type_rule(weak_if_all_weak)


def _bessel_i1e_jvp(t, ans, x):
    # i1e' = i0e - i1e (sign(x) + 1/x), whose limit at 0 is 1/2
    eps = constant_like(x, dtypes.finfo(get_aval(x).dtype).eps)
    not_tiny = comparison.gt(elementwise.abs(x), eps)
    safe_x = selection.select(not_tiny, x, shapes.broadcast_in_dim(eps, shape_of(x), ()))
    slope = binary.sub(
        bessel_i0e(safe_x),
        binary.mul(
            ans, binary.add(elementwise.sign(safe_x), binary.div(constant_like(x, 1), safe_x))
        ),
    )
    half = shapes.broadcast_in_dim(constant_like(x, 0.5), shape_of(x), ())
    return binary.mul(t, selection.select(not_tiny, slope, half))


ad.jvp_rules[bessel_i1e_p] = jvp_using_result(bessel_i1e_p, _bessel_i1e_jvp)
lowering_rules[bessel_i1e_p] = lower_unary("chlo.bessel_i1e")
batch_rules[bessel_i1e_p] = vectorized_batch_rule(bessel_i1e_p)
