"""Contractions: dot_general and its wrappers lax.dot_general, lax.dot and lax.batch_matmul.

`dot_general` contracts the dimensions listed in `dimension_numbers`,
`((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`, and pairs up the batch
dimensions. The result's dimensions are, in order: the batch dimensions (in `lhs_batch`
order), the remaining lhs dimensions, then the remaining rhs dimensions, as in XLA's DotGeneral.

Result dtype: `preferred_element_type` when given (a wider integer accumulator, say), else a
dtype of the inputs: operands of different dtypes may be mixed, and the result takes the dtype
of the operand of the higher category (bool < integer < floating < complex), then the wider one,
then the signed integer over the unsigned one and bfloat16 over float16. The result is weak
only when both operands are. Integer results wrap around in their dtype; float16/bfloat16 are
computed in float32 and rounded once; a complex product converted to a real type keeps its real
part.

In eager mode the contraction is one `np.matmul`: each operand is transposed to (batch, free,
contracting) order and reshaped to a (batched) matrix, so plain and batched matrix products
reach BLAS without copies when the layout already fits.

`precision` is recorded (printed as JAX does) but has no effect on the NumPy computation,
which is always done at full precision of the computing dtype; of the algorithm presets, the
CPU has DEFAULT and F32_F32_F32, which that is.

Derivatives: dot_general is bilinear, so its JVP is `dot_general(t_lhs, rhs) + dot_general(lhs,
t_rhs)` with the same params, and its transpose with respect to one operand contracts the
result's cotangent with the other operand over that operand's free dimensions (pairing the
batch dimensions), then transposes and converts the product to the operand's own layout and
dtype, as JAX's rule does.
"""

from __future__ import annotations

import enum
import functools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.interpreters.batching import batch_rules
from tracejit._src.interpreters.transpose import is_undefined_primal
from tracejit._src.lax import conversions, shapes, sharding_constraints
from tracejit._src.lax.standard import check_no_sharding, quiet, weak_if_all_weak
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lowering_rules

# --------------------------------------------------------------------------------------------
# Precision


class Precision(enum.Enum):
    """The precision of a contraction on accelerators: `DEFAULT` (fastest, e.g. one bfloat16
    pass), `HIGH` (three bfloat16 passes, or tensorfloat32) or `HIGHEST` (full float32).
    Strings name them too: 'default'/'bfloat16'/'fastest', 'high'/'bfloat16_3x'/
    'tensorfloat32', 'highest'/'float32'."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_NAMES.get(value) if isinstance(value, str) else None

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {
    **dict.fromkeys(("default", "bfloat16", "fastest"), Precision.DEFAULT),
    **dict.fromkeys(("high", "bfloat16_3x", "tensorfloat32"), Precision.HIGH),
    **dict.fromkeys(("highest", "float32"), Precision.HIGHEST),
}


def _one_precision(value):
    if isinstance(value, Precision):
        return value
    return _PRECISION_NAMES.get(value) if isinstance(value, str) else None


class DotAlgorithm(NamedTuple):
    """An explicit algorithm for a contraction: the types the operands are rounded to and the
    accumulation type, as `precision=` of `dot_general`. The CPU implements none of them
    explicitly (JAX refuses them there too)."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named contraction algorithms (`precision=`); on the CPU, as in JAX, only DEFAULT and
    F32_F32_F32 (what the CPU computes anyway: float32 products, float32 accumulation)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self):
        return self.name


_CPU_PRESETS = (DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F32_F32_F32)

DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]
PrecisionLike = Union[  # noqa: UP007 (JAX's alias, spelled as JAX spells it)
    None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm,
    DotAlgorithmPreset,
]  # fmt: skip


def _canonical_precision(name: str, precision):
    """None, a pair of Precisions (lhs, rhs) or a preset the CPU has: the `precision` param."""
    if precision is None:
        return None
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        if precision not in _CPU_PRESETS:
            raise ValueError(f"The precision '{precision}' is not supported by {name} on CPU")
        return precision
    one = _one_precision(precision)
    if one is not None:
        return (one, one)
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        pair = tuple(_one_precision(p) for p in precision)
        if None not in pair:
            return pair
    raise ValueError(
        f"{name}: precision must be None, a lax.Precision value, one of the strings "
        f"{sorted(_PRECISION_NAMES)}, or a pair of those (for lhs and rhs); got {precision!r}"
    )


