"""jit's `donate_argnums`/`donate_argnames` and `keep_unused`: donated buffers are reused by the
outputs and their Arrays deleted; unused arguments are left out of the compiled program."""

import subprocess
import sys
import warnings
from functools import partial

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime

pjrt_only = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)


@pytest.fixture(autouse=True)
def fresh_programs(monkeypatch):
    monkeypatch.setattr(dispatch, "_programs", {})


def pointer(x) -> int:
    return x._buffer.unsafe_pointer()


# -- keep_unused ---------------------------------------------------------------------------------


def test_unused_arguments_are_left_out_of_the_program():
    def f(x, unused, y):
        return x * 2.0 + y

    x, unused, y = jnp.arange(3.0), jnp.ones(5), jnp.full(3, 10.0)
    pruned = jax.jit(f).lower(x, unused, y).as_text()
    assert "@main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in pruned
    kept = jax.jit(f, keep_unused=True).lower(x, unused, y).as_text()
    assert "@main(%arg0: tensor<3xf32>, %arg1: tensor<5xf32>, %arg2: tensor<3xf32>)" in kept
    np.testing.assert_array_equal(jax.jit(f)(x, unused, y), [10.0, 12.0, 14.0])
    np.testing.assert_array_equal(jax.jit(f, keep_unused=True)(x, unused, y), [10.0, 12.0, 14.0])


@pjrt_only
def test_an_unused_argument_is_not_transferred():
    f = jax.jit(lambda x, unused: x + 1.0)
    unused = jnp.ones(4)
    np.testing.assert_array_equal(f(jnp.zeros(2), unused), [1.0, 1.0])
    assert getattr(unused, "_buffer", None) is None  # never given a device buffer
    deleted = jnp.ones(4)
    deleted.delete()
    np.testing.assert_array_equal(f(jnp.zeros(2), deleted), [1.0, 1.0])  # not even read
    with pytest.raises(RuntimeError, match="deleted"):
        jax.jit(lambda x, unused: x + 1.0, keep_unused=True)(jnp.zeros(2), deleted)


def test_arguments_only_dead_code_reads_are_unused_too():
    def f(x, y):
        dead = y * 2.0  # noqa: F841 (staged, but no output depends on it)
        return x + 1.0

    x, y = jnp.arange(3.0), jnp.ones(5)
    text = jax.jit(f).lower(x, y).as_text()
    assert "@main(%arg0: tensor<3xf32>)" in text and "stablehlo.multiply" not in text
    kept = jax.jit(f, keep_unused=True).lower(x, y).as_text()
    assert "%arg1: tensor<5xf32>" in kept and "stablehlo.multiply" not in kept
    np.testing.assert_array_equal(jax.jit(f)(x, y), [1.0, 2.0, 3.0])


