"""Reductions against NumPy, eagerly and staged: axes (None, int, negative, tuple), keepdims,
dtypes and JAX's result dtypes (JAX 0.10.2), golden jaxprs and errors."""

import numpy as np
import pytest
from helpers import b, bf16, c64, check_traced_matches_eager, f16, f32, i8, i32, u8, u32

import tracejit
import tracejit.numpy as jnp


def sample(shape, dtype, seed=0):
    rng = np.random.RandomState(seed)
    if dtype == b:
        return np.asarray(rng.rand(*shape) > 0.4)
    if dtype.kind in "iu":
        return rng.randint(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    if dtype == c64:
        return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
    return rng.randn(*shape).astype(dtype)


# name -> (NumPy reference, dtypes, result dtype per input dtype (JAX 0.10.2))
SUM_DTYPE = {b: i32, i8: i32, u8: u32, i32: i32, u32: u32, f16: f16, bf16: bf16, f32: f32, c64: c64}
MEAN_DTYPE = {b: f32, i8: f32, u8: f32, i32: f32, f16: f16, bf16: bf16, f32: f32, c64: c64}
VAR_DTYPE = {b: f32, i8: f32, i32: f32, f16: f16, f32: f32, c64: f32}
KEEP = {d: d for d in (b, i8, u8, i32, u32, f16, bf16, f32)}
REDUCTIONS = {
    "sum": (np.sum, SUM_DTYPE),
    "prod": (np.prod, SUM_DTYPE),
    "max": (np.max, KEEP),
    "min": (np.min, KEEP),
    "mean": (np.mean, MEAN_DTYPE),
    "var": (np.var, VAR_DTYPE),
    "std": (np.std, VAR_DTYPE),
    "all": (np.all, {d: b for d in SUM_DTYPE}),
    "any": (np.any, {d: b for d in SUM_DTYPE}),
}
AXES = [None, 0, -1, (0, 2), (), (1,)]


def cases():
    for name, (_, table) in REDUCTIONS.items():
        for dtype in table:
            for axis in AXES:
                for keepdims in (False, True):
                    yield pytest.param(
                        name, dtype, axis, keepdims, id=f"{name}-{dtype.name}-{axis}-{keepdims}"
                    )


def tolerance(dtype):
    return {f16: 2e-2, bf16: 8e-2, f32: 2e-5, c64: 2e-5}.get(dtype, 0)


@pytest.mark.parametrize("name,dtype,axis,keepdims", list(cases()))
def test_reduction(name, dtype, axis, keepdims):
    ref, table = REDUCTIONS[name]
    x = sample((2, 3, 4), dtype)
    fun = getattr(jnp, name)
    out = check_traced_matches_eager(
        lambda v: fun(v, axis=axis, keepdims=keepdims), jnp.asarray(x), rtol=1e-3, atol=1e-3
    )
    assert out.dtype == table[dtype] and not out.weak_type
    wide = x.astype(np.complex128 if dtype == c64 else np.float64) if dtype != b else x
    expected = np.asarray(ref(wide, axis=axis, keepdims=keepdims))
    assert out.shape == expected.shape
    got = np.asarray(out).astype(expected.dtype)
    tol = tolerance(table[dtype])
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [f32, f16, i32, u8, b])
@pytest.mark.parametrize(
    "axis,keepdims", [(None, False), (0, False), (-1, True), (1, False), (None, True)]
)
def test_arg_reductions(name, dtype, axis, keepdims):
    x = sample((2, 3, 4), dtype, seed=1)
    fun = getattr(jnp, name)
    out = check_traced_matches_eager(lambda v: fun(v, axis=axis, keepdims=keepdims), jnp.asarray(x))
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert out.dtype == i32 and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize(
    "dtype,expected_dtype", [(f32, f32), (i32, i32), (i8, i8), (u8, u8), (b, i32), (f16, f16)]
)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumulative(name, dtype, expected_dtype, axis):
    x = sample((3, 4), dtype, seed=2)
    fun = getattr(jnp, name)
    out = check_traced_matches_eager(lambda v: fun(v, axis=axis), jnp.asarray(x))
    assert out.dtype == expected_dtype and not out.weak_type
    expected = getattr(np, name)(x.astype(np.float64), axis=axis)
    tol = 1e-2 if dtype == f16 else 1e-5
    if dtype.kind in "iu":  # narrow integers wrap
        expected = getattr(np, name)(x.astype(np.int64), axis=axis).astype(expected_dtype)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_dtype_and_ddof_arguments():
    x = sample((2, 3), f32, seed=3) * 3
    out = jnp.sum(x, dtype=jnp.int8)
    assert out.dtype == i8
    assert jnp.mean(x, dtype=jnp.float16).dtype == f16
    out = check_traced_matches_eager(lambda v: jnp.var(v, axis=1, ddof=1), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), np.var(x, axis=1, ddof=1), rtol=1e-5)
    out = jnp.std(x, ddof=1)
    np.testing.assert_allclose(float(out), np.std(x, ddof=1), rtol=1e-5)
    assert np.isnan(float(jnp.var(x[:, :1], axis=1, ddof=1)[0]))
    assert jnp.cumsum(jnp.ones((2, 3), jnp.int32), axis=0, dtype=jnp.float32).dtype == f32
    assert jnp.sum(jnp.ones(3, jnp.int8), promote_integers=False).dtype == i8


