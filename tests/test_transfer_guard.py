"""Transfer guards: each case below was run in JAX 0.10.2 on the CPU, under each level; a
transfer JAX refuses raises here the same JaxRuntimeError with the same message, one JAX
allows is allowed. Reading device arrays on the host is never guarded on the CPU, as in JAX."""

import logging

import numpy as np
import pytest
from parallel.devices import needs_plugin, run_with_devices

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.errors import JaxRuntimeError

DESTINATION = "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
F32_3 = "aval=ShapedArray(float32[3])"
F32_2 = "aval=ShapedArray(float32[2])"
WEAK_F32 = "aval=ShapedArray(float32[], weak_type=True)"
WEAK_I32 = "aval=ShapedArray(int32[], weak_type=True)"

x = jnp.ones(3)
m = jnp.ones((3, 3))
plus_one = jax.jit(lambda a: a + 1)
square = jax.jit(lambda a: a * a)


@jax.custom_jvp
def sine(a):
    return jnp.sin(a)


sine.defjvp(lambda primals, tangents: (sine(primals[0]), tangents[0]))

# (what, implicit transfer's aval or None, explicit transfer's aval or None): JAX's answers.
CASES = [
    ("jit of a NumPy array", lambda: plus_one(np.ones(3)), F32_3, None),
    ("jit of a Python scalar", lambda: plus_one(1.0), WEAK_F32, None),
    ("jit of an Array", lambda: plus_one(x), None, None),
    ("Array + NumPy array", lambda: x + np.ones(3), F32_3, None),
    ("Array + Python int", lambda: x + 1, WEAK_I32, None),
    ("Array * Python float", lambda: x * 2.0, WEAK_F32, None),
    ("Array > Python int", lambda: x > 0, WEAK_I32, None),
    ("jnp.array of a list", lambda: jnp.array([1.0, 2.0]), F32_2, None),
    ("jnp.asarray of NumPy", lambda: jnp.asarray(np.ones(2)), F32_2, None),
    ("jnp.asarray of an Array", lambda: jnp.asarray(x), None, None),
    ("jnp.sin of an Array", lambda: jnp.sin(x), None, None),
    ("Array + Array", lambda: x + x, None, None),
    ("matmul of Arrays", lambda: jnp.ones((3, 3)) @ x, None, None),
    ("np.asarray", lambda: np.asarray(x), None, None),
    ("float", lambda: float(jnp.sum(x)), None, None),
    ("printing", lambda: str(x), None, None),
    ("tolist", lambda: x.tolist(), None, None),
    ("device_get", lambda: jax.device_get(x), None, None),
    ("device_put of NumPy", lambda: jax.device_put(np.ones(2)), None, F32_2),
    ("device_put of an Array", lambda: jax.device_put(x), None, None),
    (
        "jit tracing a NumPy constant",
        lambda: jax.make_jaxpr(lambda a: a + 1)(np.ones(2)),
        None,
        None,
    ),
    # tracejit's own values inside eager control flow are no transfers of the user's
    ("scan of a jitted body", lambda: jax.lax.scan(lambda c, a: (square(c), a), x, m), None, None),
    ("scan of a custom_jvp", lambda: jax.lax.scan(lambda c, a: (sine(c), a), x, m), None, None),
    ("map of softmax", lambda: jax.lax.map(jax.nn.softmax, m), None, None),
    ("checkpoint of a custom_jvp", lambda: jax.checkpoint(sine)(x), None, None),
    ("checkpoint of a jitted call", lambda: jax.checkpoint(lambda a: square(a))(x), None, None),
    ("vmap of a jitted call", lambda: jax.vmap(square)(m), None, None),
]


def refused_aval(level: str, implicit, explicit):
    if level in ("disallow", "disallow_explicit") and implicit is not None:
        return implicit
    if level == "disallow_explicit":
        return explicit
    return None


@pytest.mark.parametrize("level", ["allow", "log", "disallow", "log_explicit", "disallow_explicit"])
@pytest.mark.parametrize(("what", "run", "implicit", "explicit"), CASES, ids=[c[0] for c in CASES])
def test_each_level_refuses_what_jax_refuses(level, what, run, implicit, explicit):
    plus_one(x)  # (compiled outside the guard)
    refused = refused_aval(level, implicit, explicit)
    with jax.transfer_guard(level):
        if refused is None:
            run()
        else:
            with pytest.raises(JaxRuntimeError) as info:
                run()
            assert str(info.value) == (
                f"INVALID_ARGUMENT: Disallowed host-to-device transfer: {refused}, {DESTINATION}"
            )


@pytest.mark.parametrize("level", ["log", "log_explicit"])
def test_log_levels_log_and_let_the_transfer_happen(level, caplog):
    with caplog.at_level(logging.WARNING), jax.transfer_guard(level):
        np.testing.assert_array_equal(plus_one(np.ones(3)), np.full(3, 2.0, np.float32))
        jax.device_put(np.ones(2))
        x + x
    messages = [record.getMessage() for record in caplog.records]
    expected = [f"host-to-device transfer: {F32_3}, {DESTINATION}"]
    if level == "log_explicit":
        expected.append(f"host-to-device transfer: {F32_2}, {DESTINATION}")
    assert messages == expected


def test_a_direction_set_inside_the_general_level_wins():
    with jax.transfer_guard("disallow"), jax.transfer_guard_host_to_device("allow"):
        plus_one(np.ones(3))
    with jax.transfer_guard_host_to_device("disallow"):
        with pytest.raises(JaxRuntimeError):
            plus_one(np.ones(3))
        with jax.transfer_guard("allow"):
            plus_one(np.ones(3))
    with (
        jax.transfer_guard_device_to_host("disallow"),
        jax.transfer_guard_device_to_device("disallow"),
    ):
        plus_one(np.ones(3))  # (host to device still allowed)


def test_the_options_and_their_values():
    assert jax.config.jax_transfer_guard is None
    with jax.transfer_guard("log"):
        assert jax.config.jax_transfer_guard == "log"
        assert jax.config.jax_transfer_guard_host_to_device == "log"
        assert jax.transfer_guard_device_to_host.value == "log"
    assert jax.config.jax_transfer_guard_host_to_device is None
    jax.config.update("jax_transfer_guard", "disallow")
    try:
        with pytest.raises(JaxRuntimeError):
            plus_one(np.ones(3))
    finally:
        jax.config.update("jax_transfer_guard", None)
    plus_one(np.ones(3))
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        jax.config.update("jax_transfer_guard", "bogus")
    with pytest.raises(ValueError, match="new enum value"), jax.transfer_guard("bogus"):
        pass


@needs_plugin
def test_device_to_device_put_is_explicit():
    run_with_devices(
        """
        from tracejit.errors import JaxRuntimeError
        d = jax.devices()
        x = jax.device_put(jnp.ones(3), d[1])
        with jax.transfer_guard("disallow"):
            jax.device_put(x, d[2])
            jax.device_put(x, d[1])
        with jax.transfer_guard("disallow_explicit"):
            jax.device_put(x, d[1])  # already there: no transfer
            try:
                jax.device_put(x, d[2])
                raise AssertionError("not refused")
            except JaxRuntimeError as err:
                assert str(err) == (
                    "INVALID_ARGUMENT: Disallowed device-to-device transfer: "
                    "aval=ShapedArray(float32[3]), "
                    "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)"
                ), err
            np.asarray(x)
        """
    )
