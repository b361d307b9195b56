"""Bitwise primitives on integers (and logical ones on bools): not, and, or, xor, the shifts,
population_count and clz, one block per primitive.

None is differentiable (their tangents are symbolic zeros). The eager implementations follow
XLA where it differs from NumPy: shifts by a negative amount or by the bit width or more give 0
(`shift_right_arithmetic`: the sign fill), and bit counts see the two's-complement pattern.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Primitive
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.lax import broadcasting
from tracejit._src.lax.standard import (
    elementwise_abstract_eval,
    is_int,
    is_int_or_bool,
    lower_binary,
    lower_unary,
    vectorized_batch_rule,
    weak_if_all_weak,
)
from tracejit._src.lowering.lower import lowering_rules


def _unsigned(dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


# --- not ------------------------------------------------------------------------------------
not_p = Primitive("not")


def bitwise_not(x):
    r"""Elementwise bitwise NOT of integers (:math:`\lnot x`), logical NOT of bools."""
    return not_p.bind(x)


not_ = bitwise_not

not_p.def_impl(np.invert)
not_p.def_abstract_eval(elementwise_abstract_eval("not", is_int_or_bool))
not_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(not_p)
lowering_rules[not_p] = lower_unary("stablehlo.not")
batch_rules[not_p] = vectorized_batch_rule(not_p)

# --- population_count -----------------------------------------------------------------------
population_count_p = Primitive("population_count")


def population_count(x):
    r"""Elementwise count of the bits set in an integer's two's-complement representation."""
    return population_count_p.bind(x)


_BYTE_POPCOUNT = np.array([i.bit_count() for i in range(256)], dtype=np.uint8)


@population_count_p.def_impl
def _population_count_impl(x):
    bits = x.view(_unsigned(x.dtype))  # NumPy's bitwise_count counts |x| for signed x
    if hasattr(np, "bitwise_count"):  # NumPy >= 2
        return np.bitwise_count(bits).astype(x.dtype)
    per_byte = _BYTE_POPCOUNT[np.asarray(bits).view(np.uint8)]
    counts = per_byte.reshape(np.shape(x) + (x.dtype.itemsize,)).sum(axis=-1)
    return counts.astype(x.dtype)


population_count_p.def_abstract_eval(elementwise_abstract_eval("population_count", is_int))
population_count_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(population_count_p)
lowering_rules[population_count_p] = lower_unary("stablehlo.popcnt")
batch_rules[population_count_p] = vectorized_batch_rule(population_count_p)

# --- clz ------------------------------------------------------------------------------------
clz_p = Primitive("clz")


def clz(x):
    r"""Elementwise count of leading zero bits in an integer's two's-complement representation
    (the bit width for 0)."""
    return clz_p.bind(x)


def _bit_length_32(u):
    """Bit lengths of unsigned values below 2**32 (exact in float64, whose exponent tells)."""
    return np.frexp(u.astype(np.float64))[1]


@clz_p.def_impl
def _clz_impl(x):
    bits = x.dtype.itemsize * 8
    u = x.view(_unsigned(x.dtype))
    if bits <= 32:
        length = _bit_length_32(u)
    else:
        high = u >> np.uint64(32)
        low = u & np.uint64(0xFFFFFFFF)
        length = np.where(high != 0, 32 + _bit_length_32(high), _bit_length_32(low))
    return (bits - length).astype(x.dtype)


clz_p.def_abstract_eval(elementwise_abstract_eval("clz", is_int))
clz_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(clz_p)
lowering_rules[clz_p] = lower_unary("stablehlo.count_leading_zeros")
batch_rules[clz_p] = vectorized_batch_rule(clz_p)
# --- and ------------------------------------------------------------------------------------
and_p = Primitive("and")


def bitwise_and(x, y):
    r"""Elementwise bitwise AND of integers, logical AND of bools: :math:`x \wedge y`."""
    return and_p.bind(x, y)


and_ = bitwise_and

and_p.def_impl(np.bitwise_and)
and_p.def_abstract_eval(elementwise_abstract_eval("and", is_int_or_bool))
and_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(and_p)
lowering_rules[and_p] = lower_binary("stablehlo.and")
batch_rules[and_p] = broadcasting.broadcasting_batch_rule(and_p)

# --- or -------------------------------------------------------------------------------------
or_p = Primitive("or")


def bitwise_or(x, y):
    r"""Elementwise bitwise OR of integers, logical OR of bools: :math:`x \vee y`."""
    return or_p.bind(x, y)


or_ = bitwise_or

or_p.def_impl(np.bitwise_or)
or_p.def_abstract_eval(elementwise_abstract_eval("or", is_int_or_bool))
or_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(or_p)
lowering_rules[or_p] = lower_binary("stablehlo.or")
batch_rules[or_p] = broadcasting.broadcasting_batch_rule(or_p)

# --- xor ------------------------------------------------------------------------------------
xor_p = Primitive("xor")


def bitwise_xor(x, y):
    r"""Elementwise bitwise exclusive OR of integers, logical XOR of bools: :math:`x \oplus y`."""
    return xor_p.bind(x, y)


xor = bitwise_xor

xor_p.def_impl(np.bitwise_xor)
xor_p.def_abstract_eval(elementwise_abstract_eval("xor", is_int_or_bool))
xor_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(xor_p)
lowering_rules[xor_p] = lower_binary("stablehlo.xor")
batch_rules[xor_p] = broadcasting.broadcasting_batch_rule(xor_p)

# --- shift_left -----------------------------------------------------------------------------
shift_left_p = Primitive("shift_left")


def shift_left(x, y):
    r"""Elementwise left shift :math:`x \ll y`; 0 when y is negative or at least the bit
    width."""
    return shift_left_p.bind(x, y)


shift_left_p.def_impl(np.left_shift)  # NumPy already gives 0 for out-of-range shifts
shift_left_p.def_abstract_eval(elementwise_abstract_eval("shift_left", is_int))
shift_left_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(shift_left_p)
lowering_rules[shift_left_p] = lower_binary("stablehlo.shift_left")
batch_rules[shift_left_p] = broadcasting.broadcasting_batch_rule(shift_left_p)

# --- shift_right_logical --------------------------------------------------------------------
shift_right_logical_p = Primitive("shift_right_logical")


def shift_right_logical(x, y):
    r"""Elementwise logical right shift :math:`x \gg y`, filling with zeros (signed operands
    are shifted as their unsigned bit patterns); 0 when y is negative or at least the bit
    width."""
    return shift_right_logical_p.bind(x, y)


@shift_right_logical_p.def_impl
def _shift_right_logical_impl(x, y):
    if x.dtype.kind == "u":
        return np.right_shift(x, y)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.right_shift(x.view(unsigned), y.view(unsigned)).view(x.dtype)


shift_right_logical_p.def_abstract_eval(elementwise_abstract_eval("shift_right_logical", is_int))
shift_right_logical_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(shift_right_logical_p)
lowering_rules[shift_right_logical_p] = lower_binary("stablehlo.shift_right_logical")
batch_rules[shift_right_logical_p] = broadcasting.broadcasting_batch_rule(shift_right_logical_p)

# --- shift_right_arithmetic -----------------------------------------------------------------
shift_right_arithmetic_p = Primitive("shift_right_arithmetic")


def shift_right_arithmetic(x, y):
    r"""Elementwise arithmetic right shift :math:`x \gg y`, filling with the sign bit (unsigned
    operands too); the sign fill when y is negative or at least the bit width."""
    return shift_right_arithmetic_p.bind(x, y)


@shift_right_arithmetic_p.def_impl
def _shift_right_arithmetic_impl(x, y):
    if x.dtype.kind == "i":
        return np.right_shift(x, y)  # NumPy already fills with the sign when out of range
    signed = np.dtype(f"i{x.dtype.itemsize}")
    return np.right_shift(x.view(signed), y.view(signed)).view(x.dtype)


shift_right_arithmetic_p.def_abstract_eval(
    elementwise_abstract_eval("shift_right_arithmetic", is_int)
)
shift_right_arithmetic_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(shift_right_arithmetic_p)
lowering_rules[shift_right_arithmetic_p] = lower_binary("stablehlo.shift_right_arithmetic")
batch_rules[shift_right_arithmetic_p] = broadcasting.broadcasting_batch_rule(
    shift_right_arithmetic_p
)

# --- mulhi ----------------------------------------------------------------------------------
mulhi_p = Primitive("mulhi")


def mulhi(x, y, /):
    r"""Elementwise high half of the double-width integer product: :math:`(x y) \gg b` for
    b-bit integers (signed or unsigned as the operands are)."""
    return mulhi_p.bind(x, y)


@mulhi_p.def_impl
def _mulhi_impl(x, y):
    bits = 8 * x.dtype.itemsize
    if bits < 64:
        wide = np.dtype(f"{x.dtype.kind}{2 * x.dtype.itemsize}")
        return ((x.astype(wide) * y.astype(wide)) >> bits).astype(x.dtype)
    product = np.asarray(x, object) * np.asarray(y, object)  # Python ints: 128 bits exactly
    return np.asarray(product >> bits).astype(x.dtype)


mulhi_p.def_abstract_eval(elementwise_abstract_eval("mulhi", is_int))
mulhi_p.def_weak_type_rule(weak_if_all_weak)
ad.defjvp_zero(mulhi_p)


def _mulhi_lowering(ctx, x, y):
    """XLA has no mulhi: widen, multiply and shift below 64 bits; at 64 bits, the product of
    unsigned 32-bit halves, corrected for signs (JAX's composite)."""
    x, y = ctx.broadcast_operands(x, y)
    block, aval = ctx.block, ctx.avals_out[0]
    dtype, bits = np.dtype(aval.dtype), 8 * np.dtype(aval.dtype).itemsize
    shift = "stablehlo.shift_right_" + ("arithmetic" if dtype.kind == "i" else "logical")

    def op(name, *operands):
        return block.op1(name, list(operands), operands[0].type)

    if bits < 64:
        wide = np.dtype(f"{dtype.kind}{2 * dtype.itemsize}")
        product = op("stablehlo.multiply", block.convert(x, wide), block.convert(y, wide))
        return block.convert(op(shift, product, block.full_like(product, bits)), dtype)
    xu, yu = block.convert(x, np.uint64), block.convert(y, np.uint64)

    def lo(v):
        return op("stablehlo.and", v, block.full_like(v, 0xFFFFFFFF))

    def hi(v):
        return op("stablehlo.shift_right_logical", v, block.full_like(v, 32))

    lo_lo, lo_hi = (
        op("stablehlo.multiply", lo(xu), lo(yu)),
        op("stablehlo.multiply", lo(xu), hi(yu)),
    )
    hi_lo, hi_hi = (
        op("stablehlo.multiply", hi(xu), lo(yu)),
        op("stablehlo.multiply", hi(xu), hi(yu)),
    )
    cross = op("stablehlo.add", op("stablehlo.add", lo(lo_hi), lo(hi_lo)), hi(lo_lo))
    high = op("stablehlo.add", hi(lo_hi), op("stablehlo.add", hi(hi_lo), hi(cross)))
    high = block.convert(op("stablehlo.add", hi_hi, high), dtype)
    if dtype.kind == "u":
        return high
    signs = [op("stablehlo.shift_right_arithmetic", v, block.full_like(v, 63)) for v in (x, y)]
    correction = op(
        "stablehlo.add",
        op("stablehlo.multiply", signs[0], y),
        op("stablehlo.multiply", signs[1], x),
    )
    return op("stablehlo.add", high, correction)


lowering_rules[mulhi_p] = _mulhi_lowering
batch_rules[mulhi_p] = broadcasting.broadcasting_batch_rule(mulhi_p)
