"""The C accelerator's jit dispatch gives exactly what the Python path gives.

A steady call of a jitted function on Arrays and Python scalars (in tuples, lists, dicts and
any other pytree node) runs in C (`FastCall`): signature check, argument table, execute,
output Arrays; waiting for a buffer and destroying one are single C calls (`Runtime`). Every other call declines to the Python path. Each test
compares the two: the Python path is taken by setting `jit.accel` to None (no `FastCall` is
made) and, for the runtime's calls, the plugin's `accel` to None. Skipped where the
accelerator is not built or no PJRT plugin loads.
"""

import collections
import gc
import sys
import threading
from typing import NamedTuple

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, jit, runtime
from tracejit._src.accel import accel
from tracejit._src.array import DeviceArray
from tracejit._src.runtime.pjrt import XlaRuntimeError

pytestmark = [
    pytest.mark.skipif(accel is None, reason="the C accelerator is not built here"),
    pytest.mark.skipif(
        not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
    ),
]


def python_path(monkeypatch):
    monkeypatch.setattr(jit, "accel", None)


def in_c_only(monkeypatch):
    """From now on a call that reaches the Python path's program call fails the test."""

    def refuse(self, args):
        raise AssertionError("the call went through the Python path")

    monkeypatch.setattr(dispatch.CompiledProgram, "__call__", refuse)


def steady_results(fun, args, monkeypatch):
    """The results of the second call of `jit(fun)`: made in C, then by the Python path."""
    fast = jax.jit(fun)
    fast(*args)
    assert fast._fast is not None, "the accelerator declined this signature"
    with monkeypatch.context() as patch:
        in_c_only(patch)
        from_c = fast(*args)
        from_c_again = fast(*args)
    with monkeypatch.context() as patch:
        python_path(patch)
        slow = jax.jit(fun)
        slow(*args)
        assert slow._fast is None
        from_python = slow(*args)
    return from_c, from_c_again, from_python


def assert_same_results(got, want):
    if isinstance(got, Scaled):
        assert got.scale == want.scale
        got, want = got.value, want.value
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert type(g) is type(w) is DeviceArray
        assert g.shape == w.shape and g.dtype == w.dtype and g.weak_type == w.weak_type
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def f32(*values):
    return jax.device_put(np.array(values, np.float32))


class Pair(NamedTuple):
    a: object
    b: object


@jax.tree_util.register_pytree_node_class
class Scaled:
    """A registered class with static data (its scale: the aux data of its node)."""

    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


