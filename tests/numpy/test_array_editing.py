"""Array editing and rearranging (delete, insert, place, put, put_along_axis, choose, compress,
extract, append, block, resize, rot90, rollaxis, unstack, permute_dims, the splits, vander,
apply_along_axis, apply_over_axes, partition, argpartition, fromfunction) against NumPy,
eagerly, under jit and replayed; their derivatives, `vmap` against a loop, and the errors for
traced values that would decide a shape. (Dtypes, weak types and the other errors are
checked against JAX in `test_jax_reference_manipulation.py`.)"""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.errors import ConcretizationTypeError
from tracejit.test_util import check_grads

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4) * np.float32(0.5)
V = np.array([3.0, -1.0, 4.0, 1.5, -5.0, 9.0, 2.0], np.float32)
I = np.array([[0, 3], [1, 2]], np.int32)


def _put_np(a, ind, v, mode="raise"):
    out = a.copy()
    np.put(out, ind, v, mode=mode)
    return out


def _place_np(a, mask, vals):
    out = a.copy()
    np.place(out, mask, vals)
    return out


def _put_along_axis_np(a, ind, v, axis):
    out = a.copy()
    np.put_along_axis(out, ind, v, axis)
    return out


# (name, jnp function of the arrays, NumPy's result, arrays)
CASES = [
    ("delete int", lambda x: jnp.delete(x, 1, axis=1), np.delete(X, 1, axis=1), [X]),
    ("delete slice", lambda x: jnp.delete(x, slice(0, 3, 2)), np.delete(X, slice(0, 3, 2)), [X]),
    (
        "delete unique",
        lambda x, i: jnp.delete(x, i, axis=0, assume_unique_indices=True),
        np.delete(X, [0, 2], axis=0),
        [X, np.array([2, 0], np.int32)],
    ),
    ("insert", lambda x, v: jnp.insert(x, 2, v), np.insert(V, 2, 7.0), [V, np.float32(7)]),
    (
        "insert axis",
        lambda x, v: jnp.insert(x, np.array([0, 4, 1]), v, axis=1),
        np.insert(X, [0, 4, 1], np.arange(3.0), axis=1),
        [X, np.arange(3, dtype=np.float32)],
    ),
    (
        "place",
        lambda x, v: jnp.place(x, x > 2, v, inplace=False),
        _place_np(X, X > 2, [9.0, 8.0]),
        [X, np.array([9.0, 8.0], np.float32)],
    ),
    (
        "put",
        lambda x, i, v: jnp.put(x, i, v, inplace=False),
        _put_np(X, [0, 5, 11], [-1.0, -2.0, -3.0]),
        [X, np.array([0, 5, 11], np.int32), np.array([-1.0, -2.0, -3.0], np.float32)],
    ),
    (
        "put wrap",
        lambda x, i: jnp.put(x, i, 0.0, mode="wrap", inplace=False),
        _put_np(X, [13, -1], 0.0, mode="wrap"),
        [X, np.array([13, -1], np.int32)],
    ),
    (
        "put_along_axis",
        lambda x, i: jnp.put_along_axis(x, i, -7.0, 1, inplace=False),
        _put_along_axis_np(X, np.array([[0], [3], [1]]), -7.0, 1),
        [X, np.array([[0], [3], [1]], np.int32)],
    ),
    (
        "choose",
        lambda i, x: jnp.choose(i, [x[0, :2], x[1, :2], x[2, 2:], x[0, 2:]], mode="clip"),
        np.choose(I, [X[0, :2], X[1, :2], X[2, 2:], X[0, 2:]]),
        [I, X],
    ),
    (
        "compress size",
        lambda c, x: jnp.compress(c, x, axis=1, size=2, fill_value=0),
        np.compress([False, True, False, True], X, axis=1),
        [np.array([False, True, False, True]), X],
    ),
    (
        "extract size",
        lambda x: jnp.extract(x > 5, x, size=3),
        np.append(np.extract(X > 5, X), 0.0).astype(np.float32),
        [X],
    ),
    ("append", lambda x, y: jnp.append(x, y, axis=0), np.append(X, X[:1], axis=0), [X, X[:1]]),
    (
        "block",
        lambda x: jnp.block([[x, x[:, :1]], [x[:1], x[:1, :1]]]),
        np.block([[X, X[:, :1]], [X[:1], X[:1, :1]]]),
        [X],
    ),
    ("resize", lambda x: jnp.resize(x, (5, 3)), np.resize(X, (5, 3)), [X]),
    ("rot90", lambda x: jnp.rot90(x, 3), np.rot90(X, 3), [X]),
    ("rollaxis", lambda x: jnp.rollaxis(x[None], 2, 1), np.rollaxis(X[None], 2, 1), [X]),
    ("unstack", lambda x: jnp.unstack(x, axis=1), tuple(np.moveaxis(X, 1, 0)), [X]),
    ("permute_dims", lambda x: jnp.permute_dims(x, (1, 0)), X.T, [X]),
    ("hsplit", lambda x: jnp.hsplit(x, [1, 3]), np.hsplit(X, [1, 3]), [X]),
    ("vsplit", lambda x: jnp.vsplit(x, 3), np.vsplit(X, 3), [X]),
    ("dsplit", lambda x: jnp.dsplit(x[None], 2), np.dsplit(X[None], 2), [X]),
    ("vander", lambda v: jnp.vander(v, 4), np.vander(V, 4).astype(np.float32), [V]),
    (
        "apply_along_axis",
        lambda x: jnp.apply_along_axis(lambda r: r[::2] * r.sum(), 1, x),
        np.apply_along_axis(lambda r: r[::2] * r.sum(), 1, X),
        [X],
    ),
    (
        "apply_over_axes",
        lambda x: jnp.apply_over_axes(jnp.mean, x[None], (0, 2)),
        np.apply_over_axes(np.mean, X[None], (0, 2)),
        [X],
    ),
    ("partition", lambda v: jnp.partition(v, 3)[3], np.partition(V, 3)[3], [V]),
    (
        "fromfunction",
        lambda x: jnp.fromfunction(lambda i, j: x[0] * i - j, (3, 4)),
        np.fromfunction(lambda i, j: X[0][:, None, None] * i - j, (3, 4))
        .transpose(1, 2, 0)
        .astype(np.float32),
        [X],
    ),
]


