"""Trigonometric and hyperbolic primitives (sin ... atanh, and the two-argument atan2), one block
per primitive.

They follow `elementwise`'s conventions: floating or complex operands, results of the operand's
dtype, NumPy implementations silent about floating-point exceptions (`standard.quiet`), JVP
rules with JAX's formulas built from the wrappers of `elementwise` and `binary` (so that they
differentiate again); tanh's reads its own result (`standard.jvp_using_result`).
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import binary, broadcasting, elementwise
from tracejit._src.lax.standard import (
    check_default_accuracy,
    constant_like,
    elementwise_abstract_eval,
    is_float_or_complex,
    jvp_using_result,
    lower_binary,
    lower_unary,
    quiet,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules

# --- sin ------------------------------------------------------------------------------------
sin_p = Primitive("sin")


def sin(x, *, accuracy=None):
    r"""Elementwise sine: :math:`\sin(x)`."""
    check_default_accuracy("sin", accuracy)
    return sin_p.bind(x)


sin_p.def_impl(quiet(np.sin))
sin_p.def_abstract_eval(elementwise_abstract_eval("sin", is_float_or_complex))
sin_p.def_weak_type_rule(weak_if_all_weak)


def _sin_jvp(t, x):
    return binary.mul(t, cos(x))


ad.defjvp(sin_p, _sin_jvp)
lowering_rules[sin_p] = lambda ctx, x: ctx.op("stablehlo.sine", [x])
batch_rules[sin_p] = vectorized_batch_rule(sin_p)

# --- cos ------------------------------------------------------------------------------------
cos_p = Primitive("cos")


def cos(x, *, accuracy=None):
    r"""Elementwise cosine: :math:`\cos(x)`."""
    check_default_accuracy("cos", accuracy)
    return cos_p.bind(x)


cos_p.def_impl(quiet(np.cos))
cos_p.def_abstract_eval(elementwise_abstract_eval("cos", is_float_or_complex))
cos_p.def_weak_type_rule(weak_if_all_weak)


def _cos_jvp(t, x):
    return elementwise.neg(binary.mul(t, sin(x)))


ad.defjvp(cos_p, _cos_jvp)
lowering_rules[cos_p] = lower_unary("stablehlo.cosine")
batch_rules[cos_p] = vectorized_batch_rule(cos_p)

# --- tan ------------------------------------------------------------------------------------
tan_p = Primitive("tan")


def tan(x, *, accuracy=None):
    r"""Elementwise tangent: :math:`\tan(x)`."""
    check_default_accuracy("tan", accuracy)
    return tan_p.bind(x)


tan_p.def_impl(quiet(np.tan))
tan_p.def_abstract_eval(elementwise_abstract_eval("tan", is_float_or_complex))
tan_p.def_weak_type_rule(weak_if_all_weak)


def _tan_jvp(t, ans, x):
    return binary.mul(t, binary.add(constant_like(x, 1), elementwise.square(ans)))


ad.jvp_rules[tan_p] = jvp_using_result(tan_p, _tan_jvp)
lowering_rules[tan_p] = lower_unary("stablehlo.tan")
batch_rules[tan_p] = vectorized_batch_rule(tan_p)

# --- asin -----------------------------------------------------------------------------------
asin_p = Primitive("asin")


def asin(x):
    r"""Elementwise arc sine: :math:`\mathrm{asin}(x)` (nan outside [-1, 1] for reals)."""
    return asin_p.bind(x)


asin_p.def_impl(quiet(np.arcsin))
asin_p.def_abstract_eval(elementwise_abstract_eval("asin", is_float_or_complex))
asin_p.def_weak_type_rule(weak_if_all_weak)


def _asin_jvp(t, x):
    return binary.mul(t, elementwise.rsqrt(binary.sub(constant_like(x, 1), elementwise.square(x))))


ad.defjvp(asin_p, _asin_jvp)
lowering_rules[asin_p] = lower_unary("chlo.asin")
batch_rules[asin_p] = vectorized_batch_rule(asin_p)

# --- acos -----------------------------------------------------------------------------------
acos_p = Primitive("acos")


def acos(x):
    r"""Elementwise arc cosine: :math:`\mathrm{acos}(x)` (nan outside [-1, 1] for reals)."""
    return acos_p.bind(x)


acos_p.def_impl(quiet(np.arccos))
acos_p.def_abstract_eval(elementwise_abstract_eval("acos", is_float_or_complex))
acos_p.def_weak_type_rule(weak_if_all_weak)


def _acos_jvp(t, x):
    return binary.mul(
        t,
        elementwise.neg(elementwise.rsqrt(binary.sub(constant_like(x, 1), elementwise.square(x)))),
    )


ad.defjvp(acos_p, _acos_jvp)
lowering_rules[acos_p] = lower_unary("chlo.acos")
batch_rules[acos_p] = vectorized_batch_rule(acos_p)

# --- atan -----------------------------------------------------------------------------------
atan_p = Primitive("atan")


def atan(x):
    r"""Elementwise arc tangent: :math:`\mathrm{atan}(x)`."""
    return atan_p.bind(x)


atan_p.def_impl(quiet(np.arctan))  # complex atan has poles at +-1j
atan_p.def_abstract_eval(elementwise_abstract_eval("atan", is_float_or_complex))
atan_p.def_weak_type_rule(weak_if_all_weak)


def _atan_jvp(t, x):
    return binary.div(t, binary.add(constant_like(x, 1), elementwise.square(x)))


ad.defjvp(atan_p, _atan_jvp)
lowering_rules[atan_p] = lower_unary("chlo.atan")
batch_rules[atan_p] = vectorized_batch_rule(atan_p)

# --- atan2 ----------------------------------------------------------------------------------
atan2_p = Primitive("atan2")


def atan2(x, y):
    r"""Elementwise two-argument arc tangent :math:`\mathrm{atan}(x / y)`, in the quadrant of
    the point (y, x)."""
    return atan2_p.bind(x, y)


@atan2_p.def_impl
@quiet
def _atan2_impl(x, y):
    if x.dtype.kind != "c":
        return np.arctan2(x, y)
    out = -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
    return out if out.dtype == x.dtype else out.astype(x.dtype)


atan2_p.def_abstract_eval(elementwise_abstract_eval("atan2", is_float_or_complex))
atan2_p.def_weak_type_rule(weak_if_all_weak)


def _atan2_jvp_lhs(t, x, y):
    return binary.mul(
        t, binary.div(y, binary.add(elementwise.square(x), elementwise.square(y)))
    )  # y / (x**2 + y**2)


def _atan2_jvp_rhs(t, x, y):
    return binary.mul(
        t, binary.div(elementwise.neg(x), binary.add(elementwise.square(x), elementwise.square(y)))
    )  # -x / (x**2 + y**2)


ad.defjvp(atan2_p, _atan2_jvp_lhs, _atan2_jvp_rhs)
lowering_rules[atan2_p] = lower_binary("stablehlo.atan2")
batch_rules[atan2_p] = broadcasting.broadcasting_batch_rule(atan2_p)

# --- sinh -----------------------------------------------------------------------------------
sinh_p = Primitive("sinh")


def sinh(x):
    r"""Elementwise hyperbolic sine: :math:`\sinh(x)`."""
    return sinh_p.bind(x)


sinh_p.def_impl(quiet(np.sinh))
sinh_p.def_abstract_eval(elementwise_abstract_eval("sinh", is_float_or_complex))
sinh_p.def_weak_type_rule(weak_if_all_weak)


def _sinh_jvp(t, x):
    return binary.mul(t, cosh(x))


ad.defjvp(sinh_p, _sinh_jvp)
lowering_rules[sinh_p] = lower_unary("chlo.sinh")
batch_rules[sinh_p] = vectorized_batch_rule(sinh_p)

# --- cosh -----------------------------------------------------------------------------------
cosh_p = Primitive("cosh")


def cosh(x):
    r"""Elementwise hyperbolic cosine: :math:`\cosh(x)`."""
    return cosh_p.bind(x)


cosh_p.def_impl(quiet(np.cosh))
cosh_p.def_abstract_eval(elementwise_abstract_eval("cosh", is_float_or_complex))
cosh_p.def_weak_type_rule(weak_if_all_weak)


def _cosh_jvp(t, x):
    return binary.mul(t, sinh(x))


ad.defjvp(cosh_p, _cosh_jvp)
lowering_rules[cosh_p] = lower_unary("chlo.cosh")
batch_rules[cosh_p] = vectorized_batch_rule(cosh_p)

# --- tanh -----------------------------------------------------------------------------------
tanh_p = Primitive("tanh")


def tanh(x, *, accuracy=None):
    r"""Elementwise hyperbolic tangent: :math:`\tanh(x)`."""
    check_default_accuracy("tanh", accuracy)
    return tanh_p.bind(x)


tanh_p.def_impl(np.tanh)
tanh_p.def_abstract_eval(elementwise_abstract_eval("tanh", is_float_or_complex))
tanh_p.def_weak_type_rule(weak_if_all_weak)


def _tanh_jvp(t, ans, x):  # (1 - tanh^2) t, as (t + t tanh)(1 - tanh)
    return binary.mul(binary.add(t, binary.mul(t, ans)), binary.sub(constant_like(x, 1), ans))


ad.jvp_rules[tanh_p] = jvp_using_result(tanh_p, _tanh_jvp)
lowering_rules[tanh_p] = lower_unary("stablehlo.tanh")
batch_rules[tanh_p] = vectorized_batch_rule(tanh_p)

# --- asinh ----------------------------------------------------------------------------------
asinh_p = Primitive("asinh")


def asinh(x):
    r"""Elementwise inverse hyperbolic sine: :math:`\mathrm{asinh}(x)`."""
    return asinh_p.bind(x)


@asinh_p.def_impl
@quiet
def _asinh_impl(x):
    # XLA's complex asinh does not see the sign of a zero part (asinh(-0-3j) is 1.76-1.57j,
    # NumPy's -1.76-1.57j): adding +0 turns -0 into +0 before NumPy's branch cut.
    return np.arcsinh(x + x.dtype.type(0)) if x.dtype.kind == "c" else np.arcsinh(x)


asinh_p.def_abstract_eval(elementwise_abstract_eval("asinh", is_float_or_complex))
asinh_p.def_weak_type_rule(weak_if_all_weak)


def _asinh_jvp(t, x):
    return binary.mul(t, elementwise.rsqrt(binary.add(elementwise.square(x), constant_like(x, 1))))


ad.defjvp(asinh_p, _asinh_jvp)
lowering_rules[asinh_p] = lower_unary("chlo.asinh")
batch_rules[asinh_p] = vectorized_batch_rule(asinh_p)

# --- acosh ----------------------------------------------------------------------------------
acosh_p = Primitive("acosh")


def acosh(x):
    r"""Elementwise inverse hyperbolic cosine: :math:`\mathrm{acosh}(x)` (nan below 1 for
    reals)."""
    return acosh_p.bind(x)


acosh_p.def_impl(quiet(np.arccosh))
acosh_p.def_abstract_eval(elementwise_abstract_eval("acosh", is_float_or_complex))
acosh_p.def_weak_type_rule(weak_if_all_weak)


def _acosh_jvp(t, x):
    one = constant_like(x, 1)
    if get_aval(x).dtype.kind == "c":
        # 1/sqrt(x^2 - 1) (as for reals) has the wrong sign where Re(x) < 0
        return binary.mul(
            t,
            binary.mul(
                elementwise.rsqrt(binary.sub(x, one)), elementwise.rsqrt(binary.add(x, one))
            ),
        )
    return binary.mul(t, elementwise.rsqrt(binary.sub(elementwise.square(x), one)))


ad.defjvp(acosh_p, _acosh_jvp)
lowering_rules[acosh_p] = lower_unary("chlo.acosh")
batch_rules[acosh_p] = vectorized_batch_rule(acosh_p)

# --- atanh ----------------------------------------------------------------------------------
atanh_p = Primitive("atanh")


def atanh(x):
    r"""Elementwise inverse hyperbolic tangent: :math:`\mathrm{atanh}(x)` (+-inf at +-1, nan
    beyond for reals)."""
    return atanh_p.bind(x)


atanh_p.def_impl(quiet(np.arctanh))
atanh_p.def_abstract_eval(elementwise_abstract_eval("atanh", is_float_or_complex))
atanh_p.def_weak_type_rule(weak_if_all_weak)


def _atanh_jvp(t, x):
    one = constant_like(x, 1)
    return binary.mul(
        elementwise.integer_pow(binary.add(one, x), -1), binary.div(t, binary.sub(one, x))
    )


ad.defjvp(atanh_p, _atanh_jvp)
lowering_rules[atanh_p] = lower_unary("chlo.atanh")
batch_rules[atanh_p] = vectorized_batch_rule(atanh_p)
