"""StableHLO lowering of the shape, conversion, selection and slicing primitives: jit results
equal the eager (NumPy) ones exactly, with no silent NumPy fallback."""

import warnings

import numpy as np
import pytest
from helpers import assert_tree_equal

import tracejit as jax
from tracejit import lax
from tracejit._src import dtypes
from tracejit.lax import copy_p

BF16 = np.dtype(dtypes.bfloat16)
DTYPES_32 = [np.float32, np.int32, np.bool_, np.uint8, np.int8, np.float16, BF16, np.complex64]
DTYPES_64 = [np.float64, np.int64, np.uint64, np.uint32, np.int16, np.complex128]


def check(fn, *args):
    """jit equals eager exactly: same pytree, dtypes, shapes and values."""
    assert_tree_equal(jax.jit(fn)(*args), fn(*args), 0)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    values = rng.normal(size=shape) * 10
    if dtype.kind == "c":
        values = values + 1j * rng.normal(size=shape)
    return values.astype(dtype)


def shape_ops(x, y, pv, which):
    return (
        lax.reshape(x, (4, 6)),
        lax.reshape(x, (6, 4), dimensions=(2, 0, 1)),
        lax.reshape(x[0, 0, 0], (1, 1)),
        lax.transpose(x, (2, 0, 1)),
        lax.squeeze(lax.reshape(x, (2, 1, 3, 1, 4)), (1, 3)),
        lax.rev(x, (0, 2)),
        lax.rev(x, ()),
        lax.pad(x, pv, [(1, 2, 0), (-1, 0, 1), (0, -2, 2)]),
        lax.pad(x, pv, [(-2, 0, 0), (0, 0, 0), (-3, -3, 3)]),
        lax.concatenate([x, y, x], 1),
        lax.concatenate([x], 2),
        lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
        lax.slice(x, (1, 0, 1), (2, 3, 3)),
        lax.slice(x, (0, 2, 0), (2, 2, 4)),
        copy_p.bind(x),
        lax.select_n(which > 0, x, y),
        lax.select_n(which[0, 0, 0] > 0, x, y),
        lax.select_n(which, x, y, lax.rev(x, (1,))),
        lax.select_n(which[1, 2, 3], x, y, lax.rev(x, (1,))),
        lax.select_n(which, x),
    )


@pytest.mark.parametrize("dtype", DTYPES_32)
def test_shape_ops(dtype):
    x, y = sample((2, 3, 4), dtype), sample((2, 3, 4), dtype, seed=1)
    which = np.arange(-5, 19, dtype=np.int32).reshape(2, 3, 4) % 7 - 2  # out of range too
    check(shape_ops, x, y, sample((), dtype, 2), which)


@pytest.mark.parametrize("dtype", DTYPES_64)
def test_shape_ops_x64(dtype, enable_x64):
    x, y = sample((2, 3, 4), dtype), sample((2, 3, 4), dtype, seed=1)
    which = (np.arange(24, dtype=np.uint8).reshape(2, 3, 4) % 4).astype(np.uint8)
    check(shape_ops, x, y, sample((), dtype, 2), which)


def test_broadcast_in_dim_and_stop_gradient():
    def f(x):
        return (
            lax.broadcast_in_dim(x, (3, 2, 4), (0, 2)),
            lax.expand_dims(x, (0, 2)),
            lax.stop_gradient(x) * 2.0,
        )

    check(f, sample((3, 4), np.float32))


def test_zero_sized():
    def f(x, pv):
        return (
            lax.pad(x, pv, [(1, 1, 2), (0, 1, 0)]),
            lax.reshape(x, (2, 0)),
            lax.transpose(x, (1, 0)),
            lax.concatenate([x, x], 0),
            lax.slice(x, (0, 0), (0, 2)),
        )

    check(f, np.zeros((0, 2), np.float32), np.float32(7))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int8, np.float16, BF16])
def test_clamp(dtype):
    def f(lo, x, hi, los, his):
        return lax.clamp(lo, x, hi), lax.clamp(los, x, his), lax.clamp(hi, x, lo)

    x = sample((3, 5), dtype)
    lo, hi = np.asarray(20, dtype), np.asarray(60, dtype)
    check(f, lo, x, hi, sample((3, 5), dtype, 1) // 2, sample((3, 5), dtype, 2) + 50)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_clamp_complex(dtype):
    """Lexicographic order, real parts first; NaNs (in either part) win, as in the impl."""

    def f(lo, x, hi, los, his):
        return lax.clamp(lo, x, hi), lax.clamp(los, x, his), lax.clamp(hi, x, lo)

    rng = np.random.default_rng(3)
    x = (rng.integers(-2, 3, (3, 5)) + 1j * rng.integers(-2, 3, (3, 5))).astype(dtype)
    x[0, 0], x[1, 1], x[2, 2] = complex(np.nan, 0), complex(0, np.nan), complex(-np.inf, 1)
    los = x[::-1].copy()
    his = los + (1 - 1j)
    his[2, 4] = complex(np.nan, np.nan)
    check(f, np.asarray(complex(0, 1), dtype), x, np.asarray(complex(1, -1), dtype), los, his)


def test_clamp_nan():
    def f(lo, x, hi, nan):
        return lax.clamp(lo, x, hi), lax.clamp(nan, x, hi), lax.clamp(lo, x, nan)

    x = np.array([np.nan, -1, 2, 0.5, np.inf, -np.inf], np.float32)
    check(f, np.float32(0), x, np.float32(1), np.float32(np.nan))


@pytest.mark.parametrize(
    "dtype", [np.int32, np.uint8, np.int8, np.float32, np.float16, BF16, np.complex64]
)
def test_iota(dtype):
    def f():
        return (
            lax.iota(dtype, 300),
            lax.broadcasted_iota(dtype, (3, 4, 5), 1),
            lax.broadcasted_iota(dtype, (2, 3000), 1),
            lax.iota(dtype, 0),
        )

    check(f)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64, np.int16])
