"""Lowering of the reductions (lax/reductions.py), cumulative reductions (lax/cumulative.py),
dot_general (lax/dot.py) and sort (lax/sort.py): each jitted through XLA equals its eager
(NumPy) result, on several shapes and dtypes, NaNs, signed zeros and infinities included.

Several primitives share one jitted function per dtype and shape, to keep the number of
compiled programs small. Warnings are errors, so a silent fallback to NumPy (dispatch warns
when a primitive has no lowering rule) fails the test."""

import numpy as np
import pytest
from helpers import assert_close

import tracejit
from tracejit import lax
from tracejit._src import dtypes
from tracejit.tree_util import tree_leaves


@pytest.fixture(autouse=True)
def x64():
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield
    tracejit.config.update("jax_enable_x64", previous)


FLOAT_DTYPES = [np.float32, np.float64, np.float16, dtypes.bfloat16]
INT_DTYPES = [np.int32, np.int8, np.uint8, np.int64, np.uint32]
TOLERANCE = {
    np.dtype(np.float16): 1e-2,
    np.dtype(dtypes.bfloat16): 2e-2,
    np.dtype(np.float32): 1e-5,
    np.dtype(np.complex64): 1e-5,
}


def _name(dtype) -> str:
    return np.dtype(dtype).name


def _values(shape, dtype, rng, special=True):
    """Small values of `dtype`; for floats with NaN, +-inf and +-0. sprinkled in."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -20
        return rng.integers(low, 20, shape).astype(dtype)
    x = rng.normal(size=shape) * 3
    if dtype.kind == "c":
        x = x + 1j * rng.normal(size=shape)
    x = np.round(x, 1)
    if special and x.size >= 6:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, 5, replace=False)
        for i, v in zip(picks, [np.nan, np.inf, -np.inf, -0.0, 0.0], strict=True):
            flat[i] = v
    return x.astype(dtype)


def _check(got, want, signs=True):
    """Same dtype, shape and values; real floats' zeros with the signs the impl gives them."""
    want = np.asarray(want)
    tol = TOLERANCE.get(np.dtype(want.dtype), 1e-12)
    assert_close(got, want, tol, dtype=want.dtype, signed_zeros=signs and want.dtype.kind == "f")


def _check_jit(fn, *args, signs=True):
    """`fn` jitted equals `fn` eager; `signs`: zeros' signs too (not for contractions, whose
    signs of zero depend on the order of summation)."""
    got = tracejit.jit(fn)(*args)
    with np.errstate(all="ignore"):  # NumPy's own warnings (inf - inf) in the eager result
        want = fn(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(want), strict=True):
        _check(g, w, signs)


# --- reductions -----------------------------------------------------------------------------


def _float_reductions(x):
    last = (x.ndim - 1,)
    every = tuple(range(x.ndim))
    return (
        lax.reduce_sum(x, last),
        lax.reduce_sum(x, every),
        lax.reduce_max(x, last),
        lax.reduce_max(x, every),
        lax.reduce_min(x, (0,)),
        lax.reduce_min(x, every),
        lax.reduce_prod(x, last),
        lax.argmax(x, x.ndim - 1, np.int32),
        lax.argmin(x, 0, np.int64),
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_name)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_float_reductions(dtype, shape):
    rng = np.random.default_rng(0)
    _check_jit(_float_reductions, _values(shape, dtype, rng))
    _check_jit(_float_reductions, _values(shape, dtype, rng, special=False))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES[:2], ids=_name)
def test_signed_zeros_nan_and_ties(dtype):
    x = np.array(
        [
            [-0.0, 0.0, -0.0],
            [0.0, -0.0, -0.0],
            [-0.0, -0.0, -0.0],
            [np.nan, 1.0, np.nan],
            [1.0, 2.0, np.nan],
            [-np.inf, -np.inf, -np.inf],
            [np.inf, np.inf, 1.0],
            [3.0, 1.0, 3.0],
        ],
        dtype,
    )
    _check_jit(_float_reductions, x)
    _check_jit(_float_reductions, x.T.copy())


def _complex_values(shape, dtype, rng, special=True):
    """Complex values with many equal real parts (the imaginary parts then decide the order);
    `special`: NaN in either part and infinities, (-inf-1j) among them, which sorts below the
    impls' identity for max (-inf+0j)."""
    x = rng.integers(-2, 3, shape) + 1j * rng.integers(-3, 4, shape)
    if special:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, 4, replace=False)
        specials = [complex(np.nan, 1), complex(2, np.nan), complex(-np.inf, -1), np.inf]
        for i, v in zip(picks, specials, strict=True):
            flat[i] = v
    return x.astype(dtype)