def test_initial_and_where():
    x = sample((2, 3), f32, seed=4)
    mask = sample((2, 3), b, seed=5)
    out = check_traced_matches_eager(lambda v: jnp.sum(v, initial=2.0), jnp.asarray(x))
    np.testing.assert_allclose(float(out), np.sum(x, initial=2.0), rtol=1e-5)
    out = check_traced_matches_eager(
        lambda v, m: jnp.sum(v, where=m), jnp.asarray(x), jnp.asarray(mask)
    )
    np.testing.assert_allclose(float(out), np.sum(x, where=mask), rtol=1e-5)
    out = jnp.max(x, axis=0, initial=0.5)
    np.testing.assert_allclose(np.asarray(out), np.max(x, axis=0, initial=0.5))
    out = jnp.mean(x, where=mask)
    np.testing.assert_allclose(float(out), np.mean(x, where=mask), rtol=1e-5)
    out = jnp.prod(x, where=mask, axis=1)
    np.testing.assert_allclose(np.asarray(out), np.prod(x, where=mask, axis=1), rtol=1e-5)


def test_empty_reductions():
    assert float(jnp.sum(jnp.zeros((0, 3)))) == 0.0
    assert np.isnan(np.asarray(jnp.mean(jnp.zeros((0, 3)), axis=0))).all()
    assert float(jnp.max(jnp.zeros((0, 3)), initial=-1.0)) == -1.0


def test_weak_inputs_give_strong_results():
    for fun in (
        jnp.sum,
        jnp.prod,
        jnp.max,
        jnp.min,
        jnp.mean,
        jnp.var,
        jnp.all,
        jnp.argmax,
        jnp.cumsum,
    ):
        out = fun(jnp.asarray(2.0))
        assert not out.weak_type, fun
        staged = tracejit.make_jaxpr(fun)(2.0).out_avals[0]
        assert not staged.weak_type


