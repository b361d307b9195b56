"""Advanced indexing (integer arrays, lists, concrete boolean masks) in `x[idx]` and `x.at[idx]`,
`jnp.take` and `jnp.take_along_axis`: values against NumPy (eagerly, staged and compiled),
out-of-bound modes as JAX 0.10.2 has them, derivatives, vmap against a loop, golden jaxprs from
JAX and errors."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager, vmap_reference

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src.test_util import check_grads
from tracejit.errors import NonConcreteBooleanIndexError

E = Ellipsis
X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
I = np.array([0, 2, -1])
J = np.array([[1], [-3]])
MASK0 = np.array([True, False, True])
MASK12 = np.arange(20).reshape(4, 5) % 3 == 0

# Indices into X (shape (3, 4, 5)), NumPy semantics throughout.
INDICES = [
    I,
    (I,),
    ([0, -1],),
    (slice(None), I),
    (E, I),
    (I, E),
    (I, J),
    (J, I),
    (I, slice(None), J),
    (1, I),
    (1, slice(None), I),
    (slice(None), 1, I),
    (I, 1, slice(None)),
    (None, I, slice(1, 3)),
    (I, None, J),
    (None, 1, None, I),
    (slice(1, None, 2), I, None, slice(4, 0, -3)),
    (I, slice(None, None, -2)),
    (slice(None, None, -1), J),
    (J, slice(1, 3), 4),
    (I, E, [0, 4, 1]),
    (slice(None), [[0, 1], [2, 3]]),
    (np.int32(1), I),
    (np.array([], np.int32),),
    ([],),
    (slice(2, 2), I),
    MASK0,
    (MASK0, 1),
    (slice(None), MASK12),
    (MASK0, slice(None), [0, 4]),
    (MASK0, None, MASK12[:, 0]),
    (True,),
    (False,),
    (1, True),
    (slice(None), np.array([[True, False, False, True]])[0], slice(1, 4)),
]


def ids(index):
    return repr(index).replace(" ", "").replace("array", "")[:60]


def _replace_arrays(index, arrays):
    """`index` with its integer NumPy arrays replaced, in order, by `arrays`."""
    entries = list(index) if isinstance(index, tuple) else [index]
    it = iter(arrays)
    out = [
        next(it) if isinstance(e, np.ndarray) and e.dtype != bool and e.ndim else e for e in entries
    ]
    return tuple(out) if isinstance(index, tuple) else out[0]


def _int_arrays(index):
    entries = index if isinstance(index, tuple) else (index,)
    return [e for e in entries if isinstance(e, np.ndarray) and e.dtype != bool and e.ndim]


@pytest.mark.parametrize("index", INDICES, ids=ids)
def test_getitem_matches_numpy(index):
    want = X[index]
    out = check_traced_matches_eager(lambda v: v[index], jnp.asarray(X))
    assert out.shape == want.shape
    np.testing.assert_array_equal(np.asarray(out), want)
    out = jax.jit(lambda v: v[index])(X)
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("index", [i for i in INDICES if _int_arrays(i)], ids=ids)
def test_getitem_with_traced_index_arrays(index):
    want = X[index]

    def f(v, *arrays):
        return v[_replace_arrays(index, arrays)]

    arrays = [jnp.asarray(a) for a in _int_arrays(index)]
    out = check_traced_matches_eager(f, jnp.asarray(X), *arrays)
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(X, *arrays)), want)


def test_dtypes_and_weak_types():
    x = jnp.arange(6)
    assert x[np.array([1, 2])].dtype == np.int32 and not x[np.array([1, 2])].weak_type
    w = jnp.asarray(3.0) * jnp.ones(4, np.float32)  # not weak
    assert w[jnp.array([0])].dtype == np.float32
    weak = jax.jit(lambda: jnp.zeros(3) + 1.0)()
    assert weak[np.array([0, 1])].weak_type == weak.weak_type
    b = jnp.asarray(np.array([True, False, True]))
    np.testing.assert_array_equal(b[np.array([2, 1])], [True, False])
    # a concrete Array mask is a NumPy mask
    np.testing.assert_array_equal(jnp.arange(3)[jnp.asarray(MASK0)], [0, 2])


def test_with_x64(enable_x64):
    x = jnp.arange(12.0).reshape(3, 4)
    i = jnp.array([5, -1])  # int64
    np.testing.assert_array_equal(jax.jit(lambda v, k: v[k])(x, i), np.asarray(x)[[2, -1]])
    np.testing.assert_array_equal(jnp.take(x, i, mode="wrap"), [5.0, 11.0])
    np.testing.assert_array_equal(jnp.take(x, i, axis=1)[0], [np.nan, 3.0])
    np.testing.assert_array_equal(jnp.take_along_axis(x, i[None], axis=1)[2], [np.nan, 11.0])
    np.testing.assert_array_equal(x.at[jnp.array([0, 0])].add(1.0)[0], [2.0, 3.0, 4.0, 5.0])


def test_empty_operands_and_indices():
    z = jnp.zeros((0, 3))
    empty = np.array([], np.int32)
    assert z[empty].shape == (0, 3) and z[:, np.array([0, 2])].shape == (0, 2)
    assert jax.jit(lambda v, i: v[i])(z, empty).shape == (0, 3)
    assert z.at[empty].set(1.0).shape == (0, 3)
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(x.at[empty].add(1.0), [0.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="slice_sizes"):  # JAX: a TypeError from gather too
        z[np.array([0])]


# --- out-of-bound reads ----------------------------------------------------------------------
def test_out_of_bound_reads_clamp_by_default():
    x = jnp.arange(5)
    idx = np.array([0, 7, -1, -9])
    np.testing.assert_array_equal(x[idx], [0, 4, 4, 0])
    np.testing.assert_array_equal(jax.jit(lambda v, i: v[i])(x, idx), [0, 4, 4, 0])
    np.testing.assert_array_equal(x.at[idx].get(mode="clip"), [0, 4, 4, 0])
    np.testing.assert_array_equal(x.at[idx].get(mode="promise_in_bounds")[:3], [0, 4, 4])


@pytest.mark.parametrize(
    "dtype, fill",
    [(np.float32, np.nan), (np.int32, -(2**31)), (np.uint8, 255), (np.bool_, True)],
    ids=str,
)
def test_fill_mode_reads(dtype, fill):
    x = jnp.asarray(np.arange(5).astype(dtype))
    idx = np.array([0, 7, -1, -9])
    want = np.array([0, fill, 4, fill]).astype(dtype) if dtype != np.bool_ else [0, 1, 1, 1]
    for f in (
        lambda v, i: v.at[i].get(mode="fill"),
        jax.jit(lambda v, i: v.at[i].get(mode="fill")),
    ):
        got = f(x, idx)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want, dtype))
    got = jax.jit(lambda v, i: v.at[i].get(mode="fill", fill_value=3))(x, idx)
    np.testing.assert_array_equal(np.asarray(got), np.array([0, 3, 4, 3]).astype(dtype))
    # a basic index with mode='fill' goes through the gather too
    assert np.asarray(x.at[9].get(mode="fill", fill_value=1)) == dtype(1)


# --- updates ---------------------------------------------------------------------------------
UPDATE_INDICES = [
    i for i in INDICES if not (isinstance(i, tuple) and any(e is True or e is False for e in i))
]
METHODS = {
    "add": np.add.at,
    "subtract": np.subtract.at,
}


def _reference(x, index, method, y):
    want = x.copy()
    if method == "set":
        want[index] = y
    else:
        METHODS[method](want, index, y)
    return want


@pytest.mark.parametrize("method", ["set", "add", "subtract"])
@pytest.mark.parametrize("index", UPDATE_INDICES, ids=ids)
def test_at_updates_match_numpy(index, method):
    y = np.random.default_rng(0).standard_normal(X[index].shape).astype(np.float32)
    want = _reference(X, index, method, y)

    def f(v, w):
        return getattr(v.at[index], method)(w)

    out = check_traced_matches_eager(f, jnp.asarray(X), jnp.asarray(y))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(X, y)), want, rtol=1e-6)
    # a scalar update broadcasts
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(X), 2.0)), _reference(X, index, method, 2))


COMBINING = {
    "multiply": np.multiply,
    "divide": np.divide,
    "power": np.power,
    "min": np.minimum,
    "max": np.maximum,
}
I2 = np.array([0, -1])  # no element twice along an axis of length 3 (I has 2 and -1)
UNIQUE_INDICES = [
    (I2,),
    (slice(None), I),
    (1, slice(None), I),
    (I2, None, [[1], [2]]),
    MASK0,
    (E, [0, 4]),
]


@pytest.mark.parametrize("method", list(COMBINING))
@pytest.mark.parametrize("index", UNIQUE_INDICES, ids=ids)
def test_combining_updates_with_unique_indices(index, method):
    x = X / 10 + 0.5
    y = np.random.default_rng(1).uniform(0.5, 2, x[index].shape).astype(np.float32)
    want = x.copy()
    want[index] = COMBINING[method](x[index], y)

    def f(v, w):
        return getattr(v.at[index], method)(w, unique_indices=True)

    out = check_traced_matches_eager(f, jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), want, rtol=1e-5)


def test_apply_at_arrays_even_with_repeated_indices():
    x = np.arange(6, dtype=np.float32)
    out = jax.jit(lambda v: v.at[np.array([1, 1, 4])].apply(jnp.sin))(x)
    want = x.copy()
    want[[1, 4]] = np.sin(want[[1, 4]])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_repeated_indices():
    x = jnp.zeros(5)
    idx = np.array([0, 0, 3, 0])
    u = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for f in (lambda v, w: v.at[idx].add(w), jax.jit(lambda v, w: v.at[idx].add(w))):
        np.testing.assert_array_equal(np.asarray(f(x, u)), [7, 0, 0, 3, 0])  # accumulate
    for f in (lambda v, w: v.at[idx].set(w), jax.jit(lambda v, w: v.at[idx].set(w))):
        out = np.asarray(f(x, u))
        assert out[0] in (1.0, 2.0, 4.0) and out[3] == 3 and out[[1, 2, 4]].tolist() == [0] * 3


REPEATED = [(np.array([0, 0, 3, 0, -1]),), (slice(None), [1, 1]), ([[2, 2], [-1, 0]], E)]


@pytest.mark.parametrize("method", list(COMBINING))
@pytest.mark.parametrize("index", REPEATED, ids=ids)
def test_combining_updates_with_repeated_indices(index, method):
    """multiply/min/max combine every update at an element in turn; divide/power divide (raise)
    by the product of the updates there."""
    x = (X[0] / 10 + 0.5).astype(np.float32)
    y = np.random.default_rng(3).uniform(0.5, 2, x[index].shape).astype(np.float32)
    if method in ("divide", "power"):
        factor, touched = np.ones_like(x), np.zeros(x.shape, bool)
        np.multiply.at(factor, index, y)
        touched[index] = True
        want = np.where(touched, COMBINING[method](x, factor), x)
    else:
        want = x.copy()
        COMBINING[method].at(want, index, y)

    def f(v, w):
        return getattr(v.at[index], method)(w)

    out = check_traced_matches_eager(f, jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), want, rtol=1e-5)


def test_integer_updates_at_repeated_indices():
    # divide is true division (float32, as in JAX); power stays exact elsewhere in the array
    x = jnp.array([2**30 + 1, 7, 9], jnp.int32)
    divided = x.at[np.array([1, 1])].divide(2)
    assert divided.dtype == np.float32
    np.testing.assert_array_equal(divided, np.array([2**30 + 1, 1.75, 9], np.float32))
    np.testing.assert_array_equal(x.at[np.array([1, 1])].power(2), [2**30 + 1, 2401, 9])


def test_combining_update_grads():
    y = jnp.arange(4.0)
    idx = np.array([1, 1])
    f = lambda y, u: y.at[idx].max(u).sum()
    gy, gu = jax.grad(f, (0, 1))(y, jnp.array([1.0, 1.0]))  # ties share (JAX's values)
    np.testing.assert_allclose(np.asarray(gy), [1, 1 / 3, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gu), [1 / 3, 1 / 3], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        jax.grad(lambda u: y.at[np.array([1, 2])].multiply(u).sum())(jnp.ones(2))
    g = jax.grad(lambda u: y.at[np.array([1, 2])].multiply(u, unique_indices=True).sum())
    np.testing.assert_array_equal(g(jnp.ones(2)), [1.0, 2.0])
    at = lambda x: jnp.asarray(x).at
    rng = np.random.default_rng(4)
    x, u = rng.standard_normal(6), rng.standard_normal(5)
    check_grads(lambda x: at(x)[np.array([0, 0, 3, 0, -1])].multiply(u), (x,), order=2)
    check_grads(lambda x, u: at(x)[np.array([0, 0, 3, 0, -1])].min(u), (x, u), order=1)


def test_out_of_bound_updates():
    x = jnp.arange(5)
    idx = np.array([0, 7, -1, -9])
    np.testing.assert_array_equal(x.at[idx].add(10), [10, 1, 2, 3, 14])  # dropped
    np.testing.assert_array_equal(x.at[idx].add(10, mode="drop"), [10, 1, 2, 3, 14])
    np.testing.assert_array_equal(x.at[idx].add(10, mode="fill"), [10, 1, 2, 3, 14])
    np.testing.assert_array_equal(x.at[idx].add(10, mode="clip"), [20, 1, 2, 3, 24])
    np.testing.assert_array_equal(jax.jit(lambda v: v.at[idx].add(10, mode="clip"))(x),
                                  [20, 1, 2, 3, 24])  # fmt: skip
    np.testing.assert_array_equal(x.at[np.array([1, 2])].set(7, mode="promise_in_bounds"),
                                  [0, 7, 7, 3, 4])  # fmt: skip
    # a basic index with an explicit mode scatters too
    np.testing.assert_array_equal(x.at[9].set(7, mode="clip"), [0, 1, 2, 3, 7])
    np.testing.assert_array_equal(x.at[9].set(7, mode="drop"), [0, 1, 2, 3, 4])


def test_update_at_traced_integer_drops_out_of_bound():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for i in (5, -4):
        for method in ("set", "add", "multiply", "max"):
            out = jax.jit(lambda v, k, m=method: getattr(v.at[k], m)(-1.0))(x, i)
            np.testing.assert_array_equal(np.asarray(out), x)
    out = jax.jit(lambda v, k: v.at[k, ::2].multiply(3.0))(x, -1)
    want = x.copy()
    want[-1, ::2] *= 3
    np.testing.assert_array_equal(np.asarray(out), want)


# --- take and take_along_axis -----------------------------------------------------------------
def _take_reference(a, idx, axis, mode, fill_value):
    """JAX's take in NumPy: 'clip' and 'wrap' as NumPy's; 'fill' counts negative indices from
    the end and fills the rest."""
    if axis is None:
        a, axis = a.ravel(), 0
    if mode in ("clip", "wrap"):
        return np.take(a, idx, axis=axis, mode=mode)
    n = a.shape[axis]
    norm = np.where(idx < 0, idx + n, idx)
    ok = (norm >= 0) & (norm < n)
    out = np.take(a, np.where(ok, norm, 0), axis=axis)
    if fill_value is None:
        fill_value = np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    mask = ok.reshape((1,) * axis + ok.shape + (1,) * (a.ndim - axis - 1))
    return np.where(mask, out, np.asarray(fill_value).astype(a.dtype))


TAKES = [
    ((5,), [0, 7, -1, -9], None, None, None),
    ((3, 4), [[0, 11], [12, -13]], None, None, None),
    ((3, 4), [0, 3, -1, 4], 1, None, None),
    ((3, 4), [0, 3, -1, 4], 1, "fill", 0.5),
    ((3, 4), [[2], [-3]], 0, "clip", None),
    ((3, 4), [2, -3, 5], -1, "wrap", None),
    ((2, 3, 4), [1, 0, 1], 1, "clip", None),
    ((2, 3, 4), [[1, 0], [2, 2]], 2, None, None),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape, idx, axis, mode, fill", TAKES, ids=str)
def test_take_matches_reference(shape, idx, axis, mode, fill, dtype):
    a = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    idx = np.array(idx, np.int32)
    if fill is not None and dtype == np.int32:
        fill = 7
    want = _take_reference(a, idx, axis, mode, fill)

    def f(v, i):
        return jnp.take(v, i, axis=axis, mode=mode, fill_value=fill)

    out = check_traced_matches_eager(f, jnp.asarray(a), jnp.asarray(idx))
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(a, idx)), want)


TAKE_ALONG = [
    ((3, 4), [[0, 3, -1]], 1),
    ((3, 4), [[0], [1], [2]], -1),
    ((3, 4), [[2, 0, 1, -1]], 0),
    ((2, 3, 4), np.argsort(-np.arange(24).reshape(2, 3, 4) % 5, axis=1), 1),
    ((2, 3, 4), [[[1]], [[-2]]], 2),
    ((12,), [3, 0, -1], None),
    ((3, 4), [5, 0], None),
]


@pytest.mark.parametrize("shape, idx, axis", TAKE_ALONG, ids=str)
def test_take_along_axis_matches_numpy(shape, idx, axis):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    idx = np.array(idx, np.int32)
    want = np.take_along_axis(a, idx, axis=axis)
    out = check_traced_matches_eager(
        lambda v, i: jnp.take_along_axis(v, i, axis=axis), jnp.asarray(a), jnp.asarray(idx)
    )
    np.testing.assert_array_equal(np.asarray(out), want)
    got = jax.jit(lambda v, i: jnp.take_along_axis(v, i, axis=axis))(a, idx)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_take_along_axis_out_of_bounds():
    a = jnp.arange(12.0).reshape(3, 4)
    idx = jnp.array([[0, 5, -1]])
    np.testing.assert_array_equal(
        jnp.take_along_axis(a, idx, axis=1), [[0, np.nan, 3], [4, np.nan, 7], [8, np.nan, 11]]
    )
    # JAX 0.10.2 counts -1 from the end before clipping (recorded from JAX).
    np.testing.assert_array_equal(
        jnp.take_along_axis(a, idx, axis=1, mode="clip"), [[0, 3, 3], [4, 7, 7], [8, 11, 11]]
    )
    np.testing.assert_array_equal(
        jnp.take_along_axis(a, idx, axis=1, mode="clip", wrap_negative_indices=False),
        [[0, 3, 0], [4, 7, 4], [8, 11, 8]],
    )
    np.testing.assert_array_equal(
        jnp.take_along_axis(a, idx, axis=1, wrap_negative_indices=False)[0], [0, np.nan, np.nan]
    )
    np.testing.assert_array_equal(
        jnp.take_along_axis(a, idx, axis=1, fill_value=-1.0)[0], [0, -1, 3]
    )


# --- derivatives -----------------------------------------------------------------------------
def test_embedding_lookup_grads():
    table = np.random.default_rng(0).standard_normal((6, 3))
    ids_ = np.array([[0, 5, 5], [2, 0, -1]])
    check_grads(lambda t: t[ids_], (table,), order=2)
    check_grads(lambda t: jnp.take(t, ids_, axis=0), (table,), order=2)
    grad = jax.grad(lambda t: t[ids_].sum())(table)
    want = np.zeros((6, 3))
    np.add.at(want, ids_, 1.0)  # repeated rows accumulate
    np.testing.assert_array_equal(np.asarray(grad), want)


def test_cross_entropy_grads():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((4, 5))
    labels = np.array([1, 0, 4, 1])

    def loss(z):
        logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
        return -jnp.mean(logp[jnp.arange(4), labels])

    check_grads(loss, (logits,), order=2)
    grad = jax.grad(loss)(logits)
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    p[np.arange(4), labels] -= 1
    np.testing.assert_allclose(np.asarray(grad), p / 4, rtol=1e-5)


def test_update_grads():
    rng = np.random.default_rng(2)
    x, u = rng.standard_normal((4, 5)), rng.standard_normal((3, 5))
    idx = np.array([0, 3, 0])
    at = lambda x: jnp.asarray(x).at  # check_grads also calls with NumPy arrays
    check_grads(lambda x, u: at(x)[idx].add(u), (x, u), order=2)
    check_grads(lambda x, v: at(x)[:, idx].add(v), (x, rng.standard_normal((4, 3))), order=2)
    check_grads(lambda x, u: at(x)[idx[:2]].set(u[:2], unique_indices=True), (x, u), order=2)
    check_grads(lambda x, u: at(x)[idx[:2]].multiply(u[:2], unique_indices=True), (x, u), 2)
    check_grads(lambda x, i: jnp.take_along_axis(x, i, axis=1), (x, np.array([[1, 4]] * 4)), 2)


# --- vmap --------------------------------------------------------------------------------------


# (function, in_axes, shape of one member's indices); members of x have shape (4, 5)
VMAPS = [
    (lambda x, i: x[i], (0, None), (2,)),
    (lambda x, i: x[i], (None, 0), (2,)),
    (lambda x, i: x[i], (1, 0), (2,)),
    (lambda x, i: x[:, i, None], (0, 0), (2,)),
    (lambda x, i: x[i, 1:], (None, 1), (2,)),
    (lambda x, i: x[i, ::-2], (0, 0), (2, 2)),
    (lambda x, i: x.at[i].add(1.0), (0, 0), (2,)),
    (lambda x, i: x.at[i].add(1.0), (None, 0), (2,)),
    (lambda x, i: x.at[:, i].set(-1.0), (0, None), (2,)),
    (lambda x, i: jnp.take(x, i, axis=1), (0, 0), (2,)),
    (lambda x, i: jnp.take_along_axis(x, i, axis=0), (0, 0), (2, 5)),
]


@pytest.mark.parametrize("k", range(len(VMAPS)))
def test_vmap_matches_a_loop(k):
    f, in_axes, index_shape = VMAPS[k]
    rng = np.random.default_rng(k)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)  # batched: 3 members of (4, 5)
    if in_axes[0] is None:
        x = x[0]
    elif in_axes[0] == 1:
        x = np.moveaxis(x, 0, 1)
    i = rng.integers(-4, 4, (3, *index_shape))
    if in_axes[1] is None:
        i = i[0]
    elif in_axes[1] == 1:
        i = np.moveaxis(i, 0, 1)
    x, i = jnp.asarray(x), jnp.asarray(i)
    want = vmap_reference(lambda *a: f(*map(jnp.asarray, a)), (x, i), in_axes)
    np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes)(x, i)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f, in_axes))(x, i)), want, rtol=1e-6)


# --- golden jaxprs (JAX 0.10.2 prints the same) -------------------------------------------------
def test_golden_jaxprs():
    x, i = jnp.zeros((3, 4, 5)), jnp.array([0, 2])
    assert str(jax.make_jaxpr(lambda x, i: x[:, i])(x, i)) == (
        "{ lambda ; a:f32[3,4,5] b:i32[2]. let\n"
        "    c:bool[2] = lt b 0:i32[]\n"
        "    d:i32[2] = add b 4:i32[]\n"
        "    e:i32[2] = select_n c b d\n"
        "    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n"
        "    g:f32[3,2,5] = gather[\n"
        "      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, 2), "
        "collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), "
        "start_indices_batching_dims=())\n"
        "      fill_value=None\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n"
        "      slice_sizes=(3, 1, 5)\n"
        "      unique_indices=False\n"
        "    ] a f\n"
        "  in (g,) }"
    )
    jaxpr = str(jax.make_jaxpr(lambda x, i: x.at[i].get(mode="fill", fill_value=0))(x, i))
    assert "fill_value=0\n" in jaxpr and "mode=GatherScatterMode.FILL_OR_DROP" in jaxpr
    jaxpr = str(jax.make_jaxpr(lambda x, i: x.at[:, i].add(1.0))(x, i))
    assert (
        "    g:f32[3,2,5] = broadcast_in_dim 1.0:f32[]\n"
        "    h:f32[3,4,5] = scatter-add[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, 2), "
        "inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,), "
        "operand_batching_dims=(), scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      unique_indices=False\n"
    ) in jaxpr


# --- errors ------------------------------------------------------------------------------------
def test_errors():
    x = jnp.zeros((3, 4))
    with pytest.raises(
        NonConcreteBooleanIndexError, match="Array boolean indices must be concrete; got bool"
    ):
        jax.jit(lambda v, m: v[m])(x, np.ones(3, bool))
    with pytest.raises(NonConcreteBooleanIndexError):
        jax.make_jaxpr(lambda v: v.at[v > 0].set(1.0))(x)
    with pytest.raises(
        IndexError,
        match=r"boolean index did not match shape of indexed array in index 0: got \(2,\), "
        r"expected \[3\]",
    ):
        x[np.array([True, False])]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        x[np.array([0, 1]), np.array([0, 1, 2])]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer "
                       "with type float32"):  # fmt: skip
        x[jnp.array([0.5])]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]
    with pytest.raises(TypeError, match="non-tuple sequence"):  # with a mode too, as in JAX
        x.at[[0, 1]].get(mode="fill")
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x.at[[0, 1]].multiply(2.0, mode="drop")
    with pytest.raises(IndexError, match="Too many indices"):
        x[np.array([0]), 1, 2]
    with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
        x.at[np.array([0])].get(mode="foo")
    with pytest.raises(ValueError):
        x.at[np.array([0, 1])].set(jnp.ones(3))
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.take"):
        jnp.take(x, jnp.array([1]), mode="raise")
    with pytest.raises(ValueError, match="Invalid mode 'foo' for np.take"):
        jnp.take(x, jnp.array([1]), mode="foo")
    with pytest.raises(ValueError, match="indices must have an integer type"):
        jnp.take(x, jnp.array([1.0]))
    with pytest.raises(IndexError, match="Cannot do a non-empty jnp.take"):
        jnp.take(jnp.zeros((0,)), jnp.array([0]))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jnp.take(x, jnp.array([0]), axis=2)
    with pytest.raises(ValueError, match="must be 1D if axis=None, got shape"):
        jnp.take_along_axis(x, jnp.array([[0]]), axis=None)
    with pytest.raises(ValueError, match="same number of dimensions; 1 vs. 2"):
        jnp.take_along_axis(x, jnp.array([0]), axis=1)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.take_along_axis(x, jnp.array([[0, 1]]), axis=0)


@pytest.mark.parametrize("mode", [None, "clip", "wrap", "fill", "promise_in_bounds"])
def test_a_scalar_index_array_takes_a_scalar(mode):
    x = jnp.arange(5.0)
    got = jnp.take(x, jnp.array(2), mode=mode)
    assert got.shape == () and float(got) == 2.0
    assert jax.jit(lambda i: jnp.take(x, i, mode=mode))(jnp.array(3)).shape == ()


def test_take_of_no_indices_from_an_empty_axis_is_empty():
    # Found by tests/fuzz: the gather's slice size 1 exceeded the empty axis (a TypeError);
    # JAX gives the empty result, as for x[[]].
    x = np.zeros((0, 2), np.float32)
    none = np.zeros((0,), np.int32)
    for jit in (lambda f: f, jax.jit):
        assert jit(jnp.take)(x, none).shape == (0,)
        assert jit(lambda a, i: jnp.take(a, i, axis=0))(x, none).shape == (0, 2)
    got = jnp.take_along_axis(x, np.zeros((0, 2), np.int32), axis=0)
    assert got.shape == (0, 2) and got.dtype == np.float32
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(x, np.array([0], np.int32), axis=0)
