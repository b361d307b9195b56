"""jit: one trace per signature, compiled (or NumPy-evaluated) results equal to eager ones, and
composition with the other transformations. Runs on both backends."""

import warnings
from functools import partial

import numpy as np
import pytest
from helpers import assert_close

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime


@pytest.fixture(params=["pjrt", "numpy"], autouse=True)
def backend(request, monkeypatch):
    if request.param == "pjrt" and not runtime.platform_available():
        pytest.skip("no PJRT plugin on this platform")
    monkeypatch.setattr(dispatch, "_backend", request.param)
    monkeypatch.setattr(dispatch, "_programs", {})
    return request.param


def test_jit_equals_eager():
    def f(x, y):
        return jnp.sum(x * jnp.sin(y) + 2.0)

    x, y = jnp.linspace(0.0, 1.0, 6).reshape(2, 3), jnp.ones(3)
    assert_close(jax.jit(f)(x, y), f(x, y), 1e-5)


def test_one_trace_per_signature_and_weak_scalars_do_not_retrace():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 2.0

    assert_close(f(1.0), 2.0, 1e-5)
    assert_close(f(3.0), 6.0, 1e-5)
    assert len(traces) == 1
    assert_close(f(jnp.ones(3)), [2.0, 2.0, 2.0], 1e-5)
    assert_close(f(jnp.zeros(3)), [0.0, 0.0, 0.0], 1e-5)
    assert len(traces) == 2


def test_static_arguments_are_part_of_the_signature():
    traces = []

    @partial(jax.jit, static_argnums=1)
    def power(x, n):
        traces.append(n)
        for _ in range(n - 1):
            x = x * x
        return x

    assert_close(power(2.0, 2), 4.0, 1e-5)
    assert_close(power(3.0, 2), 9.0, 1e-5)
    assert_close(power(2.0, 3), 16.0, 1e-5)
    assert traces == [2, 3]

    @partial(jax.jit, static_argnames="scale")
    def scaled(x, scale):
        return x * scale

    assert_close(scaled(2.0, scale=3.0), 6.0, 1e-5)


def test_nested_jit_is_a_call_equation():
    def outer(x):
        @jax.jit
        def inner(y):
            return y + x * jnp.ones(1)

        return x + inner(x - 2.0)

    text = str(jax.make_jaxpr(outer)(1.0))
    assert "jit[" in text and "name=inner" in text and "jaxpr={ lambda" in text


def test_jit_composes_with_autodiff_in_every_order():
    def f(x):
        return jnp.sum(jnp.sin(x) * x)

    x = jnp.linspace(0.1, 1.0, 4)
    expected = jax.grad(f)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(jax.jit(jax.grad(f))(x), expected, 1e-5)
        assert_close(jax.grad(jax.jit(f))(x), expected, 1e-5)
        t = jnp.ones(4)
        jvp_out = jax.jit(lambda x, t: jax.jvp(jax.jit(f), (x,), (t,)))(x, t)
        assert_close(jvp_out[1], jnp.dot(expected, t), 1e-5)


def test_lower_and_compile():
    lowered = jax.jit(lambda x: jnp.sum(jnp.sin(x))).lower(jnp.ones(3))
    text = lowered.as_text()
    assert "stablehlo.sine" in text and "func.func public @main" in text
    compiled = lowered.compile()
    assert_close(compiled(jnp.ones(3)), 3 * np.sin(1.0), 1e-5)


def test_the_call_primitive_transposes_its_body():
    from tracejit._src.core import ShapedArray
    from tracejit._src.interpreters.transpose import UndefinedPrimal, transpose_rules

    f = jax.jit(lambda x, c: x * c + jnp.sum(x))
    (eqn,) = jax.make_jaxpr(f)(jnp.ones(3), jnp.ones(3)).eqns
    x = UndefinedPrimal(ShapedArray((3,), np.float32))
    ct_x, ct_c = transpose_rules[eqn.primitive]([jnp.ones(3)], x, jnp.arange(3.0), **eqn.params)
    assert_close(ct_x, [3.0, 4.0, 5.0], 1e-5)
    assert ct_c is None


def test_repeated_calls_with_arrays_reuse_the_program_per_signature():
    traces = []

    @jax.jit
    def f(x, y):
        traces.append(1)
        return x * 2 + y, x

    strong = jnp.ones(3)
    for _ in range(3):
        out, same = f(strong, jnp.arange(3.0))
        assert_close(out, [2.0, 3.0, 4.0], 1e-5)
        assert same.dtype == np.float32
    out, _ = f(jax.jit(lambda: jnp.ones(2))(), jnp.zeros(2))
    assert_close(out, [2.0, 2.0], 1e-5)
    out, _ = f(out, jnp.zeros(2))  # a jitted result fed back: same signature, no new trace
    assert_close(out, [4.0, 4.0], 1e-5)
    out, _ = f(jnp.ones(2, dtype=jnp.int32), jnp.zeros(2, dtype=jnp.int32))
    assert out.dtype == np.int32
    assert len(traces) == 3
    assert_close(f(jnp.asarray(2.0), 1.0)[0], 5.0, 1e-5)  # weak scalars go the general way


def test_arrays_take_the_hot_path_after_numpy_inputs_compiled_their_signature(monkeypatch):
    f = jax.jit(lambda x: x + 1.0)
    assert_close(
        f(np.zeros(3, np.float32)), [1.0, 1.0, 1.0], 1e-5
    )  # compiles f32[3] for a NumPy input
    assert_close(f(jnp.zeros(3)), [1.0, 1.0, 1.0], 1e-5)
    monkeypatch.setattr(type(f), "_trace", None)  # the hot path never traces or flattens
    assert_close(f(jnp.ones(3)), [2.0, 2.0, 2.0], 1e-5)