@pytest.mark.parametrize(("name", "fun", "want", "arrays"), CASES, ids=[c[0] for c in CASES])
def test_against_numpy(name, fun, want, arrays):
    if isinstance(want, list):
        want = [np.asarray(w) for w in want]
    check_eager_jit_numpy(fun, arrays, want, tol=1e-6)


@pytest.mark.parametrize("kth", [0, 2, 6, -3])
def test_partition_orders_around_kth(kth):
    """The k-th element is in its sorted place, smaller ones before, larger after (the
    smaller ascending); argpartition's positions pick the same first `kth + 1` values, then
    the others' positions in increasing order, as JAX's `top_k` gives them."""
    for values in (V, np.array([5, 1, 1, 4, 1, 0, 4], np.int32)):
        got = np.asarray(tracejit.jit(lambda v: jnp.partition(v, kth))(values))
        positions = np.asarray(tracejit.jit(lambda v: jnp.argpartition(v, kth))(values))
        want = np.sort(values)
        assert got[kth] == want[kth]
        assert (got[:kth] <= got[kth]).all() and (got[kth:] >= got[kth]).all()
        k = kth % len(values)
        np.testing.assert_array_equal(got[: k + 1], want[: k + 1])
        np.testing.assert_array_equal(values[positions[: k + 1]], want[: k + 1])
        assert list(positions[k + 1 :]) == sorted(set(range(len(values))) - set(positions[: k + 1]))


