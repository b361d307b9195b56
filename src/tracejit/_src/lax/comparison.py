"""Comparison primitives: eq, ne, lt, le, gt, ge, one block per primitive.

Both operands have one dtype and broadcast as lax allows (`standard.broadcast_shapes`); the
result is bool, weak when both operands are. eq and ne take any dtype, the orderings no complex
numbers. None is differentiable (their tangents are symbolic zeros).

`lower_complex_chooser` lowers the lexicographic order of complex numbers that max/min
reductions and clamp choose by (StableHLO's compare orders no complex numbers).
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import broadcasting
from tracejit._src.lax.standard import (
    elementwise_abstract_eval,
    is_any,
    is_not_complex,
    quiet,
    real_ufuncs,
    weak_if_all_weak,
)
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

_BOOL = np.dtype(bool)


def lower_complex_chooser(block, a, b, dtype, is_max: bool, shape=()) -> hlo.Value:
    """max(a, b) (`is_max`) or min(a, b) of complex numbers in the order of the NumPy impls
    (np.maximum/np.minimum): lexicographic, real parts first, then imaginary parts; a NaN (in
    either part) wins, `a` before `b`; of two equal values, `b`. XLA's own maximum/minimum of
    complex numbers are not defined, and its compare orders no complex numbers: the parts are
    compared as floats."""
    part_dtype = np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)
    part_t, bool_t = hlo.tensor_type(shape, part_dtype), hlo.tensor_type(shape, np.bool_)
    value_t = hlo.tensor_type(shape, dtype)
    ar, ai, br, bi = (
        block.op1(f"stablehlo.{part}", [v], part_t) for v in (a, b) for part in ("real", "imag")
    )
    compare = block.compare

    def logical(name, x, y):
        return block.op1(f"stablehlo.{name}", [x, y], bool_t)

    direction = "GT" if is_max else "LT"
    a_wins = logical(
        "or",
        compare(ar, br, direction),
        logical("and", compare(ar, br, "EQ"), compare(ai, bi, direction)),
    )
    a_nan = logical("or", compare(ar, ar, "NE"), compare(ai, ai, "NE"))
    b_nan = logical("or", compare(br, br, "NE"), compare(bi, bi, "NE"))
    out = block.op1("stablehlo.select", [a_wins, a, b], value_t)
    out = block.op1("stablehlo.select", [b_nan, b, out], value_t)
    return block.op1("stablehlo.select", [a_nan, a, out], value_t)


def _compare_lowering(direction: str):
    def rule(ctx, x, y):
        x, y = ctx.broadcast_operands(x, y)
        return ctx.block.compare(x, y, direction)

    return rule


# --- eq -------------------------------------------------------------------------------------
def _on_key_words(compare, combine):
    """`compare` for NumPy values; typed keys (the only non-numbers compared) are equal when all
    their words are."""

    def impl(x, y):
        if x.dtype != dtypes.key_fry:
            return compare(x, y)
        return combine(compare(x["fry"], y["fry"]), axis=-1)

    return impl


eq_p = Primitive("eq")


def eq(x, y):
    r"""Elementwise equality :math:`x = y`, as bool."""
    return eq_p.bind(x, y)


eq_p.def_impl(_on_key_words(quiet(np.equal), np.all))
real_ufuncs[eq_p] = (np.equal, True)
eq_p.def_abstract_eval(elementwise_abstract_eval("eq", is_any, _BOOL))
eq_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(eq_p)
lowering_rules[eq_p] = _compare_lowering("EQ")
batch_rules[eq_p] = broadcasting.broadcasting_batch_rule(eq_p)

# --- ne -------------------------------------------------------------------------------------
ne_p = Primitive("ne")


def ne(x, y):
    r"""Elementwise inequality :math:`x \neq y`, as bool."""
    return ne_p.bind(x, y)


ne_p.def_impl(_on_key_words(quiet(np.not_equal), np.any))
real_ufuncs[ne_p] = (np.not_equal, True)
ne_p.def_abstract_eval(elementwise_abstract_eval("ne", is_any, _BOOL))
ne_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(ne_p)
lowering_rules[ne_p] = _compare_lowering("NE")
batch_rules[ne_p] = broadcasting.broadcasting_batch_rule(ne_p)

# --- lt -------------------------------------------------------------------------------------
lt_p = Primitive("lt")


def lt(x, y):
    r"""Elementwise less-than :math:`x < y`, as bool."""
    return lt_p.bind(x, y)


lt_p.def_impl(quiet(np.less))
lt_p.def_abstract_eval(elementwise_abstract_eval("lt", is_not_complex, _BOOL))
lt_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(lt_p)
lowering_rules[lt_p] = _compare_lowering("LT")
batch_rules[lt_p] = broadcasting.broadcasting_batch_rule(lt_p)

# --- le -------------------------------------------------------------------------------------
le_p = Primitive("le")


def le(x, y):
    r"""Elementwise less-or-equal :math:`x \leq y`, as bool."""
    return le_p.bind(x, y)


le_p.def_impl(quiet(np.less_equal))
le_p.def_abstract_eval(elementwise_abstract_eval("le", is_not_complex, _BOOL))
le_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(le_p)
lowering_rules[le_p] = _compare_lowering("LE")
batch_rules[le_p] = broadcasting.broadcasting_batch_rule(le_p)

# --- gt -------------------------------------------------------------------------------------
gt_p = Primitive("gt")


def gt(x, y):
    r"""Elementwise greater-than :math:`x > y`, as bool."""
    return gt_p.bind(x, y)


gt_p.def_impl(quiet(np.greater))
gt_p.def_abstract_eval(elementwise_abstract_eval("gt", is_not_complex, _BOOL))
gt_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(gt_p)
lowering_rules[gt_p] = _compare_lowering("GT")
batch_rules[gt_p] = broadcasting.broadcasting_batch_rule(gt_p)

# --- ge -------------------------------------------------------------------------------------
ge_p = Primitive("ge")


def ge(x, y):
    r"""Elementwise greater-or-equal :math:`x \geq y`, as bool."""
    return ge_p.bind(x, y)


ge_p.def_impl(quiet(np.greater_equal))
ge_p.def_abstract_eval(elementwise_abstract_eval("ge", is_not_complex, _BOOL))
ge_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(ge_p)
lowering_rules[ge_p] = _compare_lowering("GE")
batch_rules[ge_p] = broadcasting.broadcasting_batch_rule(ge_p)
