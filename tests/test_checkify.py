"""`tracejit.experimental.checkify`: run-time checks returned as an `Error` value, eagerly,
under jit (the error comes out of the compiled program), vmap (per-member errors), grad (checks
of the forward pass) and the control-flow primitives. Messages, which failure wins, the jaxpr
of `check` and the exceptions for bad input were read off JAX 0.10.2."""

import re

import numpy as np
import pytest
from parallel.devices import needs_plugin, run_with_devices

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.experimental import checkify

f32 = np.float32


def positive_log(x):
    checkify.check(x > 0, "x must be positive, got {} and {y}", x, y=x * 2)
    return jnp.log(x)


# Three ways to run a checkified function: eagerly, jitted whole, and with jit inside.
MODES = {
    "eager": lambda f, errors: checkify.checkify(f, errors=errors),
    "jit(checkify)": lambda f, errors: jax.jit(checkify.checkify(f, errors=errors)),
    "checkify(jit)": lambda f, errors: checkify.checkify(jax.jit(f), errors=errors),
}


def checked(mode, f, errors=checkify.user_checks):
    return MODES[mode](f, errors)


@pytest.fixture(params=list(MODES))
def mode(request):
    return request.param


# --- user checks ------------------------------------------------------------------------------


def test_a_failed_check_is_returned_with_its_formatted_message(mode):
    err, y = checked(mode, positive_log)(f32(-1.0))
    assert err.get() == "x must be positive, got -1.0 and -2.0 (`check` failed)"
    assert str(err) == "Error(x must be positive, got -1.0 and -2.0 (`check` failed))"
    assert np.isnan(y)
    with pytest.raises(checkify.JaxRuntimeError, match=re.escape("got -1.0 and -2.0")):
        err.throw()


def test_a_passing_check_returns_no_error_and_the_value(mode):
    err, y = checked(mode, positive_log)(f32(2.0))
    assert err.get() is None and err.get_exception() is None
    assert str(err) == "Error(None)"
    err.throw()
    np.testing.assert_allclose(y, np.log(f32(2.0)), rtol=1e-6)


def test_a_check_without_format_arguments(mode):
    err, out = checked(mode, lambda x: checkify.check(x > 0, "plain msg"))(f32(-1.0))
    assert err.get() == "plain msg (`check` failed)"
    assert out is None


def test_the_first_check_that_fails_wins(mode):
    def two(x):
        checkify.check(x > 0, "first {}", x)
        checkify.check(x > 1, "second {}", x)
        return x

    assert checked(mode, two)(f32(-1.0))[0].get() == "first -1.0 (`check` failed)"
    assert checked(mode, two)(f32(0.5))[0].get() == "second 0.5 (`check` failed)"
    assert checked(mode, two)(f32(2.0))[0].get() is None


def test_the_first_check_wins_across_payload_types(mode):
    def two(x):
        checkify.check(x > 1, "second {}", x)
        checkify.check(x > 0, "first {} {}", x, x)
        return x

    assert checked(mode, two)(f32(-1.0))[0].get() == "second -1.0 (`check` failed)"


def test_the_error_is_a_pytree_of_pred_code_and_payload():
    err, _ = checkify.checkify(positive_log)(f32(-1.0))
    leaves = jax.tree_util.tree_leaves(err)
    assert [np.asarray(leaf).dtype for leaf in leaves] == [np.bool_, np.int32, f32, f32]
    assert bool(leaves[0]) and float(leaves[2]) == -1.0 and float(leaves[3]) == -2.0
    assert jax.tree_util.tree_leaves(checkify.init_error) == []
    assert checkify.init_error.get() is None
    rebuilt = jax.tree_util.tree_map(lambda x: x, err)
    assert rebuilt.get() == err.get()
    exc = err.get_exception()
    assert type(exc).__name__ == "FailedCheckError"


def test_the_error_passes_into_a_jitted_function():
    err, _ = checkify.checkify(positive_log)(f32(-3.0))
    err2, _ = jax.jit(checkify.checkify(checkify.check_error))(err)
    assert err2.get() == "x must be positive, got -3.0 and -6.0 (`check` failed)"


def test_check_stages_as_a_check_equation():
    # The code (here 1) is a counter of the checks made so far in the process.
    text = re.sub(
        r"False:bool\[\] \d+:i32", "False:bool[] 1:i32", str(jax.make_jaxpr(positive_log)(f32(1.0)))
    )
    expected = """{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:f32[] = mul a 2.0:f32[]
    d:bool[] = not b
    e:bool[] = or False:bool[] d
    f:i32[] = select_n False:bool[] 1:i32[] -1:i32[]
    check[debug=False] e f a c
    g:f32[] = log a
  in (g,) }"""
    assert text == expected


