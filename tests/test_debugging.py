"""`tracejit.debug`: `print` and `callback` eagerly, under jit, vmap (each batch member), grad
(primal values, once), control flow, in program order when ordered; output through
`sys.stdout` (pytest's capture sees it); bad format strings raise what JAX raises, at trace
time. Expected jaxprs and messages were read off JAX 0.10.2."""

import logging
import re

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import debug, lax


def lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def run(mode, f, *args):
    g = f if mode == "eager" else jax.jit(f)
    return jax.block_until_ready(g(*args))


MODES = ["eager", "jit"]


@pytest.mark.parametrize("mode", MODES)
def test_print_formats_values(mode, capsys):
    def f(x, y):
        debug.print("x={x} and {} {}", y, "static", x=x)
        return x

    run(mode, f, jnp.arange(3), 1.5)
    assert lines(capsys) == ["x=[0 1 2] and 1.5 static"]


@pytest.mark.parametrize("mode", MODES)
def test_print_without_placeholders(mode, capsys):
    run(mode, lambda x: debug.print("plain") or x, 1.0)
    assert lines(capsys) == ["plain"]


def test_print_jaxpr():
    text = str(jax.make_jaxpr(lambda x: debug.print("x={x}", x=x))(1.0))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    debug_print[\n"
        "      fmt=x={x}\n"
        "      has_placeholders=True\n"
        "      in_tree=PyTreeDef(((), {'x': *}))\n"
        "      logging_record=None\n"
        f"      np_printoptions={tuple(np.get_printoptions().items())}\n"
        "      ordered=False\n"
        "      partitioned=False\n"
        "      static_args=()\n"
        "    ] a\n"
        "  in () }"
    )


def test_static_arguments_stay_in_the_equation():
    text = str(jax.make_jaxpr(lambda x: debug.print("{} {} {}", "hello", 3, x))(1.0))
    assert "static_args=((0, 'hello'),)" in text
    assert "] 3:i32[] a\n" in text


@pytest.mark.parametrize("mode", MODES)
def test_vmap_prints_each_batch_member(mode, capsys):
    def f(x):
        debug.print("x={}", x)
        return jnp.sin(x)

    run(mode, jax.vmap(f), jnp.arange(3.0))
    assert lines(capsys) == ["x=0.0", "x=1.0", "x=2.0"]


def test_vmap_jaxpr_unrolls_the_members():
    text = str(jax.make_jaxpr(jax.vmap(lambda x: debug.print("{}", x)))(jnp.arange(3.0)))
    assert text.count("debug_print[") == 3


@pytest.mark.parametrize("mode", MODES)
def test_grad_prints_primal_values_once(mode, capsys):
    def f(x):
        debug.print("x={}", x)
        return x * x

    assert float(run(mode, jax.grad(f), 2.0)) == 4.0
    assert lines(capsys) == ["x=2.0"]


def test_grad_through_scan_prints_the_forward_pass_only(capsys):
    def f(x):
        def body(c, _):
            debug.print("c={}", c)
            return c * c, None

        return lax.scan(body, x, None, length=2)[0]

    assert float(jax.jit(jax.grad(f))(2.0)) == 32.0
    assert lines(capsys) == ["c=2.0", "c=4.0"]


@pytest.mark.parametrize("mode", MODES)
def test_print_in_while_loop_and_cond(mode, capsys):
    def f(x):
        def body(c):
            debug.print("it {}", c)
            return c + 1

        n = lax.while_loop(lambda c: c < 3, body, x)
        lax.cond(n > 2, lambda: debug.print("big"), lambda: debug.print("small"))
        return n

    assert int(run(mode, f, 0)) == 3
    assert lines(capsys) == ["it 0", "it 1", "it 2", "big"]


@pytest.mark.parametrize("mode", MODES)
def test_print_in_scan_body(mode, capsys):
    def f(xs):
        def body(c, x):
            debug.print("x={}", x)
            return c + x, None

        return lax.scan(body, 0.0, xs)[0]

    run(mode, f, jnp.arange(4.0))
    assert lines(capsys) == [f"x={float(i)}" for i in range(4)]


@pytest.mark.parametrize("mode", MODES)
def test_unused_print_is_never_dropped(mode, capsys):
    def f(x):
        y = x + 1
        debug.print("y={}", y)
        return x

    run(mode, f, 1.0)
    assert lines(capsys) == ["y=2.0"]


