"""Promotion of jnp operands: the dtype/weak-type lattice, rank promotion, Python scalars, and the
jaxprs staged for them. Expected values and printouts come from JAX 0.10.2 (sharding params
removed)."""

import ml_dtypes
import numpy as np
import pytest
from helpers import check_traced_matches_eager, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit._src.array import Array

SHORT = {
    "b": np.bool_,
    "u8": np.uint8,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "u32": np.uint32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "c64": np.complex64,
}


def operand(kind):
    """An operand of each kind: strong arrays, weakly typed Arrays (wi/wf/wc), Python scalars
    (pi/pf/pc/pb)."""
    if kind in SHORT:
        return jnp.asarray(np.array([1, 0], dtype=SHORT[kind]))
    return {
        "wi": jnp.asarray(1),
        "wf": jnp.asarray(1.5),
        "wc": jnp.asarray(1j),
        "pi": 2,
        "pf": 2.5,
        "pc": 1j,
        "pb": True,
    }[kind]


# jnp.add(row, column) in JAX 0.10.2: result dtype, `*` when weakly typed.
KINDS = [
    "b",
    "u8",
    "i8",
    "i32",
    "u32",
    "f16",
    "bf16",
    "f32",
    "c64",
    "wi",
    "wf",
    "wc",
    "pi",
    "pf",
    "pc",
    "pb",
]
TABLE = [
    "   b:     b    u8    i8   i32   u32   f16  bf16   f32   c64  i32*  f32*  c64*  i32*  f32*  c64*     b",
    "  u8:    u8    u8   i16   i32   u32   f16  bf16   f32   c64    u8  f32*  c64*    u8  f32*  c64*    u8",
    "  i8:    i8   i16    i8   i32   i32   f16  bf16   f32   c64    i8  f32*  c64*    i8  f32*  c64*    i8",
    " i32:   i32   i32   i32   i32   i32   f16  bf16   f32   c64   i32  f32*  c64*   i32  f32*  c64*   i32",
    " u32:   u32   u32   i32   i32   u32   f16  bf16   f32   c64   u32  f32*  c64*   u32  f32*  c64*   u32",
    " f16:   f16   f16   f16   f16   f16   f16   f32   f32   c64   f16   f16   c64   f16   f16   c64   f16",
    "bf16:  bf16  bf16  bf16  bf16  bf16   f32  bf16   f32   c64  bf16  bf16   c64  bf16  bf16   c64  bf16",
    " f32:   f32   f32   f32   f32   f32   f32   f32   f32   c64   f32   f32   c64   f32   f32   c64   f32",
    " c64:   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64",
    "  wi:  i32*    u8    i8   i32   u32   f16  bf16   f32   c64  i32*  f32*  c64*  i32*  f32*  c64*  i32*",
    "  wf:  f32*  f32*  f32*  f32*  f32*   f16  bf16   f32   c64  f32*  f32*  c64*  f32*  f32*  c64*  f32*",
    "  wc:  c64*  c64*  c64*  c64*  c64*   c64   c64   c64   c64  c64*  c64*  c64*  c64*  c64*  c64*  c64*",
    "  pi:  i32*    u8    i8   i32   u32   f16  bf16   f32   c64  i32*  f32*  c64*  i32*  f32*  c64*  i32*",
    "  pf:  f32*  f32*  f32*  f32*  f32*   f16  bf16   f32   c64  f32*  f32*  c64*  f32*  f32*  c64*  f32*",
    "  pc:  c64*  c64*  c64*  c64*  c64*   c64   c64   c64   c64  c64*  c64*  c64*  c64*  c64*  c64*  c64*",
    "  pb:     b    u8    i8   i32   u32   f16  bf16   f32   c64  i32*  f32*  c64*  i32*  f32*  c64*     b",
]
EXPECTED = {}
for row in TABLE:
    left, cells = row.split(":")
    for right, cell in zip(KINDS, cells.split(), strict=True):
        EXPECTED[(left.strip(), right)] = (np.dtype(SHORT[cell.rstrip("*")]), cell.endswith("*"))


