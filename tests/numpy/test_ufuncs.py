"""Elementwise jnp functions against NumPy, eagerly and staged, on several shapes and dtypes.
Result dtypes and weak types, and the errors, are JAX 0.10.2's."""

from dataclasses import dataclass, field

import numpy as np
import pytest
from helpers import (
    ALL,
    FLOATS,
    INTS,
    REAL,
    assert_close,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    f16,
    f32,
    i8,
    i32,
    u8,
)

import tracejit
import tracejit.numpy as jnp

SHAPES = [(), (0,), (5,), (2, 3)]
TOL = {f32: 2e-5, f16: 4e-3, bf16: 3e-2, c64: 2e-5}


def sample(shape, dtype, low=-3.0, high=3.0, seed=0):
    rng = np.random.RandomState(seed)
    if dtype == b:
        return np.asarray(rng.rand(*shape) > 0.5)
    if dtype.kind in "iu":
        lo = max(int(np.floor(low)), 0 if dtype.kind == "u" else -100)
        return rng.randint(lo, int(np.ceil(high)) + 1, size=shape).astype(dtype)
    if dtype == c64:
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def inexact_of(dtype):
    return dtype if dtype in FLOATS or dtype == c64 else f32


@dataclass
class Unary:
    name: str
    ref: object
    dtypes: list
    out: object = None  # function of the input dtype; default: same dtype
    domain: tuple = (-3.0, 3.0)
    aliases: list = field(default_factory=list)


def same(d):
    return d


def real_of(d):
    return f32 if d == c64 else d


def boolean(d):
    return b


UNARY = [
    Unary("sin", np.sin, ALL, inexact_of),
    Unary("cos", np.cos, ALL, inexact_of),
    Unary("tan", np.tan, ALL, inexact_of, (-1.2, 1.2)),
    Unary("arcsin", np.arcsin, FLOATS + [c64, i32], inexact_of, (-0.9, 0.9), ["asin"]),
    Unary("arccos", np.arccos, FLOATS + [c64], inexact_of, (-0.9, 0.9), ["acos"]),
    Unary("arctan", np.arctan, ALL, inexact_of, aliases=["atan"]),
    Unary("sinh", np.sinh, ALL, inexact_of),
    Unary("cosh", np.cosh, ALL, inexact_of),
    Unary("tanh", np.tanh, ALL, inexact_of),
    Unary("arcsinh", np.arcsinh, ALL, inexact_of, aliases=["asinh"]),
    Unary("arccosh", np.arccosh, FLOATS + [c64], inexact_of, (1.1, 4.0), ["acosh"]),
    Unary("arctanh", np.arctanh, FLOATS + [c64], inexact_of, (-0.9, 0.9), ["atanh"]),
    Unary("exp", np.exp, ALL, inexact_of),
    Unary("exp2", np.exp2, ALL, inexact_of),
    Unary("expm1", np.expm1, ALL, inexact_of),
    Unary("log", np.log, FLOATS + [c64, i32, u8], inexact_of, (0.1, 5.0)),
    Unary("log1p", np.log1p, FLOATS + [c64, u8], inexact_of, (0.1, 5.0)),
    Unary("log2", np.log2, FLOATS + [c64, i32], inexact_of, (0.1, 5.0)),
    Unary("log10", np.log10, FLOATS + [c64, i32], inexact_of, (0.1, 5.0)),
    Unary("sqrt", np.sqrt, FLOATS + [c64, i32, u8, b], inexact_of, (0.0, 5.0)),
    Unary("cbrt", np.cbrt, REAL, inexact_of),
    Unary("reciprocal", lambda x: 1 / x, FLOATS + [c64], inexact_of, (0.5, 3.0)),
    Unary("deg2rad", lambda x: x * (np.pi / 180), REAL + [c64], inexact_of, aliases=["radians"]),
    Unary("rad2deg", lambda x: x * (180 / np.pi), REAL + [c64], inexact_of, aliases=["degrees"]),
    Unary("sinc", np.sinc, FLOATS + [i32], inexact_of),
    Unary("square", np.square, [f32, f16, i32, i8, c64], same),
    Unary("negative", np.negative, [f32, f16, bf16, i32, i8, u8, c64], same),
    Unary("positive", lambda x: x, ALL, same),
    Unary("abs", np.abs, ALL, real_of, aliases=["absolute"]),
    Unary("sign", np.sign, [f32, f16, i32, i8, u8, c64], same),
    Unary("floor", np.floor, REAL, same),
    Unary("ceil", np.ceil, REAL, same),
    Unary("trunc", np.trunc, REAL, same),
    Unary("rint", np.rint, FLOATS + [i32, i8, c64], inexact_of),
    Unary("round", np.round, FLOATS + [i32, c64], same, aliases=["around"]),
    Unary("isfinite", np.isfinite, ALL, boolean),
    Unary("isnan", np.isnan, ALL, boolean),
    Unary("isinf", np.isinf, ALL, boolean),
    Unary("signbit", np.signbit, REAL, boolean),
    Unary("logical_not", np.logical_not, ALL, boolean),
    Unary("bitwise_not", np.invert, INTS + [b], same, aliases=["invert", "bitwise_invert"]),
    Unary("real", np.real, ALL, real_of),
    Unary("imag", np.imag, ALL, real_of),
    Unary("conj", np.conj, ALL, same, aliases=["conjugate"]),
]


