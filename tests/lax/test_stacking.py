"""split, stack, unstack and tile (`lax/stacking.py`): their jaxprs (one equation each, as in
JAX 0.10.2), transposes pairing up (split/concatenate, stack/unstack), weak types, axes other
than the first under jit and vmap, and JAX's errors. Values, vmap and derivatives on every
dtype come from their rows in tests/op_specs/structural.py."""

import numpy as np
import pytest
from helpers import assert_tree_equal, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
from tracejit import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_each_is_one_equation():
    assert jaxpr_text(lambda x: lax.split(x, (1, 2), axis=1), X) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2,1] c:f32[2,2] = split[axis=1 sizes=(1, 2)] a\n"
        "  in (b, c) }"
    )
    assert jaxpr_text(lambda x: lax.stack([x, x]), X) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2,2,3] = stack[axis=0] a a in (b,) }"
    )
    assert jaxpr_text(lax.unstack, X) == (
        "{ lambda ; a:f32[2,3]. let b:f32[3] c:f32[3] = unstack[axis=0] a in (b, c) }"
    )
    assert jaxpr_text(lambda x: lax.tile(x, (2, 1)), X) == (
        "{ lambda ; a:f32[2,3]. let b:f32[4,3] = tile[reps=(2, 1)] a in (b,) }"
    )


def test_transposes_pair_up():
    grad_split = tracejit.make_jaxpr(tracejit.grad(lambda x: lax.split(x, (1, 2), 1)[1].sum()))
    assert "concatenate[dimension=1]" in str(grad_split(X))
    grad_stack = tracejit.make_jaxpr(tracejit.grad(lambda x: lax.stack([x, 2 * x]).sum()))
    assert "unstack[axis=0]" in str(grad_stack(X))
    grad_unstack = tracejit.make_jaxpr(tracejit.grad(lambda x: lax.unstack(x)[0].sum()))
    assert "stack[axis=0]" in str(grad_unstack(X))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_negative_and_other_axes(axis):
    check_eager_jit_numpy(
        lambda x: lax.unstack(x, axis), [X], tuple(np.moveaxis(X, axis, 0)), replay=False
    )
    check_eager_jit_numpy(
        lambda x: lax.stack([x, -x], axis), [X], np.stack([X, -X], axis), replay=False
    )
    size = X.shape[axis]
    check_eager_jit_numpy(
        lambda x: lax.split(x, (1, size - 1), axis), [X], tuple(np.split(X, [1], axis))
    )


def test_vmap_at_each_position():
    batch = np.arange(27.0, dtype=np.float32).reshape(3, 3, 3)
    for in_axis in (0, 1, 2):
        check_vmap(lambda x: lax.split(x, (1, 2), axis=0), [batch], [in_axis])
        check_vmap(lambda x: lax.unstack(x, axis=1), [batch], [in_axis])
        check_vmap(lambda x: lax.tile(x, (2, 1)), [batch], [in_axis])
    check_vmap(lambda x, y: lax.stack([x, y], axis=1), [batch, batch[0]], [2, None])


def test_weak_types_follow_the_operands():
    assert lax.stack([1.0, 2.0]).weak_type
    assert not lax.stack([1.0, np.float32(2.0)]).weak_type
    assert all(piece.weak_type for piece in lax.split(lax.full((3,), 1.0), (1, 2)))
    assert lax.tile(1.0, ()).weak_type


def test_empty_pieces():
    assert lax.unstack(np.ones((0, 3))) == ()
    assert_tree_equal(
        tracejit.grad(lambda x: lax.split(x, (0, 3))[1].sum())(np.ones(3, np.float32)),
        np.ones(3, np.float32),
        0,
    )
    assert lax.tile(np.ones((0, 2)), (3, 0)).shape == (0, 0)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: lax.split(X, (1, 1), axis=1), ValueError, "Sum of sizes 2 must be equal"),
        (lambda: lax.split(X, (4, -1), axis=1), ValueError, "must be nonnegative"),
        (lambda: lax.split(X, (1, 1), axis=2), ValueError, "out of bounds"),
        (lambda: lax.stack([X, X[0]]), ValueError, "different numbers of dimensions"),
        (lambda: lax.stack([X, X[:1]]), ValueError, "must have the same shape"),
        (lambda: lax.stack([X, X.astype(np.int32)]), TypeError, "same dtypes"),
        (lambda: lax.stack([X, X], axis=3), ValueError, "out of bounds"),
        (lambda: lax.unstack(X, axis=3), ValueError, "out of bounds"),
        (lambda: lax.tile(X, (2,)), TypeError, "reps length must be equal to the ndim"),
    ],
)
def test_bad_input_raises_jax_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