CASES = {
    "add one": (lambda x: x + 1, lambda: (f32(1, 2, 3, 4),)),
    "two arguments, weak result": (
        lambda x, y: x * y,
        lambda: (jnp.float32(2), 3.0 * jnp.ones(())),
    ),
    "ints and booleans": (
        lambda i, b: (i * 2, ~b, jnp.where(b, i, -i)),
        lambda: (jnp.arange(5, dtype=jnp.int32), jnp.array([True, False, True, True, False])),
    ),
    "list of 100 scalars": (lambda xs: sum(xs), lambda: ([jnp.float32(i) for i in range(100)],)),
    "nested tuples and lists": (
        lambda p, batch: {"w": p[0][0] @ batch[1], "b": [p[0][1] + 1, p[1]]},
        lambda: (((jnp.ones((2, 3)), jnp.zeros(3)), jnp.eye(2)), ([], jnp.ones((3, 2)))),
    ),
    "dicts and None": (
        lambda params, skip, x: {"y": x @ params["w"] + params["b"], "n": skip},
        lambda: ({"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}, None, jnp.ones((4, 3))),
    ),
    "no outputs but a constant": (lambda x: (x, 7), lambda: (f32(1),)),
    "empty and zero-dimensional": (
        lambda e, s: (e * 2, s - 1),
        lambda: (jnp.zeros((0, 3)), jnp.float32(5)),
    ),
    "a host Array": (lambda x: x.sum(), lambda: (jnp.asarray(np.arange(6.0, dtype=np.float32)),)),
    "Python scalars of each type": (
        lambda x, i, s, b, c: (x * s + i, jnp.where(b, x, -x), x * c),
        lambda: (f32(1, 2), 3, 0.5, True, 1 + 2j),
    ),
    "a namedtuple and an OrderedDict": (
        lambda p, d: p.a * p.b + d["z"] - d["a"],
        lambda: (Pair(f32(1, 2), f32(3, 4)), collections.OrderedDict(z=f32(5), a=f32(1))),
    ),
    "a registered class with static data": (
        lambda s, t: Scaled(s.value * s.scale, t.scale),
        lambda: (Scaled(f32(1, 2), 3.0), Scaled(None, "static")),
    ),
    "unused arguments": (lambda i, x, y: x * 2, lambda: (7, f32(1, 2), f32(5))),
}


@pytest.mark.parametrize("name", CASES)
def test_steady_call_in_c_equals_the_python_path(monkeypatch, name):
    fun, make_args = CASES[name]
    args = make_args()
    from_c, from_c_again, from_python = steady_results(fun, args, monkeypatch)
    assert_same_results(from_c, from_python)
    assert_same_results(from_c_again, from_python)


def test_outputs_made_in_c_are_ordinary_arrays(monkeypatch):
    f = jax.jit(lambda x: x * 2)
    x = f32(1, 2, 3)
    f(x)
    in_c_only(monkeypatch)
    y = f(x)
    buffer = y._buffer
    assert "pending" in repr(buffer) or "ready" in repr(buffer)
    assert y.block_until_ready() is y and y.is_ready()
    assert buffer.shape == (3,) and buffer.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), [2, 4, 6])  # a zero-copy view: `_ptr` made
    assert buffer.unsafe_pointer() == np.asarray(y).ctypes.data
    np.testing.assert_array_equal(y + 1, [3, 5, 7])  # eager
    z = f(y)  # an output fed back: its signature was set in C
    np.testing.assert_array_equal(z, [4, 8, 12])
    z.delete()
    assert z.is_deleted()


def test_calls_keep_no_references(monkeypatch):
    """Each argument's Array and Buffer are held during a call only; outputs die with their
    last reference (their buffers destroyed by the finalizer, once)."""
    g = jax.jit(lambda xs: (sum(xs), [xs[0] * 2, xs[1]]))
    xs = [f32(i) for i in range(20)]
    g(xs)
    before = [(sys.getrefcount(x), sys.getrefcount(x._buffer)) for x in xs]
    in_c_only(monkeypatch)
    outputs = [g(xs) for _ in range(100)]
    buffers = [leaf._buffer for leaf in jax.tree_util.tree_leaves(outputs[-1])]
    # the list, the Array, the loop's variable, getrefcount's argument: no other holder
    assert [sys.getrefcount(b) for b in buffers] == [4] * 3
    del outputs, buffers
    gc.collect()
    assert [(sys.getrefcount(x), sys.getrefcount(x._buffer)) for x in xs] == before


def test_pjrt_errors_are_the_python_paths(monkeypatch):
    """A buffer freed behind the Array's back (not marked deleted) reaches PJRT, whose error
    becomes the same XlaRuntimeError either way."""
    messages = []
    for path in ("c", "python"):
        with monkeypatch.context() as patch:
            if path == "python":
                python_path(patch)
            f = jax.jit(lambda x: x + 1)
            x = f32(1, 2)
            f(x)
            buffer = x._buffer
            buffer.block_until_ready()
            buffer._client.plugin.query("PJRT_Buffer_Delete", "buffer", buffer._ptr)
            with pytest.raises(XlaRuntimeError) as error:
                f(x)
            messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "deleted" in messages[0].lower() or "donated" in messages[0].lower()


