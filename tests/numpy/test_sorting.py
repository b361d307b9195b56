"""Sorting, searching and order statistics against NumPy, eagerly, staged and under jit: NaNs,
ties and stability, empty arrays, int/float/bool dtypes, axes and keepdims; index dtypes,
`size` padding and errors as JAX 0.10.2 has them; derivatives and vmap against a loop."""

import numpy as np
import pytest
from helpers import b, check_traced_matches_eager, f32, i32, u8

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src.test_util import check_grads
from tracejit.errors import ConcretizationTypeError


def sample(shape, dtype, seed=0):
    """Values with many ties (and NaNs and signed zeros for floats)."""
    rng = np.random.RandomState(seed)
    if dtype == b:
        return rng.rand(*shape) > 0.5
    x = rng.randint(-3, 4, size=shape)
    if dtype.kind == "u":
        x = np.abs(x)
    x = x.astype(dtype)
    if dtype.kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[::5] = np.nan
        flat[1::7] = -0.0
        flat[2::6] += 0.5
    return x


def check(fun, *args, jit=True):
    """`fun` eagerly, staged (check_traced_matches_eager) and under jit: the same values."""
    out = check_traced_matches_eager(fun, *args)
    if jit:
        again = jax.jit(fun)(*args)
        for x, y in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(again)):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    return out


def assert_equal(got, want, dtype=None):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    if dtype is not None:
        assert got.dtype == dtype, got.dtype
    np.testing.assert_array_equal(got, want)


# --- sort, argsort, lexsort -------------------------------------------------------------------
SHAPES_AXES = [((7,), -1), ((7,), None), ((3, 5), 0), ((3, 5), -1), ((2, 3, 4), 1),
               ((2, 3, 4), None), ((0,), -1), ((3, 0), 1), ((3, 0), 0)]  # fmt: skip