@pytest.mark.parametrize("left,right", sorted(EXPECTED))
def test_add_promotion_table(left, right):
    x, y = operand(left), operand(right)
    dtype, weak = EXPECTED[(left, right)]
    # Python scalars are closed over (they are not traced); arrays are arguments.
    args = [v for v in (x, y) if isinstance(v, Array)]

    def fun(*arrays):
        it = iter(arrays)
        a = next(it) if isinstance(x, Array) else x
        b = next(it) if isinstance(y, Array) else y
        return jnp.add(a, b)

    if args:
        out = check_traced_matches_eager(fun, *args)
    else:
        out = fun()
    assert (out.dtype, out.weak_type) == (dtype, weak)
    expected_value = np.asarray(x, dtype=np.complex128) + np.asarray(y, dtype=np.complex128)
    if dtype == np.bool_:
        expected_value = np.logical_or(np.asarray(x), np.asarray(y))
    np.testing.assert_allclose(np.asarray(out).astype(np.complex128), expected_value, rtol=1e-2)


@pytest.mark.parametrize("op", [jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum])
@pytest.mark.parametrize(
    "left,right",
    [
        ("i8", "u8"),
        ("f16", "pf"),
        ("i32", "pf"),
        ("wi", "wf"),
        ("u32", "i8"),
        ("bf16", "f16"),
        ("pi", "pi"),
    ],
)
def test_other_binary_ops_promote_alike(op, left, right):
    x, y = operand(left), operand(right)
    out = op(x, y)
    assert (out.dtype, out.weak_type) == EXPECTED[(left, right)]


@pytest.mark.parametrize(
    "fun,dtype,expected",
    [
        (jnp.true_divide, "i32", ("f32", False)),
        (jnp.true_divide, "u8", ("f32", False)),
        (jnp.true_divide, "b", ("f32", False)),
        (jnp.true_divide, "f16", ("f16", False)),
        (jnp.true_divide, "wi", ("f32", True)),
        (jnp.floor_divide, "b", ("i32", False)),
        (jnp.power, "b", ("i32", False)),
        (jnp.arctan2, "i8", ("f32", False)),
        (jnp.hypot, "i32", ("f32", False)),
        (jnp.equal, "f16", ("b", False)),
    ],
)
def test_special_binary_promotions(fun, dtype, expected):
    x = operand(dtype)
    out = fun(x, x)
    assert (out.dtype, out.weak_type) == (np.dtype(SHORT[expected[0]]), expected[1])


@pytest.mark.parametrize(
    "dtype,expected",
    [
        ("i32", ("f32", False)),
        ("i8", ("f32", False)),
        ("u8", ("f32", False)),
        ("b", ("f32", False)),
        ("f16", ("f16", False)),
        ("bf16", ("bf16", False)),
        ("c64", ("c64", False)),
        ("wi", ("f32", True)),
        ("wf", ("f32", True)),
        ("pi", ("f32", True)),
    ],
)
def test_unary_inexact_promotion(dtype, expected):
    out = jnp.sin(operand(dtype))
    assert (out.dtype, out.weak_type) == (np.dtype(SHORT[expected[0]]), expected[1])


# --------------------------------------------------------------------------------------------
# Staged jaxprs


def test_func1_golden_jaxpr():
    def func1(first, second):
        return jnp.sum(first + jnp.sin(second) * 3.0)

    assert jaxpr_text(func1, jnp.zeros(8), jnp.ones(8)) == (
        "{ lambda ; a:f32[8] b:f32[8]. let\n"
        "    c:f32[8] = sin b\n"
        "    d:f32[8] = mul c 3.0:f32[]\n"
        "    e:f32[8] = add a d\n"
        "    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e\n"
        "  in (f,) }"
    )


