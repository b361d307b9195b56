"""Dtype conversions: convert_element_type and bitcast_convert_type, one block each.

Conversions follow XLA: float to int truncates toward zero and saturates, NaN becomes 0, complex
to real keeps the real part; `convert_element_type`'s result is weak as its `weak_type` param
says. A bitcast to a narrower type adds a trailing dimension (least significant piece first) and
is never weak.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, Tracer, set_current_trace, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules, move_batch_dim
from tracejit._src.interpreters.eval import eval_trace
from tracejit._src.lax.standard import (
    dtype_name,
    int_bounds,
    is_array,
    never_weak,
    vectorized_batch_rule,
)
from tracejit._src.lowering.lower import lowering_rules

# --- convert_element_type -------------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")


def convert_element_type(operand, new_dtype):
    """Elementwise conversion to `new_dtype`, as XLA converts: floats to integers truncate
    toward zero and saturate (NaN becomes 0), complex to real keeps the real part, and the
    result is never weakly typed."""
    if new_dtype is None:
        raise ValueError("dtype must be specified.")
    new_dtype = dtypes.check_user_dtype(new_dtype, "convert_element_type")
    if is_array(operand):
        if operand.dtype == new_dtype and not operand.weak_type:
            return operand
        old_dtype = operand.dtype
    else:
        old_dtype = dtypes.dtype_of(operand)
    if dtypes.is_complex(old_dtype) and not dtypes.is_complex(new_dtype):
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
    if not isinstance(operand, Tracer):  # a constant: converted now, as JAX does (no equation)
        with set_current_trace(eval_trace):
            return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False)


def _float_to_int(x, dtype):
    """Truncates toward zero, saturating out-of-range values and sending NaN to 0."""
    low, high = int_bounds(dtype)
    is_nan = np.isnan(x)
    if dtype.itemsize < 8:  # the bounds are exact float64s: clip, then truncate in the cast
        out = np.fmin(np.fmax(x, np.float64(low)), np.float64(high)).astype(dtype)
        return np.where(is_nan, 0, out).astype(dtype, copy=False) if is_nan.any() else out
    x = np.array(x, np.float64)  # a copy to work in; exact for every narrower float
    np.copyto(x, 0.0, where=is_nan)
    too_big = x >= float(high)  # 2**63 or 2**64: past the largest value, not castable
    np.clip(x, low, high, out=x)
    np.copyto(x, 0.0, where=too_big)
    out = x.astype(dtype)
    np.copyto(out, high, where=too_big)
    return out


@convert_element_type_p.def_impl
def _convert_element_type_impl(operand, *, new_dtype, weak_type):
    old = operand.dtype
    if old == new_dtype:
        return operand
    _check_not_keys(old, new_dtype)
    if dtypes.is_complex(old) and not dtypes.is_complex(new_dtype):
        operand = operand.real
        old = operand.dtype
    if dtypes.is_int(new_dtype) and dtypes.is_float(old):
        return _float_to_int(operand, new_dtype)
    if _may_overflow(old, new_dtype):
        with np.errstate(over="ignore"):  # overflow to inf is the intended result
            return operand.astype(new_dtype)
    return operand.astype(new_dtype)


_OVERFLOWS = {}  # (old, new) -> whether converting may overflow to inf (NumPy then warns)


def _may_overflow(old: np.dtype, new: np.dtype) -> bool:
    overflows = _OVERFLOWS.get((old, new))
    if overflows is None:
        if not dtypes.is_inexact(new):
            overflows = False
        else:
            top = dtypes.finfo(old).max if dtypes.is_inexact(old) else 1
            top = int_bounds(old)[1] if dtypes.is_int(old) else top
            overflows = float(top) > float(dtypes.finfo(new).max)
        _OVERFLOWS[(old, new)] = overflows
    return overflows


@convert_element_type_p.def_abstract_eval
def _convert_element_type_abstract_eval(operand, *, new_dtype, weak_type):
    if operand.dtype != new_dtype:
        _check_not_keys(operand.dtype, new_dtype)
    return ShapedArray(operand.shape, new_dtype, weak_type)


def _check_not_keys(old: np.dtype, new: np.dtype) -> None:
    """Typed PRNG keys are not numbers: `random.key_data` gives their words."""
    if old == dtypes.key_fry or new == dtypes.key_fry:
        raise ValueError(f"Cannot convert_element_type from {dtype_name(old)} to {dtype_name(new)}")


convert_element_type_p.def_weak_type_rule(lambda weak_types, params: params["weak_type"])


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type):
    (operand,), (t,) = primals, tangents
    out = convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
    old_dtype = ad.get_aval(operand).dtype
    if type(t) is ad.Zero or not (dtypes.is_inexact(old_dtype) and dtypes.is_inexact(new_dtype)):
        return out, ad.Zero.from_primal_value(out)  # integers and booleans: no derivative
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type):
    aval = operand.aval
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type)]


ad.jvp_rules[convert_element_type_p] = _convert_element_type_jvp
ad.mark_linear(convert_element_type_p, 0)
transpose_rules[convert_element_type_p] = _convert_element_type_transpose
lowering_rules[convert_element_type_p] = lambda ctx, x, *, new_dtype, weak_type: ctx.block.convert(
    x, new_dtype
)
batch_rules[convert_element_type_p] = vectorized_batch_rule(convert_element_type_p)

# --- bitcast_convert_type -------------------------------------------------------------------
bitcast_convert_type_p = Primitive("bitcast_convert_type")


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of `operand` as `new_dtype`. A narrower `new_dtype` adds a trailing
    dimension (one element per piece, least significant first); a wider one consumes a trailing
    dimension of the width ratio."""
    new_dtype = dtypes.check_user_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


