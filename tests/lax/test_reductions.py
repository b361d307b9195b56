"""Reductions: reduce_sum/max/min/prod/and/or/xor and argmax/argmin against NumPy references,
eager and staged, with XLA's conventions for empty reductions, NaNs, signed zeros and integer
overflow (expected values from JAX 0.10.2)."""

import re
import warnings

import numpy as np
import pytest
from helpers import (
    NUMERIC,
    assert_close,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    eager,
    f16,
    f32,
    i32,
    staged,
    u8,
)

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.array import make_array

ORDERED = [f32, f16, bf16, i32, u8, b, c64]
BITWISE = [i32, u8, b]

# (shape, axes) pairs, including rank 0, no axes, negative axes and size-0 dimensions.
CASES = [
    ((), ()),
    ((5,), (0,)),
    ((3, 4), (1,)),
    ((3, 4), (-2,)),
    ((3, 4), (0, 1)),
    ((2, 3, 4), (0, 2)),
    ((2, 3), ()),
    ((0, 3), (0,)),
    ((3, 0), (0,)),
    ((0, 3), (0, 1)),
]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == b:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -9
        return rng.integers(low, 10, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def wide(dtype):
    """The dtype a reference computes in."""
    if dtype.kind == "c":
        return np.complex128
    if dtype.kind in "iu":
        return np.int64
    if dtype == b:
        return b
    return np.float64


def lowest(dtype):
    if dtype == b:
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def highest(dtype):
    if dtype == b:
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf


def ref_sum(x, axes):
    return np.sum(x.astype(wide(x.dtype)), axis=axes)


def ref_prod(x, axes):
    return np.prod(x.astype(wide(x.dtype)), axis=axes)


def ref_max(x, axes):
    return np.max(x.astype(wide(x.dtype)), axis=axes, initial=lowest(x.dtype))


def ref_min(x, axes):
    return np.min(x.astype(wide(x.dtype)), axis=axes, initial=highest(x.dtype))


def ref_and(x, axes):
    if x.dtype == b:
        return np.all(x, axis=axes)
    return np.bitwise_and.reduce(x, axis=axes)


def ref_or(x, axes):
    if x.dtype == b:
        return np.any(x, axis=axes)
    return np.bitwise_or.reduce(x, axis=axes)


def ref_xor(x, axes):
    if x.dtype == b:
        return np.sum(x, axis=axes) % 2 == 1
    return np.bitwise_xor.reduce(x, axis=axes)


REDUCTIONS = [
    (lax.reduce_sum, ref_sum, NUMERIC),
    (lax.reduce_prod, ref_prod, NUMERIC),
    (lax.reduce_max, ref_max, ORDERED),
    (lax.reduce_min, ref_min, ORDERED),
    (lax.reduce_and, ref_and, BITWISE),
    (lax.reduce_or, ref_or, BITWISE),
    (lax.reduce_xor, ref_xor, BITWISE),
]

TOLERANCE = {f16: 2e-3, bf16: 1e-2, f32: 1e-5, c64: 1e-5}


@pytest.mark.parametrize(
    "op, ref, dtype",
    [(op, ref, d) for op, ref, ds in REDUCTIONS for d in ds],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
@pytest.mark.parametrize("shape, axes", CASES, ids=str)
def test_reduction_matches_numpy(op, ref, dtype, shape, axes):
    x = sample(shape, dtype)
    out = check_traced_matches_eager(lambda x: op(x, axes), x, rtol=1e-6, atol=1e-6)
    assert out.dtype == dtype and not out.weak_type
    normalized = tuple(a % len(shape) for a in axes)
    assert out.shape == tuple(d for i, d in enumerate(shape) if i not in normalized)
    assert_close(out, ref(x, normalized), TOLERANCE.get(np.dtype(dtype), 0), dtype=dtype)


@pytest.mark.parametrize(
    "op",
    [lax.reduce_sum, lax.reduce_max, lax.reduce_min, lax.reduce_prod],
    ids=lambda f: f.__name__,
)
def test_reductions_keep_the_operand_weak_type(op):
    out = check_traced_matches_eager(lambda x: op(x, (0,)), make_array(np.ones(3, f32), True))
    assert out.weak_type and out.dtype == f32
    assert check_traced_matches_eager(lambda: op(2.0, ())).weak_type


@pytest.mark.parametrize(
    "op, np_arg", [(lax.argmax, np.argmax), (lax.argmin, np.argmin)], ids=["argmax", "argmin"]
)
@pytest.mark.parametrize("dtype", [f32, f16, bf16, i32, u8, b], ids=str)
@pytest.mark.parametrize("shape, axis", [((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 0, 3), 2)])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int8, np.uint32], ids=str)
def test_arg_reductions_match_numpy(op, np_arg, dtype, shape, axis, index_dtype):
    x = sample(shape, dtype, seed=1)
    out = check_traced_matches_eager(lambda x: op(x, axis, index_dtype), x)
    assert out.dtype == np.dtype(index_dtype) and not out.weak_type
    expected = np_arg(x.astype(np.float32) if dtype == bf16 else x, axis=axis)
    np.testing.assert_array_equal(np.asarray(out), expected.astype(index_dtype))