GOLDEN = [
    (
        "python float stays a literal of the array's dtype",
        lambda x: x + 2.0,
        (jnp.zeros(3),),
        "{ lambda ; a:f32[3]. let b:f32[3] = add a 2.0:f32[] in (b,) }",
    ),
    (
        "python int takes float16",
        lambda x: x + 2,
        (jnp.zeros(3, jnp.float16),),
        "{ lambda ; a:f16[3]. let b:f16[3] = add a 2.0:f16[] in (b,) }",
    ),
    (
        "python int wraps into int8",
        lambda x: x * 1000,
        (jnp.zeros(3, jnp.int8),),
        "{ lambda ; a:i8[3]. let b:i8[3] = mul a -24:i8[] in (b,) }",
    ),
    (
        "negative python int wraps into uint8",
        lambda x: x + (-1),
        (jnp.zeros(3, jnp.uint8),),
        "{ lambda ; a:u8[3]. let b:u8[3] = add a 255:u8[] in (b,) }",
    ),
    (
        "rank promotion of the lower-rank operand",
        lambda x, y: x + y,
        (jnp.zeros(3), jnp.zeros((2, 3))),
        (
            "{ lambda ; a:f32[3] b:f32[2,3]. let\n"
            "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
            "    d:f32[2,3] = add c b\n"
            "  in (d,) }"
        ),
    ),
    (
        "rank promotion of the right operand",
        lambda x, y: x + y,
        (jnp.zeros((2, 1)), jnp.zeros(3)),
        (
            "{ lambda ; a:f32[2,1] b:f32[3]. let\n"
            "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
            "    d:f32[2,3] = add a c\n"
            "  in (d,) }"
        ),
    ),
    (
        "rank-0 operands are not broadcast",
        lambda x, y: x * y,
        (jnp.zeros(()), jnp.zeros((2, 3))),
        "{ lambda ; a:f32[] b:f32[2,3]. let c:f32[2,3] = mul a b in (c,) }",
    ),
    (
        "int array times python float: a weak float conversion",
        lambda x: x * 2.5,
        (jnp.zeros(3, jnp.int32),),
        (
            "{ lambda ; a:i32[3]. let\n"
            "    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a\n"
            "    c:f32[3] = mul b 2.5:f32[]\n"
            "  in (c,) }"
        ),
    ),
    (
        "weak tracer meets float16",
        lambda w, y: w + y,
        (1.0, jnp.zeros(3, jnp.float16)),
        (
            "{ lambda ; a:f32[] b:f16[3]. let\n"
            "    c:f16[] = convert_element_type[new_dtype=float16 weak_type=False] a\n"
            "    d:f16[3] = add c b\n"
            "  in (d,) }"
        ),
    ),
    (
        "weak tracer meets a strong array of its dtype",
        lambda w, y: jnp.sin(w) + y,
        (1.0, jnp.zeros(3)),
        (
            "{ lambda ; a:f32[] b:f32[3]. let\n"
            "    c:f32[] = sin a\n"
            "    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
            "    e:f32[3] = add d b\n"
            "  in (e,) }"
        ),
    ),
    (
        "int and float arrays",
        lambda x, y: x + y,
        (jnp.zeros(3, jnp.int32), jnp.zeros(3)),
        (
            "{ lambda ; a:i32[3] b:f32[3]. let\n"
            "    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    d:f32[3] = add c b\n"
            "  in (d,) }"
        ),
    ),
    (
        "true division of ints",
        lambda x, y: x / y,
        (jnp.zeros(3, jnp.int32), jnp.zeros(3, jnp.int32)),
        (
            "{ lambda ; a:i32[3] b:i32[3]. let\n"
            "    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
            "    e:f32[3] = div c d\n"
            "  in (e,) }"
        ),
    ),
    (
        "complex scalar",
        lambda x: x * (1 + 2j),
        (jnp.zeros(3),),
        (
            "{ lambda ; a:f32[3]. let\n"
            "    b:c64[3] = convert_element_type[new_dtype=complex64 weak_type=False] a\n"
            "    c:c64[3] = mul b (1+2j):c64[]\n"
            "  in (c,) }"
        ),
    ),
    (
        "numpy float32 scalar is strong",
        lambda x: x + np.float32(2),
        (jnp.zeros(3, jnp.float16),),
        (
            "{ lambda ; a:f16[3]. let\n"
            "    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    c:f32[3] = add b 2.0:f32[]\n"
            "  in (c,) }"
        ),
    ),
    (
        "numpy float64 scalar is canonicalized",
        lambda x: x + np.float64(2),
        (jnp.zeros(3),),
        "{ lambda ; a:f32[3]. let b:f32[3] = add a 2.0:f32[] in (b,) }",
    ),
    (
        "bool array plus python int",
        lambda x: x + 2,
        (jnp.zeros(3, bool),),
        (
            "{ lambda ; a:bool[3]. let\n"
            "    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=True] a\n"
            "    c:i32[3] = add b 2:i32[]\n"
            "  in (c,) }"
        ),
    ),
    (
        "python scalars only",
        lambda: jnp.add(1.0, 2.0),
        (),
        "{ lambda ; . let a:f32[] = add 1.0:f32[] 2.0:f32[] in (a,) }",
    ),
    (
        "reflected subtraction",
        lambda x: 1 - x,
        (jnp.zeros(3),),
        "{ lambda ; a:f32[3]. let b:f32[3] = sub 1.0:f32[] a in (b,) }",
    ),
    (
        "comparison with a python scalar",
        lambda x: x < 1,
        (jnp.zeros(3),),
        "{ lambda ; a:f32[3]. let b:bool[3] = lt a 1.0:f32[] in (b,) }",
    ),
]


