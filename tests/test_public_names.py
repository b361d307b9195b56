"""The top-level names of `jax` that a one-process program uses, as JAX 0.10.2 has them:
config options as context managers, shape evaluation, devices and processes, caches, the
`jax.Array`/`jax.Device` types, `custom_gradient`/`closure_convert`, and the pytree and
error additions. Values, weak types, messages and exception classes were checked against
real JAX 0.10.2."""

import collections
import dataclasses
import warnings

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax, tree_util
from tracejit._src import jaxpr as jaxpr_module
from tracejit._src.interpreters import staging
from tracejit._src.interpreters.staging import StagingTracer

# --- config options as context managers -------------------------------------------------------


def test_enable_x64_as_context_manager_decorator_and_value():
    assert jax.enable_x64.value is False
    with jax.enable_x64(True):
        assert jax.enable_x64.value is True
        assert jnp.ones(2).dtype == np.float64
    assert jnp.ones(2).dtype == np.float32

    @jax.enable_x64()  # a flag switches on when called without a value
    def make():
        return jnp.arange(3).dtype

    assert make() == np.int64 and make() == np.int64
    assert jnp.arange(3).dtype == np.int32


def test_a_state_has_no_truth_value_and_checks_its_new_value():
    with pytest.raises(TypeError, match=r"did you mean to use 'State.value' instead"):
        bool(jax.enable_x64)
    with pytest.raises(ValueError, match=r"must be in \['allow', 'warn', 'raise'\], got bad"):
        jax.numpy_rank_promotion("bad")
    with pytest.raises(TypeError, match="requires an argument representing the new value"):
        jax.numpy_rank_promotion()
    with pytest.raises(ValueError, match="must be None or in"):
        jax.default_matmul_precision("fastest")


RANK_MESSAGE = (
    "Operands could not be broadcast together for add on shapes (3,) (2, 3) and with the "
    "config option jax_numpy_rank_promotion='raise'"
)


@pytest.mark.parametrize("jit", [False, True])
def test_numpy_rank_promotion_raise(jit):
    add = jax.jit(jnp.add) if jit else jnp.add
    np.testing.assert_array_equal(add(jnp.ones(3), jnp.ones((2, 3))), np.full((2, 3), 2.0))
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=RANK_MESSAGE.replace("(", r"\(").replace(")", r"\)")):
            add(jnp.ones(3), jnp.ones((2, 3)))
        with pytest.raises(ValueError, match="Operands could not be broadcast"):
            add(jnp.ones(3), np.ones((2, 3)))
        # scalars and equal ranks are not rank promotion
        np.testing.assert_array_equal(add(jnp.ones(3), 1.0), np.full(3, 2.0))
        np.testing.assert_array_equal(add(jnp.ones((1, 3)), jnp.ones((2, 3))), np.full((2, 3), 2))
    np.testing.assert_array_equal(add(jnp.ones(3), jnp.ones((2, 3))), np.full((2, 3), 2.0))


WARN_MESSAGE = (
    "Following NumPy automatic rank promotion for multiply on shapes (3,) (2, 3). Set the "
    "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
    "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html."
)


def test_numpy_rank_promotion_warn():
    with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jnp.ones(3) * jnp.ones((2, 3))
    assert [str(w.message) for w in caught] == [WARN_MESSAGE]


def test_no_tracing_refuses_to_trace_a_jitted_function():
    f = jax.jit(lambda x: x * 2)
    assert f(1.0) == 2.0
    with jax.no_tracing(), pytest.raises(RuntimeError, match="for `jit`, but 'no_tracing' is set"):
        f(1.0)
    assert f(3.0) == 6.0


def test_enable_checks_type_checks_each_staged_jaxpr(monkeypatch):
    checked = []
    monkeypatch.setattr(staging, "check_jaxpr", lambda jaxpr: checked.append(jaxpr))
    jax.make_jaxpr(jnp.sin)(1.0)
    assert checked == []
    with jax.enable_checks(True):
        jax.make_jaxpr(jnp.sin)(1.0)
    assert len(checked) == 1


