"""dot_general and its wrappers (dot, batch_matmul): contractions against an einsum reference,
eager and staged; result dtypes for mixed inputs and `preferred_element_type`, weak types,
printing and errors as JAX 0.10.2 has them."""

import re
import string

import ml_dtypes
import numpy as np
import pytest
from helpers import (
    assert_close,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    eager,
    f16,
    f32,
    i8,
    i16,
    i32,
    staged,
    u8,
    u32,
)

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.api_util import ShapeDtypeStruct
from tracejit._src.array import make_array
from tracejit.lax import Precision

DTYPES = [f32, f16, bf16, i32, i8, b, c64]

# (lhs shape, rhs shape, dimension numbers)
CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),  # matrix product
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),  # x @ y.T
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),  # x.T @ y
    ((4,), (4,), (((0,), (0,)), ((), ()))),  # vector dot
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),  # matrix-vector
    ((4,), (4, 5), (((0,), (0,)), ((), ()))),  # vector-matrix
    ((2, 3), (4,), (((), ()), ((), ()))),  # outer product
    ((), (), (((), ()), ((), ()))),  # scalars
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched matmul
    ((3, 4), (3, 4), (((1,), (1,)), ((0,), (0,)))),  # batched vector dot
    ((2, 3, 4, 5), (5, 2, 3, 7), (((1, 3), (2, 0)), ((0,), (1,)))),  # scrambled dims
    ((2, 3, 4), (3, 3, 2), (((1,), (1,)), ((0,), (2,)))),  # batch dims not leading
    ((2, 3, 4, 5), (2, 6, 7), (((0,), (0,)), ((), ()))),  # contract the leading dim
    ((3, 0), (0, 5), (((1,), (0,)), ((), ()))),  # empty contraction: zeros
    ((0, 4), (4, 5), (((1,), (0,)), ((), ()))),  # empty result
]


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == b:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-4 if dtype.kind == "i" else 0, 5, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def ref_dot_general(lhs, rhs, dimension_numbers, out_dtype):
    """einsum in a wide dtype, then the cast dot_general's result type implies."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs_letters = [next(letters) for _ in range(lhs.ndim)]
    rhs_letters = [next(letters) for _ in range(rhs.ndim)]
    for left, right in zip((*lhs_contract, *lhs_batch), (*rhs_contract, *rhs_batch), strict=True):
        rhs_letters[right] = lhs_letters[left]
    out_letters = [lhs_letters[d] for d in lhs_batch]
    out_letters += [c for i, c in enumerate(lhs_letters) if i not in (*lhs_contract, *lhs_batch)]
    out_letters += [c for i, c in enumerate(rhs_letters) if i not in (*rhs_contract, *rhs_batch)]
    spec = f"{''.join(lhs_letters)},{''.join(rhs_letters)}->{''.join(out_letters)}"
    kinds = {lhs.dtype.kind, rhs.dtype.kind}
    wide = np.complex128 if "c" in kinds else np.float64 if kinds & {"f", "V"} else np.int64
    out = np.einsum(spec, lhs.astype(wide), rhs.astype(wide))
    if out_dtype == b:
        return out != 0
    if out.dtype.kind == "c" and out_dtype.kind != "c":
        out = out.real
    return out.astype(out_dtype)


TOLERANCE = {f16: 1e-2, bf16: 5e-2, f32: 1e-5, c64: 1e-5}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("lhs_shape, rhs_shape, dimension_numbers", CASES, ids=str)
def test_dot_general_matches_einsum(dtype, lhs_shape, rhs_shape, dimension_numbers):
    lhs, rhs = sample(lhs_shape, dtype, 0), sample(rhs_shape, dtype, 1)
    out = check_traced_matches_eager(
        lambda x, y: lax.dot_general(x, y, dimension_numbers), lhs, rhs, rtol=1e-5, atol=1e-5
    )
    assert not out.weak_type
    assert_close(
        out,
        ref_dot_general(lhs, rhs, dimension_numbers, dtype),
        TOLERANCE.get(np.dtype(dtype), 0),
        dtype=dtype,
    )


@pytest.mark.parametrize(
    "lhs_shape, rhs_shape", [((3, 4), (4, 5)), ((3, 4), (4,)), ((4,), (4, 5)), ((4,), (4,))]
)
def test_dot_infers_the_dimension_numbers(lhs_shape, rhs_shape):
    lhs, rhs = sample(lhs_shape, f32, 0), sample(rhs_shape, f32, 1)
    out = check_traced_matches_eager(lambda x, y: lax.dot(x, y), lhs, rhs, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out), np.dot(lhs, rhs), rtol=1e-5)
    closed = make_jaxpr(lambda x, y: lax.dot(x, y))(lhs, rhs)
    assert closed.eqns[0].params["dimension_numbers"] == (((len(lhs_shape) - 1,), (0,)), ((), ()))


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 2, 3, 4)], ids=str)
def test_batch_matmul(shape):
    lhs = sample(shape, f32, 0)
    rhs = sample(shape[:-2] + (shape[-1], 5), f32, 1)
    out = check_traced_matches_eager(lax.batch_matmul, lhs, rhs, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out), np.matmul(lhs, rhs), rtol=1e-5, atol=1e-5)


def test_large_matrix_product_is_exact_to_float32_rounding():
    lhs, rhs = sample((128, 784), f32, 0), sample((784, 512), f32, 1)
    out = lax.dot(lhs, rhs)
    assert out.dtype == f32 and out.shape == (128, 512)
    np.testing.assert_allclose(np.asarray(out), lhs.astype(np.float64) @ rhs, rtol=1e-4, atol=1e-4)


# --- result dtypes --------------------------------------------------------------------------

# (lhs dtype, rhs dtype, result dtype), from jax.eval_shape(lax.dot, ...).
MIXED = [
    (f32, i32, f32),
    (f32, f16, f32),
    (i32, b, i32),
    (i8, u8, i8),
    (u8, i8, i8),
    (f16, bf16, bf16),
    (bf16, f16, bf16),
    (i32, f16, f16),
    (f32, c64, c64),
    (b, f32, f32),
    (u32, i32, i32),
    (i16, u32, u32),
    (u8, i16, i16),
]


@pytest.mark.parametrize("lhs_dtype, rhs_dtype, result", MIXED, ids=str)
def test_mixed_input_dtypes(lhs_dtype, rhs_dtype, result):
    lhs, rhs = sample((2, 3), lhs_dtype, 0), sample((3, 2), rhs_dtype, 1)
    out = check_traced_matches_eager(lambda x, y: lax.dot(x, y), lhs, rhs, rtol=1e-5)
    assert out.dtype == result
    expected = ref_dot_general(lhs, rhs, (((1,), (0,)), ((), ())), result)
    assert_close(out, expected, TOLERANCE.get(np.dtype(result), 0), dtype=result)


def test_mixed_dtypes_with_x64(enable_x64):
    cases = [
        (np.int64, np.uint64, np.int64),
        (np.float64, np.complex64, np.complex64),
        (np.int64, np.float16, np.float16),
        (np.float32, np.float64, np.float64),
    ]
    for lhs_dtype, rhs_dtype, result in cases:
        structs = ShapeDtypeStruct((2, 3), lhs_dtype), ShapeDtypeStruct((3, 2), rhs_dtype)
        closed = make_jaxpr(lambda x, y: lax.dot(x, y))(*structs)
        assert closed.out_avals[0].dtype == result


# (inputs, preferred_element_type, values, result): values from JAX.
PREFERRED = [
    (np.array([[1.5, 2.5]], f32), np.array([[1.5], [1.5]], f32), np.int32, [[6]]),
    (np.array([[1.5, 2.5]], f32), np.array([[1.5], [1.5]], f32), np.bool_, [[True]]),
    (np.array([[100, 100]], i8), np.array([[100], [100]], i8), np.int32, [[20000]]),
    (np.array([[100, 100]], i8), np.array([[100], [100]], i8), None, [[32]]),
    (np.array([[100, 100]], i8), np.array([[100], [100]], i8), np.float16, [[20000]]),
    (np.array([[True, True, False]]), np.array([[True], [True], [False]]), None, [[True]]),
    (np.array([[True, True, False]]), np.array([[True], [True], [False]]), np.int32, [[2]]),
    (np.array([[True, True, False]]), np.array([[False], [False], [True]]), None, [[False]]),
    (np.array([[1 + 1j, 2.5]], c64), np.array([[2], [3]], c64), np.float32, [[9.5]]),
    (np.array([[2, 3]], i32), np.array([[4], [5]], i32), np.float32, [[23]]),
    (np.array([[2, 3]], i32), np.array([[4], [5]], i32), np.uint32, [[23]]),
    (np.array([[1, 2]], f32), np.array([[3], [4]], f32), np.complex64, [[11]]),
]


@pytest.mark.parametrize("lhs, rhs, preferred, expected", PREFERRED)
def test_preferred_element_type(lhs, rhs, preferred, expected):
    out = check_traced_matches_eager(
        lambda x, y: lax.dot(x, y, preferred_element_type=preferred), lhs, rhs
    )
    result = np.dtype(preferred) if preferred is not None else lhs.dtype
    assert out.dtype == result
    np.testing.assert_array_equal(np.asarray(out), np.array(expected, result))


def test_float16_products_are_computed_in_float32():
    x = np.full((1, 300), 0.1, f16)
    out = lax.dot(x, x.T)
    assert out.dtype == f16
    expected = np.float16(np.dot(x.astype(np.float32), x.T.astype(np.float32))[0, 0])
    assert np.asarray(out)[0, 0] == expected  # 2.998, as JAX gives


def test_preferred_float64_is_truncated_with_a_warning_when_x64_is_off():
    x = np.ones((2, 2), f32)
    with pytest.warns(UserWarning, match="float64 requested in dot_general is not available"):
        out = lax.dot(x, x, preferred_element_type=np.float64)
    assert out.dtype == f32


def test_result_is_weak_only_when_both_operands_are():
    none = (((), ()), ((), ()))
    assert check_traced_matches_eager(lambda: lax.dot_general(2.0, 3.0, none)).weak_type
    weak = make_array(np.ones(3, f32), True)
    weak_int = make_array(np.ones(3, i32), True)
    contract = (((0,), (0,)), ((), ()))
    out = check_traced_matches_eager(lambda x, y: lax.dot_general(x, y, contract), weak, weak_int)
    assert out.weak_type and out.dtype == f32
    out = check_traced_matches_eager(
        lambda x, y: lax.dot_general(x, y, contract, preferred_element_type=np.float16), weak, weak
    )
    assert out.weak_type and out.dtype == f16
    # A weak float32 is not narrowed by a float16 operand: lax does not promote weak types.
    out = check_traced_matches_eager(
        lambda x, y: lax.dot_general(x, y, contract), weak, np.ones(3, f16)
    )
    assert not out.weak_type and out.dtype == f32


# --- params and printing --------------------------------------------------------------------


def test_jaxpr_printouts_match_jax():
    x = np.ones((3, 4), f32)
    y = np.ones((4, 3), f32)
    assert str(make_jaxpr(lambda x, y: lax.dot(x, y))(x, y)) == (
        "{ lambda ; a:f32[3,4] b:f32[4,3]. let\n"
        "    c:f32[3,3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }"
    )
    assert str(make_jaxpr(lambda x, y: lax.dot(x, y, preferred_element_type=np.float32))(x, y)) == (
        "{ lambda ; a:f32[3,4] b:f32[4,3]. let\n"
        "    c:f32[3,3] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "  in (c,) }"
    )
    assert str(
        make_jaxpr(
            lambda x: lax.dot(
                x, x, dimension_numbers=(((1,), (1,)), ((), ())), precision=Precision.HIGHEST
            )
        )(x)
    ) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,3] = dot_general[\n"
        "      dimension_numbers=(([1], [1]), ([], []))\n"
        "      precision=(Precision.HIGHEST, Precision.HIGHEST)\n"
        "    ] a a\n"
        "  in (b,) }"
    )
    lhs, rhs = np.ones((6, 2, 3, 4), f32), np.ones((6, 2, 4, 5), f32)
    assert str(make_jaxpr(lax.batch_matmul)(lhs, rhs)) == (
        "{ lambda ; a:f32[6,2,3,4] b:f32[6,2,4,5]. let\n"
        "    c:f32[6,2,3,5] = dot_general[\n"
        "      dimension_numbers=(([3], [2]), ([0, 1], [0, 1]))\n"
        "    ] a b\n"
        "  in (c,) }"
    )


def test_jaxpr_printout_with_an_exactly_full_line():
    lhs, rhs = np.ones((2, 3, 4, 5), f32), np.ones((5, 2, 3, 7), f32)
    dims = (((1, 3), (2, 0)), ((0,), (1,)))
    assert str(make_jaxpr(lambda x, y: lax.dot_general(x, y, dims))(lhs, rhs)) == (
        "{ lambda ; a:f32[2,3,4,5] b:f32[5,2,3,7]. let\n"
        "    c:f32[2,4,7] = dot_general[dimension_numbers=(([1, 3], [2, 0]), ([0], [1]))] a\n"
        "      b\n"
        "  in (c,) }"
    )


@pytest.mark.parametrize(
    "precision, expected",
    [
        (None, None),
        ("highest", (Precision.HIGHEST,) * 2),
        ("float32", (Precision.HIGHEST,) * 2),
        ("fastest", (Precision.DEFAULT,) * 2),
        ("tensorfloat32", (Precision.HIGH,) * 2),
        (Precision.DEFAULT, (Precision.DEFAULT,) * 2),
        ((Precision.DEFAULT, Precision.HIGHEST), (Precision.DEFAULT, Precision.HIGHEST)),
        (("high", "highest"), (Precision.HIGH, Precision.HIGHEST)),
    ],
)
def test_precision_is_normalized_to_a_pair(precision, expected):
    x = np.ones((2, 2), f32)
    closed = make_jaxpr(lambda x: lax.dot(x, x, precision=precision))(x)
    assert closed.eqns[0].params["precision"] == expected


def test_precision_enum_behaves_like_jax():
    assert Precision("bfloat16_3x") is Precision.HIGH
    assert str(Precision.HIGHEST) == "HIGHEST" and repr(Precision.HIGH) == "Precision.HIGH"
    assert [p.value for p in Precision] == [0, 1, 2]
    with pytest.raises(ValueError):
        Precision("foo")


def test_dimension_numbers_are_normalized_to_tuples():
    x, y = np.ones((2, 3), f32), np.ones((3, 4), f32)
    for dims in (
        [[[1], [0]], [[], []]],
        ((1, 0), ((), ())),
        ((np.array([1]), np.array([0])), ((), ())),
    ):
        closed = make_jaxpr(lambda x, y: lax.dot_general(x, y, dims))(x, y)  # noqa: B023
        assert closed.eqns[0].params["dimension_numbers"] == (((1,), (0,)), ((), ()))


# --- errors ---------------------------------------------------------------------------------


# (lhs shape, rhs shape, dimension numbers, message), messages as JAX words them.
BAD_DIMENSIONS = [
    (
        (3, 4),
        (3, 4),
        (((2,), (1,)), ((), ())),
        (
            "lhs dimension numbers to be nonnegative and less than the number of axes of the lhs "
            "value, got lhs_batch of () and lhs_contracting of (2,) for lhs of rank 2"
        ),
    ),
    ((3, 4), (3, 4), (((-1,), (1,)), ((), ())), "lhs dimension numbers to be nonnegative"),
    (
        (2, 3),
        (3, 4),
        (((1,), (3,)), ((), ())),
        (
            "rhs dimension numbers to be nonnegative and less than the number of axes of the rhs "
            "value, got rhs_batch of () and rhs_contracting of (3,) for rhs of rank 2"
        ),
    ),
    (
        (3, 4),
        (3, 4),
        (((1,), (1, 1)), ((), ())),
        "rhs contracting dimensions to be distinct, got rhs_contracting (1, 1)",
    ),
    (
        (2, 2, 3),
        (2, 2, 3),
        (((2,), (2,)), ((0, 0), (0, 1))),
        "lhs batch dimensions to be distinct, got lhs_batch (0, 0)",
    ),
    (
        (3, 4),
        (3, 4),
        (((1,), (1,)), ((1,), (1,))),
        (
            "lhs batch dimensions to be disjoint from contracting dimensions, got lhs_batch (1,) "
            "and lhs_contracting (1,)"
        ),
    ),
    (
        (2, 3, 4),
        (3, 3, 2),
        (((1,), (0,)), ((0,), ())),
        "equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch (0,) and rhs_batch ()",
    ),
    (
        (2, 3),
        (4, 3),
        (((1,), (1,)), ((0,), (0,))),
        "lhs batch dimensions and rhs batch dimensions to have the same shape, got (2,) and (4,)",
    ),
    (
        (2, 3, 4),
        (2, 3, 5),
        (((2,), (1,)), ((0,), (0,))),
        "contracting dimensions to have the same shape, got (4,) and (3,)",
    ),
    (
        (2, 3),
        (3, 4),
        (((1,), ()), ((), ())),
        "contracting dimensions to have the same shape, got (3,) and ()",
    ),
]


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
@pytest.mark.parametrize("lhs_shape, rhs_shape, dims, message", BAD_DIMENSIONS)
def test_bad_dimension_numbers_raise_type_error(run, lhs_shape, rhs_shape, dims, message):
    lhs, rhs = np.ones(lhs_shape, f32), np.ones(rhs_shape, f32)
    shapes = f"(lhs shape {lhs_shape}, rhs shape {rhs_shape})"
    with pytest.raises(
        TypeError, match=re.escape(f"dot_general requires {message}") + ".*" + re.escape(shapes)
    ):
        run(lambda x, y: lax.dot_general(x, y, dims), lhs, rhs)


def test_malformed_dimension_numbers_raise_type_error():
    x = np.ones((2, 2), f32)
    with pytest.raises(TypeError, match="dot_general: dimension_numbers must be"):
        lax.dot_general(x, x, ((1, 0),))


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
@pytest.mark.parametrize(
    "lhs_shape, rhs_shape", [((2, 3), (4, 2)), ((2, 3, 4), (4, 3)), ((3,), (4,)), ((3, 4), ())]
)
def test_dot_needs_dimension_numbers_beyond_matrices(run, lhs_shape, rhs_shape):
    message = (
        "dot: dimension_numbers must be specified when not performing simple un-batched "
        "matrix-matrix, matrix-vector, or vector-vector products; got "
        f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        run(lambda x, y: lax.dot(x, y), np.ones(lhs_shape, f32), np.ones(rhs_shape, f32))


def test_batch_matmul_errors():
    with pytest.raises(
        ValueError, match=re.escape("Arguments to batch_matmul must have same ndim, got 3, 4")
    ):
        lax.batch_matmul(np.ones((2, 3, 4), f32), np.ones((2, 2, 4, 5), f32))
    with pytest.raises(
        ValueError, match=re.escape("Arguments to batch_matmul must be at least 2D, got 1, 1")
    ):
        lax.batch_matmul(np.ones(3, f32), np.ones(3, f32))
    with pytest.raises(
        TypeError, match=re.escape("batch dimensions to have the same shape, got (1,) and (2,)")
    ):
        lax.batch_matmul(np.ones((1, 3, 4), f32), np.ones((2, 4, 5), f32))


@pytest.mark.parametrize(
    "dtype, preferred",
    [
        (i32, np.int16),
        (i32, np.float16),
        (i32, ml_dtypes.bfloat16),
        (i8, np.bool_),
        (c64, np.float16),
        (c64, np.int8),
    ],
    ids=str,
)
def test_narrowing_preferred_element_type_raises_type_error(dtype, preferred):
    x = np.ones((2, 2), dtype)
    message = (
        "dot_general: `preferred_element_type` must not be narrower than the original type, got "
        f"preferred_element_type of {np.dtype(preferred).name} for result type of {dtype.name}."
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        staged(lambda x: lax.dot(x, x, preferred_element_type=preferred), x)


def test_bad_precision_raises_value_error():
    x = np.ones((2, 2), f32)
    for precision in ("fast", 3, ("high",), ("high", "nope")):
        with pytest.raises(ValueError, match="dot_general: precision must be"):
            lax.dot(x, x, precision=precision)