def test_iota_x64(dtype, enable_x64):
    check(lambda: (lax.iota(dtype, 70000), lax.broadcasted_iota(dtype, (4, 3), 0)))


ALL = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, BF16, np.float32, np.float64, np.complex64, np.complex128,
]  # fmt: skip
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 127.5,
           128.0, -128.0, -129.0, 255.9, 256.0, 65535.0, 65536.0, -32769.0, 2.0**31, -2.0**31,
           2.0**31 + 1e3, 2.0**32, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30, 1e300, 1e-300, 7.0]  # fmt: skip
INT_SPECIAL = [0, 1, -1, 2, 7, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535,
               2**31 - 1, -2**31, 2**31, 2**32 + 5, 2**53 + 1, 2**62, -2**63, 2**63 - 1]  # fmt: skip


def source_values(dtype):
    dtype = np.dtype(dtype)
    with np.errstate(all="ignore"):
        if dtype == np.bool_:
            return np.array([True, False, True])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            values = [v for v in INT_SPECIAL if info.min <= v <= info.max]
            return np.array(values + [info.min, info.max], dtype)
        values = np.array(SPECIAL, np.float64)
        if dtype.kind == "c":
            values = values + 1j * np.roll(values, 1)
        return values.astype(dtype)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("src", ALL, ids=lambda d: np.dtype(d).name)
def test_convert_element_type(src, enable_x64):
    def f(x):
        return tuple(lax.convert_element_type(x, dst) for dst in ALL)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        check(f, source_values(src))


BITCASTS = [
    (np.float32, np.int32), (np.int32, np.float32), (np.uint32, np.int32), (np.float16, np.int16),
    (BF16, np.uint16), (np.float64, np.int64), (np.int64, np.float64), (np.float32, np.uint8),
    (np.float64, np.int16), (np.int32, np.int8), (np.uint8, np.float32), (np.int16, np.float64),
    (np.uint16, np.float32), (np.int8, np.uint16),
]  # fmt: skip


def test_bitcast_convert_type(enable_x64):
    def f(*xs):
        return tuple(lax.bitcast_convert_type(x, dst) for x, (_, dst) in zip(xs, BITCASTS))

    args = []
    for src, dst in BITCASTS:
        ratio = np.dtype(dst).itemsize // np.dtype(src).itemsize
        shape = (2, 3, ratio) if ratio > 1 else (2, 3)
        values = sample(shape, np.float64 if np.dtype(src).kind == "f" else np.int64) * 3.3
        args.append(values.astype(src))
    check(f, *args)


@pytest.mark.parametrize("index_dtype", [np.int32, np.uint8, np.int8])
def test_dynamic_slice_and_update(index_dtype):
    def f(x, u, i, j):
        return (
            lax.dynamic_slice(x, (i, j), (2, 3)),
            lax.dynamic_slice_in_dim(x, i, 3, axis=1),
            lax.dynamic_index_in_dim(x, j, axis=0, keepdims=False),
            lax.dynamic_update_slice(x, u, (i, j)),
            lax.dynamic_update_slice_in_dim(x, u[:1], j, axis=0),
            lax.dynamic_slice(x, (i, j), (0, 2)),
        )

    x, u = sample((4, 6), np.float32), sample((2, 3), np.float32, 1)
    jitted = jax.jit(f)
    values = [0, 1, 3, 5, 9, 100] + (
        [-1, -3, -7, -100] if np.dtype(index_dtype).kind == "i" else []
    )
    for i in values:
        for j in values[::2]:
            args = (x, u, np.asarray(i, index_dtype), np.asarray(j, index_dtype))
            assert_tree_equal(jitted(*args), f(*args), 0)


def test_dynamic_slice_rank0_and_int64_indices(enable_x64):
    def f(x, s, u, i):
        return (
            lax.dynamic_update_slice(s, u, ()),
            lax.dynamic_slice(s, (), ()),
            lax.dynamic_slice(x, (i, i, i), (1, 2, 3)),
            lax.dynamic_update_slice(x, x[:1, :2, :1] * 0, (i, i, i)),
        )

    x = sample((2, 3, 4), np.int64)
    for i in [-2**40, -1, 0, 2, 2**40]:  # fmt: skip
        check(f, x, np.int64(3), np.int64(9), np.int64(i))