def test_waiting_for_a_buffer_as_the_python_path(monkeypatch):
    """ReadyEvent, Await, Destroy in one C call: the same outcome as through cffi, also for a
    buffer whose memory is gone (PJRT's error, the same exception)."""
    client = runtime.get_client()
    plugin = client.plugin
    outcomes = []
    for path in ("c", "python"):
        with monkeypatch.context() as patch:
            if path == "python":
                patch.setattr(plugin, "accel", None)
            fresh = client.buffer_from_numpy(np.arange(3, dtype=np.float32))
            gone = client.buffer_from_numpy(np.arange(3, dtype=np.float32))
            plugin.await_buffer_ready(fresh)
            gone.delete()
            try:
                plugin.await_buffer_ready(gone)
                outcomes.append(None)
            except XlaRuntimeError as error:
                outcomes.append(str(error))
            del fresh, gone  # (destroyed by the path that made them)
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize(
    "why",
    ["kwargs", "static", "donated", "disable_jit", "debug_nans", "new shape"],
)
def test_declined_calls_go_the_python_way(monkeypatch, why):
    """Calls the C path does not take give what they always gave."""
    x = f32(1, 2)
    if why == "kwargs":
        f = jax.jit(lambda x, y: x + y)
        calls = [lambda: f(x, y=x)] * 2
        want = [2, 4]
    elif why == "static":
        f = jax.jit(lambda x, n: x * n, static_argnums=1)
        calls = [lambda: f(x, 3)] * 2
        want = [3, 6]
    elif why == "donated":
        f = jax.jit(lambda x: x + 1, donate_argnums=0)
        calls = [lambda: f(f32(1, 2))] * 2
        want = [2, 3]
    elif why == "disable_jit":
        runs = []
        f = jax.jit(lambda x: runs.append(x) or x - 1)
        f(x)

        def under_disable_jit():
            with jax.disable_jit():
                out = f(x)
            assert len(runs) == 2  # the Python function ran op by op
            return out

        calls = [under_disable_jit]
        want = [0, 1]
    elif why == "debug_nans":
        f = jax.jit(lambda x: jnp.log(x - 2))
        f(x)

        def checked():
            with jax.debug_nans(True), pytest.raises(FloatingPointError):
                f(x)
            return f(f32(3, 5))

        calls = [checked]
        want = np.log([1, 3])
    else:
        f = jax.jit(lambda x: x * 10)
        f(x)
        calls = [lambda: f(f32(1, 2, 3))]
        want = [10, 20, 30]
    for call in calls:
        np.testing.assert_allclose(np.asarray(call()), want, rtol=1e-6)


def test_transformations_trace_instead(monkeypatch):
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    x = f32(0.5, 1.0)
    f(x)
    assert f._fast is not None
    np.testing.assert_allclose(jax.grad(lambda v: f(v).sum())(x), 2 * np.cos([0.5, 1.0]), 1e-6)
    np.testing.assert_allclose(jax.vmap(f)(x), 2 * np.sin([0.5, 1.0]), 1e-6)
    assert "sin" in str(jax.make_jaxpr(f)(x))


