"""`jax_debug_nans` / `jax_debug_infs`: the operation that makes a NaN (an inf) raises
FloatingPointError naming it and the user's line, eagerly and, by rerunning op by op, under
jit; off, nothing is checked."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp


@pytest.fixture
def debug_nans():
    with jax.debug_nans(True):
        yield


@pytest.mark.usefixtures("debug_nans")
@pytest.mark.parametrize(
    ("fun", "operation"),
    [
        (lambda: jnp.log(-1.0), "log"),
        (lambda: jnp.sin(jnp.array([1.0, np.inf])), "sin"),
        (lambda: jnp.nan + jnp.ones(2), "add"),
        (lambda: jax.jit(lambda x: jnp.log(x) + 1.0)(-1.0), "log"),
        (lambda: jax.jit(lambda x: jnp.sqrt(x) * 2.0)(jnp.array([-1.0, 1.0])), "sqrt"),
        (lambda: jax.grad(lambda x: jnp.log(x))(-1.0), "log"),
    ],
)
def test_the_operation_that_makes_a_nan_raises(fun, operation):
    with pytest.raises(
        FloatingPointError,
        match=rf"invalid value \(nan\) encountered in {operation} \(at .*test_debug_nans.py",
    ):
        fun()


@pytest.mark.usefixtures("debug_nans")
def test_valid_values_pass_and_compiled_calls_stay_fast():
    f = jax.jit(lambda x: jnp.log(x) + 1.0)
    assert f(1.0) == 1.0 and f(1.0) == 1.0  # the second call takes the compiled fast path
    assert jax.grad(jnp.sqrt)(4.0) == 0.25
    assert jnp.isnan(jnp.float32(np.nan))  # a NaN given, not made, passes through isnan


def test_infs_are_checked_only_when_asked():
    assert jnp.log(0.0) == -np.inf
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in log"):
            jnp.log(0.0)
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            jax.jit(lambda x: 1.0 / x)(jnp.zeros(2))
    assert np.isnan(jnp.log(-1.0))


def test_the_environment_variable_turns_it_on():
    code = (
        "import tracejit.numpy as jnp\n"
        "try:\n    jnp.log(-1.0)\nexcept FloatingPointError:\n    print('raised')"
    )
    env = dict(os.environ, JAX_DEBUG_NANS="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "raised", out.stderr