GOLDEN = [
    (
        lambda x: jnp.sum(x),
        jnp.zeros((2, 3), jnp.int8),
        (
            "{ lambda ; a:i8[2,3]. let\n"
            "    b:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
            "    c:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.mean(x, axis=0),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
            "    c:f32[3] = div b 2.0:f32[]\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.mean(x),
        jnp.zeros((2, 3), jnp.int32),
        (
            "{ lambda ; a:i32[2,3]. let\n"
            "    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    c:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
            "    d:f32[] = div c 6.0:f32[]\n"
            "  in (d,) }"
        ),
    ),
    (
        lambda x: jnp.mean(x, axis=1, keepdims=True),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a\n"
            "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
            "    d:f32[2,1] = div c 3.0:f32[]\n"
            "  in (d,) }"
        ),
    ),
    (
        lambda x: jnp.max(x, axis=1, keepdims=True),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2] = reduce_max[axes=(1,)] a\n"
            "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.min(x, axis=(0, 2), keepdims=True),
        jnp.zeros((2, 3, 4)),
        (
            "{ lambda ; a:f32[2,3,4]. let\n"
            "    b:f32[3] = reduce_min[axes=(0, 2)] a\n"
            "    c:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.argmax(x),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
            "    c:i32[] = argmax[axes=(0,) index_dtype=int32] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.argmin(x, axis=0, keepdims=True),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:i32[3] = argmin[axes=(0,) index_dtype=int32] a\n"
            "    c:i32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.all(x),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:bool[2,3] = convert_element_type[new_dtype=bool weak_type=False] a\n"
            "    c:bool[] = reduce_and[axes=(0, 1)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.any(x, axis=0),
        jnp.zeros((2, 3), bool),
        "{ lambda ; a:bool[2,3]. let b:bool[3] = reduce_or[axes=(0,)] a in (b,) }",
    ),
    (
        lambda x: jnp.prod(x, axis=1),
        jnp.zeros((2, 3)),
        "{ lambda ; a:f32[2,3]. let b:f32[2] = reduce_prod[axes=(1,)] a in (b,) }",
    ),
    (
        lambda x: jnp.sum(x, axis=()),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2,3] = reduce_sum[axes=() out_sharding=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.sum(x, axis=0, keepdims=True),
        jnp.zeros((2, 3), jnp.float16),
        (
            "{ lambda ; a:f16[2,3]. let\n"
            "    b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] b\n"
            "    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n"
            "    e:f16[1,3] = convert_element_type[new_dtype=float16 weak_type=False] d\n"
            "  in (e,) }"
        ),
    ),
    (
        lambda x: jnp.sum(x),
        1.0,
        (
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
            "    c:f32[] = reduce_sum[axes=() out_sharding=None] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.cumsum(x, axis=1),
        jnp.zeros((2, 3), jnp.int8),
        (
            "{ lambda ; a:i8[2,3]. let\n"
            "    b:i8[2,3] = jit[\n"
            "      name=cumsum\n"
            "      jaxpr={ lambda ; a:i8[2,3]. let\n"
            "          b:i8[2,3] = cumsum[axis=1 reverse=False] a\n"
            "        in (b,) }\n"
            "    ] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.cumsum(x),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[6] = jit[\n"
            "      name=cumsum\n"
            "      jaxpr={ lambda ; a:f32[2,3]. let\n"
            "          c:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
            "          b:f32[6] = cumsum[axis=0 reverse=False] c\n"
            "        in (b,) }\n"
            "    ] a\n"
            "  in (b,) }"
        ),
    ),
]


@pytest.mark.parametrize("fun,arg,expected", GOLDEN)
def test_golden(fun, arg, expected):
    assert str(tracejit.make_jaxpr(fun)(arg)) == expected


def test_methods():
    x = sample((2, 3), f32, seed=6)
    a = jnp.asarray(x)
    for name in (
        "sum",
        "prod",
        "max",
        "min",
        "mean",
        "var",
        "std",
        "all",
        "any",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
    ):
        np.testing.assert_allclose(
            np.asarray(getattr(a, name)(axis=0)), getattr(np, name)(x, axis=0), rtol=1e-5, atol=1e-6
        )
        if name != "var":
            check_traced_matches_eager(lambda v, n=name: getattr(v, n)(axis=0), a)
    np.testing.assert_allclose(float(a.sum()), x.sum(), rtol=1e-5)


def test_var_method_on_tracers():
    check_traced_matches_eager(lambda v: v.var(axis=0), jnp.ones((2, 3)))


def test_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match=r"duplicate value in 'axis': \(0, 0\)"):
        jnp.sum(x, axis=(0, 0))
    with pytest.raises(
        ValueError, match="zero-size array to reduction operation max which has no identity"
    ):
        jnp.max(jnp.ones(0))
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(jnp.ones(0))
    with pytest.raises(NotImplementedError, match="out"):
        jnp.sum(x, out=x)