def test_deleted_and_sharded_arguments_decline():
    f = jax.jit(lambda x: x + 1)
    x = f32(1, 2)
    f(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_x64_changes_the_trace():
    f = jax.jit(lambda x: x + 1)
    x = jnp.arange(3)
    assert f(x).dtype == np.int32
    with jax.enable_x64(True):
        y = jnp.arange(3)
        assert f(y).dtype == np.int64
    assert f(x).dtype == np.int32


def test_concurrent_calls_from_threads():
    """Calls from several threads at once: one uses the program's table in C, the others
    decline to the Python path's own tables meanwhile; all results right."""
    f = jax.jit(lambda x, k: x * k)
    x = jnp.arange(1000.0, dtype=jnp.float32)
    ks = [jnp.float32(k) for k in range(8)]
    f(x, ks[0])
    errors = []

    def work(k):
        try:
            for _ in range(300):
                np.testing.assert_array_equal(np.asarray(f(x, ks[k])), np.arange(1000.0) * k)
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


def test_a_fast_call_keeps_its_program_loaded():
    """A `FastCall` outlives the caches that made it (another thread may be calling it when
    they are cleared): it holds the executable, which stays loaded."""
    f = jax.jit(lambda x: x * 3)
    x = f32(1, 2)
    f(x)
    fast = f._fast
    jax.clear_caches()
    gc.collect()
    np.testing.assert_array_equal(np.asarray(fast((x,))), [3, 6])


def test_another_structure_is_another_signature():
    """Same leaves in another structure (list for tuple, other dict keys, None for an Array)
    trace again, as on the Python path; the C path never reads them into the old program."""
    f = jax.jit(lambda d: {k + "!": v * (2 if k == "b" else 3) for k, v in d.items()})
    x, y = f32(1), f32(10)
    for _ in range(2):
        assert set(f({"a": x, "b": y})) == {"a!", "b!"}
    out = f({"a": x, "c": y})
    assert set(out) == {"a!", "c!"} and float(out["c!"][0]) == 30
    g = jax.jit(lambda xs: {type(xs).__name__: xs[0]})
    for _ in range(2):
        assert list(g([x, y])) == ["list"]
    assert list(g((x, y))) == ["tuple"]
    h = jax.jit(lambda a, b: a if b is None else a + b)
    for _ in range(2):
        np.testing.assert_array_equal(h(x, y), [11])
    np.testing.assert_array_equal(h(x, None), [1])


def test_outputs_made_by_the_python_path_are_taken_in_c(monkeypatch):
    """A first call's outputs (made in Python, without a kept signature) fed to the next call:
    C reads their signature from their buffers, as `jit` would."""
    f = jax.jit(lambda x, p: (x * 2, Pair(p.b, p.a)))
    y, p = f(f32(1, 2), Pair(f32(3), f32(4)))
    in_c_only(monkeypatch)
    z, q = f(y, p)
    np.testing.assert_array_equal(z, [4, 8])
    assert isinstance(q, Pair) and float(q.a[0]) == 3 and float(q.b[0]) == 4


def test_other_static_data_is_another_signature(monkeypatch):
    f = jax.jit(lambda s: s.value * s.scale)
    x = f32(1, 2)
    np.testing.assert_array_equal(f(Scaled(x, 2.0)), [2, 4])
    np.testing.assert_array_equal(f(Scaled(x, 2.0)), [2, 4])
    np.testing.assert_array_equal(f(Scaled(x, 5.0)), [5, 10])
    np.testing.assert_array_equal(f(Scaled(x, 2.0)), [2, 4])


@pytest.mark.parametrize("path", ["c", "python"])
def test_python_scalars_meet_the_transfer_guard_and_int32_bounds(monkeypatch, path):
    """A Python scalar is a host-to-device transfer (the guard's `disallow` refuses it) and a
    weakly typed int32 (a larger int overflows): the same errors from either path."""
    if path == "python":
        python_path(monkeypatch)
    f = jax.jit(lambda x, s: x * s)
    x = f32(1, 2)
    f(x, 2.0)
    f(x, 2)
    with (
        jax.transfer_guard("disallow"),
        pytest.raises(jax.errors.JaxRuntimeError, match="Disallowed host-to-device"),
    ):
        f(x, 3.0)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        f(x, 2**40)
    np.testing.assert_array_equal(f(x, 3), [3, 6])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_python_scalars_made_in_c_are_the_python_paths(monkeypatch):
    """A step counter passed as a Python int, a float that changes, -0.0 after 0.0 (the same
    by `==`, not by bits), a bool, a float beyond float32's range (Python's conversion), an
    int64 under x64: each call's scalar buffer made in C holds what the Python path's holds."""
    f = jax.jit(lambda i, s, b, x: (x + i, x * s, jnp.where(b, x, -x)))
    x = f32(0.5)
    calls = [(i, s, b) for i in range(5) for s in (1.5, 0.0, -0.0, 2.5) for b in (True, False)]
    calls += [(2**31 - 1, 1e40, True), (-(2**31), -1e-45, False)]
    results = {}
    for path in ("c", "python"):
        with monkeypatch.context() as patch:
            if path == "python":
                python_path(patch)
            g = jax.jit(f)
            g(0, 1.0, True, x)
            if path == "c":
                in_c_only(patch)
            results[path] = [jax.tree_util.tree_map(np.asarray, g(*call, x)) for call in calls]
    for got, want, call in zip(results["c"], results["python"], calls, strict=True):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w, err_msg=str(call))
            assert np.signbit(g).tolist() == np.signbit(w).tolist(), call
    with jax.enable_x64(True):
        h = jax.jit(lambda i, x: x * 0 + i)
        zero = jax.device_put(np.zeros((), np.int64))
        h(1, zero)
        in_c_only(monkeypatch)
        assert int(h(2**40, zero)) == 2**40