@pytest.mark.parametrize("name,fun,args,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_jaxprs(name, fun, args, expected):
    assert jaxpr_text(fun, *args) == expected


def test_weak_types_agree_eager_and_staged():
    cases = [
        (lambda w, x: w * x, (2.0, jnp.ones(3))),
        (lambda w, v: w + v, (2.0, 3)),
        (lambda w: jnp.sin(w) * 2, (2.0,)),
        (lambda i: i * 2.5, (3,)),
        (lambda i, x: i + x, (3, jnp.ones(2, jnp.uint8))),
    ]
    for fun, args in cases:
        arrays = [jnp.asarray(a) for a in args]
        check_traced_matches_eager(fun, *arrays)


# --------------------------------------------------------------------------------------------
# Python scalar conversion


def test_python_int_wraps_into_narrow_ints():
    assert np.asarray(jnp.ones(3, jnp.int8) * 1000).tolist() == [-24, -24, -24]
    assert np.asarray(jnp.ones(2, jnp.uint8) + (-1)).tolist() == [0, 0]


def test_python_int_must_fit_the_default_int():
    with pytest.raises(OverflowError, match="Python int 2147483648 too large to convert to int32"):
        jnp.ones(3, jnp.int32) + 2**31
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        jnp.ones(3, jnp.float32) * 2**40


def test_python_int_fits_default_int_under_x64(enable_x64):
    out = jnp.ones(2, jnp.int32) + 2**33
    assert out.dtype == np.int32


def test_x64_mode_default_dtypes(enable_x64):
    assert jnp.asarray(1.0).dtype == np.float64
    assert jnp.add(jnp.ones(2, jnp.float32), 1.0).dtype == np.float32
    assert jnp.add(jnp.asarray(np.ones(2)), 1).dtype == np.float64


def test_float_overflow_to_inf():
    out = jnp.ones(2, jnp.float16) * 1e10
    assert out.dtype == np.float16 and np.isinf(np.asarray(out)).all()


def test_scalar_cache_keeps_signed_zeros_apart():
    x = jnp.ones(2)
    assert np.signbit(np.asarray(x * 0.0)).tolist() == [False, False]
    assert np.signbit(np.asarray(x * -0.0)).tolist() == [True, True]
    assert np.signbit(np.asarray(x * 0.0)).tolist() == [False, False]


def test_scalar_cache_separates_int_and_float_keys():
    x = jnp.ones(2, jnp.int32)
    assert (x + 1).dtype == np.int32
    assert (x + 1.0).dtype == np.float32
    assert (x + 1).dtype == np.int32
    y = jnp.ones(2)
    assert float((y * 2.0)[0]) == 2.0 and float((y * 2)[0]) == 2.0


# --------------------------------------------------------------------------------------------
# Errors


def test_incompatible_shapes_same_rank():
    with pytest.raises(
        TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"
    ):
        jnp.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"mul got incompatible shapes"):
        tracejit.make_jaxpr(lambda x, y: x * y)(jnp.ones(3), jnp.ones(4))


