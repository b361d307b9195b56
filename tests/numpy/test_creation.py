"""Array creation: dtypes and weak types as JAX 0.10.2 gives them, values against NumPy, staged
jaxprs, copy semantics, and the scalar types (`jnp.float32(3)`)."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from helpers import b, check_traced_matches_eager, f16, f32, i8, i32, u32

import tracejit
import tracejit.numpy as jnp
from tracejit._src.array import Array

# (expression, dtype, weak, shape): JAX 0.10.2 without x64.
CASES = [
    (lambda: jnp.array(1.0), f32, True, ()),
    (lambda: jnp.array(1), i32, True, ()),
    (lambda: jnp.array(True), b, False, ()),
    (lambda: jnp.array([1, 2]), i32, False, (2,)),
    (lambda: jnp.array([1, 2.0]), f32, False, (2,)),
    (lambda: jnp.array([[1, 2], [3, 4]]), i32, False, (2, 2)),
    (lambda: jnp.array(np.zeros(3)), f32, False, (3,)),
    (lambda: jnp.array(np.arange(3, dtype=np.uint64)), u32, False, (3,)),
    (lambda: jnp.array([]), f32, False, (0,)),
    (lambda: jnp.array([jnp.ones((), jnp.float16), 1.0]), f16, False, (2,)),
    (lambda: jnp.array([jnp.ones(2), jnp.zeros(2)]), f32, False, (2, 2)),
    (lambda: jnp.array([1.7, 2.2], dtype=jnp.int32), i32, False, (2,)),
    (lambda: jnp.array([1, 2], ndmin=3), i32, False, (1, 1, 2)),
    (lambda: jnp.asarray(1.0), f32, True, ()),
    (lambda: jnp.asarray(np.float32(1)), f32, False, ()),
    (lambda: jnp.asarray(np.float64(1)), f32, False, ()),
    (lambda: jnp.asarray(1.0, dtype=jnp.float16), f16, False, ()),
    (lambda: jnp.asarray(1, dtype=float), f32, False, ()),
    (lambda: jnp.asarray([[1], [2.5]]), f32, False, (2, 1)),
    (lambda: jnp.asarray(jnp.asarray(1.0)), f32, True, ()),
    (lambda: jnp.zeros(3), f32, False, (3,)),
    (lambda: jnp.zeros((2, 3), int), i32, False, (2, 3)),
    (lambda: jnp.zeros(()), f32, False, ()),
    (lambda: jnp.ones(2, bool), b, False, (2,)),
    (lambda: jnp.empty((2,)), f32, False, (2,)),
    (lambda: jnp.full(3, 2), i32, True, (3,)),
    (lambda: jnp.full(3, 2.0), f32, True, (3,)),
    (lambda: jnp.full((), 2.0), f32, True, ()),
    (lambda: jnp.full(3, 7.5, dtype=jnp.float16), f16, False, (3,)),
    (lambda: jnp.full(3, jnp.ones((), jnp.float16)), f16, False, (3,)),
    (lambda: jnp.full((2, 3), jnp.array([1, 2, 3])), i32, False, (2, 3)),
    (lambda: jnp.zeros_like(jnp.ones(3, jnp.int8)), i8, False, (3,)),
    (lambda: jnp.zeros_like(jnp.asarray(1.0)), f32, True, ()),
    (lambda: jnp.zeros_like(1.0), f32, True, ()),
    (lambda: jnp.ones_like(jnp.ones(3, jnp.int8), dtype=jnp.float32), f32, False, (3,)),
    (lambda: jnp.full_like(jnp.ones(3, jnp.int32), 2.5), i32, False, (3,)),
    (lambda: jnp.zeros_like(jnp.ones(3), shape=(2, 2)), f32, False, (2, 2)),
    (lambda: jnp.empty_like(jnp.ones(3)), f32, False, (3,)),
    (lambda: jnp.arange(5), i32, False, (5,)),
    (lambda: jnp.arange(5.0), f32, False, (5,)),
    (lambda: jnp.arange(2.5), f32, False, (3,)),
    (lambda: jnp.arange(1, 5, 2), i32, False, (2,)),
    (lambda: jnp.arange(0, 1, 0.1), f32, False, (10,)),
    (lambda: jnp.arange(-3), i32, False, (0,)),
    (lambda: jnp.arange(np.int8(5)), i8, False, (5,)),
    (lambda: jnp.arange(5, dtype=jnp.float32), f32, False, (5,)),
    (lambda: jnp.linspace(0, 1, 5), f32, False, (5,)),
    (lambda: jnp.linspace(0, 10, 5, dtype=int), i32, False, (5,)),
    (lambda: jnp.eye(3), f32, False, (3, 3)),
    (lambda: jnp.eye(3, 4, k=1, dtype=int), i32, False, (3, 4)),
    (lambda: jnp.identity(2), f32, False, (2, 2)),
    (lambda: jnp.float32(3), f32, False, ()),
    (lambda: jnp.int32(3.7), i32, False, ()),
    (lambda: jnp.float32([1, 2]), f32, False, (2,)),
    (lambda: jnp.bool_(1), b, False, ()),
    (lambda: jnp.float64(1), f32, False, ()),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_dtypes_and_weak_types(index):
    fun, dtype, weak, shape = CASES[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # explicit 64-bit dtypes are truncated with a warning
        out = fun()
        staged = tracejit.make_jaxpr(fun)().out_avals[0]
    assert isinstance(out, Array)
    assert (out.dtype, out.weak_type, out.shape) == (dtype, weak, shape)
    assert (staged.dtype, staged.weak_type, staged.shape) == (dtype, weak, shape)


@pytest.mark.parametrize(
    "fun,expected",
    [
        (lambda: jnp.arange(5), np.arange(5)),
        (lambda: jnp.arange(1, 7, 2), np.arange(1, 7, 2)),
        (lambda: jnp.arange(5, 0, -1.5), np.arange(5, 0, -1.5)),
        (lambda: jnp.arange(0, 1, 0.1), np.arange(0, 1, 0.1, dtype=np.float32)),
        (lambda: jnp.linspace(0, 1, 7), np.linspace(0, 1, 7)),
        (lambda: jnp.linspace(2, 3, 1), np.linspace(2, 3, 1)),
        (lambda: jnp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
        (lambda: jnp.linspace(0, 10, 4, dtype=int), np.linspace(0, 10, 4, dtype=int)),
        (
            lambda: jnp.linspace(jnp.zeros(2), jnp.ones(2), 3),
            np.linspace(np.zeros(2), np.ones(2), 3),
        ),
        (
            lambda: jnp.linspace(jnp.zeros(2), jnp.ones(2), 3, axis=1),
            np.linspace(np.zeros(2), np.ones(2), 3, axis=1),
        ),
        (lambda: jnp.linspace(0, 1, 0), np.linspace(0, 1, 0)),
        (lambda: jnp.eye(3, 4, k=-1), np.eye(3, 4, k=-1)),
        (lambda: jnp.eye(2, k=5), np.eye(2, k=5)),
        (lambda: jnp.identity(3, dtype=bool), np.identity(3, dtype=bool)),
        (lambda: jnp.tri(3, 4, k=1), np.tri(3, 4, k=1)),
        (lambda: jnp.full((2, 3), jnp.array([1, 2, 3])), np.full((2, 3), [1, 2, 3])),
        (lambda: jnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]])),
    ],
)
def test_values(fun, expected):
    np.testing.assert_allclose(np.asarray(fun()), expected, rtol=1e-6, atol=1e-6)


def test_linspace_retstep():
    out, step = jnp.linspace(0, 1, 5, retstep=True)
    expected, expected_step = np.linspace(0, 1, 5, retstep=True)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    np.testing.assert_allclose(float(step), expected_step, rtol=1e-6)


GOLDEN = [
    (
        lambda: jnp.arange(5),
        (
            "{ lambda ; . let\n"
            "    a:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] \n"
            "  in (a,) }"
        ),
    ),
    (
        lambda: jnp.arange(1, 5, 2),
        (
            "{ lambda ; . let\n"
            "    a:i32[2] = iota[dimension=0 dtype=int32 shape=(2,) sharding=None] \n"
            "    b:i32[2] = mul 2:i32[] a\n"
            "    c:i32[2] = add 1:i32[] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda: jnp.arange(3, 7),
        (
            "{ lambda ; . let\n"
            "    a:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] \n"
            "    b:i32[4] = add 3:i32[] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda: jnp.eye(3),
        (
            "{ lambda ; . let\n"
            "    a:i32[3,3] = iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None] \n"
            "    b:i32[3,3] = iota[dimension=1 dtype=int32 shape=(3, 3) sharding=None] \n"
            "    c:i32[3,3] = add a 0:i32[]\n"
            "    d:bool[3,3] = eq c b\n"
            "    e:f32[3,3] = convert_element_type[new_dtype=float32 weak_type=False] d\n"
            "  in (e,) }"
        ),
    ),
    (lambda: jnp.zeros(()), "{ lambda ; . let  in (0.0:f32[],) }"),
    (lambda: jnp.float32(3), "{ lambda ; . let  in (3.0:f32[],) }"),
]


@pytest.mark.parametrize("fun,expected", GOLDEN)
def test_golden(fun, expected):
    assert str(tracejit.make_jaxpr(fun)()) == expected


def test_tracer_inputs():
    jaxpr = tracejit.make_jaxpr(lambda x: jnp.array(x))(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = copy a in (b,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: jnp.asarray(x))(jnp.ones(3))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let  in (a,) }"
    jaxpr = tracejit.make_jaxpr(lambda x: jnp.asarray(x, dtype=jnp.int32))(jnp.ones(3))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "  in (b,) }"
    )
    jaxpr = tracejit.make_jaxpr(lambda x: jnp.full((2, 3), x))(jnp.ones(3))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "  in (b,) }"
    )
    out = check_traced_matches_eager(lambda x: jnp.array([x, 2 * x]), jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out), [[0, 1, 2], [0, 2, 4]])
    out = check_traced_matches_eager(lambda x: jnp.stack([jnp.zeros_like(x), x]), jnp.ones(2))
    assert out.shape == (2, 2)


def test_copy_semantics():
    source = np.arange(3, dtype=np.float32)
    a = jnp.array(source)
    b_ = jnp.asarray(source)
    source[0] = 100
    assert float(a[0]) == 0.0 and float(b_[0]) == 0.0
    x = jnp.arange(3.0)
    assert jnp.asarray(x) is x
    y = jnp.array(x)
    assert y is not x and np.array_equal(np.asarray(y), np.asarray(x))
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 5


def test_errors():
    with pytest.raises(
        OverflowError, match="Python int 1099511627776 too large to convert to int32"
    ):
        jnp.array(2**40)
    with pytest.raises(OverflowError):
        jnp.array([1, 2**40])
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        jnp.array("a")
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        jnp.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="broadcast_in_dim shape must have every element be"):
        jnp.zeros(-1)  # JAX's class and words
    with pytest.raises(ValueError, match="negative dimensions are not allowed, got 2 and -1"):
        jnp.eye(2, -1)
    with pytest.raises(tracejit.errors.ConcretizationTypeError):
        tracejit.make_jaxpr(lambda n: jnp.arange(n))(3)
    with pytest.warns(UserWarning, match="will be truncated to dtype float32"):
        jnp.zeros(2, jnp.float64)


def test_x64_creation(enable_x64):
    assert jnp.array(1.0).dtype == np.float64
    assert jnp.arange(3).dtype == np.int64
    assert jnp.asarray(np.zeros(2)).dtype == np.float64
    assert jnp.zeros(2, jnp.float64).dtype == np.float64


def test_scalar_types():
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert (jnp.float16 != jnp.float16) is False and jnp.float16 != jnp.float32 != np.float16
    assert np.dtype(jnp.float32) == np.float32
    assert np.dtype(jnp.bfloat16) == ml_dtypes.bfloat16
    assert isinstance(np.float32(1), jnp.float32)
    assert not isinstance(jnp.float32(1), jnp.float32)  # an Array, as in JAX
    assert jnp.zeros(2, jnp.int8).dtype == np.int8
    assert jnp.ones(2).astype(jnp.bfloat16).dtype == ml_dtypes.bfloat16
    assert jnp.bfloat16(1.5).dtype == ml_dtypes.bfloat16
    assert jnp.dtype("float32") == np.float32
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.result_type(jnp.ones(2, jnp.int8), 1.0) == np.float32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.finfo(jnp.float16).eps == np.finfo(np.float16).eps
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.isdtype(jnp.float32, "real floating") and jnp.isdtype(np.int8, ("integral",))
    assert jnp.ndarray is tracejit.Array  # the abstract base of arrays and tracers, as in JAX
    assert isinstance(jnp.ones(2), jnp.ndarray)
    traced = []
    tracejit.jit(lambda x: traced.append(isinstance(x, jnp.ndarray)) or x)(1.0)
    assert traced == [True]
    assert jnp.ndim(jnp.ones((2, 3))) == 2 and jnp.shape(jnp.ones((2, 3))) == (2, 3)
    assert jnp.size(jnp.ones((2, 3))) == 6 and jnp.size(jnp.ones((2, 3)), 1) == 3
    assert jnp.ndim(1.0) == 0 and jnp.shape([1, 2]) == (2,)


@pytest.mark.parametrize(
    "make",
    [
        lambda: jnp.ones(3).reshape((2.5,)),
        lambda: jnp.reshape(jnp.ones(3), (2.5,)),
        lambda: jnp.eye(2.5),
        lambda: jnp.zeros(2.5),
        lambda: jnp.full(None, 1.0),
    ],
)
def test_a_shape_that_is_not_integers_raises_jax_type_error(make):
    with pytest.raises(
        TypeError, match=r"Shapes must be 1D sequences of concrete values of integer"
    ):
        make()


def test_placement_arguments_take_the_one_device():
    device = tracejit.devices()[0]
    np.testing.assert_array_equal(jnp.zeros(3, device=device), np.zeros(3))
    np.testing.assert_array_equal(jnp.arange(3, device=device, out_sharding=None), np.arange(3))
    np.testing.assert_array_equal(
        jnp.reshape(jnp.arange(4), (2, 2), out_sharding=None).shape, (2, 2)
    )
    with pytest.raises(NotImplementedError, match="out_sharding"):
        jnp.ones(2, out_sharding="x")
    with pytest.raises(NotImplementedError, match="device"):
        jnp.asarray([1.0], device="gpu:0")


def test_like_functions_take_a_shape_dtype_struct():
    """As in JAX: anything with a shape and a dtype is a prototype; the result is strong."""
    spec = tracejit.ShapeDtypeStruct((2, 3), np.int8)
    for result in (jnp.zeros_like(spec), jnp.empty_like(spec), jnp.full_like(spec, 2.5)):
        assert result.shape == (2, 3) and result.dtype == i8 and not result.weak_type
    np.testing.assert_array_equal(jnp.full_like(spec, 2.5), np.full((2, 3), 2, np.int8))
    assert jnp.ones_like(spec, dtype=jnp.float32).dtype == f32
    assert jnp.zeros_like(spec, shape=(4,)).shape == (4,)
    weak = tracejit.ShapeDtypeStruct((2,), np.float32, weak_type=True)
    assert not jnp.zeros_like(weak).weak_type
    np.testing.assert_array_equal(tracejit.jit(lambda: jnp.ones_like(spec))(), np.ones((2, 3)))
    assert jnp.iscomplexobj(tracejit.ShapeDtypeStruct((), np.complex64))
    assert jnp.isrealobj(spec)


def test_an_int_beyond_the_default_int_fits_a_named_dtype():
    """`jnp.array(2**32 - 1, jnp.uint32)` (optax's safe_increment): JAX converts an int that
    fits the dtype asked for; one that fits neither is an OverflowError."""
    assert jnp.array(4294967295, jnp.uint32) == np.uint32(4294967295)
    assert jnp.full((), 4294967295, jnp.uint32).dtype == u32
    assert jnp.asarray(4294967295, dtype=jnp.uint32).dtype == u32
    with pytest.raises(OverflowError):
        jnp.array(2**32, jnp.uint32)


def test_tri_is_float32_by_default_even_in_64_bit_mode():
    """JAX 0.10.2's `tri` defaults to float32 where `eye` and `zeros` give float64 (x64)."""
    with tracejit.enable_x64():
        assert jnp.tri(2).dtype == np.float32 and jnp.eye(2).dtype == np.float64
        assert jnp.tri(2, dtype=float).dtype == np.float64
