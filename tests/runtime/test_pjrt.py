"""The PJRT runtime against the real XLA CPU plugin: compile hand-written StableHLO, run it on
one and several devices, move every dtype in and out, and check that errors are exceptions and
that handles are freed (resident memory stays flat over many cycles).

Skipped where no plugin loads (macOS, Windows, no `xla_cpu_pjrt` wheel).
"""

import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tracejit.errors
from tracejit._src.runtime import pjrt

if not pjrt.platform_available():
    pytest.skip("no PJRT plugin can be loaded here", allow_module_level=True)

from tracejit._src.runtime.client import Client, configured_cpu_device_count, get_client
from tracejit._src.runtime.pjrt import XlaRuntimeError

ADD = """
module @add {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""

# Two results: a reduction of sin(x) * 3 over axis 1, and the transpose of x.
TWO_OUTPUTS = """
module @two_outputs {
  func.func public @main(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
    %s = "stablehlo.sine"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %k = "stablehlo.constant"() {value = dense<3.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
    %m = "stablehlo.multiply"(%s, %k) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %z = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %r = "stablehlo.reduce"(%m, %z) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %p = "stablehlo.transpose"(%x) {permutation = array<i64: 1, 0>}
        : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %r, %p : tensor<2xf32>, tensor<3x2xf32>
  }
}
"""

MATMUL = """
module @matmul {
  func.func public @main(%a: tensor<2x3xf64>, %b: tensor<3x4xf64>) -> tensor<2x4xf64> {
    %0 = "stablehlo.dot_general"(%a, %b) {
      dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
                                             rhs_contracting_dimensions = [0]>
    } : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
    return %0 : tensor<2x4xf64>
  }
}
"""

# sum(range(n)) with a while loop over (i, acc).
LOOP = """
module @loop {
  func.func public @main(%n: tensor<i32>) -> tensor<i32> {
    %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %r:2 = "stablehlo.while"(%zero, %zero) ({
      ^bb0(%i: tensor<i32>, %acc: tensor<i32>):
        %p = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>}
            : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%p) : (tensor<i1>) -> ()
    }, {
      ^bb0(%i: tensor<i32>, %acc: tensor<i32>):
        %acc2 = "stablehlo.add"(%acc, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        "stablehlo.return"(%i2, %acc2) : (tensor<i32>, tensor<i32>) -> ()
    }) : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
    return %r#1 : tensor<i32>
  }
}
"""

ALL_REDUCE = """
module @psum {
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}
        : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
}
"""

DONATING_DOUBLE = """
module @donate {
  func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


@pytest.fixture(scope="module")
def client():
    return Client(cpu_device_count=4)


@pytest.fixture(scope="module")
def add(client):
    return client.compile(ADD)


def f32(*values):
    return np.array(values, np.float32)


def run_python(script: str, **environment) -> subprocess.CompletedProcess:
    env = dict(os.environ, **environment)
    command = [sys.executable, "-c", script]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- client and devices -------------------------------------------------------------------------


def test_client_devices(client):
    devices = client.local_devices()
    assert [d.id for d in devices] == [0, 1, 2, 3]
    assert client.platform == "cpu" and client.device_count() == 4
    assert all(d.platform == "cpu" and d.client is client for d in devices)
    assert client.device(2) is devices[2]
    assert "0" in repr(devices[0])


def test_process_client_is_shared():
    assert get_client() is get_client()


def test_configured_cpu_device_count(monkeypatch):
    monkeypatch.delenv("TRACEJIT_NUM_CPU_DEVICES", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_foo=1 --xla_force_host_platform_device_count=8")
    assert configured_cpu_device_count() == 8
    monkeypatch.setenv("TRACEJIT_NUM_CPU_DEVICES", "3")
    assert configured_cpu_device_count() == 3
    monkeypatch.delenv("TRACEJIT_NUM_CPU_DEVICES")
    monkeypatch.delenv("XLA_FLAGS")
    assert configured_cpu_device_count() is None


def test_environment_configures_process_client():
    script = "from tracejit._src.runtime import get_client\nprint(get_client().device_count())\n"
    out = run_python(script, TRACEJIT_NUM_CPU_DEVICES="3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
    assert out.stderr == ""  # the plugin's logging is off


# -- compile and run ----------------------------------------------------------------------------


def test_add(client, add):
    a, b = f32(1, 2, 3, 4), f32(10, 20, 30, 40)
    (out,) = add.execute_one([client.buffer_from_numpy(a), client.buffer_from_numpy(b)])
    assert out.shape == (4,) and out.dtype == np.float32
    np.testing.assert_array_equal(out.to_numpy(), a + b)


def test_two_outputs(client):
    exe = client.compile(TWO_OUTPUTS)
    assert exe.num_outputs == 2
    assert exe.output_shapes == [(2,), (3, 2)]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    reduced, transposed = exe.execute_one([client.buffer_from_numpy(x)])
    np.testing.assert_allclose(reduced.to_numpy(), (3 * np.sin(x)).sum(1), rtol=1e-6)
    np.testing.assert_array_equal(transposed.to_numpy(), x.T)


def test_matmul_float64(client):
    exe = client.compile(MATMUL)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    (out,) = exe.execute_one([client.buffer_from_numpy(a), client.buffer_from_numpy(b)])
    np.testing.assert_allclose(out.to_numpy(), a @ b, rtol=1e-12)


def test_while_loop(client):
    exe = client.compile(LOOP)
    (out,) = exe.execute_one([client.buffer_from_numpy(np.int32(10))])
    assert out.shape == () and out.to_numpy() == sum(range(10))


def test_all_reduce_across_replicas(client):
    exe = client.compile(ALL_REDUCE, num_replicas=4)
    assert exe.num_replicas == 4 and len(exe.devices) == 4
    inputs = [[client.buffer_from_numpy(f32(i + 1, -i), d)] for i, d in enumerate(exe.devices)]
    outputs, events = exe.execute_with_events(inputs)
    for event in events:
        event.wait()
        assert event.is_ready()
    for (out,), device in zip(outputs, exe.devices, strict=True):
        assert out.device is device
        np.testing.assert_array_equal(out.to_numpy(), f32(10, -6))


def test_device_assignment_places_program(client):
    exe = client.compile(ADD, device_assignment=[[2]])
    assert exe.devices == [client.device(2)]
    x = client.buffer_from_numpy(f32(1, 2, 3, 4), client.device(2))
    (out,) = exe.execute_one([x, x])
    assert out.device.id == 2
    np.testing.assert_array_equal(out.to_numpy(), f32(2, 4, 6, 8))


def test_copy_to_device(client):
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    y = x.copy_to_device(client.device(3))
    assert y.device.id == 3
    np.testing.assert_array_equal(y.to_numpy(), f32(1, 2, 3, 4))


def test_concurrent_calls(client, add):
    """Threads share an executable: each call must get its own argument structs."""
    errors = []

    def work(k):
        try:
            x = client.buffer_from_numpy(np.full(4, k, np.float32))
            for _ in range(200):
                (out,) = add.execute_one([x, x])
                assert out.to_numpy()[0] == 2 * k
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_execution_is_asynchronous_and_awaitable(client, add):
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    (out,) = add.execute_one([x, x])
    assert out.block_until_ready() is out
    assert out.ready()


def test_executable_description(client, add):
    cost = add.cost_analysis()
    assert cost["flops"] == 4.0
    assert add.compiled_memory_stats()["output_size_in_bytes"] == 16
    fmt, data = add.optimized_program()
    assert fmt.startswith("hlo") and len(data) > 0
    assert "add" in repr(add)


def test_serialize_round_trip(client, add):
    data = add.serialize()
    assert isinstance(data, bytes) and len(data) > 100
    loaded = client.deserialize(data)
    assert loaded.num_outputs == 1
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    (out,) = loaded.execute_one([x, x])
    np.testing.assert_array_equal(out.to_numpy(), f32(2, 4, 6, 8))


# -- errors -------------------------------------------------------------------------------------


def test_compile_error_is_an_exception(client):
    with pytest.raises(XlaRuntimeError, match="unregistered operation 'stablehlo.no_such_op'"):
        client.compile(ADD.replace("stablehlo.add", "stablehlo.no_such_op"))
    with pytest.raises(XlaRuntimeError):
        client.compile("this is not MLIR")


def test_execute_errors_are_exceptions(client, add):
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    with pytest.raises(XlaRuntimeError, match="expected 2 buffers") as info:
        add.execute_one([x])
    assert info.value.code_name == "INVALID_ARGUMENT"
    # one class, as JAX's: jaxlib's XlaRuntimeError is jax.errors.JaxRuntimeError
    assert type(info.value) is tracejit.errors.JaxRuntimeError
    with pytest.raises(ValueError, match="argument lists"):
        add.execute([[x, x], [x, x]])


def test_deleted_buffer_is_an_error_not_a_crash(client, add):
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    x.delete()
    assert x.is_deleted()
    with pytest.raises(XlaRuntimeError, match="deleted or donated"):
        add.execute_one([x, x])
    with pytest.raises(XlaRuntimeError):
        x.to_numpy()


def test_donation(client):
    exe = client.compile(DONATING_DOUBLE)
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    (out,) = exe.execute_one([x])
    np.testing.assert_array_equal(out.to_numpy(), f32(2, 4, 6, 8))
    assert x.is_deleted()
    # A buffer with a live zero-copy view is not donated: the view's memory stays valid.
    y = client.buffer_from_numpy(f32(1, 2, 3, 4))
    view = y.numpy_view()
    (out,) = exe.execute_one([y])
    np.testing.assert_array_equal(out.to_numpy(), f32(2, 4, 6, 8))
    assert not y.is_deleted()
    np.testing.assert_array_equal(view, f32(1, 2, 3, 4))


def test_unknown_dtype(client):
    with pytest.raises(TypeError, match="no PJRT element type"):
        client.buffer_from_numpy(np.array(["a"]))


# -- buffers ------------------------------------------------------------------------------------


def sample(dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.array([[True, False, True], [False, False, True]])
    if dtype.kind == "c":
        return (np.arange(6) + 1j * np.arange(6, 0, -1)).astype(dtype).reshape(2, 3)
    if dtype.kind == "u" or "uint" in dtype.name:
        return np.arange(6).astype(dtype).reshape(2, 3)
    return np.arange(-3, 3).astype(dtype).reshape(2, 3)


@pytest.mark.parametrize("dtype", sorted(pjrt.load_plugin().type_of_dtype, key=str), ids=str)
def test_buffer_round_trip_every_dtype(client, dtype):
    host = sample(dtype)
    buffer = client.buffer_from_numpy(host, client.device(1))
    assert buffer.shape == (2, 3) and buffer.dtype == dtype and buffer.device.id == 1
    back = buffer.to_numpy()
    assert back.dtype == dtype and back.tobytes() == host.tobytes()
    converted = np.asarray(buffer)  # zero-copy where the layout allows, else a copy
    assert converted.dtype == dtype and converted.tobytes() == host.tobytes()
    scalar = client.buffer_from_numpy(host[0, 0])
    assert scalar.shape == () and scalar.to_numpy().tobytes() == host[0, 0].tobytes()
    empty = client.buffer_from_numpy(host[:0])
    assert empty.shape == (0, 3) and empty.to_numpy().shape == (0, 3)


def test_non_contiguous_input(client):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(client.buffer_from_numpy(host).to_numpy(), host)


def test_zero_copy_view(client, add):
    x = client.buffer_from_numpy(f32(1, 2, 3, 4))
    (out,) = add.execute_one([x, x])
    view = out.numpy_view()
    np.testing.assert_array_equal(view, f32(2, 4, 6, 8))
    assert not view.flags.writeable
    assert view.ctypes.data == out.unsafe_pointer()  # no copy
    del out, x
    gc.collect()
    np.testing.assert_array_equal(view, f32(2, 4, 6, 8))  # the view keeps the buffer alive
    sliced = view[1:]
    del view
    gc.collect()
    np.testing.assert_array_equal(sliced, f32(4, 6, 8))


def test_delete_waits_for_views(client):
    x = client.buffer_from_numpy(np.arange(1000, dtype=np.float64))
    view = x.numpy_view()
    x.delete()
    assert x.is_deleted()
    np.testing.assert_array_equal(view, np.arange(1000))  # memory still valid
    del view
    gc.collect()


def test_zero_copy_input(client, add):
    host = f32(1, 2, 3, 4)
    x = client.buffer_from_numpy(host, zero_copy=True)
    (out,) = add.execute_one([x, x])
    np.testing.assert_array_equal(out.to_numpy(), 2 * host)


def test_large_transfer(client):
    host = np.random.default_rng(0).normal(size=(512, 1024)).astype(np.float32)
    buffer = client.buffer_from_numpy(host)
    del host  # the runtime keeps the source alive until the copy is done
    gc.collect()
    assert buffer.block_until_ready().to_numpy().shape == (512, 1024)


def test_source_of_copy_in_flight_is_kept_then_released(client):
    """A large copy finishes after `buffer_from_numpy` returns; its source is held until then,
    and released by the next transfer's sweep even if the buffer is never touched."""
    host = np.ones(1 << 22, np.float32)
    for _ in range(10):
        first = client.buffer_from_numpy(host)
        if (source := first._host) is not None:
            break
    else:
        pytest.skip("the plugin copied synchronously every time")
    assert source.keep is not None
    for _ in range(100):  # each later transfer sweeps finished copies; allow for a busy machine
        time.sleep(0.05)
        client.buffer_from_numpy(host)
        if source.released:
            break
    assert source.released and source.keep is None
    assert first.to_numpy()[-1] == 1.0


# -- lifetimes ----------------------------------------------------------------------------------


def test_resident_memory_flat(client, add):
    """10,000 cycles of transfers, executions, copies and views free everything they make."""
    host = np.ones(4096, np.float32)
    big = client.compile(ADD.replace("4xf32", "4096xf32"))

    def cycle():
        x = client.buffer_from_numpy(host)
        (y,) = big.execute_one([x, x])
        y.to_numpy()
        np.asarray(y)

    for _ in range(1000):
        cycle()
    gc.collect()
    before = resident_bytes()
    for _ in range(10_000):
        cycle()
    gc.collect()
    growth = resident_bytes() - before
    assert growth < 4 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB"


def test_closed_client_refuses_work():
    """After close(), using the client's objects raises instead of crashing, and their
    finalizers leave the destroyed client alone."""
    own = Client(cpu_device_count=1)
    exe = own.compile(ADD)
    x = own.buffer_from_numpy(f32(1, 2, 3, 4))
    (y,) = exe.execute_one([x, x])
    own.close()
    own.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        exe.execute_one([x, x])
    with pytest.raises(RuntimeError, match="closed"):
        y.to_numpy()
    with pytest.raises(RuntimeError, match="closed"):
        own.buffer_from_numpy(f32(1))
    del exe, x, y
    gc.collect()


def test_executables_freed(client):
    client.compile(ADD).serialize()  # the first compile in a process sets XLA itself up
    gc.collect()
    before = resident_bytes()
    for _ in range(30):
        exe = client.compile(ADD)
        exe.serialize()
        del exe
    gc.collect()
    assert resident_bytes() - before < 16 * 2**20


EXIT_WITH_WORK_IN_FLIGHT = (
    "import numpy as np\n"
    "from tracejit._src.runtime import get_client\n"
    "client = get_client()\n"
    f"exe = client.compile({MATMUL.replace('2x3', 'N').replace('3x4', 'N').replace('2x4', 'N').replace('N', '1024x1024').replace('f64', 'f32')!r})\n"
    "x = client.buffer_from_numpy(np.ones((1024, 1024), np.float32))\n"
    "running = [exe.execute_one([x, x]) for _ in range(4)]\n"
    "copying = client.buffer_from_numpy(np.ones(1 << 22, np.float32))\n"
    "aliased = client.buffer_from_numpy(np.ones(1 << 10, np.float32), zero_copy=True)\n"
    "view = client.buffer_from_numpy(np.ones(8, np.float32)).numpy_view()\n"
    "print('exiting')\n"
)


def test_exit_with_work_in_flight():
    """The interpreter exits cleanly while programs run and copies are in flight."""
    out = run_python(EXIT_WITH_WORK_IN_FLIGHT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "exiting" and out.stderr == ""


def test_import_is_lazy():
    script = (
        "import sys, tracejit\n"
        "loaded = [m for m in ('cffi', '_cffi_backend', 'tracejit._src.runtime.pjrt')"
        " if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = run_python(script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_unavailable_plugin_reports_false():
    script = "from tracejit._src.runtime import pjrt\nprint(pjrt.platform_available())\n"
    out = run_python(script, TRACEJIT_PJRT_PLUGIN="/nonexistent/plugin.so")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