@bitcast_convert_type_p.def_impl
def _bitcast_convert_type_impl(operand, *, new_dtype):
    old = operand.dtype
    if old.itemsize == new_dtype.itemsize:
        return operand.view(new_dtype)
    if old.itemsize > new_dtype.itemsize:  # a trailing unit axis splits into the pieces
        return operand.reshape(operand.shape + (1,)).view(new_dtype)
    return np.ascontiguousarray(operand).view(new_dtype).reshape(operand.shape[:-1])


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_convert_type_abstract_eval(operand, *, new_dtype):
    old = operand.dtype
    if old != new_dtype and any(d == np.bool_ or dtypes.is_complex(d) for d in (old, new_dtype)):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the operand "
            f"and destination types match. Got operand dtype={old}, new_dtype={new_dtype!r}. "
            "Consider using the arr.view() method instead."
        )
    old_bits, new_bits = old.itemsize * 8, new_dtype.itemsize * 8
    shape = operand.shape
    if old_bits > new_bits:
        shape = shape + (old_bits // new_bits,)
    elif old_bits < new_bits:
        if not shape or shape[-1] * old_bits != new_bits:
            last = shape[-1] if shape else "(no trailing dimension)"
            raise ValueError(
                f"Attempting to convert array of shape {shape} from {old} of size {old_bits} "
                f"bits to {new_dtype} of size {new_bits}, bits but {last} * {old_bits} != "
                f"{new_bits}"
            )
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype)


bitcast_convert_type_p.def_weak_type_rule(never_weak)
ad.defjvp_zero(bitcast_convert_type_p)
lowering_rules[bitcast_convert_type_p] = lambda ctx, x, *, new_dtype: ctx.op(
    "stablehlo.bitcast_convert", [x]
)


def _bitcast_convert_type_batch(values, dims, *, new_dtype):
    (operand,), (bd,) = values, dims
    old = dtypes.dtype_of(operand)
    # A narrower type adds a trailing dimension, a wider one consumes it: the batch dimension
    # must not be that one.
    if old.itemsize < new_dtype.itemsize and bd == len(shape_of(operand)) - 1:
        operand, bd = move_batch_dim(operand, bd, 0), 0
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype), bd


batch_rules[bitcast_convert_type_p] = _bitcast_convert_type_batch

# --- reduce_precision -----------------------------------------------------------------------
reduce_precision_p = Primitive("reduce_precision")


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """`operand` rounded to a float format of `exponent_bits` exponent and `mantissa_bits`
    mantissa bits and back, as XLA rounds: to nearest even; too large gives inf, too small
    (below the format's normal numbers) gives a signed zero; NaN stays NaN."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}"
        )
    return reduce_precision_p.bind(
        operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits
    )


@reduce_precision_p.def_impl
def _reduce_precision_impl(operand, *, exponent_bits, mantissa_bits):
    """XLA's bit manipulation (its HLO evaluator's), on the unsigned integer view. NaNs are
    kept (rounding or a narrower exponent would make them inf); XLA computes bfloat16 in
    float32, whose conversion back gives the quiet NaN of the sign."""
    info = dtypes.finfo(operand.dtype)
    uint = np.dtype(f"u{operand.dtype.itemsize}")
    src_mantissa, src_exponent = int(info.nmant), int(info.nexp)
    original = bits = np.array(operand).view(uint)
    one = uint.type(1)
    sign_mask = one << uint.type(8 * uint.itemsize - 1)
    exponent_mask = uint.type(((1 << src_exponent) - 1) << src_mantissa)
    if mantissa_bits < src_mantissa:
        shift = uint.type(src_mantissa - mantissa_bits)
        last_bit_mask = one << shift
        bias = (bits & last_bit_mask) >> shift
        bias += (last_bit_mask >> one) - one
        bits = (bits + bias) & ~(last_bit_mask - one)
    if exponent_bits < src_exponent:
        exponent_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflows = exponent > uint.type((exponent_bias + reduced_bias) << src_mantissa)
        underflows = exponent <= uint.type((exponent_bias - reduced_bias) << src_mantissa)
        signed_zero = bits & sign_mask
        bits = np.where(overflows, signed_zero | exponent_mask, bits)
        bits = np.where(underflows, signed_zero, bits)
    nan = (original & ~sign_mask) > exponent_mask
    if operand.dtype == dtypes.bfloat16:
        original = (original & sign_mask) | uint.type(0x7FC0)
    bits = np.where(nan, original, bits).astype(uint)
    return bits.view(operand.dtype).reshape(operand.shape)


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(operand, *, exponent_bits, mantissa_bits):
    if not dtypes.is_float(operand.dtype):
        raise TypeError(
            f"reduce_precision does not accept dtype {operand.dtype.name}. Accepted dtypes are "
            "subtypes of floating."
        )
    return operand


reduce_precision_p.def_weak_type_rule(lambda weak_types, params: weak_types[0])
ad.deflinear(reduce_precision_p)  # JAX's rule: the tangent is rounded alike


def _reduce_precision_transpose(ct, operand, *, exponent_bits, mantissa_bits):
    return [reduce_precision_p.bind(ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)]


transpose_rules[reduce_precision_p] = _reduce_precision_transpose
lowering_rules[reduce_precision_p] = lambda ctx, x, *, exponent_bits, mantissa_bits: ctx.op(
    "stablehlo.reduce_precision",
    [x],
    {"exponent_bits": f"{exponent_bits} : i32", "mantissa_bits": f"{mantissa_bits} : i32"},
)
batch_rules[reduce_precision_p] = vectorized_batch_rule(reduce_precision_p)
