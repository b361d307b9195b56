"""`jit(compiler_options=)` and `Lowered.compile(compiler_options=)`: XLA's debug options by
name, applied to that program only (the compile caches keep programs apart by them), with
XLA's errors for unknown names and ill-typed values, as JAX."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime

pytestmark = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)

NAN_SECOND = (jnp.array([1.0, 2.0], jnp.float32), jnp.array([np.nan, 0.0], jnp.float32))
FAST_MIN_MAX = {"xla_cpu_enable_fast_min_max": True}


def test_programs_propagate_nans_through_maximum_by_default():
    out = jax.jit(jnp.maximum)(*NAN_SECOND)
    np.testing.assert_array_equal(out, [np.nan, 2.0])


def test_an_option_changes_only_its_own_program():
    """XLA's fast min/max drops a NaN second operand: the option reached the compiler, and
    the same StableHLO compiled without it is another program."""
    fast = jax.jit(jnp.maximum, compiler_options=FAST_MIN_MAX)
    np.testing.assert_array_equal(fast(*NAN_SECOND), [1.0, 2.0])
    np.testing.assert_array_equal(jax.jit(jnp.maximum)(*NAN_SECOND), [np.nan, 2.0])
    lowered = jax.jit(jnp.maximum).lower(*NAN_SECOND)
    np.testing.assert_array_equal(lowered.compile()(*NAN_SECOND), [np.nan, 2.0])
    compiled = lowered.compile(compiler_options=FAST_MIN_MAX)
    np.testing.assert_array_equal(compiled(*NAN_SECOND), [1.0, 2.0])


def test_unknown_options_and_bad_values_raise_xlas_errors():
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'no_such'"):
        jax.jit(lambda x: x + 1, compiler_options={"no_such": True})(1.0)
    with pytest.raises(jax.errors.JaxRuntimeError, match="'maybe' is not a valid bool value"):
        jax.jit(lambda x: x + 1, compiler_options={"xla_cpu_enable_fast_math": "maybe"})(1.0)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        jax.jit(lambda x: x, compiler_options=[("xla_cpu_enable_fast_math", True)])
