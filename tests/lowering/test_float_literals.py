"""Float constants whose shortest repr has no decimal point (1e-05, 1e+20) lower to literals
MLIR parses (it needs `1.0e-05`): a float64 comparison with 1e-5, as BFGS's gradient test
makes, once failed to compile."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exponent_only_literals(dtype, enable_x64):
    x = jnp.asarray(3.0, dtype)
    got = jax.jit(lambda x: (x < 1e-5, x * 1e20, x * 1e-30))(x)
    want = (False, 3e20, 3e-30)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=1e-6)