def test_matmul_precision_and_default_device_are_kept():
    with jax.default_matmul_precision("highest"):
        assert jax.default_matmul_precision.value == "highest"
        out = jnp.dot(jnp.ones((2, 3)), jnp.ones(3))
    np.testing.assert_array_equal(out, [3.0, 3.0])
    assert jax.default_matmul_precision.value is None
    with jax.default_device(jax.devices()[0]):
        assert jax.default_device.value is jax.devices()[0]
        assert jnp.ones(2).sum() == 2.0


# --- transformations ------------------------------------------------------------------------


def test_eval_shape_gives_shapes_dtypes_and_weak_types_without_computing():
    calls = []

    def f(x, y, scale=1):
        calls.append(type(x))
        return {"a": x @ y, "b": x.sum() + 1, "c": (x > 0, None, 1)}

    out = jax.eval_shape(f, jnp.ones((2, 3)), jax.ShapeDtypeStruct((3, 4), np.float32))
    S = jax.ShapeDtypeStruct
    assert out == {
        "a": S((2, 4), np.float32),
        "b": S((), np.float32),
        "c": (S((2, 3), np.bool_), None, S((), np.int32, weak_type=True)),
    }
    assert calls == [StagingTracer]
    assert jax.eval_shape(lambda x, k=1: x * k, 2, k=3) == S((), np.int32, weak_type=True)
    with pytest.raises(TypeError, match="The problematic value is of type <class 'str'>"):
        jax.eval_shape(lambda x: x, "a")


def test_jacobian_is_jacrev():
    assert jax.jacobian is jax.jacrev
    np.testing.assert_allclose(jax.jacobian(jnp.sin)(jnp.zeros(2)), np.eye(2))


def test_typeof():
    assert str(jax.typeof(jnp.ones(3))) == "float32[3]"  # (JAX's str; the repr names the class)
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert str(jax.typeof(1.0)) == "~float32[]"
    assert jax.typeof(1.0).weak_type and jax.typeof(1.0).dtype == np.float32
    assert not jax.typeof(np.ones(2)).weak_type
    seen = []
    jax.jit(lambda x: seen.append(jax.typeof(x)))(jnp.ones(2, np.int32))
    assert str(seen[0]) == "int32[2]"
    with pytest.raises(TypeError, match="Argument 'a' of type '<class 'str'>' is not a valid JAX"):
        jax.typeof("a")


def test_make_jaxpr_axis_env_binds_named_axes_for_collectives():
    text = str(jax.make_jaxpr(lambda x: lax.psum(x, "i"), axis_env=[("i", 4)])(1.0))
    assert "psum[axes=('i',)" in text
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.make_jaxpr(lambda x: lax.psum(x, "i"))(1.0)


def test_reduce_axes_is_refused_as_in_jax():
    with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is deprecated"):
        jax.grad(jnp.sin, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match="reduce_axes argument to vjp is deprecated"):
        jax.vjp(jnp.sin, 1.0, reduce_axes=("i",))


def test_named_scope_and_named_call_leave_results_unchanged():
    with jax.named_scope("block"):
        out = jax.jit(jax.named_call(lambda x: x * 2, name="double"))(3.0)
    assert out == 6.0

    @jax.named_scope("layer")
    def layer(x):
        return jnp.sin(x)

    assert layer(0.0) == 0.0
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        jax.named_scope(3)


def test_ensure_compile_time_eval_computes_constants_while_staging():
    seen = {}

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            positive = y > 0
            seen["y"], seen["z"] = y, x + 1
        return jnp.sin(x) if positive else jnp.cos(x)

    np.testing.assert_allclose(f(0.5), np.sin(0.5), rtol=1e-6)
    assert type(seen["y"]) is jax._src.array.Array and not isinstance(seen["y"], StagingTracer)
    np.testing.assert_allclose(seen["y"], np.sin(3.0), rtol=1e-6)
    assert isinstance(seen["z"], StagingTracer)  # traced values are still traced
    assert "sin 3.0" not in str(jax.make_jaxpr(f)(0.5))


