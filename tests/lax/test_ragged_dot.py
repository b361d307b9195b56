"""ragged_dot and ragged_dot_general (`lax/ragged_dot.py`) against a NumPy loop over the
groups: rows past the groups give zeros, infinities in one group do not reach another, the
derivatives are those of the dense products, vmap matches a loop."""

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap

from tracejit import lax
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
LHS = RNG.normal(size=(6, 3)).astype(np.float32)
RHS = RNG.normal(size=(3, 3, 4)).astype(np.float32)
CONTRACTION = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())


def ragged_rows_reference(lhs, rhs, sizes):
    out, start = np.zeros((lhs.shape[0], rhs.shape[2]), np.float32), 0
    for group, size in enumerate(sizes):
        stop = min(start + size, lhs.shape[0])
        out[start:stop] = lhs[start:stop] @ rhs[group]
        start = stop
    return out


@pytest.mark.parametrize("sizes", [[2, 1, 3], [0, 6, 0], [1, 1, 1], [4, 4, 4]])
def test_ragged_dot_matches_a_loop_over_groups(sizes):
    sizes = np.array(sizes, np.int32)
    want = ragged_rows_reference(LHS, RHS, sizes)
    check_eager_jit_numpy(lambda l, r, g: lax.ragged_dot(l, r, g), [LHS, RHS, sizes], want, 1e-5)


def test_infinities_stay_in_their_group():
    lhs, rhs = LHS.copy(), RHS.copy()
    lhs[0, 0] = np.inf
    rhs[2, 0, 0] = np.nan
    out = np.asarray(lax.ragged_dot(lhs, rhs, np.array([1, 4, 1], np.int32)))
    assert np.isfinite(out[1:5]).all()
    assert np.isinf(out[0]).any() and np.isnan(out[5, 0])


def test_ragged_contraction_gives_one_product_per_group():
    rhs = RNG.normal(size=(3, 4)).astype(np.float32)
    sizes = np.array([1, 2], np.int32)
    want = np.stack([LHS[:, :1] @ rhs[:1], LHS[:, 1:] @ rhs[1:]])
    fun = lambda l, r, g: lax.ragged_dot_general(l, r, g, CONTRACTION)
    check_eager_jit_numpy(fun, [LHS, rhs, sizes], want, 1e-5)


def test_derivatives_and_vmap():
    sizes = np.array([2, 1, 3], np.int32)
    check_grads(lambda l, r: lax.ragged_dot(l, r, sizes), [LHS.astype(float), RHS.astype(float)], 1)
    batch = np.stack([LHS, 2 * LHS])
    check_vmap(lambda l: lax.ragged_dot(l, RHS, sizes), [batch], [0], tol=1e-5)
    check_vmap(lambda l, g: lax.ragged_dot(l, RHS, g), [batch, np.stack([sizes, sizes[::-1]])],
               [0, 0], tol=1e-5)  # fmt: skip


def test_preferred_element_type_and_errors():
    bf16 = LHS.astype(lax.dtype(np.ones(1, "bfloat16")))
    out = lax.ragged_dot(bf16, RHS.astype(bf16.dtype), np.array([2, 2, 2], np.int32),
                         preferred_element_type=np.float32)  # fmt: skip
    assert out.dtype == np.float32
    assert_close(out, ragged_rows_reference(bf16.astype(np.float32), RHS.astype(bf16.dtype).astype(np.float32), [2, 2, 2]), 1e-5)  # fmt: skip
    with pytest.raises(TypeError, match="expected rhs group dimension size to be 2"):
        lax.ragged_dot(LHS, RHS, np.array([3, 3], np.int32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, np.array([2, 2, 2], np.int32), group_offset=np.array([1]))