def test_unused_arguments_in_pytrees_and_outputs_that_are_inputs():
    f = jax.jit(lambda p, q: (p["b"], q))
    out = f({"a": jnp.ones(2), "b": jnp.arange(3.0)}, jnp.full(2, 7.0))
    np.testing.assert_array_equal(out[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(out[1], [7.0, 7.0])


# -- donation ------------------------------------------------------------------------------------


@pjrt_only
def test_a_donated_buffer_is_reused_and_its_array_deleted():
    f = jax.jit(lambda x, y: (x * 2.0, y + 1.0), donate_argnums=0)
    x, y = jax.device_put(jnp.arange(4.0)), jnp.ones(4)
    address = pointer(x)
    doubled, incremented = f(x, y)
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(incremented, [2.0, 2.0, 2.0, 2.0])
    assert pointer(doubled) == address  # the output was written into the donated memory
    assert x.is_deleted() and not y.is_deleted()
    assert x.shape == (4,) and x.dtype == np.float32  # metadata survives, as in JAX
    message = r"Array has been deleted with shape=float32\[4\]"
    for use in (lambda: x + 1.0, lambda: np.asarray(x), lambda: f(x, y), repr, x.tolist):
        with pytest.raises(RuntimeError, match=message):
            use(x) if use is repr else use()
    with pytest.raises(RuntimeError, match=message):
        x.block_until_ready()


@pjrt_only
def test_donation_in_a_loop_keeps_one_buffer():
    step = jax.jit(lambda w, g: w - 0.5 * g, donate_argnums=0)
    w, g = jax.device_put(jnp.full(1000, 4.0)), jnp.ones(1000)
    w = step(w, g)
    address = pointer(w)
    for _ in range(5):
        w = step(w, g)
        assert pointer(w) == address
    np.testing.assert_array_equal(w, np.full(1000, 1.0, np.float32))


@pjrt_only
def test_donated_pytrees_by_name_and_with_static_arguments():
    g = jax.jit(lambda p, u: {"a": p["a"] + 1.0, "b": p["b"]}, donate_argnums=0)
    p = {"a": jax.device_put(jnp.ones(3)), "b": jax.device_put(jnp.zeros(2))}
    out = g(p, jnp.ones(5))
    assert p["a"].is_deleted() and p["b"].is_deleted()
    np.testing.assert_array_equal(out["a"], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(out["b"], [0.0, 0.0])

    h = jax.jit(lambda x, n: x * n, static_argnames="n", donate_argnames="x")
    for call in (lambda x: h(x, n=2), lambda x: h(x=x, n=2), lambda x: h(x, 2)):
        x = jax.device_put(jnp.ones(3))
        np.testing.assert_array_equal(call(x), [2.0, 2.0, 2.0])
        assert x.is_deleted()

    k = jax.jit(lambda n, x: x * n, static_argnums=0, donate_argnums=1)
    x = jax.device_put(jnp.ones(3))
    np.testing.assert_array_equal(k(3, x), [3.0, 3.0, 3.0])
    assert x.is_deleted()


@pjrt_only
def test_host_values_can_be_donated_without_touching_numpy_memory():
    f = jax.jit(lambda x: x * 2.0, donate_argnums=0)
    source = np.arange(4.0, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy inputs and scalars donate a copy, silently
        np.testing.assert_array_equal(f(source), [0.0, 2.0, 4.0, 6.0])
        np.testing.assert_array_equal(f(3.0), 6.0)
    np.testing.assert_array_equal(source, [0.0, 1.0, 2.0, 3.0])
    x = jnp.asarray(source)
    jax.jit(lambda v: v + 0.0)(x)  # x now has a zero-copy buffer over its NumPy memory
    view = np.asarray(x)
    np.testing.assert_array_equal(f(x), [0.0, 2.0, 4.0, 6.0])
    assert x.is_deleted()
    np.testing.assert_array_equal(view, [0.0, 1.0, 2.0, 3.0])


@pjrt_only
def test_an_array_viewed_by_numpy_is_not_donated():
    x = jax.device_put(jnp.arange(4.0))
    view = np.asarray(x)  # zero-copy: donating would free memory NumPy still reads
    out = jax.jit(lambda v: v * 2.0, donate_argnums=0)(x)
    assert not x.is_deleted()
    np.testing.assert_array_equal(view, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x + 1.0, [1.0, 2.0, 3.0, 4.0])


def test_a_donation_without_a_matching_output_warns():
    f = jax.jit(lambda x: jnp.sum(x), donate_argnums=0)
    x = jnp.ones(4)
    if dispatch.backend() == "pjrt":
        with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[4\]"):
            out = f(x)
        assert not x.is_deleted()
        with pytest.warns(UserWarning, match="not usable"):
            assert "tf.aliasing_output" not in f.lower(x).as_text()
    else:
        out = f(x)
    assert float(out) == 4.0


def test_donations_are_matched_to_outputs_by_shape_and_dtype():
    f = jax.jit(lambda a, b, c: (c + 1.0, a.astype(jnp.int32), b * 2.0), donate_argnums=(0, 1, 2))
    args = (jnp.ones(3), jnp.ones(2), jnp.ones(2))
    with pytest.warns(UserWarning, match=r"not usable: float32\[3\]"):
        text = f.lower(*args).as_text()
    # outputs f32[2] (0) and f32[2] (2) take the donated f32[2] parameters in order
    assert "%arg1: tensor<2xf32> {tf.aliasing_output = 0 : i32}" in text
    assert "%arg2: tensor<2xf32> {tf.aliasing_output = 2 : i32}" in text
    assert "%arg0: tensor<3xf32>," in text


@pjrt_only
def test_a_donated_array_passed_twice_is_an_error_not_a_crash():
    h = jax.jit(lambda a, b: a + b, donate_argnums=0)
    a = jax.device_put(jnp.ones(4))
    with pytest.raises(ValueError, match="donated Array is also passed"):
        h(a, a)
    assert not a.is_deleted()
    np.testing.assert_array_equal(h(a, jnp.ones(4)), [2.0, 2.0, 2.0, 2.0])


def test_donate_argnums_out_of_range():
    with pytest.raises(ValueError, match="only accepts 1 positional arguments"):
        jax.jit(lambda a: a, donate_argnums=1)


def test_delete():
    x = jnp.arange(3.0)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted() and x.shape == (3,)
    with pytest.raises(RuntimeError, match="deleted"):
        jnp.sum(x)


@pjrt_only
def test_donation_misuse_never_aborts_the_process():
    script = """
import warnings
import numpy as np
import tracejit as jax, tracejit.numpy as jnp
f = jax.jit(lambda x, y: (x * 2.0, y), donate_argnums=(0, 1))
x = jax.device_put(jnp.ones(4))
f(x, x + 0.0)
for bad in (lambda: f(x, jnp.ones(4)), lambda: np.asarray(x), lambda: x.delete() or f(x, x)):
    try:
        bad()
    except (RuntimeError, ValueError):
        pass
y = jax.device_put(jnp.ones(4))
try:
    f(y, y)
except ValueError:
    pass
print("survived")
"""
    result = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "survived" in result.stdout


def test_partial_decorator_form():
    @partial(jax.jit, donate_argnums=(0,), keep_unused=True)
    def f(x, y):
        return x + 1.0

    np.testing.assert_array_equal(f(jnp.zeros(2), jnp.zeros(3)), [1.0, 1.0])