def test_closure_convert_hoists_the_values_a_derivative_flows_through():
    seen = []

    def outer(x):
        converted, consts = jax.closure_convert(lambda y: x * y, 1.0)
        seen.append(len(consts))
        return converted(2.0, *consts)

    assert outer(3.0) == 6.0 and seen == [0]  # eager: nothing to differentiate
    assert jax.grad(outer)(3.0) == 2.0 and seen[-1] == 1
    converted, _ = jax.closure_convert(lambda a: a["x"] * 2, {"x": 1.0})
    with pytest.raises(TypeError, match="same Pytree structure as the example arguments"):
        converted(1.0)


def test_custom_gradient_uses_the_given_vjp():
    @jax.custom_gradient
    def f(x):
        return x**2, lambda g: (g * 3.0,)

    @jax.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x * 10)

    @jax.custom_gradient
    def k(x):
        return x * 2, lambda g: g * 5  # one argument: the cotangent may come bare

    assert f(2.0) == 4.0 and jax.grad(f)(2.0) == 3.0
    assert jax.grad(h, argnums=(0, 1))(2.0, 3.0) == (3.0, 20.0)
    assert jax.grad(k)(2.0) == 5.0 and jax.jit(jax.grad(k))(2.0) == 5.0
    np.testing.assert_array_equal(jax.vmap(jax.grad(k))(jnp.ones(3)), [5.0, 5.0, 5.0])


def test_custom_derivatives_accept_nondiff_argnames():
    @jax.custom_jvp
    def scaled(x, power):
        return x**power

    scaled.defjvp(lambda p, t: (scaled(*p), 100.0 * t[0]))
    named = jax.custom_jvp(scaled.fun, nondiff_argnames=("power",))
    assert named.nondiff_argnums == (1,)
    assert jax.custom_derivatives.custom_gradient is jax.custom_gradient


# --- devices, processes, arrays and caches -----------------------------------------------------


def test_one_process_with_its_devices():
    backend = jax.default_backend()
    assert jax.devices(backend) == jax.devices() == jax.local_devices(0)
    assert jax.device_count() == jax.local_device_count() == len(jax.devices())
    assert (jax.process_count(), jax.process_index(), jax.process_indices()) == (1, 0, [0])
    assert all(isinstance(d, jax.Device) for d in jax.devices())
    assert not isinstance("cpu", jax.Device)
    with pytest.raises(ValueError, match="Unknown process_index 1"):
        jax.local_devices(1)
    with pytest.raises(RuntimeError, match="Unknown backend foo. Available backends are"):
        jax.devices("foo")
    if backend == "cpu":
        with pytest.raises(RuntimeError, match="Unknown backend: 'tpu' requested"):
            jax.device_count("tpu")


def test_host_names_warn_as_in_jax():
    with pytest.warns(UserWarning, match="jax.process_count has been renamed to jax.process_count"):
        assert jax.host_count() == 1
    with pytest.warns(UserWarning, match="jax.process_index has been renamed"):
        assert jax.host_id() == 0
    with pytest.warns(UserWarning, match="jax.process_indexs has been renamed to jax.process_ind"):
        assert jax.host_ids() == [0]


def test_live_arrays_lists_concrete_arrays():
    a = jnp.arange(5.0) * 3
    b = jax.jit(lambda x: x + 1)(a)
    live = jax.live_arrays()
    assert any(x is a for x in live) and any(x is b for x in live)
    assert all(isinstance(x, jax.Array) for x in live)


def test_clear_caches_makes_jitted_functions_trace_again():
    traces = []
    f = jax.jit(lambda x: (traces.append(1), x + 1)[1])
    f(1.0)
    f(2.0)
    assert len(traces) == 1
    jax.clear_caches()
    assert f(3.0) == 4.0 and len(traces) == 2