@pytest.mark.parametrize(
    ("name", "fun", "args"),
    [
        ("insert", lambda x, v: jnp.insert(x, np.array([1, 1, 3]), v), (V, V[:3])),
        ("delete", lambda x: jnp.delete(x, 2), (V,)),
        ("place", lambda x, v: jnp.place(x, V > 2, v, inplace=False), (V, V[:2])),
        ("put", lambda x, v: jnp.put(x, np.array([0, 3]), v, inplace=False), (V, V[:2])),
        (
            "put_along_axis",
            lambda x, v: jnp.put_along_axis(x, np.array([[1], [0], [2]]), v, 1, inplace=False),
            (X, X[:, :1]),
        ),
        (
            "choose",
            lambda a, b: jnp.choose(I, [a, b, a * b, a - b], mode="wrap"),
            (X[:2, :2], X[1:, 2:]),
        ),
        (
            "compress",
            lambda x: jnp.compress(np.array([True, False, True]), x, axis=0, size=3),
            (X,),
        ),
        ("resize", lambda x: jnp.resize(x, (2, 5)), (V,)),
        ("rot90", lambda x: jnp.rot90(x, 1, (1, 0)), (X,)),
        ("vander", lambda v: jnp.vander(v, 3, increasing=True), (V,)),
        ("apply_along_axis", lambda x: jnp.apply_along_axis(jnp.cumsum, 0, x), (X,)),
        ("partition", lambda v: jnp.partition(v, 2), (V,)),
        ("block", lambda x, y: jnp.block([[x, y]]), (X, X[:, :2])),
    ],
    ids=lambda c: c if isinstance(c, str) else "",
)
def test_grads(name, fun, args):
    check_grads(fun, args, order=2, rtol=1e-4, atol=1e-4)


def test_vmap_matches_loop():
    check_vmap(lambda x: jnp.insert(x, 1, x[0]), (X,), (0,), jit=True)
    check_vmap(lambda x: jnp.delete(x, np.array([0, 2]), assume_unique_indices=True), (X,), (1,))
    positions = np.array([[0, 3], [1, 2], [5, -1]], np.int32)
    check_vmap(lambda x, i: jnp.put(x, i, -1.0, mode="clip", inplace=False), (X, positions), (0, 0))
    check_vmap(lambda x: jnp.rot90(x), (X[None].repeat(2, 0),), (0,))
    check_vmap(lambda x: jnp.partition(x, 1), (X,), (0,))
    check_vmap(lambda x: jnp.argpartition(x, 2), (X,), (1,))
    check_vmap(lambda x: jnp.compress(x > 3, x, size=2, fill_value=-1), (X,), (0,))
    check_vmap(lambda i, x: jnp.choose(i, [x, -x], mode="wrap"), (I, X[:2, :2]), (0, None))


@pytest.mark.parametrize(
    ("fun", "argname"),
    [
        (lambda c: jnp.compress(c, jnp.arange(3.0)), "condition"),
        (lambda c: jnp.extract(c, jnp.arange(3.0)), "condition"),
        (lambda i: jnp.delete(jnp.arange(3.0), i.astype(int)), "obj"),
        (lambda i: jnp.choose(i.astype(int), [1.0, 2.0]), "a"),
    ],
)
def test_traced_values_deciding_a_shape_raise(fun, argname):
    with pytest.raises(ConcretizationTypeError, match=argname):
        tracejit.jit(fun)(np.array([True, False, True]))


@pytest.mark.parametrize(
    "fun",
    [
        lambda c, s: jnp.nonzero(c, size=s),
        lambda c, s: jnp.where(c, size=s),
        lambda c, s: jnp.argwhere(c, size=s),
        lambda c, s: jnp.flatnonzero(c, size=s),
        lambda c, s: jnp.compress(c, jnp.arange(2.0), size=s),
        lambda c, s: jnp.extract(c, jnp.arange(2.0), size=s),
    ],
)
def test_traced_size_raises(fun):
    with pytest.raises(ConcretizationTypeError, match="size"):
        tracejit.jit(fun)(np.array([True, False]), 1)
