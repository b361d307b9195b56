"""Primitives defined outside tracejit with their rules written in JAX's spelling
(`tracejit.interpreters.ad`/`batching`/`mlir`, as `jax.interpreters`), the way equinox defines
its own: they differentiate (forward and reverse), vectorize and compile."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import core as tracejit_core
from tracejit._src.interpreters import batching as batching_internals
from tracejit.extend.core import Primitive
from tracejit.interpreters import ad, batching, mlir


@pytest.fixture
def new_primitive():
    """Makes primitives of the test's own, taken out of tracejit's registries afterwards (the
    rule-coverage test reads them)."""
    made = []

    def make(name, multiple_results=False):
        primitive = Primitive(name)
        primitive.multiple_results = multiple_results
        made.append(primitive)
        return primitive

    yield make
    for primitive in made:
        del tracejit_core.primitives[primitive.name]
        for registry in tracejit_core.rule_registries.values():
            registry.pop(primitive, None)
        batching_internals.axis_rules.discard(primitive)


def _triple(make):
    """`3 x`, linear, with every rule registered through the JAX-spelled registries."""
    triple_p = make("user_triple")
    triple_p.def_impl(lambda x: x * 3)
    triple_p.def_abstract_eval(lambda aval: aval)

    def jvp(primals, tangents):
        return triple_p.bind(*primals), triple_p.bind(ad.instantiate_zeros(tangents[0]))

    def transpose(ct, x):
        assert ad.is_undefined_primal(x)
        return [None if type(ct) is ad.Zero else triple_p.bind(ct)]

    ad.primitive_jvps[triple_p] = jvp
    ad.primitive_transposes[triple_p] = transpose
    batching.primitive_batchers[triple_p] = lambda values, dims: (triple_p.bind(*values), dims[0])
    mlir.register_lowering(triple_p, mlir.lower_fun(lambda x: x * 3, multiple_results=False))
    return triple_p


def test_a_user_primitive_differentiates_vectorizes_and_compiles(new_primitive):
    triple_p = _triple(new_primitive)
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(triple_p.bind(x), [0.0, 3.0, 6.0, 9.0])
    np.testing.assert_array_equal(jax.jit(triple_p.bind)(x), [0.0, 3.0, 6.0, 9.0])
    _, tangent = jax.jvp(triple_p.bind, (x,), (jnp.ones(4),))
    np.testing.assert_array_equal(tangent, [3.0] * 4)
    grad = jax.grad(lambda v: jnp.sum(jnp.sin(triple_p.bind(v))))
    np.testing.assert_allclose(grad(x), 3 * np.cos(3 * np.arange(4.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(grad)(x), grad(x), rtol=1e-6)
    xs = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        jax.vmap(triple_p.bind, in_axes=1)(xs), 3 * np.arange(6.0).reshape(2, 3).T
    )
    assert "user_triple" in str(jax.make_jaxpr(triple_p.bind)(x))


def test_a_batcher_that_takes_the_axis(new_primitive):
    """`axis_primitive_batchers` rules get (axis_size, axis_name, trace_type, values, dims)."""
    total_p = new_primitive("user_total", multiple_results=True)
    total_p.def_impl(lambda x: [np.sum(x, dtype=x.dtype)])
    total_p.def_abstract_eval(lambda aval: [aval.update(shape=())])
    seen = []

    def batcher(axis_size, axis_name, trace_type, values, dims):
        seen.append((axis_size, axis_name))
        (x,), (d,) = values, dims
        return [jnp.sum(x, axis=tuple(i for i in range(x.ndim) if i != d))], [0]

    batching.axis_primitive_batchers[total_p] = batcher
    out = jax.vmap(lambda v: total_p.bind(v)[0], axis_name="i")(jnp.ones((3, 2)))
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
    assert seen == [(3, "i")]


def test_lower_fun_with_several_results(new_primitive):
    split_p = new_primitive("user_split", multiple_results=True)
    split_p.def_impl(lambda x: [x[:1], x[1:]])
    split_p.def_abstract_eval(lambda a: [a.update(shape=(1,)), a.update(shape=(a.shape[0] - 1,))])
    mlir.register_lowering(split_p, mlir.lower_fun(lambda x: [x[:1], x[1:]]))
    first, rest = jax.jit(split_p.bind)(jnp.arange(3.0))
    np.testing.assert_array_equal(first, [0.0])
    np.testing.assert_array_equal(rest, [1.0, 2.0])


def test_without_a_lowering_compiling_names_the_primitive(new_primitive):
    """Lowering raises JAX's NotImplementedError naming the primitive; calling the jitted
    function falls back on NumPy evaluation with a warning saying so (tracejit's dispatch)."""
    bare_p = new_primitive("user_bare")
    bare_p.def_impl(lambda x: x + 1)
    bare_p.def_abstract_eval(lambda aval: aval)
    with pytest.raises(NotImplementedError, match="'user_bare'"):
        jax.jit(bare_p.bind).lower(1.0).as_text()
    with pytest.warns(RuntimeWarning, match="'user_bare'.*with NumPy instead"):
        np.testing.assert_array_equal(jax.jit(bare_p.bind)(np.float32(1)), 2.0)


def test_an_mlir_rule_is_kept_but_cannot_run(new_primitive):
    """Libraries register rules written against JAX's MLIR objects when imported (equinox's
    `noinline`); registering works, lowering says what cannot run."""
    mlir_p = new_primitive("user_mlir")
    mlir_p.def_impl(lambda x: x)
    mlir_p.def_abstract_eval(lambda aval: aval)
    mlir.register_lowering(mlir_p, lambda ctx, x: [x])
    with pytest.raises(NotImplementedError, match="'user_mlir'.*MLIR"):
        jax.jit(mlir_p.bind).lower(1.0).as_text()


def test_the_opaque_trace_state_tells_traces_apart():
    """flax compares it to check that a module's variables are used under the trace that made
    them: equal within one trace, different inside a transformation."""
    from tracejit.extend.core import get_opaque_trace_state

    outside = get_opaque_trace_state(convention="flax")
    assert outside == get_opaque_trace_state()
    inside = []
    jax.jit(lambda x: inside.append(get_opaque_trace_state("flax")) or x)(1.0)
    jax.grad(lambda x: inside.append(get_opaque_trace_state("flax")) or x)(1.0)
    assert inside[0] != outside and inside[1] != outside and inside[0] != inside[1]
