"""The optional C accelerator gives exactly the results of its Python twins.

Where the accelerator is not built (no C compiler when tracejit was installed) these tests are
skipped; CI builds it. Each test runs the Python path by setting the module's `accel` to None.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from tracejit._src import prng
from tracejit._src.accel import accel

needs_accel = pytest.mark.skipif(accel is None, reason="the C accelerator is not built here")


def python_path(monkeypatch, *modules):
    for module in modules:
        monkeypatch.setattr(module, "accel", None)


# Known-answer tests of Threefry-2x32 (20 rounds) from its authors' Random123 distribution:
# (key, counter) -> cipher text.
THREEFRY_KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@needs_accel
@pytest.mark.parametrize("key, counter, expected", THREEFRY_KNOWN_ANSWERS)
def test_threefry_known_answers(key, counter, expected):
    words = [np.array([w], np.uint32) for w in (*key, *counter)]
    out = accel.threefry2x32(*words, 1)
    assert [int(y[0]) for y in out] == list(expected)


@needs_accel
@pytest.mark.parametrize(
    "shapes",
    [
        [(), (), (1000,), (1000,)],  # one key, many counters (random_bits)
        [(7,), (7,), (7,), (7,)],  # a key per counter (split of a batch of keys)
        [(3, 1), (3, 1), (1, 5), (1, 5)],  # broadcast both ways
        [(2, 4), (), (4,), (2, 1)],
        [(0,), (), (0,), (0,)],
    ],
)
def test_threefry_primitive_equals_numpy_rounds(monkeypatch, shapes):
    rng = np.random.default_rng(0)
    operands = [rng.integers(0, 2**32, shape, dtype=np.uint32) for shape in shapes]
    fast = prng._threefry2x32_impl(*operands)
    python_path(monkeypatch, prng)
    slow = prng._threefry2x32_impl(*operands)
    for f, s in zip(fast, slow, strict=True):
        assert f.dtype == s.dtype == np.uint32 and f.shape == s.shape
        np.testing.assert_array_equal(f, s)


@needs_accel
def test_threefry_rejects_operands_it_cannot_take():
    one = np.zeros(1, np.uint32)
    with pytest.raises(TypeError, match="x1 must be a C-contiguous uint32 array"):
        accel.threefry2x32(one, one, np.zeros(1, np.int32), one, 1)
    with pytest.raises(ValueError, match="x2 has 3 elements, expected 1 or 2"):
        accel.threefry2x32(one, one, one, np.zeros(3, np.uint32), 2)


def test_environment_variable_turns_the_accelerator_off():
    code = "from tracejit._src.accel import accel; print(accel is None)"
    env = dict(os.environ, TRACEJIT_NO_ACCEL="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True", out.stderr


@needs_accel
def test_host_callbacks_run_through_the_c_handler(monkeypatch):
    """After the process's first call (which the Python handler takes, to record the plugin's
    struct sizes), XLA's calls reach `_run_for_accel` with views the C handler made."""
    import tracejit as jax
    import tracejit.numpy as jnp
    from tracejit._src.runtime import ffi

    callers = []
    call = ffi._call

    def recording_call(callback, operands, results):
        callers.append(sys._getframe(1).f_code.co_name)
        assert all(not x.flags.writeable for x in operands)
        assert all(r.flags.writeable for r in results)
        return call(callback, operands, results)

    monkeypatch.setattr(ffi, "_call", recording_call)
    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    f = jax.jit(lambda v: jax.pure_callback(lambda a: a * 2, spec, v))
    for _ in range(3):
        np.testing.assert_array_equal(f(jnp.arange(2.0)), [0.0, 2.0])
    assert callers[-2:] == ["_run_for_accel"] * 2
