"""sort / sort_key_val against a Python `sorted` reference, eager and staged: one or several
operands, lexicographic keys, stability, NaNs, signed zeros and complex order as JAX 0.10.2
sorts them."""

import re

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
    i32,
    staged,
    u8,
)

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.array import make_array

DTYPES = [f32, f16, bf16, i32, u8, b, c64]
CASES = [((7,), -1), ((3, 5), 1), ((3, 5), 0), ((3, 5), -2), ((2, 3, 4), 1), ((0,), 0), ((3, 0), 1)]


def sample(shape, dtype, seed=0, distinct=8):
    """Values with ties (and NaNs and signed zeros for floats)."""
    rng = np.random.default_rng(seed)
    if dtype == b:
        return rng.random(shape) < 0.5
    values = rng.integers(-distinct // 2, distinct // 2, shape).astype(np.float64)
    if dtype.kind == "u":
        values = values + distinct // 2
    if dtype.kind == "c":
        return (values + 1j * rng.integers(0, 3, shape)).astype(dtype)
    if dtype.kind in "fV":
        flat = values.reshape(-1)
        flat[rng.random(flat.size) < 0.15] = np.nan
        flat[flat == 0] = np.where(rng.random((flat == 0).sum()) < 0.5, 0.0, -0.0)
    return values.astype(dtype)


def order_key(value):
    """XLA's order of one element as a Python sort key: NaNs last, -0. == 0."""
    if isinstance(value, complex):
        return (value.real, value.imag)
    if isinstance(value, float) and np.isnan(value):
        return (1, 0.0)
    return (0, value)


def ref_sort(operands, dimension, num_keys):
    """Python's stable `sorted` over each slice along `dimension`."""
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    shape = moved[0].shape
    rows = [x.reshape(int(np.prod(shape[:-1])), shape[-1]) for x in moved]
    outs = [np.empty_like(r) for r in rows]
    for i in range(rows[0].shape[0]):
        keys = [[order_key(v) for v in r[i].tolist()] for r in rows[:num_keys]]
        perm = sorted(range(shape[-1]), key=lambda j: tuple(k[j] for k in keys))
        for out, r in zip(outs, rows, strict=True):
            out[i] = r[i][perm]
    return [np.moveaxis(o.reshape(shape), -1, dimension) for o in outs]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, dimension", CASES, ids=str)
def test_sort_one_operand(dtype, shape, dimension):
    x = sample(shape, dtype)
    out = check_traced_matches_eager(lambda x: lax.sort(x, dimension), x)
    assert out.dtype == dtype and out.shape == shape and not out.weak_type
    want = ref_sort([x], dimension, 1)[0]
    assert_close(out, want, dtype=want.dtype)


@pytest.mark.parametrize("key_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, dimension", CASES, ids=str)
def test_sort_key_val_is_stable(key_dtype, shape, dimension):
    keys = sample(shape, key_dtype, seed=1)
    values = np.arange(int(np.prod(shape)), dtype=i32).reshape(shape)  # reveals the permutation
    out = check_traced_matches_eager(lambda k, v: lax.sort_key_val(k, v, dimension), keys, values)
    assert isinstance(out, tuple) and len(out) == 2
    expected = ref_sort([keys, values], dimension, 1)
    for actual, want in zip(out, expected, strict=True):
        assert_close(actual, want, dtype=want.dtype)


@pytest.mark.parametrize("num_keys", [1, 2, 3])
@pytest.mark.parametrize("shape, dimension", [((12,), 0), ((4, 9), 1), ((9, 4), 0)], ids=str)
def test_sort_several_operands_lexicographically(num_keys, shape, dimension):
    operands = (
        sample(shape, i32, seed=2, distinct=3),
        sample(shape, f32, seed=3, distinct=3),
        sample(shape, b, seed=4),
        np.arange(int(np.prod(shape)), dtype=i32).reshape(shape),
    )
    out = check_traced_matches_eager(
        lambda *xs: lax.sort(xs, dimension=dimension, num_keys=num_keys), *operands
    )
    assert isinstance(out, tuple) and len(out) == 4
    for actual, want in zip(out, ref_sort(operands, dimension, num_keys), strict=True):
        assert_close(actual, want, dtype=want.dtype)


def test_is_stable_false_still_sorts():
    x = sample((4, 6), f32, seed=5)
    out = check_traced_matches_eager(lambda x: lax.sort(x, 0, is_stable=False), x)
    want = ref_sort([x], 0, 1)[0]
    assert_close(out, want, dtype=want.dtype)


def test_a_sequence_of_one_operand_gives_a_tuple():
    x = np.array([3, 1, 2], i32)
    for operand in ((x,), [x]):
        out = lax.sort(operand)
        assert isinstance(out, tuple) and len(out) == 1
        np.testing.assert_array_equal(np.asarray(out[0]), [1, 2, 3])


# --- XLA's order, values from JAX ------------------------------------------------------------


def test_nans_last_and_signed_zeros_equal():
    nan, inf = np.nan, np.inf
    x = np.array([0.0, -0.0, 1, nan, -nan, -inf, inf, -0.0, 0.0, -1], f32)
    for dtype in (f32, f16, bf16):
        keys, perm = lax.sort_key_val(x.astype(dtype), np.arange(10, dtype=i32))
        np.testing.assert_array_equal(np.asarray(perm), [5, 9, 0, 1, 7, 8, 2, 6, 3, 4])
        np.testing.assert_array_equal(
            np.signbit(np.asarray(keys, f32)), [1, 1, 0, 1, 1, 0, 0, 0, 0, 1]
        )


def test_complex_order_is_lexicographic_with_nans_last():
    nan = np.nan
    c = np.array([1 + 2j, 1 + 1j, complex(nan, 0), complex(nan, nan), -1 + 5j, 1 - 1j], c64)
    _, perm = lax.sort_key_val(c, np.arange(6, dtype=i32))
    np.testing.assert_array_equal(np.asarray(perm), [4, 5, 1, 0, 2, 3])


def test_bool_order():
    np.testing.assert_array_equal(np.asarray(lax.sort(np.array([True, False, True]))), [0, 1, 1])


def test_two_float_keys_from_jax():
    nan, inf = np.nan, np.inf
    x = np.array([0.0, -0.0, 1, nan, -nan, -inf, inf, -0.0, 0.0, -1], f32)
    first, second = lax.sort((x, x[::-1].copy()), num_keys=2)
    np.testing.assert_array_equal(np.asarray(first), [-inf, -1, 0, -0, 0, -0, 1, inf, nan, nan])
    np.testing.assert_array_equal(np.asarray(second), [nan, 0, -1, 0, -0, 1, -0, nan, -inf, inf])
    np.testing.assert_array_equal(np.signbit(np.asarray(first)), [1, 1, 0, 1, 0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(np.signbit(np.asarray(second)), [1, 0, 1, 0, 1, 0, 1, 0, 1, 0])


# --- weak types -----------------------------------------------------------------------------


def test_all_weak_operands_give_weak_results():
    weak = make_array(np.array([3.0, 1.0, 2.0], f32), True)
    out = check_traced_matches_eager(lambda x: lax.sort(x), weak)
    assert out.weak_type
    outs = check_traced_matches_eager(lambda x, y: lax.sort_key_val(x, y), weak, weak)
    assert all(o.weak_type for o in outs)


def test_each_result_keeps_its_operand_weak_type_when_staged():
    weak = make_array(np.array([3.0, 1.0, 2.0], f32), True)
    closed = make_jaxpr(lambda k, v: lax.sort_key_val(k, v))(np.array([2, 0, 1], i32), weak)
    assert [a.weak_type for a in closed.out_avals] == [False, True]  # as JAX


def test_mixed_weak_operands_eager_matches_staged():
    weak = make_array(np.array([3.0, 1.0, 2.0], f32), True)
    check_traced_matches_eager(lambda k, v: lax.sort_key_val(k, v), np.array([2, 0, 1], i32), weak)


# --- printing -------------------------------------------------------------------------------


def test_jaxpr_printouts_match_jax():
    x = np.ones((3, 4), f32)
    assert str(make_jaxpr(lambda x: lax.sort(x))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] = sort[dimension=1 is_stable=True num_keys=1] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.sort((x, x), num_keys=2))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] c:f32[3,4] = sort[dimension=1 is_stable=True num_keys=2] a a\n"
        "  in (b, c) }"
    )
    assert str(make_jaxpr(lambda x: lax.sort_key_val(x, x))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] c:f32[3,4] = sort[dimension=1 is_stable=True num_keys=1] a a\n"
        "  in (b, c) }"
    )
    assert str(make_jaxpr(lambda x: lax.sort(x, dimension=0, is_stable=False))(x)) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] = sort[dimension=0 is_stable=False num_keys=1] a\n"
        "  in (b,) }"
    )
    assert str(make_jaxpr(lambda x: lax.sort((x,)))(np.ones(3, f32))) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sort[dimension=0 is_stable=True num_keys=1] a\n"
        "  in (b,) }"
    )


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("run", [eager, staged], ids=["eager", "staged"])
def test_errors(run):
    x = np.ones((3, 4), f32)
    y, z, scalar = np.ones((2, 4), f32), np.ones((3, 1), i32), np.float32(1)
    cases = [
        (
            lambda x: lax.sort(x, num_keys=2),
            ValueError,
            "sort: num_keys=2 must equal 1 for a single operand.",
        ),
        (lambda x: lax.sort(x, num_keys=0), ValueError, "sort: num_keys=0 must equal 1"),
        (
            lambda x: lax.sort((x, x), num_keys=3),
            ValueError,
            "sort: num_keys=3 must be between 1 and len(operand)=2",
        ),
        (lambda x: lax.sort((x, x), num_keys=0), ValueError, "sort: num_keys=0 must be between 1"),
        (
            lambda x: lax.sort((x, y)),
            TypeError,
            "Arguments to sort must have equal shapes, got: (3, 4) (2, 4)",
        ),
        (
            lambda x: lax.sort_key_val(x, z),
            TypeError,
            "Arguments to sort must have equal shapes, got: (3, 4) (3, 1)",
        ),
        (
            lambda x: lax.sort(x, dimension=2),
            ValueError,
            "sort: axis 2 is out of bounds for array of dimension 2",
        ),
        (
            lambda x: lax.sort(x, dimension=-3),
            ValueError,
            "sort: axis -3 is out of bounds for array of dimension 2",
        ),
        (
            lambda x: lax.sort(scalar),
            ValueError,
            "sort: axis -1 is out of bounds for array of dimension 0",
        ),
        (lambda x: lax.sort(()), TypeError, "sort requires at least one operand"),
    ]
    for fun, error, message in cases:
        with pytest.raises(error, match=re.escape(message)):
            run(fun, x)


def test_the_abstract_evaluation_checks_what_the_wrapper_checks():
    from tracejit._src.core import ShapedArray

    a, c = ShapedArray((3, 4), f32), ShapedArray((2, 4), f32)
    params = {"dimension": 1, "is_stable": True, "num_keys": 1}
    with pytest.raises(
        TypeError,
        match=re.escape("Arguments to sort must have equal shapes, got: f32[3,4] f32[2,4]"),
    ):
        lax.sort_p.abstract_eval(a, c, **params)
    with pytest.raises(ValueError, match="sort: num_keys=3"):
        lax.sort_p.abstract_eval(a, a, **{**params, "num_keys": 3})
    with pytest.raises(ValueError, match="sort"):
        lax.sort_p.abstract_eval(a, **{**params, "dimension": 2})
