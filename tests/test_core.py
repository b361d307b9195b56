"""The tracing machinery: eager evaluation, staging, nesting, and the abstract-value lattice."""

import re

import numpy as np
import pytest
from helpers import staged

import tracejit
from tracejit import errors, lax
from tracejit._src import core
from tracejit._src.jaxpr import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Var,
    check_jaxpr,
    eval_jaxpr,
)

make_jaxpr = tracejit.make_jaxpr


# --- eager evaluation ------------------------------------------------------------------------


def test_eager_primitives_run_on_numpy_and_return_arrays():
    out = lax.add(np.ones(3, np.float32), np.arange(3, dtype=np.float32))
    assert isinstance(out, tracejit.Array)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])
    assert out.dtype == np.float32 and not out.weak_type


def test_eager_canonicalizes_64_bit_inputs_when_x64_is_off():
    out = lax.sin(np.ones(3))  # float64 NumPy input
    assert out.dtype == np.float32


def test_eager_keeps_64_bit_with_x64(enable_x64):
    assert lax.sin(np.ones(3)).dtype == np.float64
    assert lax.mul(2.0, 3.0).dtype == np.float64


def test_python_scalars_are_weakly_typed_and_so_are_their_results():
    out = lax.mul(2.0, 3.0)
    assert out.weak_type and out.dtype == np.float32
    assert float(out) == 6.0
    assert not lax.mul(np.float32(2.0), 3.0).weak_type


def test_arrays_are_immutable_and_point_to_at():
    x = lax.add(np.zeros(3, np.float32), 1.0)
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        x[0] = 2.0
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view[0] = 2.0


def test_array_repr_matches_jax():
    assert repr(lax.add(np.arange(3, dtype=np.int32), np.int32(0))) == (
        "Array([0, 1, 2], dtype=int32)"
    )
    assert repr(lax.mul(2.0, 2.5)) == "Array(5., dtype=float32, weak_type=True)"
    assert repr(lax.add(np.ones((2, 3), np.float32), np.float32(0))) == (
        "Array([[1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)"
    )
    # empty arrays show their shape, of every rank (recorded from JAX 0.10.2)
    assert repr(lax.add(np.zeros(0, np.float32), np.float32(0))) == (
        "Array([], shape=(0,), dtype=float32)"
    )
    assert repr(lax.add(np.zeros((2, 0), np.int32), np.int32(0))) == (
        "Array([], shape=(2, 0), dtype=int32)"
    )
    # long lines wrap where JAX's do (recorded from JAX 0.10.2)
    assert repr(lax.add(np.arange(2000, dtype=np.float32), np.float32(0))) == (
        "Array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n"
        "       1.999e+03], dtype=float32)"
    )


# --- staging --------------------------------------------------------------------------------


def test_staging_records_every_primitive_with_literals_for_scalars():
    def func1(first, second):
        return lax.reduce_sum(lax.add(first, lax.mul(lax.sin(second), 3.0)), (0,))

    closed = staged(func1, np.zeros(8, np.float32), np.ones(8, np.float32))
    assert str(closed) == (
        "{ lambda ; a:f32[8] b:f32[8]. let\n"
        "    c:f32[8] = sin b\n"
        "    d:f32[8] = mul c 3.0:f32[]\n"
        "    e:f32[8] = add a d\n"
        "    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e\n"
        "  in (f,) }"
    )


def test_work_independent_of_inputs_is_staged_too():
    closed = staged(lambda x: lax.mul(lax.sin(2.0), x), np.float32(1))
    assert str(closed) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin 2.0:f32[]; c:f32[] = mul b a in (c,) }"
    )


def test_array_constants_become_constvars():
    c = np.arange(3.0)
    closed = staged(lambda x: (lax.mul(x, c), 1.0, x), np.ones(3, np.float32))
    assert (
        str(closed) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c, 1.0:f32[], b) }"
    )
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), c)


def test_python_control_flow_on_shapes_records_the_branch_taken():
    def f(x):
        if x.ndim == 0:
            return lax.mul(lax.mul(x, x), 2.0)
        return lax.mul(x, 3.0)

    assert len(staged(f, 1.0).eqns) == 2
    assert [e.primitive.name for e in staged(f, np.ones(4, np.float32)).eqns] == ["mul"]


def test_staged_jaxpr_replays_to_the_eager_result():
    def f(x, y):
        return lax.add(lax.sin(x), lax.mul(y, 2.0))

    x, y = np.linspace(0, 1, 5, dtype=np.float32), np.ones(5, np.float32)
    closed = staged(f, x, y)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(x, y)))


def test_static_argnums_are_used_as_python_values():
    def f(x, n):
        for _ in range(n):
            x = lax.sin(x)
        return x

    assert len(staged(f, 1.0, 3, static_argnums=1).eqns) == 3


def test_nested_staging_captures_outer_tracers_as_constants():
    inner_jaxprs = []

    def outer(x):
        inner = make_jaxpr(lambda y: lax.mul(x, y))(np.float32(2))
        inner_jaxprs.append(inner)
        return lax.sin(x)

    closed = staged(outer, np.float32(1))
    assert [e.primitive.name for e in closed.eqns] == ["sin"]
    (inner,) = inner_jaxprs
    assert len(inner.jaxpr.constvars) == 1 and len(inner.consts) == 1
    assert isinstance(inner.consts[0], core.Tracer)


def test_make_jaxpr_return_shape():
    _, shape = make_jaxpr(lambda x: {"y": lax.sin(x)}, return_shape=True)(np.ones((2, 3)))
    assert shape["y"] == tracejit.ShapeDtypeStruct((2, 3), np.float32)