@pytest.mark.parametrize("mode", MODES)
def test_ordered_prints_in_program_order(mode, capsys):
    def f(x):
        for i in range(8):
            debug.print("step {i} {}", x, i=i, ordered=True)
            x = x * 2
        return x

    run(mode, f, 1.0)
    assert lines(capsys) == [f"step {i} {float(2**i)}" for i in range(8)]


def test_print_inside_nested_jit_whose_result_is_unused(capsys):
    inner = jax.jit(lambda x: debug.print("inner {}", x))
    jax.block_until_ready(jax.jit(lambda x: (inner(x), x + 1)[1])(3.0))
    assert lines(capsys) == ["inner 3.0"]


def test_print_uses_numpy_print_options_of_trace_time(capsys):
    with np.printoptions(precision=2):
        f = jax.jit(lambda x: debug.print("{}", x))
        f(jnp.array([1 / 3]))
    jax.block_until_ready(f(jnp.array([1 / 3])))
    assert lines(capsys) == ["[0.33]", "[0.33]"]


def test_log_goes_to_the_logger(caplog):
    with caplog.at_level(logging.INFO, logger="tracejit.debug"):
        jax.block_until_ready(jax.jit(lambda x: debug.log("log {}", x))(2.0))
    assert [r.getMessage() for r in caplog.records] == ["log 2.0"]


# --------------------------------------------------------------------------------------------
# Format strings that do not match their arguments: JAX's exceptions, at trace time


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "fmt, args, kwargs, error, message",
    [
        ("{} {}", (1.0,), {}, IndexError, "tuple index out of range"),
        ("{y}", (), {"x": 1.0}, KeyError, "'y'"),
        ("{}", (1.0, 2.0), {}, ValueError, "Unused positional arguments to `jax.debug.print`"),
        ("{", (1.0,), {}, ValueError, "Single '{' encountered in format string"),
        (3, (1.0,), {}, TypeError, "expected str, got int"),
    ],
)
def test_format_errors_as_jax(mode, fmt, args, kwargs, error, message, capsys):
    f = lambda: debug.print(fmt, *args, **kwargs)
    with pytest.raises(error, match=re.escape(message)):
        run(mode, f)
    assert lines(capsys) == []


def test_skip_format_check(capsys):
    debug.print("{x}", x=1, skip_format_check=True)
    assert lines(capsys) == ["1"]


# --------------------------------------------------------------------------------------------
# debug.callback


@pytest.mark.parametrize("mode", MODES)
def test_callback_receives_arrays_and_static_values(mode):
    seen = []

    def f(x):
        debug.callback(lambda *a, **k: seen.append((a, k)), x, "s", jnp.ones(2), key=3)
        return x

    run(mode, f, 1.0)
    ((args, kwargs),) = seen
    assert isinstance(args[0], jax.Array) and float(args[0]) == 1.0
    assert args[1] == "s"
    np.testing.assert_array_equal(args[2], [1.0, 1.0])
    assert int(kwargs["key"]) == 3


def test_callback_jaxpr():
    text = str(jax.make_jaxpr(lambda x: debug.callback(print, x, ordered=True))(1.0))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    debug_callback[\n"
        "      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback"
        " at 0xXXXXXXXXXXXX>\n"
        "      effect=OrderedDebug\n"
        "      partitioned=False\n"
        "    ] a\n"
        "  in () }"
    )


@pytest.mark.parametrize("mode", MODES)
def test_callback_under_vmap_and_grad(mode):
    seen = []

    def f(x):
        debug.callback(lambda v: seen.append(float(v)), x)
        return x * 3

    run(mode, jax.vmap(f), jnp.arange(3.0))
    assert seen == [0.0, 1.0, 2.0]
    seen.clear()
    assert float(run(mode, jax.grad(f), 5.0)) == 3.0
    assert seen == [5.0]


def test_callback_that_raises_is_a_runtime_error():
    def broken(x):
        raise RuntimeError("inside the debug callback")

    with pytest.raises(jax.errors.JaxRuntimeError) as info:
        jax.block_until_ready(jax.jit(lambda x: (debug.callback(broken, x), x + 1)[1])(1.0))
    assert "inside the debug callback" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_callback_not_callable_raises_as_jax():
    with pytest.raises(TypeError, match="first argument to jax.debug.callback must be callable"):
        debug.callback(3, 1.0)


def test_breakpoint_is_not_implemented():
    with pytest.raises(NotImplementedError):
        debug.breakpoint()


def test_effect_classes():
    assert isinstance(debug.OrderedDebugEffect(), debug.DebugEffect)
    assert repr(debug.DebugEffect()) == "Debug"
