"""Operators, methods and properties shared by Arrays and tracers."""

import operator

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp
from tracejit._src.array import Array

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
Y = np.array([[2.0, 1.5, -1.0], [3.0, -2.5, 0.5]], np.float32)
I = np.array([[7, -7, 3], [0, 5, -2]], np.int32)
J = np.array([[2, 2, -2], [3, 3, 1]], np.int32)

BINARY = [
    ("+", operator.add),
    ("-", operator.sub),
    ("*", operator.mul),
    ("/", operator.truediv),
    ("//", operator.floordiv),
    ("%", operator.mod),
    ("**", operator.pow),
    ("<", operator.lt),
    ("<=", operator.le),
    (">", operator.gt),
    (">=", operator.ge),
    ("==", operator.eq),
    ("!=", operator.ne),
]
INT_ONLY = [
    ("&", operator.and_),
    ("|", operator.or_),
    ("^", operator.xor),
    ("<<", operator.lshift),
    (">>", operator.rshift),
]


@pytest.mark.parametrize("name,op", BINARY + INT_ONLY, ids=[b[0] for b in BINARY + INT_ONLY])
def test_binary_operators(name, op):
    if (name, op) in INT_ONLY:
        x, y = I, np.abs(J)
    elif name == "**":
        x, y = np.abs(X), Y
    else:
        x, y = X, Y
    out = check_traced_matches_eager(op, jnp.asarray(x), jnp.asarray(y), rtol=1e-5)
    with np.errstate(all="ignore"):
        expected = op(x, y)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)
    # reflected, with Python scalars on the left
    out = check_traced_matches_eager(lambda v: op(3, v), jnp.asarray(y if name != "**" else x))
    with np.errstate(all="ignore"):
        expected = op(
            np.int32(3) if x.dtype.kind == "i" else np.float32(3), y if name != "**" else x
        )
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)


def test_int_semantics():
    a, b = jnp.asarray(I), jnp.asarray(J)
    assert (a / b).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a // b), I // J)
    np.testing.assert_array_equal(np.asarray(a % b), I % J)
    np.testing.assert_array_equal(np.asarray(a**2), I**2)
    q, r = divmod(a, b)
    np.testing.assert_array_equal(np.asarray(q), I // J)
    np.testing.assert_array_equal(np.asarray(r), I % J)
    q, r = divmod(7, b)
    np.testing.assert_array_equal(np.asarray(q), 7 // J)


def test_unary_operators():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(-x), -X)
    np.testing.assert_array_equal(np.asarray(+x), X)
    np.testing.assert_array_equal(np.asarray(abs(x)), np.abs(X))
    np.testing.assert_array_equal(np.asarray(~jnp.asarray(I)), ~I)
    np.testing.assert_array_equal(np.asarray(~(x > 0)), ~(X > 0))
    assert float(round(jnp.asarray(2.5))) == 2.0
    for fun in (operator.neg, operator.pos, abs):
        check_traced_matches_eager(fun, x)
    check_traced_matches_eager(operator.invert, jnp.asarray(I))


def test_matmul_operator():
    a, b = jnp.asarray(X), jnp.asarray(Y.T)
    np.testing.assert_allclose(np.asarray(a @ b), X @ Y.T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(X @ b), X @ Y.T, rtol=1e-6)
    check_traced_matches_eager(operator.matmul, a, b)


def test_numpy_operands_on_either_side():
    x = jnp.asarray(X)
    for left in (X + x, np.float32(2) * x, X - x, Y > x):
        assert isinstance(left, Array)
    np.testing.assert_allclose(np.asarray(Y - x), Y - X)
    np.testing.assert_allclose(np.asarray(np.float32(2) - x), 2 - X)
    assert (np.float64(2) * x).dtype == np.float32


def test_unknown_operands_return_not_implemented():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="unsupported operand"):
        x + [1, 2, 3]
    with pytest.raises(TypeError, match="unsupported operand"):
        x - "a"
    assert (x == None) is False
    assert (x != "a") is True

    class Other:
        def __radd__(self, other):
            return "radd"

    assert x + Other() == "radd"


