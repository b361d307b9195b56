"""example_libraries.optimizers beyond the recorded trajectories: the state is a pytree that
jit and scan carry, packs and unpacks, and mismatched inputs are errors naming the optimizer."""

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.example_libraries import optimizers

PARAMS = {"w": jnp.ones((2, 3)), "b": [jnp.zeros(3), jnp.float32(1.0)]}


def test_state_is_a_pytree_of_every_parameters_state():
    state = optimizers.adam(0.1)[0](PARAMS)
    leaves = tracejit.tree_util.tree_leaves(state)
    assert len(leaves) == 3 * 3  # (x, m, v) for each of three parameters
    rebuilt = tracejit.tree_util.tree_map(lambda x: x + 0, state)
    assert isinstance(rebuilt, optimizers.OptimizerState)


def test_scan_carries_the_state():
    init, update, get_params = optimizers.momentum(0.1, 0.9)

    def body(state, i):
        grads = tracejit.tree_util.tree_map(jnp.ones_like, get_params(state))
        return update(i, grads, state), None

    state, _ = lax.scan(body, init(PARAMS), jnp.arange(5))
    looped = init(PARAMS)
    for i in range(5):
        looped = update(i, tracejit.tree_util.tree_map(jnp.ones_like, PARAMS), looped)
    for a, b in zip(
        tracejit.tree_util.tree_leaves(get_params(state)),
        tracejit.tree_util.tree_leaves(get_params(looped)),
        strict=True,
    ):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_unpack_and_pack_round_trip():
    init, update, _ = optimizers.adagrad(0.1)
    state = update(0, PARAMS, init(PARAMS))
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    packed = optimizers.pack_optimizer_state(unpacked)
    assert tracejit.tree_util.tree_structure(packed) == tracejit.tree_util.tree_structure(state)
    for a, b in zip(
        tracejit.tree_util.tree_leaves(packed), tracejit.tree_util.tree_leaves(state), strict=True
    ):
        np.testing.assert_array_equal(a, b)


def test_gradients_of_another_structure_are_an_error_naming_the_optimizer():
    init, update, _ = optimizers.adam(0.1)
    with pytest.raises(TypeError, match="adam.*structure"):
        update(0, {"w": jnp.ones((2, 3))}, init(PARAMS))


def test_step_sizes_must_be_scalars_or_schedules():
    with pytest.raises(TypeError, match="schedule"):
        optimizers.sgd(np.ones(3))
    with pytest.raises(ValueError, match="one element more"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])


def test_clip_grads_scales_the_whole_tree_to_max_norm():
    grads = {"a": jnp.full((4,), 3.0), "b": jnp.full((2,), 4.0)}
    norm = np.sqrt(4 * 9 + 2 * 16)
    np.testing.assert_allclose(optimizers.l2_norm(grads), norm, rtol=1e-6)
    clipped = optimizers.clip_grads(grads, 2.0)
    np.testing.assert_allclose(optimizers.l2_norm(clipped), 2.0, rtol=1e-6)
    unclipped = optimizers.clip_grads(grads, 100.0)
    np.testing.assert_array_equal(unclipped["a"], grads["a"])
