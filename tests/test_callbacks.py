"""`pure_callback` and `io_callback`: Python functions of concrete values called from eager,
traced and compiled code, with JAX 0.10.2's semantics (the expected jaxprs, messages and
exception types were read off real JAX).

Without a PJRT plugin, jit evaluates with NumPy and the same tests check the eager path.
"""

import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dispatch, runtime
from tracejit.errors import JaxRuntimeError
from tracejit.experimental import io_callback

compiled = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)

F32_3 = jax.ShapeDtypeStruct((3,), jnp.float32)
F32 = jax.ShapeDtypeStruct((), jnp.float32)


def sin_callback(x):
    return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


# --------------------------------------------------------------------------------------------
# pure_callback


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_pure_callback_computes_on_the_host(mode):
    x = jnp.arange(3.0)
    f = sin_callback if mode == "eager" else jax.jit(sin_callback)
    np.testing.assert_allclose(f(x), np.sin(np.arange(3.0, dtype=np.float32)), rtol=1e-6)


def test_pure_callback_jaxpr():
    def f(x):
        return jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    text = str(jax.make_jaxpr(f)(jnp.ones(3)))
    assert text == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = pure_callback[\n"
        "      callback=_FlatCallback(callback_func=<function test_pure_callback_jaxpr.<locals>"
        ".f.<locals>.<lambda> at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))\n"
        "      result_avals=(ShapedArray(float32[3]),)\n"
        "      sharding=None\n"
        "      vmap_method=None\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_pure_callback_receives_arrays_and_pytrees():
    seen = []

    def callback(pair, scale=None):
        seen.append((pair[0], scale))
        return {"sum": np.asarray(pair[0] + pair[1] * scale, np.float32)}

    def f(x, y):
        return jax.pure_callback(callback, {"sum": F32_3}, (x, y), scale=2.0)

    x, y = jnp.ones(3), jnp.arange(3.0)
    for g in (f, jax.jit(f)):
        out = g(x, y)
        assert set(out) == {"sum"}
        np.testing.assert_array_equal(out["sum"], [1, 3, 5])
    assert all(isinstance(a, jax.Array) and isinstance(s, jax.Array) for a, s in seen)


def test_pure_callback_without_results():
    assert jax.pure_callback(lambda: None, None) is None
    assert jax.jit(lambda x: jax.pure_callback(lambda a: None, None, x))(1.0) is None


def test_pure_callback_results_are_cast_to_the_declared_dtype():
    out = jax.jit(lambda x: jax.pure_callback(lambda a: np.ones(3, np.float64), F32_3, x))(1.0)
    assert out.dtype == np.float32


@compiled
def test_unused_pure_callback_is_dead_code():
    calls = []
    jax.jit(lambda x: (jax.pure_callback(lambda a: calls.append(1) or a, F32_3, x), x)[1])(
        jnp.ones(3)
    )
    assert calls == []


@pytest.mark.parametrize(
    "method, shapes",
    [
        ("sequential", [((3,), (3,))] * 2),
        ("sequential_unrolled", [((3,), (3,))] * 2),
        ("expand_dims", [((2, 3), (1, 3))]),
        ("broadcast_all", [((2, 3), (2, 3))]),
        ("legacy_vectorized", [((2, 3), (3,))]),
    ],
)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_vmap_methods(method, shapes, mode):
    seen = []

    def callback(a, b):
        seen.append((a.shape, b.shape))
        return a + b

    def f(x, y):
        return jax.pure_callback(
            callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y, vmap_method=method
        )

    g = jax.vmap(f, (0, None))
    if mode == "jit":
        g = jax.jit(g)
    x, y = jnp.arange(6.0).reshape(2, 3), jnp.ones(3)
    np.testing.assert_array_equal(g(x, y), np.arange(6.0).reshape(2, 3) + 1)
    assert seen == shapes


def test_vmap_methods_jaxprs():
    def f(method):
        return lambda x, y: jax.pure_callback(
            lambda a, b: a + b, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y, vmap_method=method
        )

    args = (jnp.ones((2, 3)), jnp.ones(3))
    sequential = str(jax.make_jaxpr(jax.vmap(f("sequential"), (0, None)))(*args))
    assert "scan[" in sequential and "vmap_method=sequential" in sequential
    expand = str(jax.make_jaxpr(jax.vmap(f("expand_dims"), (0, None)))(*args))
    assert "c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)" in expand
    assert "result_avals=(ShapedArray(float32[2,3]),)" in expand


def test_vmap_without_a_method_raises_as_jax():
    f = jax.vmap(lambda x: jax.pure_callback(lambda a: a, F32, x))
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        f(jnp.ones(3))


def test_grad_of_pure_callback_raises_as_jax():
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(lambda x: jax.pure_callback(np.sin, F32, x))(1.0)


def test_custom_jvp_around_pure_callback():
    @jax.custom_jvp
    def f(x):
        return jax.pure_callback(np.sin, F32, x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), jax.pure_callback(np.cos, F32, x) * t

    expected = np.cos(np.float32(1.0))
    np.testing.assert_allclose(jax.grad(f)(1.0), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(1.0), expected, rtol=1e-6)


# --------------------------------------------------------------------------------------------
# io_callback


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_io_callback_is_never_dropped(mode):
    calls = []

    def f(x):
        io_callback(lambda a: calls.append(float(a)) or a, F32, x)
        return x + 1

    g = f if mode == "eager" else jax.jit(f)
    jax.block_until_ready(g(2.0))
    assert calls == [2.0]


def test_effects_barrier_returns_after_every_effect_so_far():
    calls = []

    @jax.jit
    def f(x):
        io_callback(lambda a: calls.append(float(a)) or a, F32, x)
        return x + 1

    out = f(2.0)  # not waited for
    assert jax.effects_barrier() is None
    assert calls == [2.0]
    assert float(out) == 3.0


def test_io_callback_jaxpr():
    def f(x):
        return io_callback(np.negative, F32_3, x, ordered=True)

    text = str(jax.make_jaxpr(f)(jnp.ones(3)))
    assert "b:f32[3] = io_callback[" in text
    assert "      ordered=True\n" in text and "      sharding=None\n" in text


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_ordered_io_callbacks_run_in_program_order(mode):
    log = []

    def f(x):
        for i in range(6):
            x = io_callback(lambda a, i=i: log.append(i) or a, F32, x, ordered=True)
            x = x * 2.0
        return x

    g = f if mode == "eager" else jax.jit(f)
    for _ in range(3):
        jax.block_until_ready(g(1.0))
    assert log == list(range(6)) * 3


def test_ordered_effects_keep_the_order_of_calls_not_waited_for():
    log = []

    def record(x, i):
        i = int(i)
        time.sleep(0.001 * (i % 3))  # later calls would overtake slower earlier ones
        log.append(i)
        return x

    g = jax.jit(lambda x, i: io_callback(record, F32, x, i, ordered=True))
    jax.block_until_ready([g(1.0, i) for i in range(20)])
    assert log == list(range(20))


def test_vmap_of_io_callback():
    out = jax.vmap(lambda x: io_callback(lambda a: a + 1, F32, x))(jnp.arange(3.0))
    np.testing.assert_array_equal(out, [1, 2, 3])
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(lambda x: io_callback(lambda a: a, F32, x, ordered=True))(jnp.ones(3))


def test_grad_of_io_callback_raises_as_jax():
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(lambda x: io_callback(np.sin, F32, x))(1.0)


def test_io_callback_alias_path():
    import tracejit.experimental

    assert tracejit.experimental.io_callback is io_callback


# --------------------------------------------------------------------------------------------
# Errors


def broken(x):
    raise ZeroDivisionError("the user's callback failed")


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("api", ["pure", "io"])
def test_a_raising_callback_is_a_runtime_error_with_its_cause(mode, api):
    def f(x):
        if api == "pure":
            return jax.pure_callback(broken, F32, x)
        return io_callback(broken, F32, x)

    g = f if mode == "eager" else jax.jit(f)
    with pytest.raises(JaxRuntimeError) as info:
        jax.block_until_ready(g(1.0))
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    message = str(info.value)
    assert "Traceback" in message and "the user's callback failed" in message
    assert "broken" in message
    # the process lives, and callbacks still work
    np.testing.assert_allclose(jax.jit(sin_callback)(jnp.zeros(3)), 0.0)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_a_callback_returning_the_wrong_shape(mode):
    def f(x):
        return jax.pure_callback(lambda a: np.ones(4, np.float32), F32_3, x)

    g = f if mode == "eager" else jax.jit(f)
    with pytest.raises(
        JaxRuntimeError, match=r"result 0 has shape \(4,\), but \(3,\) was declared"
    ):
        jax.block_until_ready(g(jnp.ones(3)))


def test_a_callback_returning_the_wrong_number_of_results():
    f = jax.jit(lambda x: jax.pure_callback(lambda a: (a, a), F32_3, x))
    with pytest.raises(JaxRuntimeError, match="returned 2 results, but 1 were declared"):
        jax.block_until_ready(f(jnp.ones(3)))


def test_bad_result_shape_dtypes_raise_as_jax():
    with pytest.raises(AttributeError, match="'int' object has no attribute 'dtype'"):
        jax.pure_callback(lambda a: a, 3, 1.0)
    with pytest.raises(AttributeError, match="'str' object has no attribute 'dtype'"):
        io_callback(lambda a: a, "x", 1.0)
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.pure_callback(lambda a: a, [np.ones(3)], 1.0)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        jax.pure_callback(np.sin, F32, 1.0, vmap_method="foo")


@pytest.mark.parametrize("api", ["pure", "io"])
def test_a_callback_that_is_not_callable_fails_when_called_as_jax(api):
    bind = jax.pure_callback if api == "pure" else io_callback
    with pytest.raises(JaxRuntimeError, match="not callable") as info:
        bind(3, F32, 1.0)
    assert isinstance(info.value.__cause__, TypeError)


# --------------------------------------------------------------------------------------------
# The runtime underneath: loops, threads, lifetimes, caches


def test_callback_inside_a_10000_step_scan():
    def body(carry, _):
        carry = jax.pure_callback(lambda c: c + np.float32(1), F32, carry)
        return carry, None

    out = jax.jit(lambda: lax.scan(body, np.float32(0), None, length=10_000)[0])()
    assert float(out) == 10_000.0


def test_threads_call_a_jitted_callback_concurrently():
    f = jax.jit(lambda x: jax.pure_callback(lambda a: a * 2, F32_3, x) + 1)
    results, errors = [], []

    def worker(k):
        try:
            for i in range(40):
                value = float(k * 100 + i)
                out = f(jnp.full(3, value))
                results.append(np.array_equal(np.asarray(out), np.full(3, 2 * value + 1)))
        except Exception as err:  # noqa: BLE001 (reported below)
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 160 and all(results)


@compiled
def test_no_callable_leaks_over_1000_compilations():
    from tracejit._src.runtime import ffi

    gc.collect()
    before = ffi.registered_count()
    for i in range(1000):
        f = jax.jit(lambda x, i=i: jax.pure_callback(lambda a: a + i, F32, x))
        assert float(f(np.float32(0))) == i
        del f
    gc.collect()
    assert ffi.registered_count() == before


@compiled
def test_callbacks_live_as_long_as_their_executable():
    from tracejit._src.runtime import ffi

    def callback(a):
        return a

    f = jax.jit(lambda x: jax.pure_callback(callback, F32, x))
    f(1.0)
    gc.collect()
    (entry,) = [e for e in list(ffi._registry.values()) if "callback" in e.name]
    callback_id = entry.id
    del entry
    gc.collect()
    assert ffi.is_registered(callback_id)  # the jitted function's executable holds it
    assert float(f(2.0)) == 2.0
    del f
    gc.collect()
    assert not ffi.is_registered(callback_id)


@compiled
def test_programs_with_callbacks_never_reach_the_disk_cache(tmp_path):
    code = (
        "import numpy as np, tracejit as jax\n"
        "f = jax.jit(lambda x: jax.pure_callback(np.cos, jax.ShapeDtypeStruct((), np.float32), x))\n"
        "print(float(f(np.float32(0))))\n"
        "print(float(jax.jit(lambda x: x + 1)(np.float32(1))))\n"
    )
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tmp_path))
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1.0", "2.0"]
    entries = list((tmp_path / "executables").iterdir())
    assert len(entries) == 1  # the program without a callback only