def test_host_transfers_of_pytrees():
    tree = {"a": jnp.ones(2), "b": 1, "c": np.float32(2)}
    assert jax.copy_to_host_async(tree) is tree
    assert jax.block_until_ready(tree) is tree
    got = jax.device_get(tree)
    assert type(got["a"]) is np.ndarray and got["b"] == 1
    np.testing.assert_array_equal(got["a"], [1.0, 1.0])


def test_print_environment_info():
    info = jax.print_environment_info(return_string=True)
    assert info.startswith("tracejit: ") and f"numpy:    {np.__version__}" in info
    assert "process_count: 1" in info


# --- types ------------------------------------------------------------------------------------


def test_array_type_covers_tracers():
    assert isinstance(jnp.ones(2), jax.Array) and not isinstance(np.ones(2), jax.Array)
    assert jax.jit(lambda x: isinstance(x, jax.Array))(1.0)
    seen = []
    jax.grad(lambda x: (seen.append(isinstance(x, jax.Array)), x)[1])(1.0)
    jax.vmap(lambda x: (seen.append(isinstance(x, jax.Array)), x)[1])(jnp.ones(2))
    assert seen == [True, True]


def test_typing_annotations():
    from tracejit import typing

    assert jax.Array in typing.ArrayLike.__args__ and np.ndarray in typing.ArrayLike.__args__
    assert str in typing.DTypeLike.__args__ and np.dtype in typing.DTypeLike.__args__


def test_shape_dtype_struct_keywords():
    s = jax.ShapeDtypeStruct((2,), np.float32, weak_type=True)
    assert s.weak_type and s.sharding is None and s.is_ref is False
    with pytest.raises(TypeError):
        jax.ShapeDtypeStruct((2,), np.float32, True)  # weak_type is keyword-only
    with pytest.raises(ValueError, match="ShapeDtypeStruct: dtype must be specified"):
        jax.ShapeDtypeStruct((2,), None)
    with pytest.raises(NotImplementedError, match="is_ref"):
        jax.ShapeDtypeStruct((2,), np.float32, is_ref=True)


def test_float0_and_version():
    assert jax.float0 == np.dtype([("float0", "V")])
    assert jax.grad(lambda x, i: x * i, allow_int=True, argnums=1)(1.0, 2).dtype == jax.float0
    assert jax.__version_info__ == tuple(int(p) for p in jax.__version__.split("."))
    assert jax.version.__version__ == jax.__version__


# --- errors -----------------------------------------------------------------------------------


def test_jaxpr_type_errors_are_public():
    closed = jax.make_jaxpr(jnp.sin)(1.0)
    eqn = closed.jaxpr.eqns[0]
    eqn.outvars[0].aval = jax._src.core.ShapedArray((3,), np.float32)
    with pytest.raises(jax.errors.JaxprTypeError, match="output typed f32"):
        jaxpr_module.check_jaxpr(closed.jaxpr)
    assert issubclass(jax.errors.JaxprTypeError, TypeError)
    assert issubclass(jax.errors.InconclusiveDimensionOperation, Exception)


# --- pytrees ----------------------------------------------------------------------------------