# --------------------------------------------------------------------------------------------
# Dimension numbers and shapes


def _dims(value) -> tuple:
    if isinstance(value, (int, np.integer)):
        return (operator.index(value),)
    return tuple(operator.index(d) for d in value)


def _canonical_dimension_numbers(dimension_numbers) -> tuple:
    """The `dimension_numbers` param: four tuples of ints (a single int stands for a tuple)."""
    try:
        return _canonical_dimension_numbers_cached(dimension_numbers)
    except TypeError:  # unhashable (lists), or malformed: the uncached call says which
        return _canonical_dimension_numbers_uncached(dimension_numbers)


def _canonical_dimension_numbers_uncached(dimension_numbers) -> tuple:
    try:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
        return (
            (_dims(lhs_contract), _dims(rhs_contract)),
            (_dims(lhs_batch), _dims(rhs_batch)),
        )
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general: dimension_numbers must be ((lhs_contracting_dims, "
            "rhs_contracting_dims), (lhs_batch_dims, rhs_batch_dims)), got "
            f"{dimension_numbers!r}"
        ) from None


_canonical_dimension_numbers_cached = functools.lru_cache(maxsize=256)(
    _canonical_dimension_numbers_uncached
)


@functools.lru_cache(maxsize=1024)
def _dot_general_shape(lhs_shape, rhs_shape, dimension_numbers) -> tuple:
    """The result shape; raises TypeError for dimension numbers that do not fit the shapes."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    operands = f"(lhs shape {lhs_shape}, rhs shape {rhs_shape})"

    def fail(message):
        raise TypeError(f"dot_general requires {message} {operands}")

    for side, shape, contract, batch in (
        ("lhs", lhs_shape, lhs_contract, lhs_batch),
        ("rhs", rhs_shape, rhs_contract, rhs_batch),
    ):
        if not all(0 <= d < len(shape) for d in (*contract, *batch)):
            fail(
                f"{side} dimension numbers to be nonnegative and less than the number of axes "
                f"of the {side} value, got {side}_batch of {batch} and {side}_contracting of "
                f"{contract} for {side} of rank {len(shape)}"
            )
        if len(set(contract)) != len(contract):
            fail(f"{side} contracting dimensions to be distinct, got {side}_contracting {contract}")
        if len(set(batch)) != len(batch):
            fail(f"{side} batch dimensions to be distinct, got {side}_batch {batch}")
        if set(batch) & set(contract):
            fail(
                f"{side} batch dimensions to be disjoint from contracting dimensions, got "
                f"{side}_batch {batch} and {side}_contracting {contract}"
            )
    if len(lhs_batch) != len(rhs_batch):
        fail(
            f"equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch {lhs_batch} "
            f"and rhs_batch {rhs_batch}"
        )
    lhs_batch_shape = tuple(lhs_shape[d] for d in lhs_batch)
    rhs_batch_shape = tuple(rhs_shape[d] for d in rhs_batch)
    if lhs_batch_shape != rhs_batch_shape:
        fail(
            "lhs batch dimensions and rhs batch dimensions to have the same shape, got "
            f"{lhs_batch_shape} and {rhs_batch_shape}"
        )
    lhs_contract_shape = tuple(lhs_shape[d] for d in lhs_contract)
    rhs_contract_shape = tuple(rhs_shape[d] for d in rhs_contract)
    if lhs_contract_shape != rhs_contract_shape:
        fail(
            "contracting dimensions to have the same shape, got "
            f"{lhs_contract_shape} and {rhs_contract_shape}"
        )
    lhs_used, rhs_used = {*lhs_contract, *lhs_batch}, {*rhs_contract, *rhs_batch}
    return (
        lhs_batch_shape
        + tuple(d for i, d in enumerate(lhs_shape) if i not in lhs_used)
        + tuple(d for i, d in enumerate(rhs_shape) if i not in rhs_used)
    )


# --------------------------------------------------------------------------------------------
# Dtypes


def _dtype_rank(dtype: np.dtype) -> tuple:
    """Orders dtypes for the result of a mixed-dtype product."""
    if dtypes.is_complex(dtype):
        category = 3
    elif dtypes.is_float(dtype):
        category = 2
    else:
        category = 0 if dtype == np.bool_ else 1
    preferred = dtype == dtypes.bfloat16 or dtypes.issubdtype(dtype, np.signedinteger)
    return (category, dtype.itemsize, preferred)


@functools.cache
def _result_dtype(lhs_dtype: np.dtype, rhs_dtype: np.dtype) -> np.dtype:
    if lhs_dtype == rhs_dtype:
        return lhs_dtype
    return max(lhs_dtype, rhs_dtype, key=_dtype_rank)


def _bit_width(dtype: np.dtype) -> int:
    if dtype == np.bool_:
        return 1
    if dtypes.is_complex(dtype):
        return dtype.itemsize * 4
    return dtype.itemsize * 8


def _check_preferred(result: np.dtype, preferred: np.dtype) -> None:
    """A preferred type may be narrower than the inputs' type only for floating inputs."""
    if not dtypes.is_float(result) and _bit_width(preferred) < _bit_width(result):
        raise TypeError(
            "dot_general: `preferred_element_type` must not be narrower than the original "
            f"type, got preferred_element_type of {preferred.name} for result type of "
            f"{result.name}."
        )


def _compute_dtype(lhs_dtype: np.dtype, rhs_dtype: np.dtype, out_dtype: np.dtype) -> np.dtype:
    """The dtype NumPy multiplies in: one that np.matmul supports, wide enough for the inputs
    and the result (integers wrap around alike in any width from the result's up)."""
    operands = (lhs_dtype, rhs_dtype, out_dtype)
    if lhs_dtype.kind == "c" or rhs_dtype.kind == "c":
        return np.dtype(np.complex128 if _WIDE_INEXACT.intersection(operands) else np.complex64)
    if any(dtypes.is_inexact(d) for d in operands):
        return np.dtype(np.float64 if _WIDE_INEXACT.intersection(operands) else np.float32)
    if out_dtype == np.bool_:
        return out_dtype
    return np.dtype(np.int64 if max(d.itemsize for d in operands) == 8 else np.int32)


_WIDE_INEXACT = frozenset((np.dtype(np.float64), np.dtype(np.complex128)))


# --------------------------------------------------------------------------------------------
# The contraction in NumPy


@functools.lru_cache(maxsize=512)
def _matmul_plan(dimension_numbers, lhs_ndim: int, rhs_ndim: int):
    """Transpositions that put lhs in (batch, free, contracting) order and rhs in (batch,
    contracting, free) order, and the number of batch/lhs-free/contracting dimensions."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_free = tuple(i for i in range(lhs_ndim) if i not in lhs_contract and i not in lhs_batch)
    rhs_free = tuple(i for i in range(rhs_ndim) if i not in rhs_contract and i not in rhs_batch)
    lhs_perm = lhs_batch + lhs_free + lhs_contract
    rhs_perm = rhs_batch + rhs_contract + rhs_free
    return lhs_perm, rhs_perm, len(lhs_batch), len(lhs_free), len(lhs_contract)


def _contract(lhs, rhs, dimension_numbers):
    lhs_perm, rhs_perm, nb, nf, nc = _matmul_plan(dimension_numbers, lhs.ndim, rhs.ndim)
    lhs = lhs.transpose(lhs_perm)
    rhs = rhs.transpose(rhs_perm)
    batch_shape = lhs.shape[:nb]
    lhs_free_shape = lhs.shape[nb : nb + nf]
    rhs_free_shape = rhs.shape[nb + nc :]
    m, k, n = math.prod(lhs_free_shape), math.prod(lhs.shape[nb + nf :]), math.prod(rhs_free_shape)
    if nb:
        b = math.prod(batch_shape)
        out = np.matmul(lhs.reshape(b, m, k), rhs.reshape(b, k, n))
    else:
        out = np.matmul(lhs.reshape(m, k), rhs.reshape(k, n))
    return out.reshape(batch_shape + lhs_free_shape + rhs_free_shape)


# Dtypes that np.matmul multiplies in their own type (through BLAS for the inexact ones).
_MATMUL_NATIVE = frozenset(
    np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64)
)
_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))


# --- dot_general ----------------------------------------------------------------------------
dot_general_p = Primitive("dot_general")


def dot_general(
    lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None
):
    """General contraction of `lhs` and `rhs`.

    `dimension_numbers` is `((lhs_contracting_dims, rhs_contracting_dims), (lhs_batch_dims,
    rhs_batch_dims))`. The result has the batch dimensions first, then the lhs dimensions that
    are neither batch nor contracting, then those of rhs. `precision` (None, a `Precision`, a
    string naming one, or a pair for lhs and rhs) is recorded only; `preferred_element_type`
    sets the result dtype (by default, the inputs' dtype).
    """
    check_no_sharding("dot_general", out_sharding)
    dimension_numbers = _canonical_dimension_numbers(dimension_numbers)
    _dot_general_shape(np.shape(lhs), np.shape(rhs), dimension_numbers)
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=dimension_numbers,
        precision=_canonical_precision("dot_general", precision),
        preferred_element_type=dtypes.check_user_dtype(preferred_element_type, "dot_general"),
    )


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    out_dtype = preferred_element_type
    if out_dtype is None:  # (not `or`: a NumPy dtype without fields is falsy)
        out_dtype = _result_dtype(lhs.dtype, rhs.dtype)
    if lhs.dtype == rhs.dtype == out_dtype and out_dtype in _MATMUL_NATIVE:
        if dimension_numbers == _MATRIX_PRODUCT and lhs.ndim == 2 and rhs.ndim == 2:
            return np.matmul(lhs, rhs)
        return _contract(lhs, rhs, dimension_numbers)
    compute = _compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    out = _contract(
        lhs.astype(compute, copy=False), rhs.astype(compute, copy=False), dimension_numbers
    )
    if compute.kind == "c" and out_dtype.kind != "c":
        out = out.real
    return out.astype(out_dtype, copy=False)


dot_general_p.def_impl(quiet(_dot_general_impl))


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    shape = _dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    dtype = _result_dtype(lhs.dtype, rhs.dtype)
    if preferred_element_type is not None:
        _check_preferred(dtype, preferred_element_type)
        dtype = preferred_element_type
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


dot_general_p.def_weak_type_rule(weak_if_all_weak)


def _dot_general_params_to_print(params: dict) -> dict:
    """As JAX prints them: dimension numbers as lists, and no `None` precision or type."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    shown = {
        "dimension_numbers": (
            (list(lhs_contract), list(rhs_contract)),
            (list(lhs_batch), list(rhs_batch)),
        )
    }
    if params["precision"] is not None:
        shown["precision"] = params["precision"]
    if params["preferred_element_type"] is not None:
        shown["preferred_element_type"] = params["preferred_element_type"]
    return shown


dot_general_p.params_to_print = _dot_general_params_to_print

# dot_general is bilinear: its tangent is the product with one operand's tangent plus the
# product with the other's.
ad.defjvp(
    dot_general_p,
    lambda t, lhs, rhs, **params: dot_general_p.bind(t, rhs, **params),
    lambda t, lhs, rhs, **params: dot_general_p.bind(lhs, t, **params),
)
ad.mark_linear(dot_general_p, 0, 1)


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    if is_undefined_primal(lhs) == is_undefined_primal(rhs):
        raise TypeError("dot_general is linear in each operand only: transposing it in both")
    x, y = (lhs, rhs) if is_undefined_primal(lhs) else (rhs, lhs)
    ct_dims, permutation, ct_first = _transpose_plan(
        dimension_numbers, x.aval.ndim, ad.get_aval(y).ndim, x is lhs
    )

    def cotangent():
        out = dot_general_p.bind(
            *((ct, y) if ct_first else (y, ct)),
            dimension_numbers=ct_dims,
            precision=precision,
            preferred_element_type=preferred_element_type,
        )
        out = shapes.transpose(out, permutation)
        if ad.get_aval(out).dtype != x.aval.dtype:  # (complex to real: the real part)
            out = conversions.convert_element_type_p.bind(
                out, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type
            )
        return out

    out = sharding_constraints.laid_out_as(x.aval, cotangent)
    return [out, None] if x is lhs else [None, out]


@functools.lru_cache(maxsize=512)
def _transpose_plan(dimension_numbers, x_ndim: int, y_ndim: int, x_is_lhs: bool):
    """How to get the cotangent of operand x of `dot_general` (the lhs if `x_is_lhs`) from the
    result's cotangent `ct` and the other operand y: the dimension numbers of the product
    `dot_general(ct, y)`, and the permutation that puts its dimensions in x's layout.

    `ct` has the result's layout: batch dimensions, lhs free dimensions, rhs free dimensions.
    Contracting it with y over y's free dimensions (pairing the batch dimensions) gives x's
    batch dimensions, x's free dimensions in order, then y's contracting dimensions in
    increasing order, each of the size of the x dimension it contracted with. The product then
    has the result's dtype, which may differ from x's (`preferred_element_type`, mixed operand
    dtypes): the rule converts it.

    When that product contracts nothing (y has no free dimensions: an outer product, as in the
    gradient of `jnp.dot(vector, W)` with respect to `W`, or per-example weight gradients under
    vmap) and the other operand order, `dot_general(y, ct)`, already has x's layout, the plan
    takes that order (`ct_first` False) and needs no transpose. XLA CPU turns such a product
    into a multiply and, when its transpose feeds a result of the computation, writes it twice
    (the transposed multiply, then a layout copy): 2.4x the time for the per-example gradients
    of an MLP. Products that contract keep JAX's order (XLA folds their transpose into the dot),
    so their jaxprs stay the same as JAX's.
    """
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if x_is_lhs:
        x_contract, y_contract, x_batch, y_batch = lhs_contract, rhs_contract, lhs_batch, rhs_batch
    else:
        x_contract, y_contract, x_batch, y_batch = rhs_contract, lhs_contract, rhs_batch, lhs_batch
    nb = len(x_batch)
    x_free = [d for d in range(x_ndim) if d not in x_contract and d not in x_batch]
    y_free = tuple(d for d in range(y_ndim) if d not in y_contract and d not in y_batch)
    ct_y_free_start = nb + len(x_free) if x_is_lhs else nb
    ct_y_free = tuple(range(ct_y_free_start, ct_y_free_start + len(y_free)))
    ct_dims = ((ct_y_free, y_free), (tuple(range(nb)), tuple(y_batch)))
    position = [0] * x_ndim  # where each x dimension is in the product
    for k, d in enumerate(x_batch):
        position[d] = k
    for k, d in enumerate(x_free):
        position[d] = nb + k
    y_contract_sorted = sorted(y_contract)
    for x_d, y_d in zip(x_contract, y_contract, strict=True):
        position[x_d] = nb + len(x_free) + y_contract_sorted.index(y_d)
    position = tuple(position)
    if not y_free and position != tuple(range(x_ndim)):
        # The product in the order (y, ct): batch, y's contracting dims (sorted), x's free dims.
        swapped = [0] * x_ndim
        for k, d in enumerate(x_batch):
            swapped[d] = k
        for x_d, y_d in zip(x_contract, y_contract, strict=True):
            swapped[x_d] = nb + y_contract_sorted.index(y_d)
        for k, d in enumerate(x_free):
            swapped[d] = nb + len(y_contract) + k
        if swapped == list(range(x_ndim)):
            y_dims = ((y_free, ct_y_free), (tuple(y_batch), tuple(range(nb))))
            return y_dims, tuple(swapped), False
    return ct_dims, position, True


transpose_rules[dot_general_p] = _dot_general_transpose


def _dot_general_lowering(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    """stablehlo.dot_general in the dtype the NumPy impl computes in (operands converted to it,
    the result converted back), with the precision asked for, as JAX emits it (the CPU
    computes every float precision in full, as NumPy does). Booleans are multiplied as int32
    and compared with zero (any of the pairwise ANDs)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    out_dtype = np.dtype(out_aval.dtype)
    compute = np.dtype(lhs_aval.dtype)
    if not (lhs_aval.dtype == rhs_aval.dtype == out_dtype and out_dtype in _MATMUL_NATIVE):
        compute = _compute_dtype(np.dtype(lhs_aval.dtype), np.dtype(rhs_aval.dtype), out_dtype)
    if compute == np.bool_:
        compute = np.dtype(np.int32)
    block = ctx.block
    dims = (
        "#stablehlo.dot<"
        f"lhs_batching_dimensions = [{', '.join(map(str, lhs_batch))}], "
        f"rhs_batching_dimensions = [{', '.join(map(str, rhs_batch))}], "
        f"lhs_contracting_dimensions = [{', '.join(map(str, lhs_contract))}], "
        f"rhs_contracting_dimensions = [{', '.join(map(str, rhs_contract))}]>"
    )
    pair = precision if isinstance(precision, tuple) else (Precision.DEFAULT, Precision.DEFAULT)
    config = ", ".join(f"#stablehlo<precision {p.name}>" for p in pair)
    out = block.op1(
        "stablehlo.dot_general",
        [block.convert(lhs, compute), block.convert(rhs, compute)],
        hlo.tensor_type(out_aval.shape, compute),
        {"dot_dimension_numbers": dims, "precision_config": f"[{config}]"},
    )
    if out_dtype == np.bool_:  # any product nonzero, as the impl's astype (complex ones too)
        return block.compare(out, block.full_like(out, 0), "NE")
    return block.convert(out, out_dtype)


lowering_rules[dot_general_p] = _dot_general_lowering


def _dot_general_batch_rule(values, dims, *, dimension_numbers, **params):
    """Both operands batched: their batch dims become a new leading pair of dot_general batch
    dimensions (the result's batch dim is 0). One batched: its batch dim is a free dimension of
    that operand, which lands among the result's free dimensions in order."""
    (lhs, rhs), (lhs_bdim, rhs_bdim) = values, dims
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers

    def shift(ds, bdim):
        return ds if bdim is None else tuple(d + (d >= bdim) for d in ds)

    lhs_contract, lhs_batch = shift(lhs_contract, lhs_bdim), shift(lhs_batch, lhs_bdim)
    rhs_contract, rhs_batch = shift(rhs_contract, rhs_bdim), shift(rhs_batch, rhs_bdim)
    nb = len(lhs_batch)
    if lhs_bdim is not None and rhs_bdim is not None:
        lhs_batch, rhs_batch = (lhs_bdim, *lhs_batch), (rhs_bdim, *rhs_batch)
        out_dim = 0
    elif lhs_bdim is not None:
        used = {*lhs_contract, *lhs_batch}
        out_dim = nb + sum(1 for d in range(lhs_bdim) if d not in used)
    else:
        lhs_free = len(shape_of(lhs)) - len(lhs_contract) - nb
        used = {*rhs_contract, *rhs_batch}
        out_dim = nb + lhs_free + sum(1 for d in range(rhs_bdim) if d not in used)
    new_dims = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=new_dims, **params), out_dim


batch_rules[dot_general_p] = _dot_general_batch_rule


# --- dot ------------------------------------------------------------------------------------
def dot(
    lhs,
    rhs,
    *,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """Vector/matrix product of `lhs` and `rhs` (each of rank 1 or 2), contracting the last
    dimension of `lhs` with the first of `rhs`; with `dimension_numbers`, the same as
    `dot_general`. Stages `dot_general`."""
    check_no_sharding("dot", out_sharding)
    if dimension_numbers is None:
        lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
        if not (
            len(lhs_shape) in (1, 2) and len(rhs_shape) in (1, 2) and lhs_shape[-1] == rhs_shape[0]
        ):
            raise ValueError(
                "dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}"
            )
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


# --- batch_matmul ---------------------------------------------------------------------------
def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product: `lhs[..., i, k] * rhs[..., k, j]` summed over `k`, with equal
    leading (batch) dimensions. Stages `dot_general`."""
    lhs_ndim, rhs_ndim = np.ndim(lhs), np.ndim(rhs)
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(
            f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, {rhs_ndim}"
        )
    if lhs_ndim != rhs_ndim:
        raise ValueError(
            f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, {rhs_ndim}"
        )
    batch = tuple(range(lhs_ndim - 2))
    dimension_numbers = (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch))
    return dot_general(lhs, rhs, dimension_numbers, precision)