def test_arg_reductions_are_never_weak():
    out = check_traced_matches_eager(
        lambda x: lax.argmax(x, 0, np.int32), make_array(np.ones(3, f32), True)
    )
    assert not out.weak_type


# --- XLA's conventions, values from JAX -------------------------------------------------------


EMPTY_IDENTITIES = {
    lax.reduce_sum: {f32: 0.0, i32: 0, u8: 0, c64: 0j, bf16: 0.0},
    lax.reduce_prod: {f32: 1.0, i32: 1, u8: 1, c64: 1 + 0j, bf16: 1.0},
    lax.reduce_max: {
        f32: -np.inf,
        i32: -(2**31),
        u8: 0,
        b: False,
        c64: complex(-np.inf, 0),
        bf16: -np.inf,
    },
    lax.reduce_min: {
        f32: np.inf,
        i32: 2**31 - 1,
        u8: 255,
        b: True,
        c64: complex(np.inf, 0),
        bf16: np.inf,
    },
    lax.reduce_and: {i32: -1, u8: 255, b: True},
    lax.reduce_or: {i32: 0, u8: 0, b: False},
    lax.reduce_xor: {i32: 0, u8: 0, b: False},
}


@pytest.mark.parametrize(
    "op, dtype, value",
    [(op, d, v) for op, values in EMPTY_IDENTITIES.items() for d, v in values.items()],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_reductions_over_nothing_give_the_identity(op, dtype, value):
    out = check_traced_matches_eager(lambda x: op(x, (0,)), np.zeros((0, 3), dtype))
    assert out.dtype == dtype and out.shape == (3,)
    np.testing.assert_array_equal(np.asarray(out), np.full(3, value, dtype))


def test_max_min_propagate_nan_and_argmax_argmin_find_the_first_nan():
    nan = np.nan
    x = np.array([[1.0, nan, 3.0, nan], [2.0, 5.0, -np.inf, 0.0], [nan, nan, 1, 2]], f32)
    for dtype in (f32, f16, bf16):
        y = x.astype(dtype)
        np.testing.assert_array_equal(np.asarray(lax.reduce_max(y, (1,)), f32), [nan, 5, nan])
        np.testing.assert_array_equal(np.asarray(lax.reduce_min(y, (1,)), f32), [nan, -np.inf, nan])
        np.testing.assert_array_equal(np.asarray(lax.argmax(y, 1, np.int32)), [1, 1, 0])
        np.testing.assert_array_equal(np.asarray(lax.argmin(y, 1, np.int32)), [1, 2, 0])


@pytest.mark.parametrize("dtype", [f32, f16, bf16], ids=str)
def test_max_min_order_signed_zeros_like_xla(dtype):
    def signs(x):
        return np.signbit(np.asarray(x, f32))

    # JAX: reduce_max([0., -0.]) = 0., reduce_min([0., -0.]) = -0., in either order.
    for values in ([0.0, -0.0], [-0.0, 0.0]):
        x = np.array(values, dtype)
        assert not signs(lax.reduce_max(x, (0,)))
        assert signs(lax.reduce_min(x, (0,)))
    x = np.array([[-0.0, -0.0], [0.0, -0.0]], dtype)
    np.testing.assert_array_equal(signs(lax.reduce_max(x, (1,))), [True, False])
    np.testing.assert_array_equal(signs(lax.reduce_min(x, (0,))), [True, True])
    # argmax/argmin treat the zeros as equal: the first one wins.
    z = np.array([0.0, -0.0, 0.0], dtype)
    assert int(lax.argmax(z, 0, np.int32)) == 0 and int(lax.argmin(z, 0, np.int32)) == 0


def test_complex_max_min_are_lexicographic():
    c = np.array([1 + 2j, 1 + 3j, 2 - 1j, 2 - 5j], c64)
    assert complex(lax.reduce_max(c, (0,))) == 2 - 1j
    assert complex(lax.reduce_min(c, (0,))) == 1 + 2j


def test_integer_reductions_wrap_in_the_operand_dtype():
    out = lax.reduce_sum(np.array([2**31 - 1, 1], i32), (0,))
    assert out.dtype == i32 and int(out) == -(2**31)
    out = lax.reduce_prod(np.array([200, 2], u8), (0,))
    assert out.dtype == u8 and int(out) == 144
    out = lax.argmax(np.arange(300, dtype=f32), 0, np.int8)
    assert out.dtype == np.int8 and int(out) == 43


def test_bitwise_reductions_on_integers():
    x = np.array([6, 3, 1], i32)
    assert int(lax.reduce_and(x[:2], (0,))) == 2
    assert int(lax.reduce_or(x[:2], (0,))) == 7
    assert int(lax.reduce_xor(x, (0,))) == 4


def test_float16_sums_accumulate_in_float32():
    x = np.full(4096, 1.0, f16)
    assert float(lax.reduce_sum(x, (0,))) == 4096.0  # float16 alone stalls at 2048


# --- printing -------------------------------------------------------------------------------


def test_jaxpr_printouts_match_jax():
    x = np.ones((3, 4), f32)
    assert str(make_jaxpr(lambda x: lax.reduce_sum(x, (1,)))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3] = reduce_sum[axes=(1,) out_sharding=None] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.reduce_max(x, (0, 1)))(x)) == (
        "{ lambda ; a:f32[3,4]. let b:f32[] = reduce_max[axes=(0, 1)] a in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.argmax(x, 1, np.int32))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:i32[3] = argmax[axes=(1,) index_dtype=int32] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.argmin(x, 0, np.int32))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:i32[4] = argmin[axes=(0,) index_dtype=int32] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.reduce_xor(x, (0,)))(x > 0)) == (
        "{ lambda ; a:bool[3,4]. let b:bool[4] = reduce_xor[axes=(0,)] a in (b,) }"
    )