def test_methods():
    x = jnp.asarray(X)
    assert x.astype(jnp.int32).dtype == np.int32
    assert x.astype(bool).dtype == np.bool_
    assert jnp.asarray(2.0).astype(jnp.float32).weak_type is False
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert x.reshape(shape=(3, -1)).shape == (3, 2)
    assert x.transpose().shape == (3, 2) and x.T.shape == (3, 2)
    assert x.flatten().shape == (6,) and x.ravel().shape == (6,)
    assert x[None].squeeze().shape == (2, 3) and x[None].squeeze(0).shape == (2, 3)
    assert x.swapaxes(0, 1).shape == (3, 2)
    np.testing.assert_allclose(np.asarray(x.dot(Y.T)), X.dot(Y.T), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(x.clip(-1, 1)), X.clip(-1, 1))
    np.testing.assert_allclose(np.asarray(x.clip(max=0)), X.clip(max=0))
    np.testing.assert_allclose(np.asarray((x / 3).round(2)), np.round(X / 3, 2), rtol=1e-6)
    c = jnp.asarray(np.array([1 + 2j], np.complex64))
    assert complex(c.conj()[0]) == 1 - 2j and complex(c.conjugate()[0]) == 1 - 2j
    assert float(c.real[0]) == 1.0 and float(c.imag[0]) == 2.0
    assert float(x.real[0, 0]) == 1.5 and float(x.imag[0, 0]) == 0.0
    assert x.item(0) == 1.5 and x.tolist() == X.tolist()
    assert x.copy() is not x and np.array_equal(np.asarray(x.copy()), X)
    assert x.repeat(2, axis=0).shape == (4, 3)
    assert x.at[0, 0].set(9.0).tolist()[0][0] == 9.0
    assert float(x.sum()) == pytest.approx(X.sum())
    assert x.argmax() == X.argmax()


def test_methods_on_tracers():
    def f(x):
        return (
            x.astype(jnp.int32),
            x.reshape(3, 2),
            x.T,
            x.sum(axis=0),
            x.mean(),
            x.max(axis=1, keepdims=True),
            x.std(),
            x.cumsum(axis=1),
            x.argmin(),
            x.flatten(),
            x.clip(0, 1),
            x.round(),
            x.real,
            x.imag,
            x.conj(),
            x.dot(x.T),
            x[1, ::-1],
            x.at[0].add(1.0),
            x.squeeze(),
            x.all(),
            x.any(axis=0),
        )

    outs = check_traced_matches_eager(f, jnp.asarray(X))
    assert len(outs) == 21
    assert outs[0].dtype == np.int32


def test_tracer_properties_and_conversions():
    def f(x):
        assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float32
        assert len(x) == 2
        return x

    tracejit.make_jaxpr(f)(jnp.asarray(X))
    with pytest.raises(tracejit.errors.TracerBoolConversionError):
        tracejit.make_jaxpr(lambda x: 1.0 if x[0, 0] > 0 else 0.0)(jnp.asarray(X))
    with pytest.raises(tracejit.errors.ConcretizationTypeError):
        tracejit.make_jaxpr(lambda x: x.item())(jnp.asarray(X))


def test_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(jnp.asarray(X))
    with pytest.raises(TypeError, match="unhashable"):
        tracejit.make_jaxpr(lambda x: {x: 1})(jnp.asarray(X))


def test_array_and_tracer_agree_on_operator_jaxpr():
    jaxpr = tracejit.make_jaxpr(lambda x: x * 2 + 1)(jnp.ones(4))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[4]. let\n"
        "    b:f32[4] = mul a 2.0:f32[]\n"
        "    c:f32[4] = add b 1.0:f32[]\n"
        "  in (c,) }"
    )
    jaxpr = tracejit.make_jaxpr(lambda x: -x)(jnp.ones(4))
    assert str(jaxpr) == "{ lambda ; a:f32[4]. let b:f32[4] = neg a in (b,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: +x)(jnp.ones(4))
    assert str(jaxpr) == "{ lambda ; a:f32[4]. let  in (a,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: x >> 1)(jnp.ones(4, jnp.uint32))
    assert str(jaxpr) == (
        "{ lambda ; a:u32[4]. let b:u32[4] = shift_right_logical a 1:u32[] in (b,) }"
    )
    jaxpr = tracejit.make_jaxpr(lambda x: x >> 1)(jnp.ones(4, jnp.int32))
    assert str(jaxpr) == (
        "{ lambda ; a:i32[4]. let b:i32[4] = shift_right_arithmetic a 1:i32[] in (b,) }"
    )


def test_numpy_constants_with_tracers():
    jaxpr = tracejit.make_jaxpr(lambda x: x + np.arange(3, dtype=np.float32))(jnp.ones(3))
    assert str(jaxpr) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: np.arange(3, dtype=np.float32) + x)(jnp.ones(3))
    assert str(jaxpr) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add a b in (c,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: np.float32(2) * x)(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul 2.0:f32[] a in (b,) }"


def test_take_compress_choose_argpartition_methods_are_the_jnp_functions():
    x = jnp.arange(6.0)
    np.testing.assert_array_equal(x.take(jnp.array([0, 2]), axis=0), [0.0, 2.0])
    np.testing.assert_array_equal(x.compress(x > 2), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(x.compress(x > 2, size=4, fill_value=-1), [3, 4, 5, -1])
    np.testing.assert_array_equal(jnp.array([0, 1]).choose([jnp.ones(2), jnp.zeros(2)]), [1, 0])
    assert set(np.asarray(x[::-1].argpartition(2))[:3]) == {3, 4, 5}
    np.testing.assert_array_equal(tracejit.jit(lambda v: v.take(jnp.array([1, 3])))(x), [1, 3])
