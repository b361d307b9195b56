"""tracejit.ops segment reductions against NumPy's unbuffered `ufunc.at` (out-of-range ids
dropped, negative ones too, as JAX drops them), with JAX's identities for empty segments,
dtypes, `mode="clip"`, `bucket_size`, jit with a static `num_segments`, vmap against a loop and
derivatives; the JAX values quoted were checked against JAX 0.10.2."""

import numpy as np
import pytest
from helpers import assert_close, check_vmap

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import ops
from tracejit.errors import ConcretizationTypeError
from tracejit.test_util import check_grads

DATA = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
IDS = np.array([0, 3, 0, 1, 5, -1, 3], np.int32)  # 5 and -1 are out of range for 4 segments

REDUCERS = {
    "segment_sum": (np.add, 0.0),
    "segment_prod": (np.multiply, 1.0),
    "segment_max": (np.maximum, -np.inf),
    "segment_min": (np.minimum, np.inf),
}


def reference(name, data, ids, num_segments):
    ufunc, identity = REDUCERS[name]
    out = np.full((num_segments, *data.shape[1:]), identity, np.float64)
    keep = (ids >= 0) & (ids < num_segments)
    ufunc.at(out, ids[keep], data[keep].astype(np.float64))
    return out


@pytest.mark.parametrize("name", REDUCERS)
def test_values_with_empty_segments_and_dropped_ids(name):
    out = getattr(ops, name)(DATA, IDS, 4)
    assert out.dtype == np.float32 and out.shape == (4, 3)
    assert_close(out, reference(name, DATA, IDS, 4), 1e-6)
    jitted = jax.jit(getattr(ops, name), static_argnums=2)(DATA, IDS, 4)
    assert_close(jitted, reference(name, DATA, IDS, 4), 1e-6)


def test_num_segments_defaults_to_the_largest_id_plus_one():
    out = ops.segment_sum(jnp.arange(5), jnp.array([0, 0, 1, 1, 2]))
    np.testing.assert_array_equal(out, [1, 5, 4])  # JAX's docstring example
    assert out.dtype == np.int32
    with pytest.raises(ConcretizationTypeError, match=r"segment_sum\(\) `num_segments` argument"):
        jax.jit(ops.segment_sum)(jnp.arange(5), jnp.array([0, 0, 1, 1, 2]))
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_sum(DATA, IDS, -1)


def test_identities_and_dtypes_as_in_jax():
    ints = ops.segment_min(jnp.arange(5), jnp.array([0, 0, 2, 2, 2]), 4)
    np.testing.assert_array_equal(ints, [0, np.iinfo(np.int32).max, 2, np.iinfo(np.int32).max])
    assert ops.segment_sum(DATA.astype(np.int8), IDS, 3).dtype == np.int8
    bools = ops.segment_max(jnp.array([True, False, True]), jnp.array([0, 1, 1]), 3)
    np.testing.assert_array_equal(bools, [True, True, False])


def test_clip_mode_clamps_ids_into_range():
    data = jnp.arange(10.0).reshape(5, 2)
    out = ops.segment_sum(data, jnp.array([0, 0, 1, 5, -1]), 3, mode="clip")
    np.testing.assert_array_equal(out, [[10.0, 13.0], [4.0, 5.0], [6.0, 7.0]])  # JAX's values


def test_buckets_reduce_separately_then_together():
    out = ops.segment_sum(DATA, IDS, 4, bucket_size=2)
    assert_close(out, reference("segment_sum", DATA, IDS, 4), 1e-6)
    out = ops.segment_max(DATA, IDS, 4, bucket_size=3)
    assert_close(out, reference("segment_max", DATA, IDS, 4), 0)


def test_vmap_matches_a_loop():
    batch = np.stack([DATA, -DATA, 2 * DATA])
    for reduce in (ops.segment_sum, ops.segment_prod, ops.segment_max, ops.segment_min):
        check_vmap(lambda d, i, f=reduce: f(d, i, 4), (batch, IDS), (0, None))
    ids = np.stack([IDS, IDS[::-1], np.zeros_like(IDS)])
    check_vmap(lambda d, i: ops.segment_sum(d, i, 4), (batch, ids), (0, 0), jit=True)


def test_derivatives():
    check_grads(lambda d: ops.segment_sum(d, IDS, 4), (DATA,), order=2)
    grad = jax.grad(lambda d: ops.segment_max(d, jnp.array([0, 0, 1, 5, -1]), 3).sum())
    np.testing.assert_array_equal(  # JAX's: the maximum of each segment receives the cotangent
        grad(jnp.arange(10.0).reshape(5, 2)), [[0, 0], [1, 1], [1, 1], [0, 0], [0, 0]]
    )


def test_out_sharding_waits_for_shardings():
    with pytest.raises(NotImplementedError, match="out_sharding"):
        ops.segment_sum(DATA, IDS, 4, out_sharding="x")
