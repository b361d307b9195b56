"""top_k and approx_max_k/approx_min_k (`lax/sort.py`): JAX's jaxprs, `k` and axis handling,
derivatives (the tangents of the chosen entries), vmap at any position and JAX's errors. Their
order on NaNs, signed zeros and ties is checked against recorded JAX values in
test_lax_extras_reference.py, their values on every dtype by tests/op_specs/reductions.py."""

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
from tracejit import lax

X = np.array([[3.0, 1.0, 3.0, 5.0], [0.0, -1.0, 2.0, 2.0]], np.float32)


def test_jaxprs_name_k_and_the_axis():
    assert jaxpr_text(lambda x: lax.top_k(x, 1, axis=0), X) == (
        "{ lambda ; a:f32[2,4]. let\n    b:f32[1,4] c:i32[1,4] = top_k[axis=0 k=1] a\n  in (b, c) }"
    )
    text = jaxpr_text(lambda x: lax.approx_max_k(x, 2), X)
    assert "approx_top_k[" in text and "is_max_k=True" in text and "recall_target=0.95" in text


def test_top_k_along_any_axis_with_ties_in_index_order():
    values, indices = lax.top_k(X, 2)
    np.testing.assert_array_equal(values, [[5, 3], [2, 2]])
    np.testing.assert_array_equal(indices, [[3, 0], [2, 3]])
    check_eager_jit_numpy(
        lambda x: lax.top_k(x, 1, axis=-2), [X], (X[:1], np.zeros((1, 4), np.int32))
    )
    assert lax.top_k(X, 0)[0].shape == (2, 0)


def test_top_k_derivative_is_the_tangent_of_each_chosen_entry():
    grad = tracejit.grad(lambda x: (lax.top_k(x, 2)[0] ** 2).sum())(X)
    assert_close(grad, [[6, 0, 0, 10], [0, 0, 4, 4]])
    grad = tracejit.grad(lambda x: lax.approx_min_k(x, 1, reduction_dimension=0)[0].sum())(X)
    assert_close(grad, [[0, 0, 0, 0], [1, 1, 1, 1]])


def test_vmap_at_each_position():
    batch = np.random.default_rng(0).permutation(24).reshape(2, 3, 4).astype(np.float32)
    for in_axis in (0, 1, 2):
        check_vmap(lambda x: lax.top_k(x, 2, axis=0), [batch], [in_axis])
        check_vmap(lambda x: lax.approx_max_k(x, 2, reduction_dimension=0), [batch], [in_axis])


def test_approx_results_without_aggregation_are_the_whole_sorted_dimension():
    values, indices = lax.approx_min_k(X, 2, aggregate_to_topk=False)
    np.testing.assert_array_equal(values, np.sort(X, axis=1))
    np.testing.assert_array_equal(indices, np.argsort(X, axis=1, kind="stable"))
    with pytest.raises(NotImplementedError, match="aggregate_to_topk=False"):
        lax.approx_max_k(np.ones((2, 200), np.float32), 2, aggregate_to_topk=False)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: lax.top_k(X, 5), ValueError, "no larger than size along axis"),
        (lambda: lax.top_k(X, -1), ValueError, "nonnegative"),
        (lambda: lax.top_k(X, 2.0), TypeError, "integer type"),
        (lambda: lax.top_k(X, 1, axis=2), ValueError, "out of bounds"),
        (lambda: lax.top_k(2.0, 1), ValueError, "out of bounds"),
        (lambda: lax.top_k(np.array([1 + 1j, 2]), 1), ValueError, "complex"),
        (lambda: lax.approx_max_k(X, 0), ValueError, "k must be positive"),
        (lambda: lax.approx_max_k(X, 5), ValueError, "k must be smaller"),
        (lambda: lax.approx_max_k(np.ones(()), 1), TypeError, ">= 1 dimension"),
        (lambda: lax.approx_max_k(np.ones(3, np.int32), 1), ValueError, "floating type"),
    ],
)
def test_bad_input_raises_jax_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
