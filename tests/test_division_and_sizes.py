"""Programs XLA must never be handed as they are: integer division by a zero it can see, and
results whose size overflows int64. Each once killed the process (SIGFPE in XLA's constant
folder, an abort in its shape checks); now the first gives JAX's eager values under `jit` too
and the second a ValueError at trace time. The jit cases run in a subprocess, so a regression
is a failed test, not a dead test run."""

import json
import subprocess
import sys

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

# (expression, JAX 0.10.2's eager value): integer // and % by zero, lax.div by zero gives -1
# (all bits set), lax.rem gives the dividend, jnp.fmod gives 0.
DIVISIONS = {
    "jnp.array([1, 2]) // jnp.array([0, 1])": [-2, 2],
    "jnp.int32(1) // jnp.zeros(2, jnp.int32)": [-2, -2],
    "jnp.array([-3, 5]) % jnp.array([0, 0])": [0, 0],
    "lax.div(jnp.array([-3, 5, 7]), jnp.array([0, 0, 2]))": [-1, -1, 3],
    "lax.rem(jnp.array([-3, 5, 7]), jnp.array([0, 0, 2]))": [-3, 5, 1],
    "lax.div(jnp.array([3, 5], jnp.uint32), jnp.array([0, 2], jnp.uint32))": [2**32 - 1, 2],
    "lax.rem(jnp.array([3, 5], jnp.uint32), jnp.array([0, 2], jnp.uint32))": [3, 1],
    "jnp.fmod(jnp.array([-3, 5]), jnp.array([0, 2]))": [0, 1],
    "jnp.array([-128], jnp.int8) // jnp.array([-1], jnp.int8)": [-128],
}


@pytest.mark.parametrize("expression", DIVISIONS)
def test_integer_division_by_zero_eagerly(expression):
    np.testing.assert_array_equal(eval(expression), DIVISIONS[expression])


def test_integer_division_by_a_zero_xla_can_see_under_jit():
    code = (
        "import json, tracejit as jax, tracejit.numpy as jnp\n"
        "from tracejit import lax\n"
        f"expressions = {list(DIVISIONS)!r}\n"
        "print(json.dumps([jax.jit(eval('lambda: ' + e))().tolist() for e in expressions]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, f"the process died ({result.returncode}): {result.stderr}"
    assert json.loads(result.stdout) == list(DIVISIONS.values())


def test_integer_division_by_a_traced_zero_under_jit():
    np.testing.assert_array_equal(jax.jit(lax.div)(jnp.array([7, 7]), jnp.array([0, 2])), [-1, 3])
    np.testing.assert_array_equal(jax.jit(lax.rem)(jnp.array([7, 7]), jnp.array([0, 2])), [7, 1])


HUGE = {
    "jnp.zeros((1 << 31, 1 << 31))": r"broadcast_in_dim: a result of shape \(2147483648, 2147483648\)",
    "jnp.zeros((1 << 62, 4))": r"broadcast_in_dim: a result of shape \(4611686018427387904, 4\)",
    "jnp.eye(1 << 40)": r"iota: a result of shape \(1099511627776, 1099511627776\)",
}


@pytest.mark.parametrize("expression", HUGE)
@pytest.mark.parametrize("how", ["eager", "jit", "make_jaxpr"])
def test_a_result_whose_size_overflows_int64_raises_at_trace_time(expression, how):
    fun = eval("lambda: " + expression)
    wrapped = {"eager": fun, "jit": jax.jit(fun), "make_jaxpr": jax.make_jaxpr(fun)}[how]
    with pytest.raises(ValueError, match=HUGE[expression] + r".*more than an int64 can count"):
        wrapped()


def test_an_eager_result_larger_than_memory_raises_at_once_instead_of_hanging():
    # NumPy would make a 128 TiB lazy broadcast view, and jnp.sum of it spin for hours.
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"RESOURCE_EXHAUSTED: broadcast_in_dim"):
        jnp.zeros((1 << 45,))
    assert isinstance(jax.errors.JaxRuntimeError(), RuntimeError)


@pytest.fixture
def small_memory():
    previous = jax.config.read("tracejit_max_array_bytes")
    jax.config.update("tracejit_max_array_bytes", 1000)
    yield
    jax.config.update("tracejit_max_array_bytes", previous)


def test_the_eager_memory_limit_is_an_option(small_memory):
    assert jnp.ones(250).shape == (250,)  # 1000 bytes: allowed
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"shape \(251,\) .* needs 1004 bytes"):
        jnp.arange(251.0)
    # jit is not limited: XLA plans its own memory (this sum never materializes the zeros)
    assert int(jax.jit(lambda: jnp.sum(jnp.zeros((1 << 12,), jnp.int8)))()) == 0