def unary_cases():
    for op in UNARY:
        for dtype in op.dtypes:
            for shape in SHAPES:
                yield pytest.param(op, dtype, shape, id=f"{op.name}-{dtype.name}-{shape}")


def reference(ref, *args, out_dtype):
    """`ref` on float64/complex128 operands (integer operands too, when the result is
    inexact), so that NumPy's own promotion does not get in the way."""
    widen = out_dtype.kind in "fcV"
    wide = [
        np.asarray(a, np.complex128 if a.dtype == c64 else np.float64)
        if a.dtype.kind not in "biu" or widen
        else a
        for a in args
    ]
    with np.errstate(all="ignore"):
        expected = np.asarray(ref(*wide))
    return expected


@pytest.mark.parametrize("op,dtype,shape", list(unary_cases()))
def test_unary(op, dtype, shape):
    x = sample(shape, dtype, *op.domain)
    fun = getattr(jnp, op.name)
    out = check_traced_matches_eager(fun, jnp.asarray(x), rtol=1e-5, atol=1e-5)
    out_dtype = (op.out or same)(dtype)
    assert out.dtype == out_dtype and out.shape == shape and not out.weak_type
    expected = reference(op.ref, x, out_dtype=out_dtype)
    if dtype in (f16, bf16) and out_dtype == dtype:
        expected = np.asarray(op.ref(x.astype(np.float32)))  # computed at the operand's precision
    assert_close(out, expected, TOL.get(np.dtype(out_dtype), 0), dtype=out_dtype)
    for alias in op.aliases:
        assert getattr(jnp, alias) is fun or np.array_equal(
            np.asarray(getattr(jnp, alias)(jnp.asarray(x))), np.asarray(out), equal_nan=True
        )


@pytest.mark.parametrize(
    "name,dtype",
    [
        ("negative", b),
        ("sign", b),
        ("bitwise_not", f32),
        ("round", b),
        ("signbit", c64),
    ],
)
def test_unary_rejects(name, dtype):
    x = jnp.asarray(sample((3,), dtype))
    with pytest.raises((TypeError, ValueError)):
        getattr(jnp, name)(x)