def np_argsort(x, axis, descending):
    """NumPy's stable argsort; descending as JAX defines it (ties keep their order)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


@pytest.mark.parametrize("dtype", [f32, i32, u8, b], ids=str)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(shape, axis, dtype, descending):
    x = jnp.asarray(sample(shape, dtype))
    want_sorted = np.sort(np.asarray(x), axis=axis, kind="stable")
    if descending:
        want_sorted = np.flip(want_sorted, -1 if axis is None else axis)
    got = check(lambda v: jnp.sort(v, axis=axis, descending=descending), x)
    assert_equal(got, want_sorted, dtype)
    perm = check(lambda v: jnp.argsort(v, axis=axis, descending=descending), x)
    assert_equal(perm, np_argsort(np.asarray(x), axis, descending), i32)


def test_sort_methods_weak_types_and_errors():
    x = jnp.array([3.0, np.nan, -1.0, 2.0])
    assert_equal(x.sort(), [-1.0, 2.0, 3.0, np.nan])
    assert_equal(x.argsort(descending=True), [1, 0, 3, 2])
    assert jnp.sort(jnp.asarray(2.0), axis=None).weak_type
    assert not jnp.sort(x).weak_type
    assert_equal(jnp.sort(x, stable=False), [-1.0, 2.0, 3.0, np.nan])
    assert jnp.argsort(x, dtype=jnp.int16).dtype == np.int16
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(x, kind="quicksort")
    with pytest.raises(TypeError, match="'order' argument to argsort"):
        jnp.argsort(x, order="a")
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sort(jnp.asarray(1.0))


def test_argsort_x64(enable_x64):
    assert jnp.argsort(jnp.array([2, 1])).dtype == np.int64
    assert jnp.lexsort([jnp.array([2, 1])]).dtype == np.int64
    assert jnp.nonzero(jnp.array([2, 0]))[0].dtype == np.int64
    assert jnp.searchsorted(jnp.array([1, 2]), 1).dtype == np.int32
    assert jnp.digitize(jnp.array([1, 2]), jnp.array([1])).dtype == np.int32
    assert jnp.unique(jnp.array([2, 1]), return_index=True)[1].dtype == np.int64
    assert jnp.bincount(jnp.array([2, 1])).dtype == np.int64
    assert jnp.median(jnp.array([2, 1])).dtype == np.float64  # int64 input
    assert jnp.median(jnp.array([2, 1], jnp.int32)).dtype == np.float32


def test_argsort_descending_jaxpr():
    # ties keep their order: sort the reversed operand, reverse the positions and map them back
    jaxpr = jax.make_jaxpr(lambda x: jnp.argsort(x, descending=True))(np.ones(3, np.float32))
    assert str(jaxpr) == (  # (JAX 0.10.2's printout)
        "{ lambda ; a:f32[3]. let\n"
        "    b:i32[3] = jit[\n"
        "      name=argsort\n"
        "      jaxpr={ lambda ; a:f32[3]. let\n"
        "          c:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n"
        "          d:f32[3] = rev[dimensions=(0,)] a\n"
        "          e:i32[3] = rev[dimensions=(0,)] c\n"
        "          f:f32[3] g:i32[3] = sort[dimension=0 is_stable=True num_keys=1] d e\n"
        "          b:i32[3] = rev[dimensions=(0,)] g\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )


@pytest.mark.parametrize("shape,axis", [((6,), -1), ((4, 6), -1), ((4, 6), 0), ((0,), 0)])
def test_lexsort(shape, axis):
    keys = [sample(shape, i32, 1), sample(shape, f32, 2), sample(shape, b, 3)]
    got = check(lambda *k: jnp.lexsort(k, axis=axis), *map(jnp.asarray, keys))
    assert_equal(got, np.lexsort(keys, axis=axis), i32)
    with pytest.raises(TypeError, match="need sequence of keys"):
        jnp.lexsort([])


def test_sort_grads_and_vmap():
    x = np.random.RandomState(0).permutation(12).reshape(3, 4).astype(np.float32) / 3
    check_grads(lambda v: jnp.sort(v, axis=0), (x,), order=2)
    check_grads(lambda v: jnp.sort(v, axis=None, descending=True), (x,), order=2)
    grad = jax.grad(lambda v: jnp.sort(v)[..., -1].sum())(x)  # one-hot at each row's maximum
    assert_equal(grad, (x == x.max(1, keepdims=True)).astype(np.float32))
    for f in (jnp.sort, jnp.argsort, lambda v: jnp.argsort(v, descending=True)):
        assert_equal(jax.vmap(f)(x), np.stack([np.asarray(f(row)) for row in x]))


# --- searchsorted and digitize --------------------------------------------------------------
SORTED = np.array([-2.0, 0.0, 0.0, 1.5, 3.0, 3.0, 3.0, 7.0, np.nan, np.nan], np.float32)
COMPLEX = np.array([1 + 1j, 1 - 1j, 2j, np.nan + 1j, complex(1, np.nan), complex(np.nan, np.nan),
                    -1, 1 + 1j, complex(2, np.nan), np.nan - 3j], np.complex64)  # fmt: skip
QUERIES = np.array([[-5.0, -2.0, 0.0, 0.5], [3.0, 7.0, 9.0, np.nan]], np.float32)


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize(
    "a,v",
    [
        (SORTED, QUERIES),
        (SORTED[:8], QUERIES),
        (np.arange(5, dtype=np.int32), np.array([-1, 0, 2, 4, 5, 9], np.int32)),
        (np.array([False, True, True]), np.array([True, False])),
        (np.zeros(0, np.float32), QUERIES),
        (np.array([1.0], np.float32), np.float32(1.0)),
        (np.sort(COMPLEX), np.concatenate([COMPLEX, np.array([0.5, 1, 3 + 3j], np.complex64)])),
    ],
    ids=["nan", "float", "int", "bool", "empty", "scalar", "complex"],
)
def test_searchsorted(a, v, side, method):
    got = check(
        lambda a_, v_: jnp.searchsorted(a_, v_, side=side, method=method),
        jnp.asarray(a),
        jnp.asarray(v),
    )
    assert_equal(got, np.searchsorted(a, v, side=side), i32)


def test_searchsorted_sorter_promotion_and_errors():
    a = np.array([3, 1, 2, 5], np.int32)
    sorter = np.argsort(a)
    v = np.array([2.5, 0.0, 5.0], np.float32)
    got = jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), sorter=jnp.asarray(sorter))
    assert_equal(got, np.searchsorted(a.astype(np.float32), v, sorter=sorter), i32)
    assert_equal(jnp.searchsorted(jnp.array([1, 2, 3]), 2.5), 2)  # compared as floats
    assert_equal(jnp.searchsorted(jnp.array([1, 2, 3]), 2, side="right"), 2)
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(jnp.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="invalid argument side"):
        jnp.searchsorted(jnp.ones(2), 1.0, side="middle")
    with pytest.raises(ValueError, match="invalid argument method"):
        jnp.searchsorted(jnp.ones(2), 1.0, method="bisect")


def test_searchsorted_vmap():
    a = np.sort(np.random.RandomState(0).randn(3, 6).astype(np.float32), axis=1)
    v = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    got = jax.vmap(jnp.searchsorted)(a, v)
    assert_equal(got, np.stack([np.searchsorted(ai, vi) for ai, vi in zip(a, v)]))
    got = jax.vmap(jnp.searchsorted, in_axes=(None, 0))(a[0], v)
    assert_equal(got, np.stack([np.searchsorted(a[0], vi) for vi in v]))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize(
    "bins",
    [
        np.array([-1.0, 0.0, 0.0, 2.0]),
        np.array([2.0, 0.0, 0.0, -1.0]),
        np.array([1.0]),
        np.zeros(0),
    ],
    ids=["increasing", "decreasing", "one", "empty"],
)
def test_digitize(bins, right):
    x = np.array([[-2.0, -1.0, 0.0], [0.5, 2.0, 3.0]], np.float32)
    bins = bins.astype(np.float32)
    got = check(lambda x_, b_: jnp.digitize(x_, b_, right=right), jnp.asarray(x), jnp.asarray(bins))
    assert_equal(got, np.digitize(x, bins, right=right), i32)


# --- nonzero, flatnonzero, argwhere ---------------------------------------------------------
NONZERO_CASES = [sample((9,), f32), sample((3, 4), i32), sample((2, 3, 2), b),
                 np.zeros((2, 3), np.float32), np.zeros(0, np.int32),
                 np.array([np.nan, 0.0, -0.0, 1.0], np.float32)]  # fmt: skip


@pytest.mark.parametrize("x", NONZERO_CASES, ids=lambda x: f"{x.dtype}{x.shape}")
def test_nonzero_argwhere(x):
    got = jnp.nonzero(jnp.asarray(x))
    assert len(got) == x.ndim
    for g, w in zip(got, np.nonzero(x)):
        assert_equal(g, w, i32)
    assert_equal(jnp.flatnonzero(jnp.asarray(x)), np.flatnonzero(x), i32)
    assert_equal(jnp.argwhere(jnp.asarray(x)), np.argwhere(x), i32)
    count = np.count_nonzero(x)
    for size in (0, max(count - 2, 0), count, count + 3):
        for fill in (None, -1):
            fills = 0 if fill is None else fill
            got = check(
                lambda v, size=size, fill=fill: jnp.nonzero(v, size=size, fill_value=fill),
                jnp.asarray(x),
            )
            for g, w in zip(got, np.nonzero(x)):
                assert_equal(g, np.concatenate([w[:size], np.full(size - len(w[:size]), fills)]))
            got = check(
                lambda v, size=size, fill=fill: jnp.argwhere(v, size=size, fill_value=fill),
                jnp.asarray(x),
            )
            want = np.argwhere(x)[:size]
            want = np.concatenate([want, np.full((size - len(want), x.ndim), fills)])
            assert_equal(got, want)


def test_nonzero_fill_tuple_scalar_and_errors():
    x = jnp.array([[0, 1], [2, 0]])
    got = jnp.nonzero(x, size=3, fill_value=(7, 8))
    assert_equal(got[0], [0, 1, 7])
    assert_equal(got[1], [1, 0, 8])
    fill_float = jnp.nonzero(jnp.array([0, 1]), size=3, fill_value=2.5)[0]  # promoted, as in JAX
    assert fill_float.dtype == f32 and fill_float.weak_type
    assert_equal(fill_float, [1.0, 2.5, 2.5])
    assert jnp.argwhere(jnp.asarray(3.0)).shape == (1, 0)
    assert jnp.argwhere(jnp.asarray(0.0)).shape == (0, 0)
    assert_equal(x.nonzero(size=1)[0], [0])
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(jnp.asarray(1.0))
    with pytest.raises(ValueError, match="fill_value must be a scalar or a tuple of length 2"):
        jnp.nonzero(x, size=3, fill_value=(1, 2, 3))
    for f in (jnp.nonzero, jnp.flatnonzero, jnp.argwhere):
        with pytest.raises(ConcretizationTypeError, match="size argument of jnp.nonzero"):
            jax.jit(f)(x)


def test_nonzero_under_eager_grad():
    # a JVP tracer's primal is known when grad runs eagerly: no size needed, as in JAX
    grad = jax.grad(lambda x: x[jnp.nonzero(x)].sum())(np.array([0.0, 1.0, 2.0], np.float32))
    assert_equal(grad, [0.0, 1.0, 1.0])
    with pytest.raises(ConcretizationTypeError):
        jax.vmap(lambda r: jnp.nonzero(r)[0])(jnp.ones((2, 3)))


def test_nonzero_vmap_with_size():
    x = sample((4, 6), i32)
    got = jax.vmap(lambda r: jnp.nonzero(r, size=3, fill_value=-1)[0])(jnp.asarray(x))
    want = [np.concatenate([np.nonzero(r)[0], [-1] * 6])[:3] for r in x]
    assert_equal(got, np.stack(want))


# --- unique -----------------------------------------------------------------------------------
UNIQUE_CASES = [sample((12,), f32), sample((3, 4), i32), sample((2, 5), b), sample((7,), u8),
                np.array([np.nan, 1.0, np.nan, -0.0, 0.0], np.float32)]  # fmt: skip


@pytest.mark.parametrize("x", UNIQUE_CASES, ids=lambda x: f"{x.dtype}{x.shape}")
def test_unique(x):
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    got = jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True, return_counts=True)
    assert_equal(got[0], want[0], x.dtype)
    for g, w in zip(got[1:], want[1:]):
        assert_equal(g, np.reshape(w, np.shape(g)), i32)
    assert got[2].shape == x.shape  # the inverse has the input's shape, as in JAX
    assert_equal(jnp.unique(jnp.asarray(x)), want[0])
    n = len(want[0])
    for size in (1, n, n + 2):
        fun = lambda v, size=size: jnp.unique(v, return_index=True, return_counts=True, size=size)
        values, index, counts = check(fun, jnp.asarray(x), jit=size == n + 2)
        pad = size - min(size, n)
        assert_equal(values, np.concatenate([want[0][:size], [want[0][0]] * pad]))
        assert_equal(index, np.concatenate([want[1][:size], [want[1][0]] * pad]))
        assert_equal(counts, np.concatenate([want[3][:size], [0] * pad]))
        filled = jnp.unique(jnp.asarray(x), size=size, fill_value=9)
        assert_equal(filled, np.concatenate([want[0][:size], [9] * pad]).astype(x.dtype))


def test_unique_nan_empty_and_errors():
    x = jnp.array([np.nan, 1.0, np.nan])
    assert_equal(jnp.unique(x), [1.0, np.nan])
    assert_equal(jnp.unique(x, equal_nan=False), [1.0, np.nan, np.nan])
    empty = jnp.zeros(0)
    assert_equal(jnp.unique(empty), np.zeros(0))
    assert_equal(jnp.unique(empty, size=2, fill_value=3.0), [3.0, 3.0])
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(empty, size=2)
    with pytest.raises(ConcretizationTypeError, match="jnp.unique"):
        jax.jit(jnp.unique)(x)
    got = jax.jit(lambda v: jnp.unique(v, size=3, return_inverse=True))(x)
    assert_equal(got[0], [1.0, np.nan, 1.0])
    assert_equal(got[1], [1, 0, 1])


AXIS_CASES = [(np.array([[1, 2], [0, 5], [1, 2], [0, 1]], np.int32), 0),
              (np.array([[1, 2], [0, 5], [1, 2], [0, 1]], np.int32), 1),
              (np.random.RandomState(0).randint(0, 2, (3, 4, 2)).astype(np.float32), -1),
              (np.random.RandomState(1).randint(0, 2, (5, 2, 2)).astype(np.float32), 0),
              (np.random.RandomState(2).rand(4, 3) > 0.5, 1),
              (np.zeros((0, 2), np.int32), 0), (np.zeros((3, 0), np.int32), 0)]  # fmt: skip


@pytest.mark.parametrize("x,axis", AXIS_CASES, ids=lambda v: str(np.shape(v)) if np.ndim(v) else "")
def test_unique_axis(x, axis):
    want = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    got = jnp.unique(
        jnp.asarray(x), axis=axis, return_index=True, return_inverse=True, return_counts=True
    )
    assert_equal(got[0], want[0], x.dtype)
    for g, w in zip(got[1:], want[1:]):
        assert_equal(g, np.reshape(w, -1), i32)
    n = want[0].shape[axis]
    if n:
        fun = lambda v: jnp.unique(v, axis=axis, size=n + 1, fill_value=7, return_counts=True)
        values, counts = check(fun, jnp.asarray(x))
        pad = np.full_like(np.take(want[0], [0], axis=axis), 7)
        assert_equal(values, np.concatenate([want[0], pad], axis=axis))
        assert_equal(counts, np.concatenate([want[3], [0]]))


def test_unique_axis_nans():
    x = jnp.array([[1.0, np.nan], [1.0, np.nan], [0.0, -0.0], [-0.0, 0.0]])
    assert_equal(jnp.unique(x, axis=0), [[0.0, 0.0], [1.0, np.nan]])
    assert_equal(jnp.unique(x, axis=0, equal_nan=False), [[0.0, 0.0], [1.0, np.nan], [1.0, np.nan]])


def test_vmap_with_static_sizes():
    x = np.array([[3, 1, 3, 2], [0, 0, 5, 5]], np.int32)
    values, counts = jax.vmap(lambda r: jnp.unique(r, size=3, return_counts=True))(x)
    assert_equal(values, [[1, 2, 3], [0, 5, 0]])
    assert_equal(counts, [[1, 1, 2], [2, 2, 0]])
    got = jax.vmap(lambda r: jnp.bincount(r, length=6))(x)
    assert_equal(got, np.stack([np.bincount(r, minlength=6) for r in x]))
    got = jax.jit(jax.vmap(lambda r: jnp.lexsort([r, -r])))(x)
    assert_equal(got, np.stack([np.lexsort([r, -r]) for r in x]))


# --- bincount ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x,weights,minlength",
    [
        (np.array([0, 1, 1, 3, 3, 3], np.int32), None, 0),
        (np.array([0, 1, 1, 3], np.int32), None, 6),
        (np.array([2, 0, 2], np.uint8), np.array([0.5, 1.0, 2.0], np.float32), 0),
        (np.array([2, 0, 2], np.int32), np.array([1, 2, 3], np.int32), 4),
        (np.zeros(0, np.int32), None, 0),
        (np.zeros(0, np.int32), None, 3),
    ],
)
def test_bincount(x, weights, minlength):
    want = np.bincount(x, weights, minlength)
    w = None if weights is None else jnp.asarray(weights)
    got = jnp.bincount(jnp.asarray(x), w, minlength)
    assert_equal(got, want.astype(got.dtype), i32 if weights is None else weights.dtype)
    got = jax.jit(lambda v: jnp.bincount(v, w, minlength, length=len(want)))(jnp.asarray(x))
    assert_equal(got, want.astype(got.dtype))


def test_bincount_length_clipping_grads_and_errors():
    x = jnp.array([-1, 1, 2, 5])
    assert_equal(jnp.bincount(x), [1, 1, 1, 0, 0, 1])  # negative values count as 0, as in JAX
    assert_equal(jnp.bincount(x, length=3), [1, 1, 1])  # values past length are dropped
    w = np.array([0.5, 1.0, -2.0, 3.0], np.float32)
    check_grads(lambda w_: jnp.bincount(x, w_, length=4), (w,), order=2)
    with pytest.raises(ValueError, match="type of weights must match type of x"):
        jnp.bincount(x, weights=2.0)
    with pytest.raises(ConcretizationTypeError, match="pass a static `length`"):
        jax.jit(jnp.bincount)(x)
    with pytest.raises(TypeError, match="must have an integer type"):
        jnp.bincount(jnp.array([1.0]))
    with pytest.raises(ValueError, match="only 1-dimensional"):
        jnp.bincount(jnp.ones((2, 2), jnp.int32))


# --- quantile, percentile, median -------------------------------------------------------------
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
STAT_AXES = [(None, False), (0, False), (-1, True), ((0, 2), False), ((0, 2), True)]


def stat_sample(dtype, nans):
    x = np.random.RandomState(3).randn(4, 5, 6)
    if dtype.kind == "i":
        return np.round(x * 3).astype(dtype)
    x = x.astype(dtype)
    if nans:
        x[0, :, 1] = np.nan  # an all-NaN slice for axis=0... and NaNs elsewhere
        x[1, 2, :3] = np.nan
    return x


def np_quantile(x, q, axis, method, keepdims, quantile=np.quantile):
    """NumPy's quantile, but 'nearest' with JAX's tie-break: a position halfway between two
    elements reads the lower one (NumPy rounds it half to even)."""
    if method != "nearest":
        return quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    low, high = (
        quantile(x, q, axis=axis, method=m, keepdims=keepdims) for m in ("lower", "higher")
    )
    n = np.sum(~np.isnan(x), axis=axis, keepdims=keepdims) if quantile is np.nanquantile else None
    if n is None:
        n = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    q = np.reshape(q, np.shape(q) + (1,) * (np.ndim(low) - np.ndim(q)))
    position = q.astype(np.float32) * (np.asarray(n, np.float32) - 1)
    return np.where(position - np.floor(position) > 0.5, high, low)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis,keepdims", STAT_AXES, ids=str)
@pytest.mark.parametrize("q", [0.3, np.array([0.0, 0.5, 0.9, 1.0])], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", [f32, i32], ids=str)
def test_quantile(method, axis, keepdims, q, dtype):
    x = stat_sample(dtype, nans=False)
    q32 = np.asarray(q, np.float32)
    got = check(
        lambda v, q_: jnp.quantile(v, q_, axis=axis, method=method, keepdims=keepdims),
        jnp.asarray(x),
        jnp.asarray(q32),
        jit=False,
    )
    want = np_quantile(x.astype(np.float64), q32, axis, method, keepdims)
    assert got.dtype == f32 and not got.weak_type and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    got = jnp.percentile(jnp.asarray(x), q * 100, axis=axis, method=method, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis,keepdims", STAT_AXES, ids=str)
def test_nan_statistics(method, axis, keepdims):
    x = stat_sample(f32, nans=True)
    q = np.array([0.2, 0.5])
    with _no_warning_check():
        want_plain = np_quantile(x, q, axis, method, keepdims)
        want_nan = np_quantile(x, q, axis, method, keepdims, np.nanquantile)
    kwargs = {"axis": axis, "method": method, "keepdims": keepdims}
    got = jax.jit(lambda v: jnp.quantile(v, q, **kwargs))(x)
    np.testing.assert_allclose(np.asarray(got), want_plain, rtol=1e-5, atol=1e-5)
    got = jax.jit(lambda v: jnp.nanquantile(v, q, **kwargs))(x)
    np.testing.assert_allclose(np.asarray(got), want_nan, rtol=1e-5, atol=1e-5)
    # a percentile is the quantile at q / 100, which XLA computes as q * (1 / 100): JAX's
    # quantiles at 20% are those at 0.19999999 (here "lower" then takes the element below)
    q_as_jax = (q * 100).astype(np.float32) * np.reciprocal(np.float32(100))
    with _no_warning_check():
        want_percentile = np_quantile(x, q_as_jax, axis, method, keepdims, np.nanquantile)
    got = jnp.nanpercentile(jnp.asarray(x), q * 100, **kwargs)
    np.testing.assert_allclose(np.asarray(got), want_percentile, rtol=1e-5, atol=1e-5)


class _no_warning_check:
    """NumPy warns for all-NaN slices; the values are what is compared."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


