"""Device arrays, the compile caches, compile logging and the NumPy fallback."""

import logging
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime
from tracejit._src.array import DeviceArray

pytestmark = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)


def resident_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_jit_outputs_stay_on_device_and_feed_later_calls():
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    y = f(jnp.arange(4.0))
    assert isinstance(y, DeviceArray) and isinstance(y, jax.Array)
    assert y.shape == (4,) and y.dtype == np.float32
    z = f(y)
    assert z.block_until_ready() is z
    np.testing.assert_array_equal(np.asarray(z), [3.0, 7.0, 11.0, 15.0])
    np.testing.assert_array_equal(np.asarray(z + 1.0), [4.0, 8.0, 12.0, 16.0])  # eager on it
    view = np.asarray(z)
    with pytest.raises(ValueError):
        view[0] = 0.0


def test_device_put():
    x = jax.device_put(np.arange(3, dtype=np.float32))
    assert isinstance(x, DeviceArray)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v + 1)(x)), [1.0, 2.0, 3.0])


def test_many_jitted_calls_keep_memory_flat():
    f = jax.jit(lambda x: x + 1.0)
    x = jnp.ones(1000)
    for _ in range(2000):
        f(x)
    before = resident_kib()
    for _ in range(100_000):
        f(x)
    grown = resident_kib() - before
    assert grown < 20_000, f"resident memory grew by {grown} KiB over 100,000 calls"


def test_log_compiles_names_what_changed(caplog, monkeypatch):
    monkeypatch.setattr(jax.config, "log_compiles", True)
    f = jax.jit(lambda x: jnp.sin(x))
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        f(jnp.ones(3))
        f(jnp.ones(5))
        f(jnp.ones(5))
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "first call" in messages[0] and "float32[3] -> float32[5]" in messages[1]


def test_a_fifth_signature_warns_once_naming_what_keeps_changing():
    f = jax.jit(lambda x: x + 1.0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for n in range(1, 8):
            f(jnp.ones(n))
    messages = [str(w.message) for w in record if "distinct signatures" in str(w.message)]
    assert len(messages) == 1
    assert re.search(r"5 distinct signatures.*argument 0", messages[0])
    assert sum("distinct signatures" in str(w.message) for w in record) == 1


def test_persistent_cache_is_shared_between_processes(tmp_path):
    code = (
        "import tracejit as jax, tracejit.numpy as jnp\n"
        "print(float(jax.jit(lambda x: jnp.sum(jnp.cos(x) * 3.0))(jnp.ones(11))))\n"
    )
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tmp_path))
    first = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert first.returncode == 0, first.stderr
    files = list((tmp_path / "executables").iterdir())
    assert len(files) == 1
    second = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert second.stdout == first.stdout
    assert float(second.stdout) == pytest.approx(11 * 3 * np.cos(1.0), rel=1e-5)


def test_forced_numpy_platform_warns_once_and_still_traces_once():
    code = (
        "import warnings, tracejit as jax, tracejit.numpy as jnp\n"
        "warnings.simplefilter('always')\n"
        "traces = []\n"
        "f = jax.jit(lambda x: (traces.append(1), x * 2.0)[1])\n"
        "print(float(f(1.0)), float(f(2.0)), len(traces), jax.default_backend())\n"
    )
    env = dict(os.environ, TRACEJIT_PLATFORM="numpy")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2.0", "4.0", "1", "cpu"]


def test_a_compile_error_is_a_python_exception():
    client = runtime.get_client()
    bad = 'module @bad {\n  func.func public @main(%a: tensor<2xf32>) -> (tensor<3xf32>) {\n    "func.return"(%a) : (tensor<2xf32>) -> ()\n  }\n}\n'
    with pytest.raises(runtime.XlaRuntimeError):
        client.compile(bad)


def test_an_xla_compile_error_names_the_failing_primitive_and_line(monkeypatch):
    from tracejit import lax
    from tracejit._src.lowering import lower

    def broken_lowering(ctx, x):  # emits an operation whose result type XLA rejects
        return ctx.block.op1("stablehlo.sine", [x], "tensor<7xi32>")

    monkeypatch.setitem(lower.lowering_rules, lax.cos_p, broken_lowering)
    monkeypatch.setattr(jax.config, "enable_compilation_cache", False)
    with pytest.raises(runtime.XlaRuntimeError, match="cos") as info:
        jax.jit(lambda x: jnp.cos(x) * 2.0)(jnp.ones(3))  # the line named
    assert "test_dispatch.py" in str(info.value)


def test_device_put_of_traced_values_keeps_them_where_they_are_computed():
    """Inside `jit`, `grad` and `vmap` (JAX stages it there; a constraint for a sharding)."""
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(jax.jit(lambda v: jax.device_put(v) * 2)(x), x * 2)
    device = jax.devices()[0]
    np.testing.assert_array_equal(jax.jit(lambda v: jax.device_put(v, device) + 1)(x), x + 1)
    np.testing.assert_array_equal(jax.grad(lambda v: jax.device_put(v).sum())(x), np.ones(4))
    np.testing.assert_array_equal(jax.vmap(lambda v: jax.device_put(v) * 3)(x), x * 3)
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("i"))
    np.testing.assert_array_equal(jax.jit(lambda v: jax.device_put(v, sharding) - 1)(x), x - 1)


def test_device_put_to_something_that_is_no_device_raises_jax_value_error():
    with pytest.raises(ValueError, match="only accepts `None`.*Received invalid value: 'cpu'"):
        jax.device_put(jnp.ones(3), "cpu")
    np.testing.assert_array_equal(jax.device_put(jnp.ones(3), jax.devices()[0]), np.ones(3))


def test_device_put_aliases_arrays_already_on_the_device():
    x = jax.device_put(jnp.ones(3))
    assert jax.device_put(x) is x
    assert jax.device_put(x, donate=True) is x and not x.is_deleted()
    copy = jax.device_put(x, may_alias=False)
    assert copy is not x
    np.testing.assert_array_equal(copy, x)
    assert jax.device_put(x, src=jax.devices()[0]) is x
    with pytest.raises(ValueError, match="may_alias and donate"):
        jax.device_put(x, donate=True, may_alias=True)


@pytest.mark.parametrize("kind", ["plugin", "numpy"])
def test_devices_answer_as_jaxs_cpu_devices(kind):
    device = jax.devices()[0] if kind == "plugin" else dispatch.NumpyDevice(0)
    assert (repr(device), str(device), f"{device}") == ("CpuDevice(id=0)", "cpu:0", "cpu:0")
    assert (device.platform, device.device_kind) == ("cpu", "cpu")
    assert device.id == device.process_index == device.host_id == device.task_id == 0
    assert device.memory_stats() is None
    assert isinstance(device, jax.Device)


def test_arrays_answer_jaxs_placement_questions():
    x = jnp.arange(6.0).reshape(2, 3)
    y = jax.jit(lambda v: v + 1)(x)
    device = jax.devices()[0]
    for a in (x, y):
        assert a.device == device and a.platform() == "cpu" and a.is_fully_addressable
        assert a.is_ready() and a.copy_to_host_async() is None
        assert a.on_device_size_in_bytes() == 24
        np.testing.assert_array_equal(a.addressable_data(0), np.asarray(a))
        assert [s.device for s in a.global_shards] == [device]
        np.testing.assert_array_equal(a.to_device(device), np.asarray(a))
    with pytest.raises(AttributeError, match=r"Use arr.addressable_data\(0\)"):
        x.device_buffer  # noqa: B018
    with pytest.raises(AttributeError, match="addressable_shards"):
        x.device_buffers  # noqa: B018