def test_checkify_returns_the_error_leaves_before_the_outputs():
    text = str(jax.make_jaxpr(checkify.checkify(positive_log))(f32(1.0)))
    assert "check[" not in text
    assert text.endswith("in (g, h, a, c, i) }"), text


# --- check outside checkify -------------------------------------------------------------------


def test_check_raises_eagerly_outside_checkify():
    with pytest.raises(checkify.JaxRuntimeError, match=re.escape("got -1.0 and -2.0 (`check`")):
        positive_log(f32(-1.0))
    np.testing.assert_allclose(positive_log(f32(1.0)), 0.0)
    with pytest.raises(checkify.JaxRuntimeError, match=r"^m \(`check` failed\)$"):
        checkify.check(False, "m")
    checkify.check(True, "m")


def test_check_raises_eagerly_under_grad():
    def g(x):
        checkify.check(x > 0, "pos {}", x)
        return jnp.sin(x) * 2

    with pytest.raises(checkify.JaxRuntimeError, match=r"pos -1\.0"):
        jax.grad(g)(f32(-1.0))
    np.testing.assert_allclose(jax.grad(g)(f32(1.0)), 2 * np.cos(1.0), rtol=1e-6)


def test_a_check_compiled_outside_checkify_is_refused():
    message = "Cannot abstractly evaluate a checkify.check which was not functionalized"
    with pytest.raises(ValueError, match=message):
        jax.jit(positive_log)(f32(1.0))
    err, _ = checkify.checkify(positive_log)(f32(-1.0))
    with pytest.raises(ValueError, match=message):
        jax.jit(checkify.check_error)(err)


def test_debug_check_checks_only_under_checkify():
    def f(x):
        checkify.debug_check(x > 0, "dbg {}", x)

    assert f(f32(-1.0)) is None
    assert jax.jit(f)(f32(-1.0)) is None
    assert checkify.checkify(f)(f32(-1.0))[0].get() == "dbg -1.0 (`check` failed)"
    assert "check[debug=True]" in str(jax.make_jaxpr(f)(f32(1.0)))


def test_check_error_raises_eagerly_and_merges_under_checkify():
    err, _ = checkify.checkify(positive_log)(f32(-3.0))
    with pytest.raises(checkify.JaxRuntimeError, match=r"got -3\.0 and -6\.0"):
        checkify.check_error(err)
    checkify.check_error(checkify.init_error)
    err2, _ = checkify.checkify(checkify.check_error)(err)
    assert err2.get() == err.get()


def test_user_checks_are_dropped_when_not_enabled():
    f = checkify.checkify(lambda x: checkify.check(x > 0, "c"), errors=checkify.nan_checks)
    assert f(f32(-1.0))[0].get() is None
    f = checkify.checkify(lambda x: checkify.check(x > 0, "c"), errors=frozenset())
    assert f(f32(-1.0))[0].get() is None


# --- bad input --------------------------------------------------------------------------------


def test_a_pred_must_be_a_scalar_bool():
    with pytest.raises(TypeError, match=r"check takes a scalar pred as argument, got 1\.0"):
        checkify.check(f32(1.0), "m")
    with pytest.raises(TypeError, match="check takes a scalar pred as argument"):
        checkify.check(jnp.ones(3) > 0, "m")
    with pytest.raises(TypeError, match="check takes a scalar pred as argument"):
        checkify.checkify(lambda x: checkify.check(x > 0, "m"))(jnp.ones(3))


def test_format_arguments_must_be_arrays():
    message = re.escape(
        "Formatting arguments to checkify.check need to be PyTrees of arrays, but got -1.0 of "
        "type <class 'float'>."
    )
    with pytest.raises(TypeError, match=message):
        checkify.check(True, "x {}", -1.0)


def test_a_format_string_that_does_not_match_fails_when_read():
    f = checkify.checkify(lambda x: checkify.check(x > 0, "a {} {}", x))
    assert f(f32(1.0))[0].get() is None
    with pytest.raises(IndexError, match="Replacement index 1 out of range"):
        f(f32(-1.0))[0].get()


def test_check_error_takes_an_error():
    message = re.escape("check_error takes an Error as argument, got type <class 'int'> instead.")
    with pytest.raises(TypeError, match=message):
        checkify.check_error(3)