def test_disable_jit_runs_python_every_call_and_every_iteration():
    from tracejit import lax

    seen = []

    def body(c):
        seen.append(c)
        return c * 2.0

    f = jax.jit(lambda x: (seen.append(type(x).__name__), x + 1)[1])
    with jax.disable_jit():
        assert jax.config.jax_disable_jit
        assert f(1.0) == 2.0 and f(2.0) == 3.0  # traced never: the Python runs each call
        assert lax.while_loop(lambda c: c < 10.0, body, 1.0) == 16.0
        carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(3.0))
        assert lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0) == 2.0
        assert lax.switch(5, [lambda: 0, lambda: 1]) == 1  # the index clamped
        assert lax.fori_loop(0, 3, lambda i, c: c + i, 0) == 3
    assert not jax.config.jax_disable_jit
    assert seen == ["float", "float", 1.0, 2.0, 4.0, 8.0]
    np.testing.assert_array_equal(carry, 3.0)
    np.testing.assert_array_equal(ys, [0.0, 0.0, 2.0])


def test_a_static_argument_passed_by_keyword_is_static():
    traces = []

    def scaled(x, n):
        traces.append(n)
        return x * n  # n is a Python int here, never a tracer

    f = jax.jit(scaled, static_argnums=1)
    assert float(f(2.0, n=3)) == 6.0
    assert float(f(2.0, 3)) == 6.0
    assert traces == [3, 3]  # one trace per way of passing it, each with the Python value


def test_static_argnums_beyond_the_signature_raise_at_decoration():
    with pytest.raises(ValueError, match=r"static_argnums=\(3,\), but only accepts 1 positional"):
        jax.jit(lambda x: x, static_argnums=3)


def test_jit_checks_its_options_as_jax_does():
    with pytest.raises(TypeError, match="Expected a callable value, got 5"):
        jax.jit(5)
    with pytest.raises(ValueError, match=r"invalid argnames \{'y'\} in static_argnames"):
        jax.jit(lambda x: x, static_argnames="y")
    with pytest.raises(ValueError, match=r"invalid argnames \{'y'\} in donate_argnames"):
        jax.jit(lambda x: x, donate_argnames="y")
    with pytest.raises(ValueError, match=r"donate_argnums=\(2,\), but only accepts 1 positional"):
        jax.jit(lambda x: x, donate_argnums=2)
    with pytest.raises(
        ValueError, match=r"cannot intersect. Argument names \{'y'\} appear in both"
    ):
        jax.jit(lambda x, y: x, static_argnums=1, donate_argnums=1)
    jax.jit(lambda x, **kw: x, static_argnames="y")  # **kw takes any name
    jax.jit(lambda *a: a[0], static_argnums=3)  # *a takes any position
    assert float(jax.jit(static_argnums=1)(lambda x, n: x * n)(2.0, 3)) == 6.0


@pytest.mark.parametrize(
    ("arg", "path"),
    [("abc", "x"), ({"a": object()}, r"x\['a'\]"), (np.array([1, "a"], dtype=object), "x")],
)
def test_a_non_array_argument_names_its_path(arg, path):
    with pytest.raises(TypeError, match=f"passed to the function at path {path}\\.\\n"):
        jax.jit(lambda x: x)(arg)
    with pytest.raises(
        TypeError, match=f"not a valid JAX type \\(passed to grad .* path {path}\\)"
    ):
        jax.grad(lambda y, x: y, argnums=1)(1.0, arg)
    with pytest.raises(
        TypeError, match=f"not a valid JAX type \\(passed to vmap .* path {path}\\)"
    ):
        jax.vmap(lambda x: x)(arg)


def test_a_jitted_function_retraces_when_an_option_that_changes_tracing_changes():
    f = jax.jit(lambda: jnp.arange(3))
    assert f().dtype == np.int32
    previous = jax.config.read("jax_enable_x64")
    try:
        jax.config.update("jax_enable_x64", True)
        assert f().dtype == np.int64
    finally:
        jax.config.update("jax_enable_x64", previous)
    assert f().dtype == np.int32


def test_inline_jit_traces_into_its_caller():
    inner = jax.jit(lambda y: y * 2.0, inline=True)
    text = str(jax.make_jaxpr(lambda x: inner(x) + 1.0)(1.0))
    assert "jit[" not in text and "mul a 2.0" in text
    assert jax.jit(lambda x: inner(x) + 1.0)(1.0) == 3.0
    assert jax.grad(lambda x: jax.jit(lambda y: y * y, inline=True)(x))(3.0) == 6.0


def test_jit_placement_names_only_what_there_is():
    device = jax.devices()[0]
    assert jax.jit(lambda x: x + 1, device=device)(1.0) == 2.0
    assert jax.jit(lambda x: x + 1, backend=jax.default_backend())(1.0) == 2.0
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu'"):
        jax.jit(lambda x: x, backend="gpu")
    with pytest.raises(ValueError, match="both a device and a backend"):
        jax.jit(lambda x: x, device=device, backend="cpu")


def test_an_unhashable_static_argument_is_jaxs_value_error_on_the_first_call_too():
    f = jax.jit(lambda x, y: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(1.0, [1])