@pytest.mark.parametrize(
    "name,value,expected",
    [
        ("sin", 0.5, (f32, True)),
        ("sin", 1, (f32, True)),
        ("negative", 1.5, (f32, True)),
        ("abs", -1, (i32, True)),
        ("floor", 1, (i32, True)),
        ("real", 1.0, (f32, True)),
        ("imag", 1.0, (f32, True)),
        ("conj", 1, (i32, True)),
        ("isfinite", 1.0, (b, True)),
        ("isnan", 1.0, (b, True)),
        ("isinf", 1.0, (b, False)),
        ("isposinf", 1.0, (b, False)),
        ("sinc", 0.5, (f32, True)),
        ("sinc", 2, (f32, True)),
        ("isneginf", 1.0, (b, False)),
        ("log2", 0.5, (f32, False)),
        ("log10", 1, (f32, False)),
        ("rint", 1, (f32, False)),
        ("signbit", 1, (b, False)),
        ("sqrt", 2, (f32, True)),
        ("positive", 1.0, (f32, True)),
    ],
)
def test_unary_weak_types(name, value, expected):
    fun = getattr(jnp, name)
    out = fun(value)
    assert (out.dtype, out.weak_type) == expected
    staged = tracejit.make_jaxpr(fun)(value).out_avals[0]
    assert (staged.dtype, staged.weak_type) == expected


# --------------------------------------------------------------------------------------------
# Binary


@dataclass
class Binary:
    name: str
    ref: object
    dtypes: list
    out: object = None  # function of the operands' dtype
    x_range: tuple = (-3.0, 3.0)
    y_range: tuple = (-3.0, 3.0)
    y_nonzero: bool = False
    aliases: list = field(default_factory=list)


def py_floordiv(x, y):
    return np.floor_divide(x, y)


BINARY = [
    Binary("add", np.add, ALL, same),
    Binary("subtract", np.subtract, [f32, f16, bf16, i32, i8, u8, c64], same),
    Binary("multiply", np.multiply, ALL, same),
    Binary("divide", np.true_divide, ALL, inexact_of, y_nonzero=True, aliases=["true_divide"]),
    Binary("floor_divide", py_floordiv, [f32, f16, i32, i8, u8], same, y_nonzero=True),
    Binary(
        "remainder", np.remainder, [f32, f16, i32, i8, u8], same, y_nonzero=True, aliases=["mod"]
    ),
    Binary("fmod", np.fmod, [f32, i32, i8], same, y_nonzero=True),
    Binary("power", np.power, [f32, f16, c64], same, (0.5, 2.0), (-2.0, 2.0)),
    Binary("float_power", np.power, [f32, i32], inexact_of, (0.5, 2.0), (-2.0, 2.0)),
    Binary("maximum", np.maximum, REAL, same),
    Binary("minimum", np.minimum, REAL, same),
    Binary("fmax", np.fmax, [f32, f16, i32], same),
    Binary("fmin", np.fmin, [f32, f16, i32], same),
    Binary("arctan2", np.arctan2, [f32, f16, i32], inexact_of, aliases=["atan2"]),
    Binary("hypot", np.hypot, [f32, f16, i32], inexact_of),
    Binary("copysign", np.copysign, [f32, f16, i32], inexact_of),
    Binary("heaviside", np.heaviside, [f32, i32], inexact_of),
    Binary("equal", np.equal, ALL, boolean),
    Binary("not_equal", np.not_equal, ALL, boolean),
    Binary("less", np.less, ALL, boolean),
    Binary("less_equal", np.less_equal, ALL, boolean),
    Binary("greater", np.greater, ALL, boolean),
    Binary("greater_equal", np.greater_equal, ALL, boolean),
    Binary("bitwise_and", np.bitwise_and, INTS + [b], same),
    Binary("bitwise_or", np.bitwise_or, INTS + [b], same),
    Binary("bitwise_xor", np.bitwise_xor, INTS + [b], same),
    Binary("left_shift", np.left_shift, [i32, u8], same, (0, 5), (0, 3)),
    Binary("right_shift", np.right_shift, [i32, i8, u8], same, (-20, 20), (0, 3)),
    Binary("logical_and", np.logical_and, ALL, boolean),
    Binary("logical_or", np.logical_or, ALL, boolean),
    Binary("logical_xor", np.logical_xor, ALL, boolean),
]
BINARY_SHAPES = [
    ((), ()),
    ((5,), (5,)),
    ((2, 3), ()),
    ((), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (3,)),
    ((0, 3), (3,)),
    ((2, 3), (1, 3)),
]


def binary_cases():
    for op in BINARY:
        for dtype in op.dtypes:
            for sx, sy in BINARY_SHAPES:
                yield pytest.param(op, dtype, sx, sy, id=f"{op.name}-{dtype.name}-{sx}-{sy}")