def test_the_error_sets_are_jaxs():
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert checkify.all_checks == checkify.automatic_checks | checkify.user_checks
    assert len(checkify.all_checks) == 4
    assert issubclass(checkify.JaxRuntimeError, ValueError)


# --- automatic checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("f", "x", "name"),
    [
        (jnp.log, -1.0, "log"),
        (jnp.sin, np.inf, "sin"),
        (jnp.sin, np.nan, "sin"),  # a NaN operand counts too, as in JAX
        (lambda x: x + (-x), np.inf, "add"),
        (jnp.sqrt, -1.0, "sqrt"),
        (lambda x: x * 0.0, np.inf, "mul"),
    ],
)
def test_nan_checks_name_the_primitive(mode, f, x, name):
    err, _ = checked(mode, f, checkify.nan_checks)(f32(x))
    assert err.get() == f"nan generated by primitive: {name}."


def test_nan_checks_ignore_data_movement_and_disabled_sets(mode):
    x = jnp.array([1.0, np.nan])
    for f in (jnp.abs, lambda x: x.reshape(2, 1), lambda x: jnp.maximum(x, 0.0), jnp.max):
        assert checked(mode, f, checkify.nan_checks)(x)[0].get() is None
    assert checked(mode, jnp.log, checkify.user_checks)(f32(-1.0))[0].get() is None
    assert checked(mode, jnp.log, checkify.nan_checks)(f32(1.0))[0].get() is None


def test_nan_checks_see_inside_custom_jvp_functions(mode):
    err, _ = checked(mode, lambda x: jnp.logaddexp(x, x), checkify.nan_checks)(f32(np.nan))
    assert err.get() == "nan generated by primitive: sub."


def test_div_checks_catch_integer_division_by_zero(mode):
    div = checked(mode, lambda x, y: x // y, checkify.div_checks)
    err, _ = div(np.int32(3), np.int32(0))
    assert err.get() == "division by zero"
    assert div(np.int32(3), np.int32(2))[0].get() is None
    err, _ = checked(mode, lax.div, checkify.div_checks)(np.int32(3), np.int32(0))
    assert err.get() == "division by zero"
    err, _ = checked(mode, lax.rem, checkify.div_checks)(np.int32(3), np.int32(0))
    assert err.get() is None  # as in JAX: rem is not checked
    err, _ = checked(mode, lambda x, y: x / y, checkify.div_checks)(f32(3), f32(0))
    assert err.get() == "division by zero"  # as in JAX: any div by a zero


def oob(shape, index, axis, size):
    return (
        f"out-of-bounds indexing for array of shape {shape}: index {index} is out of bounds "
        f"for axis {axis} with size {size}. "
    )


X3 = jnp.arange(3.0)


@pytest.mark.parametrize(
    ("f", "index", "message"),
    [
        (lambda x, i: x[i], 5, oob((3,), 5, 0, 3)),
        (lambda x, i: x[i], -5, oob((3,), -2, 0, 3)),  # after adding the size, as JAX
        (lambda x, i: x.at[i].set(1.0), 5, oob((3,), 5, 0, 3)),
        (lambda x, i: x.at[i].add(1.0), 5, oob((3,), 5, 0, 3)),
        (lambda x, i: lax.dynamic_slice(x, (i,), (2,)), 5, oob((3,), 5, 0, 3)),
        (lambda x, i: lax.dynamic_slice(x, (i,), (2,)), 2, oob((3,), 2, 0, 3)),
        (lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), 5, oob((3,), 5, 0, 3)),
        (lambda x, i: jnp.take(x, i), np.array([0, 7]), oob((3,), 7, 0, 3)),
        (lambda x, i: x[i], np.array([0, 7, -9]), oob((3,), 7, 0, 3)),
        (lambda x, i: x.at[i].get(mode="fill"), 7, oob((3,), 7, 0, 3)),
    ],
)
def test_index_checks_report_the_first_out_of_bounds_index(mode, f, index, message):
    err, out = checked(mode, f, checkify.index_checks)(X3, index)
    assert err.get() == message
    assert out.shape == f(X3, index).shape


def test_index_checks_pass_in_bounds_indices_and_clamp_outside_checkify(mode):
    err, out = checked(mode, lambda x, i: x[i], checkify.index_checks)(X3, -2)
    assert err.get() is None and float(out) == 1.0
    assert float(X3[2]) == float(X3[5])  # JAX's clamping stays the default outside checkify


