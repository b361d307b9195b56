"""Index tricks against NumPy: the grid and concatenation objects, index arrays, flat and
multi-dimensional indices; under jit, `vmap`, and the errors for traced values that would
decide a shape. (Dtypes, weak types and the other errors are checked against JAX in
`test_jax_reference_manipulation.py`.)"""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.errors import ConcretizationTypeError


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
        assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize(
    "index",
    [
        np.s_[0:3],
        np.s_[0:3, 0:2],
        np.s_[-1:2:0.5, 0:1:5j],
        np.s_[3:0:-1, 1:4:2, 0:2],
    ],
    ids=str,
)
def test_grids_against_numpy(index):
    _same(jnp.mgrid[index], np.mgrid[index])
    want = np.ogrid[index]
    _same(jnp.ogrid[index], list(want) if isinstance(index, tuple) else want)  # JAX: a list


@pytest.mark.parametrize(
    "key",
    [
        np.s_[-1:5:1, 0, 0, [1, 2, 3]],
        np.s_[-1:1:6j, 0],
        np.s_["0,2", [1, 2, 3], [4, 5, 6]],
        np.s_["0,2,0", [1, 2, 3], [4, 5, 6]],
    ],
    ids=str,
)
def test_r_against_numpy(key):
    """(The 'r' and 'c' directives make NumPy matrices: JAX's arrays are checked against JAX.)"""
    _same(jnp.r_[key], np.r_[key])


@pytest.mark.parametrize(
    "key",
    [
        np.s_[[1, 2], [3, 4]],
        np.s_[np.ones((2, 2)), np.zeros((2, 3))],
        np.s_["0,2,-1", [1, 2, 3], [4, 5, 6]],
    ],
    ids=str,
)
def test_c_against_numpy(key):
    _same(jnp.c_[key], np.c_[key])


def test_slice_objects_are_numpys():
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3]
    assert jnp.index_exp[1:2] == np.index_exp[1:2]


def test_grid_bounds_must_be_concrete():
    with pytest.raises(ConcretizationTypeError, match="slice stop"):
        tracejit.jit(lambda n: jnp.mgrid[0:n])(3)


def test_concatenation_of_traced_arrays():
    x = np.arange(3.0, dtype=np.float32)
    want = np.r_[x, 0, -1:2]
    check_eager_jit_numpy(lambda x: jnp.r_[x, 0, -1:2], (x,), want.astype(np.float32))


@pytest.mark.parametrize(
    ("n", "k", "m"), [(3, 0, None), (4, -1, 2), (2, 1, 5), (3, -5, 3), (3, 4, 3)]
)
def test_triangle_indices_against_numpy(n, k, m):
    _same(jnp.tril_indices(n, k, m), np.tril_indices(n, k, m))
    _same(jnp.triu_indices(n, k, m), np.triu_indices(n, k, m))
    a = np.ones((n, n if m is None else m))
    _same(jnp.tril_indices_from(a, k), np.tril_indices_from(a, k))
    _same(jnp.triu_indices_from(a, k), np.triu_indices_from(a, k))
    _same(tracejit.jit(lambda: jnp.triu_indices(n, k, m))(), np.triu_indices(n, k, m))


def test_index_arrays_against_numpy():
    _same(jnp.indices((2, 3, 1)), np.indices((2, 3, 1)))
    _same(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True))
    _same(jnp.ix_(np.array([1, 0]), np.array([2, 3, 4])), np.ix_([1, 0], [2, 3, 4]))
    _same(jnp.diag_indices(4, 3), np.diag_indices(4, 3))
    _same(jnp.diag_indices_from(np.ones((3, 3))), np.diag_indices_from(np.ones((3, 3))))
    _same(jnp.mask_indices(4, jnp.triu, 1), np.mask_indices(4, np.triu, 1))


def test_ix_indexes_an_open_mesh():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    rows, cols = np.array([3, 0]), np.array([1, 4, 2])
    check_eager_jit_numpy(
        lambda x: jnp.asarray(x)[jnp.ix_(rows, cols)], (x,), x[np.ix_(rows, cols)]
    )


SHAPE = (3, 4, 5)
FLAT = np.array([0, 7, 59, 33, 18], np.int32)


def test_unravel_and_ravel_against_numpy():
    coords32 = tuple(c.astype(np.int32) for c in np.unravel_index(FLAT, SHAPE))
    check_eager_jit_numpy(lambda i: jnp.unravel_index(i, SHAPE), (FLAT,), coords32)
    for order in ("C", "F"):
        want = np.ravel_multi_index(coords32, SHAPE, order=order).astype(np.int32)
        got = jnp.ravel_multi_index(coords32, SHAPE, order=order)
        np.testing.assert_array_equal(got, want)
        for mode in ("wrap", "clip"):
            check_eager_jit_numpy(
                lambda *c: jnp.ravel_multi_index(c, SHAPE, mode=mode, order=order),  # noqa: B023
                coords32,
                want,
            )


def test_unravel_index_clips_out_of_bounds():
    """Positions past the end give the last element, before the start the first (NumPy
    raises; JAX clips)."""
    got = jnp.unravel_index(np.array([60, -1, -60, -61]), SHAPE)
    want = np.unravel_index(np.array([59, 59, 0, 0]), SHAPE)
    _same(got, tuple(w.astype(np.int32) for w in want))


def test_ravel_multi_index_modes_out_of_bounds():
    coords = (np.array([3, -1]), np.array([4, 5]))
    np.testing.assert_array_equal(
        jnp.ravel_multi_index(coords, (3, 5), mode="wrap"),
        np.ravel_multi_index(coords, (3, 5), mode="wrap"),
    )
    np.testing.assert_array_equal(
        jnp.ravel_multi_index(coords, (3, 5), mode="clip"),
        np.ravel_multi_index(coords, (3, 5), mode="clip"),
    )


def test_ravel_multi_index_raise_needs_concrete_coordinates():
    with pytest.raises(ConcretizationTypeError, match="mode='wrap' or mode='clip'"):
        tracejit.jit(lambda i: jnp.ravel_multi_index((i,), (3,)))(np.array([1]))


def test_vmap_matches_loop():
    flat = FLAT.reshape(5, 1)
    check_vmap(lambda i: jnp.unravel_index(i, SHAPE), (flat,), (0,), jit=True)
    check_vmap(
        lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
        (np.array([[0, 5], [2, 1]]), np.array([1, 3])),
        (0, None),
    )
