"""Print options are NumPy's and Arrays print by them; `save`/`savez`/`load` write and read
`.npy`/`.npz` files (bfloat16 included); DLPack carries values both ways between Arrays and
NumPy (`np.from_dlpack(array)`, `jnp.from_dlpack(ndarray)`), as in JAX 0.10.2."""

import io

import numpy as np
import pytest
from helpers import assert_same, bf16, f32, i8

import tracejit
import tracejit.numpy as jnp

X = np.array([1 / 3, 2.5, -1e-3], f32)


def test_print_options_are_numpys_and_arrays_print_by_them():
    assert jnp.get_printoptions() == np.get_printoptions()
    with jnp.printoptions(precision=2, suppress=True):
        assert jnp.get_printoptions()["precision"] == 2
        assert repr(jnp.asarray(X)) == "Array([ 0.33,  2.5 , -0.  ], dtype=float32)"
        assert str(jnp.asarray(X)) == "[ 0.33  2.5  -0.  ]"
    assert jnp.get_printoptions()["precision"] == 8
    old = jnp.get_printoptions()
    try:
        jnp.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3
        assert jnp.array_str(jnp.asarray(X)) == np.array_str(X)
    finally:
        jnp.set_printoptions(**old)


def test_array_repr_and_str_are_numpys():
    x = jnp.asarray(X)
    assert jnp.array_repr is np.array_repr and jnp.array_str is np.array_str
    assert jnp.array_repr(x) == "Array" + np.array_repr(X).removeprefix("array")
    assert jnp.array_str(x, precision=2) == np.array_str(X, precision=2)


@pytest.mark.parametrize("dtype", [f32, i8, bf16])
def test_save_and_load_round_trip(dtype):
    x = jnp.asarray(np.arange(6).reshape(2, 3), dtype)
    buffer = io.BytesIO()
    jnp.save(buffer, x)
    buffer.seek(0)
    loaded = jnp.load(buffer)
    assert type(loaded) is type(x)
    assert_same(loaded, np.asarray(x))


def test_savez_archives_numpy_arrays():
    buffer = io.BytesIO()
    jnp.savez(buffer, jnp.asarray(X), named=jnp.arange(3))
    buffer.seek(0)
    archive = jnp.load(buffer)
    np.testing.assert_array_equal(archive["arr_0"], X)
    np.testing.assert_array_equal(archive["named"], np.arange(3, dtype=np.int32))


def test_numpy_reads_arrays_through_dlpack():
    x = jnp.asarray(np.arange(12, dtype=f32).reshape(3, 4))
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    for value in [x, x[1:, ::2], jnp.asarray([True, False]), tracejit.jit(jnp.sin)(x)]:
        assert_same(np.from_dlpack(value), np.asarray(value))
    assert not np.from_dlpack(x).flags.writeable  # Arrays are immutable


def test_from_dlpack_takes_numpy_arrays_in_canonical_dtypes():
    ints = np.arange(5, dtype=i8)
    for copy in [None, True, False]:
        x = jnp.from_dlpack(ints, copy=copy)
        assert type(x) is type(jnp.asarray(0)) and not x.weak_type
        assert_same(x, ints)
    doubles = np.linspace(0, 1, 4)
    assert_same(jnp.from_dlpack(doubles), doubles.astype(f32))  # float64 -> float32 (x32)
    with pytest.raises(ValueError, match="copy=False"):
        jnp.from_dlpack(doubles, copy=False)
    x = jnp.from_dlpack(jnp.asarray(X), device=tracejit.devices()[0])
    assert_same(x, X)


def test_from_dlpack_refuses_objects_without_the_protocol():
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])


def test_the_dlpack_module():
    import ml_dtypes

    from tracejit import dlpack

    assert dlpack.from_dlpack is jnp.from_dlpack
    for dtype in (np.bool_, np.int8, np.uint64, np.float16, jnp.bfloat16, np.complex128):
        assert dlpack.is_supported_dtype(dtype)
    for dtype in (ml_dtypes.float8_e4m3fn, ml_dtypes.int4, np.dtype("V8")):
        assert not dlpack.is_supported_dtype(dtype)