def test_index_checks_of_a_two_dimensional_gather(mode):
    f = checked(mode, lambda x, i, j: x[i, j], checkify.index_checks)
    err, _ = f(jnp.ones((3, 4)), jnp.array([0, 1]), jnp.array([2, 9]))
    assert err.get() == oob((3, 4), 9, 1, 4)


def test_user_checks_win_over_automatic_ones():
    def nan_then_check(x):
        y = jnp.log(x)
        checkify.check(x > 0, "pos {}", x)
        return y

    err, _ = checkify.checkify(nan_then_check, errors=checkify.all_checks)(f32(-1.0))
    assert err.get() == "pos -1.0 (`check` failed)"


def test_among_automatic_checks_the_first_in_program_order_wins(mode):
    def nan_then_div(x, i):
        return jnp.log(x), i // 0

    def div_then_nan(x, i):
        return i // 0, jnp.log(x)

    args = (f32(-1.0), np.int32(1))
    err, _ = checked(mode, nan_then_div, checkify.all_checks)(*args)
    assert err.get() == "nan generated by primitive: log."
    err, _ = checked(mode, div_then_nan, checkify.all_checks)(*args)
    assert err.get() == "division by zero"
    err, _ = checked(mode, lambda x: jnp.cos(jnp.log(x)), checkify.all_checks)(f32(-1.0))
    assert err.get() == "nan generated by primitive: log."


# --- vmap ---------------------------------------------------------------------------------------

XS = np.array([1.0, -2.0, 3.0, -4.0], f32)


@pytest.mark.parametrize("jit", [False, True])
def test_vmap_of_checkify_gives_each_member_its_error(jit):
    f = jax.vmap(checkify.checkify(positive_log))
    err, ys = (jax.jit(f) if jit else f)(XS)
    assert err.get() == (
        "at mapped index 1: x must be positive, got -2.0 and -4.0 (`check` failed)\n"
        "at mapped index 3: x must be positive, got -4.0 and -8.0 (`check` failed)"
    )
    assert list(err.get_exception().error_mapping) == [(1,), (3,)]
    with pytest.raises(checkify.JaxRuntimeError, match=r"^x must be positive, got -4\.0"):
        err.throw()
    np.testing.assert_allclose(ys, [checkify.checkify(positive_log)(x)[1] for x in XS])
    ok, _ = f(np.ones(3, f32))
    assert ok.get() is None


def test_vmap_of_checkify_with_automatic_checks():
    err, _ = jax.vmap(checkify.checkify(jnp.log, errors=checkify.nan_checks))(XS)
    assert err.get() == (
        "at mapped index 1: nan generated by primitive: log.\n"
        "at mapped index 3: nan generated by primitive: log."
    )
    f = checkify.checkify(lambda i: jnp.arange(3)[i], errors=checkify.index_checks)
    err, _ = jax.vmap(f)(np.array([0, 5, 1, 9]))
    assert err.get() == (
        f"at mapped index 1: {oob((3,), 5, 0, 3)}\nat mapped index 3: {oob((3,), 9, 0, 3)}"
    )


def test_nested_vmap_names_every_index():
    err, _ = jax.vmap(jax.vmap(checkify.checkify(positive_log)))(np.array([[1, 2], [3, -4]], f32))
    assert err.get() == (
        "at mapped index 1, 1: x must be positive, got -4.0 and -8.0 (`check` failed)"
    )


def test_checkify_of_vmap_reports_the_last_failing_member():
    err, _ = checkify.checkify(jax.vmap(positive_log))(XS)
    assert err.get() == "x must be positive, got -4.0 and -8.0 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError, match=r"got -4\.0"):
        jax.vmap(positive_log)(XS)
    err, _ = checkify.checkify(jax.vmap(jnp.log), errors=checkify.nan_checks)(XS)
    assert err.get() == "nan generated by primitive: log."
    f = checkify.checkify(jax.vmap(lambda i: jnp.arange(3)[i]), errors=checkify.index_checks)
    assert f(np.array([0, 5, 1, 9]))[0].get() == oob((3,), 5, 0, 3)


# --- grad ---------------------------------------------------------------------------------------


def sin2(x):
    checkify.check(x > 0, "pos {}", x)
    return jnp.sin(x) * 2