def test_tree_reduce_associative_balances_the_calls():
    assert tree_util.tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5]) == (
        (1, 2),
        (3, (4, 5)),
    )
    assert jax.tree.reduce_associative(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert jax.tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity for parallel reduction"):
        tree_util.tree_reduce_associative(lambda a, b: a + b, [])


def test_flatten_one_level_with_keys_and_is_tree_node():
    keys = tree_util.flatten_one_level_with_keys({"a": 1, "b": [2, 3]})
    assert keys == (((tree_util.DictKey("a"), 1), (tree_util.DictKey("b"), [2, 3])), ("a", "b"))
    seq = tree_util.flatten_one_level_with_keys((1, (2, 3)))
    assert seq == (((tree_util.SequenceKey(0), 1), (tree_util.SequenceKey(1), (2, 3))), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tree_util.flatten_one_level_with_keys(1)
    Point = collections.namedtuple("Point", "x y")
    assert [tree_util.is_tree_node(t) for t in (list, dict, type(None), Point)] == [True] * 4
    assert not tree_util.is_tree_node(int) and not tree_util.is_tree_node(np.ndarray)


def test_default_registry():
    registry = tree_util.default_registry
    leaves, treedef = registry.flatten([1, (2, 3)])
    assert leaves == [1, 2, 3] and treedef == jax.tree.structure([0, (0, 0)])
    assert registry.flatten_one_level(5) is None and registry.flatten_one_level([1]) == ([1], None)
    assert registry.is_node(tuple) and not registry.is_node(float)


def test_tree_static_fields_are_metadata():
    @dataclasses.dataclass
    class Op:
        x: object
        kind: str = jax.tree.static(default="add")

    tree_util.register_dataclass(Op)
    assert jax.tree.leaves(Op(jnp.ones(2))) [0].shape == (2,)  # fmt: skip
    assert len(jax.tree.leaves(Op(1.0, "mul"))) == 1
    assert dataclasses.fields(Op)[1].metadata["static"] is True


def test_partial_binds_keywords():
    p = tree_util.Partial(lambda x, scale: x * scale, scale=2.0)
    assert jax.jit(lambda p, x: p(x))(p, 3.0) == 6.0


def test_make_user_context_keys_jit_caches_on_its_value():
    traces = []
    f = jax.jit(lambda x: (traces.append(1), x * 2)[1])
    context = jax.make_user_context()
    assert context.value is None
    f(1.0)
    f(1.0)
    with context(1):
        assert context.value == 1
        f(1.0)
        f(1.0)
    with context(2):
        f(1.0)
    assert f(1.0) == 2.0
    assert len(traces) == 3  # one trace per value of the context


def test_vmap_sum_match_sums_outputs_wanted_unbatched():
    xs = jnp.arange(6.0).reshape(3, 2)
    doubled, total = jax.vmap(lambda x: (x * 2, x.sum()), out_axes=None, sum_match=True)(xs)
    np.testing.assert_array_equal(doubled, [12.0, 18.0])
    assert total == 15.0
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis 0"):
        jax.vmap(lambda x: x * 2, out_axes=None)(xs)


def test_vjp_function_is_a_pytree_of_residuals_that_can_cross_jit():
    x = jnp.arange(3.0)
    _, f_vjp = jax.vjp(lambda x: jnp.sin(x) * x, x)
    assert len(jax.tree.leaves(f_vjp)) >= 1  # the residuals
    from_jit = jax.jit(lambda x: jax.vjp(lambda x: jnp.sin(x) * x, x)[1])(x)
    want = np.sin(np.arange(3.0)) + np.arange(3.0) * np.cos(np.arange(3.0))
    np.testing.assert_allclose(from_jit(jnp.ones(3))[0], want, rtol=1e-6)
    np.testing.assert_allclose(f_vjp(jnp.ones(3))[0], want, rtol=1e-6)


def test_fwd_and_bwd_reuses_the_compiled_backward_pass():
    traces = []

    def f(x, w):
        traces.append(1)
        return x @ w

    fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
    x = jnp.ones((2, 2))
    for scale in (1.0, 2.0, 3.0):
        _, residuals = fwd(x, x * scale)
        cot_x, cot_w = bwd(residuals, jnp.ones((2, 2)))
        np.testing.assert_array_equal(cot_x, np.full((2, 2), 2.0 * scale))
        np.testing.assert_array_equal(cot_w, np.full((2, 2), 2.0))
    assert len(traces) == 1  # fwd traced once; bwd's cache keyed on the same residual tree
    assert len(bwd._cache) == 1
    fwd, bwd = jax.fwd_and_bwd(lambda x, w: (x @ w).sum(), argnums=1, jitted=False)
    value, residuals = fwd(x, x)
    assert value == 8.0
    np.testing.assert_array_equal(bwd(residuals, 1.0), np.full((2, 2), 2.0))