@pytest.mark.parametrize("op,dtype,sx,sy", list(binary_cases()))
def test_binary(op, dtype, sx, sy):
    x = sample(sx, dtype, *op.x_range, seed=1)
    y = sample(sy, dtype, *op.y_range, seed=2)
    if op.y_nonzero:
        if dtype.kind in "iu":
            y = np.where(y == 0, 1, y).astype(dtype)
        else:
            y = np.where(np.abs(y) < 0.25, 1.0, y).astype(dtype)
    fun = getattr(jnp, op.name)
    out = check_traced_matches_eager(fun, jnp.asarray(x), jnp.asarray(y), rtol=1e-5, atol=1e-5)
    out_dtype = op.out(dtype)
    assert out.dtype == out_dtype and not out.weak_type
    assert out.shape == np.broadcast_shapes(sx, sy)
    if dtype in (f16, bf16):
        expected = np.asarray(op.ref(x.astype(np.float32), y.astype(np.float32)))
    elif dtype.kind in "biu":
        with np.errstate(all="ignore"):
            if out_dtype.kind == "f":
                expected = np.asarray(op.ref(x.astype(np.float64), y.astype(np.float64)))
            else:
                expected = np.asarray(op.ref(x, y))
    else:
        expected = reference(op.ref, x, y, out_dtype=out_dtype)
    assert_close(out, expected, TOL.get(np.dtype(out_dtype), 0), dtype=out_dtype)
    for alias in op.aliases:
        assert getattr(jnp, alias) is fun


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_bool_binary_ops(name):
    x = sample((6,), b, seed=3)
    y = sample((6,), b, seed=4)
    out = check_traced_matches_eager(getattr(jnp, name), jnp.asarray(x), jnp.asarray(y))
    assert out.dtype == b
    np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(x, y))


def test_complex_comparisons_are_lexicographic():
    x = jnp.asarray(np.array([1 + 2j, 1 + 1j, 2 + 0j], np.complex64))
    y = jnp.asarray(np.array([1 + 1j, 1 + 1j, 1 + 5j], np.complex64))
    assert np.asarray(jnp.less(x, y)).tolist() == [False, False, False]
    assert np.asarray(jnp.greater_equal(x, y)).tolist() == [True, True, True]
    check_traced_matches_eager(jnp.less, x, y)


def test_integer_power_by_squaring():
    x = np.array([-3, -2, 0, 1, 2, 3, 0], np.int32)
    y = np.array([3, 2, 0, 5, 10, 0, 3], np.int32)
    out = check_traced_matches_eager(jnp.power, jnp.asarray(x), jnp.asarray(y))
    assert out.dtype == i32
    np.testing.assert_array_equal(np.asarray(out), np.power(x, y))


def test_python_int_exponent_stages_integer_pow():
    jaxpr = tracejit.make_jaxpr(lambda x: x**3)(jnp.ones(3, jnp.int32))
    assert str(jaxpr) == "{ lambda ; a:i32[3]. let b:i32[3] = integer_pow[y=3] a in (b,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: x**2.0)(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = pow a 2.0:f32[] in (b,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: 2**x)(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = pow 2.0:f32[] a in (b,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: jnp.reciprocal(x))(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=-1] a in (b,) }"


def test_negative_integer_power_of_ints():
    with pytest.raises(
        TypeError,
        match=r"Integers cannot be raised to negative powers, got "
        r"integer_pow\(int32\[3\], -1\)",
    ):
        jnp.ones(3, jnp.int32) ** -1


