"""`jit(f).trace(...)`, `.lower()`, `.compile()` and `jit(f).eval_shape(...)`: the stages of
ahead-of-time compilation describe the signature as JAX 0.10.2 does (the printouts expected
below are JAX's, for the same calls), and a `Compiled` program checks what it is called with.
"""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp


def f(x, y=2, *, z):
    return x * y * z, {"a": x}


JITTED = jax.jit(f, donate_argnums=0, static_argnums=1)


def traced():
    return JITTED.trace(jnp.ones(3), 3.0, z=jnp.float32(2))


def test_traced_describes_the_dynamic_arguments_and_results_as_jax():
    t = traced()
    assert isinstance(t, jax.stages.Traced)
    assert str(t.in_tree) == "PyTreeDef(((*,), {'z': *}))"
    assert str(t.out_tree) == "PyTreeDef((*, {'a': *}))"
    assert t.fun_name == "f"
    assert str(t.in_avals) == "((ShapedArray(float32[3]),), {'z': ShapedArray(float32[])})"
    assert str(t.out_avals) == "(ShapedArray(float32[3]), {'a': ShapedArray(float32[3])})"
    assert t.donate_argnums == (0,)
    assert str(t.args_info) == (
        "((ArgInfo(_aval=ShapedArray(float32[3]), donated=True),), "
        "{'z': ArgInfo(_aval=ShapedArray(float32[]), donated=False)})"
    )
    assert str(t.out_info) == (
        "(ShapeDtypeStruct(shape=(3,), dtype=float32), "
        "{'a': ShapeDtypeStruct(shape=(3,), dtype=float32)})"
    )
    info = t.args_info[0][0]
    assert (info.shape, info.dtype, info.donated) == ((3,), np.float32, True)


def test_traced_jaxpr_is_make_jaxprs():
    g = jax.jit(lambda x, y: x * y)
    assert str(g.trace(jnp.ones(3), 3.0).jaxpr) == (
        "{ lambda ; a:f32[3] b:f32[]. let\n"
        "    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
        "    d:f32[3] = mul a c\n"
        "  in (d,) }"
    )
    assert "weak_type=True" in str(g.trace(jnp.ones(3), 3.0).args_info)


def test_lowered_and_compiled_describe_the_same_signature():
    t = traced()
    lowered = t.lower()
    compiled = lowered.compile()
    for stage in (lowered, compiled):
        assert stage.in_tree == t.in_tree and stage.out_tree == t.out_tree
        assert str(stage.args_info) == str(t.args_info)
        assert str(stage.out_info) == str(t.out_info)
    assert "stablehlo.multiply" in lowered.as_text()
    assert JITTED.lower(jnp.ones(3), 3.0, z=jnp.float32(2)).as_text() == lowered.as_text()


def test_compiled_takes_the_dynamic_arguments_only():
    compiled = traced().lower().compile()
    out, aux = compiled(jnp.ones(3), z=jnp.float32(2))
    np.testing.assert_array_equal(out, [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(aux["a"], [1.0, 1.0, 1.0])


def test_compiled_checks_shapes_and_dtypes_not_weak_types():
    compiled = jax.jit(lambda x, y: x * y).trace(jnp.ones(3), 3.0).lower().compile()
    # as JAX: a float32 scalar or a NumPy array of the compiled type is accepted...
    for args in [(jnp.ones(3), np.float32(2)), (np.ones(3, np.float32), 2.0)]:
        np.testing.assert_array_equal(compiled(*args), [2.0, 2.0, 2.0])
    # ...a Python int (int32) where a float was compiled is not, nor another shape
    with pytest.raises(
        TypeError, match=r"Argument 1 compiled with float32\[\] and called with int32\[\]"
    ):
        compiled(jnp.ones(3), 2)
    with pytest.raises(TypeError, match=r"compiled with float32\[3\] and called with float32\[4\]"):
        compiled(jnp.ones(4), 2.0)
    with pytest.raises(TypeError, match="input pytree does not match"):
        compiled(jnp.ones(3))


def test_eval_shape_of_a_jitted_function():
    out = JITTED.eval_shape(jnp.ones(3), 3.0, z=2.0)
    assert str(out) == (
        "(ShapeDtypeStruct(shape=(3,), dtype=float32), "
        "{'a': ShapeDtypeStruct(shape=(3,), dtype=float32)})"
    )


def test_lowering_for_another_platform_is_refused():
    with pytest.raises(NotImplementedError, match="lowers for the CPU only"):
        traced().lower(lowering_platforms=("tpu",))