def _complex_choosers(z):
    last = (z.ndim - 1,)
    every = tuple(range(z.ndim))
    return (
        lax.reduce_max(z, last),
        lax.reduce_max(z, every),
        lax.reduce_min(z, (0,)),
        lax.reduce_min(z, every),
        lax.cummax(z, z.ndim - 1, False),
        lax.cummax(z, 0, True),
        lax.cummin(z, 0, False),
        lax.cummin(z, z.ndim - 1, True),
    )


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=_name)
@pytest.mark.parametrize("shape", [(7,), (4, 6), (2, 3, 4)])
def test_complex_max_min_are_lexicographic(dtype, shape):
    rng = np.random.default_rng(10)
    _check_jit(_complex_choosers, _complex_values(shape, dtype, rng, special=False))
    _check_jit(_complex_choosers, _complex_values(shape, dtype, rng))
    edge = np.array([complex(-np.inf, -1), complex(-np.inf, -2), complex(np.inf, 1)], dtype)
    _check_jit(_complex_choosers, edge)
    _check_jit(_complex_choosers, edge[::-1].copy())


def test_complex_max_min_of_no_elements():
    z = np.zeros((3, 0), np.complex64)
    _check_jit(lambda z: (lax.reduce_max(z, (1,)), lax.reduce_min(z, (1,))), z)


def _int_reductions(x):
    last = (x.ndim - 1,)
    every = tuple(range(x.ndim))
    return (
        lax.reduce_sum(x, every),
        lax.reduce_max(x, last),
        lax.reduce_min(x, every),
        lax.reduce_prod(x, last),
        lax.reduce_and(x, last),
        lax.reduce_or(x, (0,)),
        lax.reduce_xor(x, every),
        lax.argmax(x, 0, np.int32),
        lax.argmin(x, x.ndim - 1, np.uint8),
    )


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_name)
@pytest.mark.parametrize("shape", [(9,), (4, 6)])
def test_int_reductions(dtype, shape):
    _check_jit(_int_reductions, _values(shape, dtype, np.random.default_rng(1)))


@pytest.mark.parametrize("shape", [(9,), (4, 6)])
def test_bool_reductions(shape):
    def fn(x):
        return (
            lax.reduce_max(x, (0,)),
            lax.reduce_min(x, (x.ndim - 1,)),
            lax.reduce_and(x, (x.ndim - 1,)),
            lax.reduce_or(x, (0,)),
            lax.reduce_xor(x, tuple(range(x.ndim))),
            lax.argmax(x, x.ndim - 1, np.int32),
            lax.argmin(x, 0, np.int32),
        )

    rng = np.random.default_rng(2)
    _check_jit(fn, _values(shape, np.bool_, rng))
    _check_jit(fn, np.ones(shape, bool))


def test_complex_sums_and_empty_reductions():
    rng = np.random.default_rng(3)
    z = _values((3, 4), np.complex64, rng, special=False)
    _check_jit(lambda z: (lax.reduce_sum(z, (1,)), lax.reduce_prod(z, (0,))), z)

    def empty(x, i):
        return (
            lax.reduce_sum(x, (1,)),
            lax.reduce_max(x, (1,)),
            lax.reduce_min(x, (1,)),
            lax.reduce_prod(x, (1,)),
            lax.reduce_and(i, (0,)),
            lax.reduce_or(i, (0,)),
            lax.reduce_max(i, (0,)),
            lax.reduce_min(i, (0,)),
        )

    _check_jit(empty, np.zeros((3, 0), np.float32), np.zeros((0, 2), np.int16))


def test_integer_wraparound():
    x = np.array([[100, 100, 100], [-128, -1, 2]], np.int8)
    _check_jit(lambda x: (lax.reduce_sum(x, (1,)), lax.reduce_prod(x, (1,))), x)


# --- cumulative reductions ------------------------------------------------------------------


def _float_scans(x, reverse):
    last = x.ndim - 1
    return (
        lax.cumsum(x, last, reverse),
        lax.cumprod(x, 0, reverse),
        lax.cummax(x, last, reverse),
        lax.cummin(x, 0, reverse),
        lax.cumlogsumexp(x, last, reverse),
    )


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_name)
@pytest.mark.parametrize("shape", [(8,), (3, 5)])
def test_float_scans(dtype, shape, reverse):
    rng = np.random.default_rng(4)
    fn = lambda x: _float_scans(x, reverse)
    _check_jit(fn, _values(shape, dtype, rng))
    _check_jit(fn, _values(shape, dtype, rng, special=False) / 3)


def test_scan_edge_values():
    x = np.array(
        [
            [-0.0, 0.0, -0.0, 1.0],
            [np.nan, 1.0, 2.0, 3.0],
            [-np.inf, -np.inf, 0.0, np.inf],
            [np.inf, np.inf, -1.0, -0.0],
        ],
        np.float32,
    )
    _check_jit(lambda x: _float_scans(x, False) + _float_scans(x, True), x)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=_name)
