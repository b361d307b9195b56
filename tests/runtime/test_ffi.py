"""The host-callback runtime (`runtime/ffi.py`) against the real XLA CPU plugin: our declared
XLA FFI structs have the sizes the plugin reports, hand-written custom calls reach Python with
zero-copy read-only views, results are checked before they are written, a raising callback
becomes a runtime error with the user's exception as its cause, and a freed callback is a
clean error, never a crash.

Skipped where no plugin loads.
"""

import gc

import numpy as np
import pytest

from tracejit._src.runtime import pjrt

if not pjrt.platform_available():
    pytest.skip("no PJRT plugin can be loaded here", allow_module_level=True)

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray
from tracejit._src.errors import JaxRuntimeError
from tracejit._src.runtime import ffi
from tracejit._src.runtime.client import get_client


def program(callback, in_type="tensor<3xf32>", out_type="tensor<3xf32>", side_effect=True):
    """A module whose main returns the custom call of `callback` on its argument."""
    attributes = ", ".join(
        f"{k} = {v}" for k, v in ffi.custom_call_attributes(callback, side_effect).items()
    )
    return f"""
module @callback attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%x: {in_type}) -> ({out_type}) {{
    %0 = "stablehlo.custom_call"(%x) {{{attributes}}} : ({in_type}) -> {out_type}
    "func.return"(%0) : ({out_type}) -> ()
  }}
}}
"""


@pytest.fixture(scope="module")
def client():
    client = get_client()
    ffi.ensure_handler(client.plugin)
    return client


def run(client, callback, x, **types):
    executable = client.compile(program(callback, **types))
    (y,) = executable.execute_one([client.buffer_from_numpy(x)])
    return y.to_numpy()


def aval(shape, dtype=np.float32):
    return ShapedArray(shape, np.dtype(dtype))


def test_extension_struct_size_is_the_plugins(client):
    extension = ffi.ffi_extension(client.plugin)
    assert extension is not None
    assert extension.base.struct_size == ffi.struct_size("PJRT_FFI_Extension")


def test_call_frame_struct_sizes_are_the_plugins(client):
    callback = ffi.HostCallback(lambda x: [x], [aval((3,))], "identity")
    run(client, callback, np.ones(3, np.float32))
    reported = ffi.reported_struct_sizes
    for name in (
        "XLA_FFI_CallFrame",
        "XLA_FFI_Args",
        "XLA_FFI_Rets",
        "XLA_FFI_Attrs",
        "XLA_FFI_Buffer",
        "XLA_FFI_Api_Version",
        "XLA_FFI_Metadata",
        "XLA_FFI_Metadata_Extension",
    ):
        assert reported[name] == ffi.struct_size(name), name
    # The function table grows with XLA's versions: it must reach past what we call.
    assert reported["XLA_FFI_Api"] >= ffi.struct_size("XLA_FFI_Api")


def test_operands_are_read_only_views_and_results_are_written(client):
    seen = []

    def double(x):
        seen.append((x.flags.writeable, x.flags.owndata, x.copy()))
        return [x * 2]

    callback = ffi.HostCallback(double, [aval((3,))], "double", operand_avals=[aval((3,))])
    out = run(client, callback, np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, [0, 2, 4])
    writeable, owndata, value = seen[0]
    assert not writeable and not owndata
    np.testing.assert_array_equal(value, [0, 1, 2])


@pytest.mark.parametrize(
    "dtype", [np.float32, np.int32, np.bool_, np.uint8, np.complex64, dtypes.bfloat16]
)
@pytest.mark.parametrize("known_operands", [False, True])
def test_dtypes_round_trip(client, dtype, known_operands):
    from tracejit._src.lowering.stablehlo import tensor_type

    x = np.arange(6).reshape(2, 3).astype(dtype)
    declared = [aval((2, 3), dtype)]
    callback = ffi.HostCallback(
        lambda v: [v], declared, "identity", operand_avals=declared if known_operands else None
    )
    kind = tensor_type((2, 3), dtype)
    np.testing.assert_array_equal(run(client, callback, x, in_type=kind, out_type=kind), x)


def test_raising_callback_chains_the_users_exception(client):
    def broken(x):
        raise KeyError("the user's message")

    callback = ffi.HostCallback(broken, [aval((3,))], "broken")
    with pytest.raises(JaxRuntimeError) as info:
        run(client, callback, np.ones(3, np.float32))
    assert isinstance(info.value.__cause__, KeyError)
    assert "the user's message" in str(info.value) and "Traceback" in str(info.value)
    assert "broken" in str(info.value)
    # the process lives on, and the handler still works
    ok = ffi.HostCallback(lambda x: [x + 1], [aval((3,))], "ok")
    np.testing.assert_array_equal(run(client, ok, np.zeros(3, np.float32)), [1, 1, 1])


@pytest.mark.parametrize(
    "result, words",
    [
        (lambda x: [np.ones(4, np.float32)], "shape (4,), but (3,) was declared"),
        (lambda x: [x, x], "returned 2 results, but 1 were declared"),
        (lambda x: [np.array(["a", "b", "c"])], "dtype <U1, but float32 was declared"),
    ],
)
def test_wrong_results_are_a_clear_error(client, result, words):
    callback = ffi.HostCallback(result, [aval((3,))], "wrong_results")
    with pytest.raises(JaxRuntimeError, match="wrong_results") as info:
        run(client, callback, np.ones(3, np.float32))
    assert words in str(info.value)
    assert info.value.code_name == "INVALID_ARGUMENT"


def test_results_of_another_numeric_dtype_are_cast(client):
    callback = ffi.HostCallback(lambda x: [np.ones(3, np.float64)], [aval((3,))], "wider")
    out = run(client, callback, np.ones(3, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 1, 1])


def test_a_freed_callback_is_a_clean_error(client):
    callback = ffi.HostCallback(lambda x: [x], [aval((3,))], "freed")
    executable = client.compile(program(callback))
    callback_id = callback.id
    assert ffi.is_registered(callback_id)
    del callback
    gc.collect()
    assert not ffi.is_registered(callback_id)
    x = client.buffer_from_numpy(np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match="no host callback with id"):
        executable.execute_one([x])[0].to_numpy()  # (raised by either call)


def test_a_module_without_its_callback_attribute_is_an_error(client):
    text = program(ffi.HostCallback(lambda x: [x], [aval((3,))], "named"))
    text = text.replace("callback_id", "another_name")
    executable = client.compile(text)
    x = client.buffer_from_numpy(np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match="no int64 attribute 'callback_id'"):
        executable.execute_one([x])[0].to_numpy()
