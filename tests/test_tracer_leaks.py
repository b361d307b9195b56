"""`jax_check_tracer_leaks` (`tracejit.check_tracer_leaks`, `tracejit.checking_leaks`): a
tracer of a jit or vmap trace that a global still holds when the trace ends raises JAX's
`Exception("Leaked trace ...")`, naming the tracer and what holds it; grad's tracers are not
checked, as in JAX; with the option off, nothing is checked."""

import re

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp

leaked = []


class Holder:
    pass


holder = Holder()


def leaking(x):
    leaked.append(x)
    return x * 2


@pytest.fixture(autouse=True)
def forget_leaks():
    yield
    leaked.clear()
    vars(holder).clear()


@pytest.mark.parametrize(
    ("transform", "trace"),
    [
        (lambda: jax.jit(leaking)(np.float32(1.0)), "StagingTrace"),
        (lambda: jax.make_jaxpr(leaking)(np.float32(1.0)), "StagingTrace"),
        (lambda: jax.vmap(leaking)(jnp.ones(2)), "BatchTrace"),
    ],
)
def test_a_tracer_held_by_a_global_raises_when_its_trace_ends(transform, trace):
    with jax.checking_leaks(), pytest.raises(Exception, match=f"^Leaked trace {trace}") as info:
        transform()
    assert re.search(r"is referred to by (tests\.)?test_tracer_leaks\.leaked$", str(info.value))


def test_a_tracer_held_through_an_object_attribute():
    def f(x):
        holder.kept = [x]
        return x

    with jax.check_tracer_leaks(True), pytest.raises(Exception, match="Leaked trace"):
        jax.jit(f)(np.float32(1.0))


def test_nothing_is_reported_without_leaks_or_with_the_option_off():
    with jax.checking_leaks():
        np.testing.assert_allclose(
            jax.jit(lambda x: jnp.sin(x) * 2)(np.float32(1.0)), 2 * np.sin(1.0), rtol=1e-6
        )
        jax.vmap(lambda x: jax.lax.fori_loop(0, 3, lambda i, v: v + x, x))(jnp.ones(3))
        jax.grad(lambda x: jax.jit(jnp.sin)(x) * 2)(np.float32(1.0))
        jax.grad(leaking)(np.float32(1.0))  # JAX checks no JVP tracers
    leaked.clear()
    assert jax.config.jax_check_tracer_leaks is False
    jax.jit(leaking)(np.float32(1.0))  # off: the leak goes unreported
    assert len(leaked) == 1


def test_the_option_is_a_config_flag():
    jax.config.update("jax_check_tracer_leaks", True)
    try:
        with pytest.raises(Exception, match="Leaked trace"):
            jax.jit(leaking)(np.float32(3.0))
    finally:
        jax.config.update("jax_check_tracer_leaks", False)