def test_wrappers_normalize_axes_to_sorted_non_negative_tuples():
    closed = make_jaxpr(lambda x: lax.reduce_prod(x, [-1, 0]))(np.ones((2, 3), f32))
    assert closed.eqns[0].params == {"axes": (0, 1)}
    closed = make_jaxpr(lambda x: lax.argmax(x, -1, "int16"))(np.ones((2, 3), f32))
    assert closed.eqns[0].params == {"axes": (1,), "index_dtype": np.dtype(np.int16)}


def test_index_dtype_int64_is_truncated_with_a_warning_when_x64_is_off():
    with pytest.warns(UserWarning, match="int64 requested in argmax is not available"):
        out = lax.argmax(np.ones(3, f32), 0, np.int64)
    assert out.dtype == i32


def test_index_dtype_int64_with_x64(enable_x64):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = check_traced_matches_eager(lambda x: lax.argmax(x, 0, np.int64), np.ones(3, f32))
    assert out.dtype == np.int64


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
@pytest.mark.parametrize(
    "op", [lax.reduce_sum, lax.reduce_max, lax.reduce_and], ids=lambda f: f.__name__
)
def test_bad_axes_raise_value_error(run, op):
    x = np.ones((3, 2), i32)
    name = op.__name__
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: reduction axes (2,)") + ".*i32\\[3,2\\]"
    ):
        run(lambda x: op(x, (2,)), x)
    with pytest.raises(ValueError, match=re.escape(f"{name}: duplicate value in 'axes'")):
        run(lambda x: op(x, (0, -2)), x)


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
@pytest.mark.parametrize("op", [lax.argmax, lax.argmin], ids=lambda f: f.__name__)
def test_bad_arg_reduction_params_raise(run, op):
    x = np.ones((3, 2), i32)
    name = op.__name__
    with pytest.raises(
        ValueError, match=re.escape(f"{name}: Invalid axis 2 for operand shape (3, 2)")
    ):
        run(lambda x: op(x, 2, np.int32), x)
    with pytest.raises(
        ValueError, match=re.escape("non-empty reduced dimension. operand.shape=(3, 0)")
    ):
        run(lambda x: op(x, 1, np.int32), np.ones((3, 0), f32))
    with pytest.raises(
        TypeError, match=f"{name}: index_dtype must be an integer type, but got float32"
    ):
        run(lambda x: op(x, 0, np.float32), x)


def test_bad_dtypes_raise_type_error_when_staged():
    cases = [
        (lambda x: lax.reduce_sum(x, (0,)), np.ones(3, b), "reduce_sum does not accept dtype bool"),
        (
            lambda x: lax.reduce_prod(x, (0,)),
            np.ones(3, b),
            "reduce_prod does not accept dtype bool",
        ),
        (
            lambda x: lax.reduce_and(x, (0,)),
            np.ones(3, f32),
            "reduce_and does not accept dtype float32",
        ),
        (
            lambda x: lax.reduce_or(x, (0,)),
            np.ones(3, c64),
            "reduce_or does not accept dtype complex64",
        ),
        (
            lambda x: lax.reduce_xor(x, (0,)),
            np.ones(3, bf16),
            "reduce_xor does not accept dtype bfloat16",
        ),
        (
            lambda x: lax.argmax(x, 0, np.int32),
            np.ones(3, c64),
            "argmax does not accept dtype complex64",
        ),
    ]
    for fun, x, message in cases:
        with pytest.raises(TypeError, match=message):
            staged(fun, x)  # eager mode skips abstract evaluation: these surface when staged