def test_int_scans(dtype, reverse):
    def fn(x):
        return (
            lax.cumsum(x, 1, reverse),
            lax.cumprod(x, 0, reverse),
            lax.cummax(x, 1, reverse),
            lax.cummin(x, 0, reverse),
        )

    _check_jit(fn, _values((4, 6), dtype, np.random.default_rng(5)))


def test_complex_and_empty_scans():
    z = _values((3, 4), np.complex64, np.random.default_rng(6), special=False)
    _check_jit(lambda z: (lax.cumsum(z, 1), lax.cumprod(z, 0, True)), z)
    x = np.zeros((0, 3), np.float32)
    _check_jit(lambda x: (lax.cumsum(x, 0), lax.cummax(x, 0, True), lax.cumsum(x, 1)), x)


# --- dot_general ----------------------------------------------------------------------------

DOT_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4, 3, 2), (5, 2, 4), (((0, 2), (2, 1)), ((), ()))),
    ((3, 2, 4), (4, 2), (((2,), (0,)), ((1,), (1,)))),
    ((2, 3), (4, 5), (((), ()), ((), ()))),
]

DOT_DTYPES = [
    (np.float32, np.float32, None),
    (np.float64, np.float64, None),
    (np.float16, np.float16, None),
    (dtypes.bfloat16, dtypes.bfloat16, np.float32),
    (np.int32, np.int32, None),
    (np.int8, np.int8, None),
    (np.int8, np.int8, np.int32),
    (np.uint8, np.int8, None),
    (np.bool_, np.bool_, None),
    (np.complex64, np.complex64, None),
    (np.complex64, np.complex64, np.float32),
    (np.int32, np.float32, None),
    (np.float32, np.float32, np.complex64),
    (np.int16, np.int16, np.float32),
]


@pytest.mark.parametrize(
    "lhs_dtype, rhs_dtype, preferred", DOT_DTYPES, ids=lambda d: "none" if d is None else _name(d)
)
def test_dot_general(lhs_dtype, rhs_dtype, preferred):
    rng = np.random.default_rng(7)
    args, dims = [], []
    for lhs_shape, rhs_shape, dimension_numbers in DOT_CASES:
        args += [
            _values(lhs_shape, lhs_dtype, rng, special=False),
            _values(rhs_shape, rhs_dtype, rng, special=False),
        ]
        dims.append(dimension_numbers)

    def fn(*args):
        return [
            lax.dot_general(a, b, d, preferred_element_type=preferred)
            for a, b, d in zip(args[::2], args[1::2], dims, strict=True)
        ]

    _check_jit(fn, *args, signs=False)


def test_dot_with_nan_and_inf():
    a = np.array([[1.0, np.nan], [np.inf, 2.0], [0.0, -1.0]], np.float32)
    b = np.array([[1.0, 2.0], [3.0, np.inf]], np.float32)
    _check_jit(
        lambda a, b: (lax.dot(a, b), lax.dot(a, b, preferred_element_type=np.float64)),
        a,
        b,
        signs=False,
    )


# --- sort -----------------------------------------------------------------------------------


def _sorts(x, y, z):
    return (
        lax.sort(x, 1),
        lax.sort(x, 0),
        lax.sort((x, y), 1, num_keys=1),
        lax.sort((z, x, y), 1, num_keys=2),
        lax.sort((x, y), 0, is_stable=False),
    )


@pytest.mark.parametrize(
    "dtype",
    [*FLOAT_DTYPES, np.int32, np.uint8, np.int64, np.bool_, np.complex64],
    ids=_name,
)
def test_sort(dtype):
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 3, size=(4, 7)).astype(np.float64)  # many ties
    if np.dtype(dtype).kind in "fcV":
        x[0, 1] = x[3, 0] = np.nan
        x[1, 3], x[1, 4], x[2, 2], x[2, 3] = -0.0, 0.0, -np.inf, np.inf
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-2, 2, size=(4, 7))
        x[2, 5], x[3, 6] = complex(1, np.nan), complex(np.nan, np.nan)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    x = x.astype(dtype)
    y = np.arange(28, dtype=np.int32).reshape(4, 7)
    z = rng.integers(0, 3, size=(4, 7)).astype(np.float32)
    _check_jit(_sorts, x, y, z)


def test_sort_one_dimension_and_three_keys():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 2, 20).astype(np.int8)
    b = rng.integers(0, 2, 20).astype(bool)
    c = rng.integers(0, 3, 20).astype(np.float16)
    d = np.arange(20, dtype=np.uint32)
    _check_jit(lambda a, b, c, d: lax.sort((a, b, c, d), 0, num_keys=3), a, b, c, d)