def test_incompatible_shapes_different_ranks():
    msg = r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]"
    with pytest.raises(ValueError, match=msg):
        jnp.add(jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(ValueError, match=msg):
        tracejit.make_jaxpr(jnp.add)(jnp.ones((2, 3)), jnp.ones(4))


def test_non_array_arguments():
    with pytest.raises(
        TypeError,
        match=r"add requires ndarray or scalar arguments, got <class 'list'> at position 1",
    ):
        jnp.add(jnp.ones(2), [1, 2])
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin("a")


def test_invalid_dtype_message():
    with pytest.raises(TypeError, match="is not a valid JAX array type"):
        jnp.add(np.array(["a"]), 1)


def test_lax_dtype_errors_eager_and_staged():
    b = jnp.ones(3, bool)
    with pytest.raises(TypeError, match="sub"):
        jnp.subtract(b, b)
    with pytest.raises(TypeError, match="sub"):
        tracejit.make_jaxpr(jnp.subtract)(b, b)
    with pytest.raises(TypeError, match="bool"):
        jnp.negative(b)
    with pytest.raises(TypeError, match="float32"):
        jnp.bitwise_and(jnp.ones(3), 1)


def test_fast_path_learns_only_accepted_cases():
    # A dtype first seen failing must keep failing (and not be cached as fast).
    b = jnp.ones(3, bool)
    for _ in range(2):
        with pytest.raises(TypeError):
            jnp.subtract(b, b)
    x = jnp.ones(3)
    assert np.asarray(jnp.subtract(x, x)).tolist() == [0, 0, 0]
    # Incompatible shapes on the learned fast path still raise JAX's error.
    with pytest.raises(TypeError, match="incompatible shapes"):
        jnp.subtract(x, jnp.ones(4))
    # Rank promotion on the fast path's dtype.
    assert jnp.subtract(x, jnp.ones((2, 3))).shape == (2, 3)


def test_x64_result_dtypes(enable_x64):
    # JAX 0.10.2 with x64: integers up to 32 bits compute in float32, 64-bit ones in float64;
    # bools count as int32 in arithmetic; reductions accumulate in the 64-bit defaults.
    for dtype, inexact in [
        (np.int8, np.float32),
        (np.int32, np.float32),
        (np.uint32, np.float32),
        (np.bool_, np.float32),
        (np.int64, np.float64),
        (np.uint64, np.float64),
    ]:
        x = jnp.ones(2, dtype)
        assert jnp.sin(x).dtype == inexact
        assert (x / x).dtype == inexact
        assert jnp.mean(x).dtype == inexact
    b = jnp.ones(2, bool)
    assert jnp.square(b).dtype == np.int32
    assert jnp.floor_divide(b, b).dtype == np.int32
    assert jnp.sum(b).dtype == np.int64 and jnp.sum(jnp.ones(2, np.uint8)).dtype == np.uint64
    assert jnp.cumsum(b).dtype == np.int64 and jnp.argmax(b).dtype == np.int64
    assert jnp.rint(jnp.ones(2, np.int32)).dtype == np.float64
    assert (b + 1).dtype == np.int64
    assert jnp.sin(1).dtype == np.float64 and jnp.sin(1).weak_type
    out = check_traced_matches_eager(jnp.power, jnp.ones(3, np.int32), jnp.ones(3, np.int32))
    assert out.dtype == np.int32