@pytest.mark.parametrize("jit", [False, True])
def test_checkify_of_grad_checks_the_forward_pass(jit):
    f = checkify.checkify(jax.grad(sin2))
    f = jax.jit(f) if jit else f
    err, g = f(f32(-1.0))
    assert err.get() == "pos -1.0 (`check` failed)"
    np.testing.assert_allclose(g, 2 * np.cos(-1.0), rtol=1e-6)
    err, g = f(f32(1.0))
    assert err.get() is None
    np.testing.assert_allclose(g, 2 * np.cos(1.0), rtol=1e-6)


def test_checkify_of_grad_with_nan_checks():
    f = checkify.checkify(jax.grad(jnp.sqrt), errors=checkify.float_checks)
    assert f(f32(-1.0))[0].get() == "nan generated by primitive: sqrt."
    assert f(f32(0.0))[0].get() == "division by zero"  # sqrt's derivative 0.5 / sqrt(0), as JAX
    assert f(f32(4.0))[0].get() is None


def test_jvp_and_grad_around_checkify():
    err, (y, t) = checkify.checkify(lambda x: jax.jvp(sin2, (x,), (f32(1.0),)))(f32(-1.0))
    assert err.get() == "pos -1.0 (`check` failed)"
    np.testing.assert_allclose([y, t], [2 * np.sin(-1.0), 2 * np.cos(-1.0)], rtol=1e-6)
    g = jax.grad(lambda x: checkify.checkify(sin2)(x)[1])(f32(-1.0))
    np.testing.assert_allclose(g, 2 * np.cos(-1.0), rtol=1e-6)


def test_custom_derivative_functions_keep_their_rules_under_checkify():
    logaddexp = checkify.checkify(lambda x: jnp.logaddexp(x, x), errors=checkify.nan_checks)
    assert jax.jit(logaddexp)(f32(np.nan))[0].get() == "nan generated by primitive: sub."
    np.testing.assert_allclose(jax.grad(lambda x: logaddexp(x)[1])(f32(1.0)), 1.0)

    @jax.custom_vjp
    def g(x):
        checkify.check(x > 0, "g {}", x)
        return jnp.sin(x)

    g.defvjp(lambda x: (jnp.sin(x), x), lambda x, ct: (ct * 100.0,))
    checked_g = checkify.checkify(g)
    assert checked_g(f32(-1.0))[0].get() == "g -1.0 (`check` failed)"
    assert float(jax.grad(lambda x: checked_g(x)[1])(f32(-1.0))) == 100.0
    err, grad = checkify.checkify(jax.grad(g))(f32(-1.0))
    assert err.get() is None and float(grad) == 100.0  # as JAX: grad runs fwd, not g


def test_a_check_inside_a_custom_jvp_rule_raises_when_differentiated_outside():
    @jax.custom_jvp
    def h(x):
        checkify.check(x > 0, "h {}", x)
        return jnp.sin(x)

    h.defjvp(lambda p, t: (h(p[0]), t[0] * 7.0))
    checked_h = checkify.checkify(h)
    assert checked_h(f32(-1.0))[0].get() == "h -1.0 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError, match="h -1.0"):  # as JAX: the rule calls h
        jax.grad(lambda x: checked_h(x)[1])(f32(-1.0))
    err, grad = checkify.checkify(jax.grad(h))(f32(-1.0))
    assert err.get() == "h -1.0 (`check` failed)" and float(grad) == 7.0


# --- control flow -------------------------------------------------------------------------------


def branchy(x):
    def small(x):
        checkify.check(x > -5, "x {} too small", x)
        return x

    return lax.cond(x > 0, jnp.log, small, x)


def test_cond_carries_the_error_of_the_branch_taken(mode):
    f = checked(mode, branchy, checkify.all_checks)
    assert f(f32(-10.0))[0].get() == "x -10.0 too small (`check` failed)"
    assert f(f32(-1.0))[0].get() is None
    assert f(f32(2.0))[0].get() is None


def test_vmap_of_checkify_of_cond():
    err, ys = jax.vmap(checkify.checkify(branchy, errors=checkify.all_checks))(
        np.array([-10.0, 1.0, -1.0, -7.0], f32)
    )
    assert err.get() == (
        "at mapped index 0: x -10.0 too small (`check` failed)\n"
        "at mapped index 3: x -7.0 too small (`check` failed)"
    )
    np.testing.assert_allclose(ys, [-10.0, 0.0, -1.0, -7.0])