@pytest.mark.parametrize("axis,keepdims", STAT_AXES, ids=str)
@pytest.mark.parametrize("nans", [False, True])
def test_median(axis, keepdims, nans):
    x = stat_sample(f32, nans)
    with _no_warning_check():
        want = np.median(x, axis=axis, keepdims=keepdims)
        want_nan = np.nanmedian(x, axis=axis, keepdims=keepdims)
    got = check(lambda v: jnp.median(v, axis=axis, keepdims=keepdims), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = check(lambda v: jnp.nanmedian(v, axis=axis, keepdims=keepdims), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), want_nan, rtol=1e-6)


def test_statistics_dtypes_errors_grads_vmap():
    assert jnp.median(jnp.array([1, 2, 3, 4])).dtype == f32
    assert_equal(jnp.median(jnp.array([1, 2, 3, 4])), 2.5)
    assert jnp.quantile(jnp.ones(3, jnp.float16), 0.5).dtype == np.float16
    assert_equal(jnp.quantile(jnp.array([1.0, 2.0]), 1.5), 2.0)  # clamped, as in JAX
    with pytest.raises(TypeError):  # JAX's gather refuses the empty slice
        jnp.median(jnp.zeros(0))
    assert_equal(jnp.quantile(jnp.arange(4.0), 0.5, method="nearest"), 1.0)  # ties: lower
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(jnp.ones(3), 0.5, method="weibull")
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf' supports weights"):
        jnp.quantile(jnp.ones(3), 0.5, weights=jnp.ones(3))
    x = np.random.RandomState(0).permutation(20).reshape(4, 5).astype(np.float32)
    for method in ("linear", "lower", "midpoint"):
        check_grads(
            lambda v, method=method: jnp.quantile(v, 0.3, axis=1, method=method), (x,), order=2
        )
    check_grads(lambda v: jnp.median(v, axis=0), (x,), order=2)
    check_grads(lambda v: jnp.nanquantile(v, np.array([0.1, 0.7])), (x,), order=1)
    got = jax.vmap(lambda r: jnp.quantile(r, 0.4))(x)
    np.testing.assert_allclose(np.asarray(got), np.quantile(x, 0.4, axis=1), rtol=1e-6)


def test_where_with_the_condition_alone_is_nonzero():
    x = jnp.array([0, 1, 2, 0, 3])
    (got,) = jnp.where(x)
    np.testing.assert_array_equal(got, [1, 2, 4])
    (got,) = jax.jit(lambda c: jnp.where(c, size=4, fill_value=-1))(x)
    np.testing.assert_array_equal(got, [1, 2, 4, -1])
    rows, cols = jnp.where(jnp.array([[1, 0], [0, 1]]))
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(cols, [0, 1])


def test_where_errors_as_jax():
    cond = jnp.array([True, False])
    with pytest.raises(ValueError, match="cannot be used in three-term where"):
        jnp.where(cond, 1, 2, size=3)
    with pytest.raises(TypeError, match="got <class 'NoneType'> at position 2"):
        jnp.where(cond, 1)
    with pytest.raises(ConcretizationTypeError, match="nonzero"):
        jax.jit(lambda c: jnp.where(c))(cond)