def test_floor_divide_and_remainder_follow_python():
    x = np.array([7, -7, 7, -7, 0], np.int32)
    y = np.array([2, 2, -2, -2, 3], np.int32)
    assert np.asarray(jnp.floor_divide(x, y)).tolist() == (x // y).tolist()
    assert np.asarray(jnp.remainder(x, y)).tolist() == (x % y).tolist()
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    assert np.asarray(jnp.floor_divide(xf, yf)).tolist() == (xf // yf).tolist()
    assert np.asarray(jnp.remainder(xf, yf)).tolist() == (xf % yf).tolist()
    q, r = divmod(jnp.asarray(xf), jnp.asarray(yf))
    assert np.asarray(q).tolist() == (xf // yf).tolist()
    assert np.asarray(r).tolist() == (xf % yf).tolist()


def test_golden_float_remainder():
    jaxpr = tracejit.make_jaxpr(jnp.remainder)(jnp.ones(3), jnp.ones(3))
    assert str(jaxpr) == (  # (JAX 0.10.2's printout)
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = jit[\n"
        "      name=remainder\n"
        "      jaxpr={ lambda ; a:f32[3] b:f32[3]. let\n"
        "          d:f32[3] = rem a b\n"
        "          e:bool[3] = ne d 0.0:f32[]\n"
        "          f:bool[3] = lt d 0.0:f32[]\n"
        "          g:bool[3] = lt b 0.0:f32[]\n"
        "          h:bool[3] = ne f g\n"
        "          i:bool[3] = and h e\n"
        "          j:f32[3] = add d b\n"
        "          c:f32[3] = select_n i d j\n"
        "        in (c,) }\n"
        "    ] a b\n"
        "  in (c,) }"
    )


def test_golden_isclose():
    jaxpr = tracejit.make_jaxpr(jnp.isclose)(jnp.ones(3), jnp.ones(3))
    assert str(jaxpr) == (  # (JAX 0.10.2's printout)
        "let isclose = { lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:bool[3] = ne a a\n"
        "    d:bool[3] = ne b b\n"
        "    e:bool[3] = and c d\n"
        "    f:bool[3] = is_finite b\n"
        "    g:f32[3] = sub a b\n"
        "    h:f32[3] = abs g\n"
        "    i:f32[3] = abs b\n"
        "    j:f32[3] = mul 9.999999747378752e-06:f32[] i\n"
        "    k:f32[3] = add 9.99999993922529e-09:f32[] j\n"
        "    l:bool[3] = le h k\n"
        "    m:bool[3] = eq a b\n"
        "    n:bool[3] = and f l\n"
        "    o:bool[3] = or m n\n"
        "  in (o,) } in\n"
        "{ lambda ; p:f32[3] q:f32[3]. let\n"
        "    r:bool[3] = jit[name=isclose jaxpr=isclose] p q\n"
        "  in (r,) }"
    )


def test_golden_signbit_and_var():
    jaxpr = tracejit.make_jaxpr(jnp.signbit)(jnp.ones(3))
    assert str(jaxpr) == (  # (JAX 0.10.2's printout)
        "{ lambda ; a:f32[3]. let\n"
        "    b:bool[3] = jit[\n"
        "      name=signbit\n"
        "      jaxpr={ lambda ; a:f32[3]. let\n"
        "          c:i32[3] = bitcast_convert_type[new_dtype=int32] a\n"
        "          d:i32[3] = shift_right_arithmetic c 31:i32[]\n"
        "          b:bool[3] = convert_element_type[new_dtype=bool weak_type=False] d\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )


@pytest.mark.parametrize(
    "name,x,y",
    [
        ("subtract", b, b),
        ("bitwise_and", f32, f32),
        ("left_shift", f32, f32),
        ("floor_divide", c64, c64),
        ("hypot", c64, c64),
    ],
)
def test_binary_rejects(name, x, y):
    with pytest.raises((TypeError, ValueError)):
        getattr(jnp, name)(jnp.asarray(sample((3,), x)), jnp.asarray(sample((3,), y)))


# --------------------------------------------------------------------------------------------
# where, clip, closeness


def test_where():
    cond = sample((2, 3), b, seed=5)
    x = sample((2, 3), f32, seed=6)
    y = sample((3,), i32, seed=7)
    out = check_traced_matches_eager(jnp.where, jnp.asarray(cond), jnp.asarray(x), jnp.asarray(y))
    assert out.dtype == f32
    np.testing.assert_allclose(np.asarray(out), np.where(cond, x, y))
    out = check_traced_matches_eager(
        lambda c, v: jnp.where(c, v, 1.0), jnp.asarray(cond), jnp.asarray(y)
    )
    assert (out.dtype, out.weak_type) == (f32, True)
    out = check_traced_matches_eager(
        lambda c, v: jnp.where(c, v, 0), jnp.asarray(y), jnp.asarray(x)
    )
    np.testing.assert_allclose(np.asarray(out), np.where(y, x, 0))


def test_where_golden():
    jaxpr = tracejit.make_jaxpr(jnp.where)(jnp.ones(3, jnp.int32), jnp.ones(3), jnp.ones((2, 3)))
    assert str(jaxpr) == (  # (JAX 0.10.2's printout)
        "{ lambda ; a:i32[3] b:f32[3] c:f32[2,3]. let\n"
        "    d:f32[2,3] = jit[\n"
        "      name=_where\n"
        "      jaxpr={ lambda ; a:i32[3] b:f32[3] c:f32[2,3]. let\n"
        "          e:bool[3] = ne a 0:i32[]\n"
        "          f:bool[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] e\n"
        "          g:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "          d:f32[2,3] = select_n f c g\n"
        "        in (d,) }\n"
        "    ] a b c\n"
        "  in (d,) }"
    )


def test_clip():
    x = sample((4, 5), f32, seed=8)
    out = check_traced_matches_eager(lambda v: jnp.clip(v, -0.5, 1.0), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), np.clip(x, -0.5, 1.0))
    out = jnp.clip(jnp.asarray(x), max=0.0)
    np.testing.assert_allclose(np.asarray(out), np.minimum(x, 0.0))
    out = jnp.clip(jnp.ones(3, jnp.int32), 0.5, 2)
    assert (out.dtype, out.weak_type) == (f32, True)
    assert str(tracejit.make_jaxpr(lambda v: jnp.clip(v, 0, 1))(jnp.ones(3))) == (  # (JAX's)
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=clip\n"
        "      jaxpr={ lambda ; a:f32[3] c:i32[] d:i32[]. let\n"
        "          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
        "          f:f32[3] = max e a\n"
        "          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n"
        "          b:f32[3] = min g f\n"
        "        in (b,) }\n"
        "    ] a 0:i32[] 1:i32[]\n"
        "  in (b,) }"
    )


def test_isclose_allclose_array_equal():
    x = sample((2, 3), f32, seed=9)
    y = x + np.float32(1e-7)
    y[0, 0] = np.nan
    out = check_traced_matches_eager(jnp.isclose, jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(out), np.isclose(x, y))
    out = jnp.isclose(jnp.asarray(y), jnp.asarray(y), equal_nan=True)
    np.testing.assert_array_equal(np.asarray(out), np.isclose(y, y, equal_nan=True))
    assert bool(jnp.allclose(jnp.asarray(x), jnp.asarray(x + 1e-7)))
    assert not bool(jnp.allclose(jnp.asarray(x), jnp.asarray(x + 1)))
    assert bool(jnp.array_equal(jnp.asarray(x), x))
    assert not bool(jnp.array_equal(jnp.asarray(x), x[0]))
    assert bool(jnp.array_equiv(jnp.asarray(x[:1]), np.repeat(x[:1], 3, axis=0)))
    assert bool(jnp.array_equal(jnp.asarray(y), jnp.asarray(y), equal_nan=True))
    check_traced_matches_eager(jnp.allclose, jnp.asarray(x), jnp.asarray(y))


def test_complex_log2_and_log10_of_zero_keep_a_zero_imaginary_part():
    # Found by tests/fuzz: log(0j) = -inf+0j times or over ln(base) + 0j made the imaginary
    # part NaN; JAX and NumPy give -inf+0j.
    x = np.array([0j, 1 + 1j, -2j], np.complex64)
    for fun, ref in ((jnp.log2, np.log2), (jnp.log10, np.log10)):
        for got in (fun(x), tracejit.jit(fun)(x)):
            assert got.dtype == np.complex64
            with np.errstate(divide="ignore"):
                np.testing.assert_allclose(np.asarray(got), ref(x), rtol=1e-6)