def test_switch_carries_errors_of_different_kinds(mode):
    branches = [lambda x: x, jnp.log, lambda x: x * 2]
    f = checked(mode, lambda i, x: lax.switch(i, branches, x), checkify.all_checks)
    assert f(1, f32(-1.0))[0].get() == "nan generated by primitive: log."
    assert f(0, f32(-1.0))[0].get() is None
    g = checked(
        mode, lambda i, x: lax.switch(i, [lambda x: x, lambda x: x // 0], x), checkify.all_checks
    )
    assert g(1, np.int32(1))[0].get() == "division by zero"


def doubling_loop(x):
    def body(c):
        i, v = c
        checkify.check(v < 10, "v {} at step {}", v, i)
        return i + 1, v * 2

    return lax.while_loop(lambda c: c[0] < 5, body, (0, x))


def test_while_loop_carries_the_first_error(mode):
    f = checked(mode, doubling_loop)
    err, (i, v) = f(f32(1.0))
    assert err.get() == "v 16.0 at step 4 (`check` failed)"
    assert int(i) == 5 and float(v) == 32.0
    assert f(f32(0.1))[0].get() is None


def test_while_loop_checks_its_predicate_on_every_carry(mode):
    def f(x):
        def cond(c):
            checkify.check(c < 10, "cond {}", c)
            return c < 20

        return lax.while_loop(cond, lambda c: c + 3.0, x)

    err, out = checked(mode, f)(f32(1.0))
    assert err.get() == "cond 10.0 (`check` failed)"
    assert float(out) == 22.0
    err, _ = checked(mode, f)(f32(12.0))  # fails on the initial carry already
    assert err.get() == "cond 12.0 (`check` failed)"


def test_scan_carries_the_first_error(mode):
    def f(xs):
        def body(c, y):
            checkify.check(y > 0, "y {} c {}", y, c)
            return c + y, jnp.log(y)

        return lax.scan(body, f32(0.0), xs)

    err, (c, ys) = checked(mode, f, checkify.all_checks)(np.array([1, 2, -3, -4], f32))
    assert err.get() == "y -3.0 c 3.0 (`check` failed)"
    assert float(c) == -4.0
    np.testing.assert_allclose(ys[:2], np.log([1.0, 2.0]), rtol=1e-6)


def test_fori_loop_and_remat_carry_automatic_errors(mode):
    loop = checked(
        mode,
        lambda x: lax.fori_loop(0, 3, lambda i, v: jnp.log(v) - 2.0, x),
        checkify.nan_checks,
    )
    assert loop(f32(3.0))[0].get() == "nan generated by primitive: log."
    assert loop(f32(1e30))[0].get() is None
    remat = checked(mode, jax.checkpoint(jnp.log), checkify.nan_checks)
    assert remat(f32(-1.0))[0].get() == "nan generated by primitive: log."


def test_a_loop_body_meeting_a_new_kind_of_error():
    def f(x):
        checkify.check(x < 0, "pre {}", x)
        return lax.fori_loop(0, 3, lambda i, v: (checkify.check(v < 2, "in {}", v), v + 2)[1], x)

    assert checkify.checkify(f)(f32(1.0))[0].get() == "pre 1.0 (`check` failed)"
    assert checkify.checkify(f)(f32(-1.0))[0].get() == "in 3.0 (`check` failed)"
    assert jax.jit(checkify.checkify(f))(f32(-1.0))[0].get() == "in 3.0 (`check` failed)"


@needs_plugin
def test_checks_in_pmap_and_shard_map_report_each_devices_failure():
    """As JAX: the error comes out stacked over the devices (a BatchedError)."""
    run_with_devices(
        """
        from tracejit.experimental import checkify

        def body(x):
            checkify.check(jnp.all(x > 0), "x must be positive, got {}", jnp.min(x))
            return lax.psum(jnp.log(x), "i")

        pmapped = checkify.checkify(jax.pmap(body, axis_name="i"))
        err, out = pmapped(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        assert err.get() is None
        close(out, np.log([[3.0, 8.0]] * 2))
        err, _ = pmapped(jnp.array([[1.0, 2.0], [3.0, -4.0]]))
        assert type(err.get_exception()).__name__ == "BatchedError"
        assert err.get() == "at mapped index 1: x must be positive, got -4.0 (`check` failed)"
        mesh = Mesh(np.array(jax.devices()), ("i",))
        mapped = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P())
        for run in (checkify.checkify(mapped), checkify.checkify(jax.jit(mapped))):
            err, out = run(jnp.array([-1.0, 2.0, 3.0, -4.0]))
            assert err.get() == (
                "at mapped index 0: x must be positive, got -1.0 (`check` failed)\\n"
                "at mapped index 1: x must be positive, got -4.0 (`check` failed)"
            )
        """,
        devices=2,
    )