def test_shape_dtype_structs_trace_like_arrays():
    closed = staged(lax.sin, tracejit.ShapeDtypeStruct((4,), np.float32))
    assert closed.in_avals == [core.ShapedArray((4,), np.float32)]


# --- the abstract-value lattice -------------------------------------------------------------


def test_bool_of_a_traced_value_raises_with_the_user_line():
    def f(x):
        if lax.gt(x, 0.0):  # the line the message must name
            return x
        return lax.neg(x)

    with pytest.raises(errors.TracerBoolConversionError) as info:
        make_jaxpr(f)(1.0)
    message = str(info.value)
    assert "if lax.gt(x, 0.0):" in message
    assert "test_core.py" in message
    assert "lax.cond" in message and "static_argnums" in message
    assert "make_jaxpr" in message and "function f" in message
    assert isinstance(info.value, errors.ConcretizationTypeError)
    assert isinstance(info.value, errors.JAXTypeError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    "convert, error",
    [
        (int, errors.ConcretizationTypeError),
        (lambda x: range(10)[x], errors.TracerIntegerConversionError),
        (float, errors.ConcretizationTypeError),
        (complex, errors.ConcretizationTypeError),
        (np.asarray, errors.TracerArrayConversionError),
        (lambda x: x.item(), errors.ConcretizationTypeError),
    ],
)
def test_concretizing_a_traced_value_raises(convert, error):
    with pytest.raises(error, match=r"f32\[\]"):
        make_jaxpr(lambda x: convert(lax.sin(x)))(1.0)


def test_escaped_tracer_is_reported_with_where_it_was_made():
    leaked = []

    def f(x):
        y = lax.sin(x)  # the tracer that escapes
        leaked.append(y)
        return y

    make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="y = lax.sin") as info:
        lax.add(leaked[0], 1.0)
    assert "make_jaxpr" in str(info.value)
    with pytest.raises(errors.UnexpectedTracerError):
        make_jaxpr(lambda x: lax.add(x, leaked[0]))(1.0)


def test_trace_context_is_restored_after_an_error():
    with pytest.raises(errors.TracerBoolConversionError):
        make_jaxpr(lambda x: bool(x))(1.0)
    assert core.current_trace().parent is None  # back at the eval trace


# --- jaxpr type checking --------------------------------------------------------------------


def test_check_jaxpr_rejects_wrong_output_types_and_unbound_variables():
    f32 = core.ShapedArray((3,), np.float32)
    a, b = Var(f32), Var(core.ShapedArray((4,), np.float32))
    bad_type = Jaxpr([], [a], [b], [JaxprEqn([a], [b], lax.sin_p, {})])
    with pytest.raises(JaxprTypeError, match=re.escape("f32[4]")):
        check_jaxpr(bad_type)
    c = Var(f32)
    unbound = Jaxpr([], [a], [c], [JaxprEqn([c], [Var(f32)], lax.sin_p, {})])
    with pytest.raises(JaxprTypeError, match="before it is bound"):
        check_jaxpr(unbound)


def test_closed_jaxpr_requires_one_const_per_constvar():
    a = Var(core.ShapedArray((), np.float32))
    with pytest.raises(ValueError):
        ClosedJaxpr(Jaxpr([a], [], [a], []), [])


# --- the primitive registry -----------------------------------------------------------------


def test_every_primitive_has_an_implementation_and_an_abstract_evaluation_rule():
    missing = [
        name
        for name, p in core.primitives.items()
        if "impl" not in vars(p) or "abstract_eval" not in vars(p)
    ]
    assert not missing, f"primitives without impl/abstract_eval: {missing}"


def test_jax_enable_x64_environment_variable_enables_64_bit_types():
    import os
    import subprocess
    import sys

    code = "import tracejit.numpy as jnp; print(jnp.ones(2).dtype, (jnp.arange(2) + 1).dtype)"
    env = dict(os.environ, JAX_ENABLE_X64="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert out.stdout.split() == ["float64", "int64"], out.stderr


def test_tracers_print_as_jax_prints_them():
    """`print(x)` inside a transformation shows what JAX 0.10.2 shows (recorded from it)."""
    import tracejit as jax
    import tracejit.numpy as jnp

    seen = []
    show = lambda x: seen.append(repr(x)) or x
    jax.jit(show)(1.0)
    jax.jit(show)(jnp.ones((2, 3)))
    jax.jvp(show, (jnp.ones(2),), (jnp.ones(2),))
    jax.grad(show)(1.0)
    jax.vmap(show)(jnp.ones((3, 2)))
    jax.jacfwd(show)(jnp.ones(2))
    jax.hessian(lambda x: show(x).sum())(jnp.ones(2))
    jax.jit(jax.grad(show))(1.0)
    jax.jit(show)(jax.random.key(0))
    assert seen == [
        "JitTracer(~float32[])",
        "JitTracer(float32[2,3])",
        "JVPTracer(primal=[1. 1.], tangent=[1. 1.])",
        "GradTracer(primal=1.0, typeof(tangent)=f32[])",
        "VmapTracer(aval=float32[2], batched=float32[3,2])",
        "JVPTracer(primal=[1. 1.], tangent=VmapTracer(aval=float32[2], batched=float32[2,2]))",
        (
            "GradTracer(primal=JVPTracer(primal=[1. 1.], tangent=VmapTracer(aval=float32[2], "
            "batched=float32[2,2])), typeof(tangent)=f32[2])"
        ),
        "GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])",
        "JitTracer(key<fry>[])",
    ]
