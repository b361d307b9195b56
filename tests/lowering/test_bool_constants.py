"""Boolean arrays closed over by a jitted function become `dense` constants of i1 elements,
which MLIR reads packed eight to a byte (the first element in the low bit)."""

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp


@pytest.mark.parametrize("shape", [(3,), (8,), (9,), (2, 60), (2, 4, 5, 6)])
def test_a_closed_over_boolean_mask_keeps_its_values_when_compiled(shape):
    mask = np.random.default_rng(0).random(shape) > 0.3
    x = np.arange(mask.size, dtype=np.float32).reshape(shape)
    out = tracejit.jit(lambda x: jnp.where(mask, x, -1.0))(x)
    np.testing.assert_array_equal(out, np.where(mask, x, -1.0))
