"""The jaxpr object API libraries read (`tracejit.extend.core`, `tracejit.core`): the objects
of a staged function and their attributes, evaluating them, and primitives of one's own."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import core
from tracejit._src import core as tracejit_core
from tracejit.extend import core as ext


def _staged():
    return jax.make_jaxpr(lambda x, y: (jnp.sin(x) * y, x + 1.0))(jnp.ones(3), np.float32(2))


def test_a_jaxprs_parts_read_as_in_jax():
    closed = _staged()
    assert isinstance(closed, ext.ClosedJaxpr) and isinstance(closed.jaxpr, ext.Jaxpr)
    jaxpr = closed.jaxpr
    assert [eqn.primitive.name for eqn in jaxpr.eqns] == ["sin", "mul", "add"]
    assert all(isinstance(eqn, ext.JaxprEqn) for eqn in jaxpr.eqns)
    assert all(isinstance(eqn.primitive, ext.Primitive) for eqn in jaxpr.eqns)
    assert isinstance(jaxpr.eqns[0].invars[0], ext.Var)
    assert isinstance(jaxpr.eqns[2].invars[1], ext.Literal)
    assert jaxpr.eqns[2].invars[1].val == 1.0
    assert jaxpr.invars[0].aval == core.ShapedArray((3,), np.float32)
    assert closed.in_avals == [
        core.ShapedArray((3,), np.float32),
        core.ShapedArray((), np.float32),
    ]
    assert [a.shape for a in closed.out_avals] == [(3,), (3,)]
    assert closed.consts == [] and jaxpr.constvars == []
    assert jaxpr.eqns[0].params == {} and len(jaxpr.outvars) == 2
    ext.check_jaxpr(jaxpr)


def test_evaluating_a_jaxpr():
    closed = _staged()
    x = np.arange(3.0, dtype=np.float32)
    want = [np.sin(x) * 2.0, x + 1.0]
    for got in (
        ext.jaxpr_as_fun(closed)(x, 2.0),
        ext.jaxpr_as_fun(closed, x)(2.0),
        core.eval_jaxpr(closed.jaxpr, closed.consts, x, 2.0),
        jax.jit(ext.jaxpr_as_fun(closed))(x, 2.0),
    ):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_mapped_and_unmapped_avals():
    aval = core.ShapedArray((2, 3), np.float32)
    assert ext.mapped_aval(2, 0, aval).shape == (3,)
    assert ext.unmapped_aval(4, 1, aval).shape == (2, 4, 3)
    assert ext.unmapped_aval(4, None, aval) is aval
    with pytest.raises(ValueError, match="size 5"):
        ext.mapped_aval(5, 0, aval)


@pytest.fixture
def own_primitive():
    """A primitive of the test's own, taken out of tracejit's registry afterwards (the rule
    coverage test reads the registry)."""
    primitive = ext.Primitive("twice")
    yield primitive
    del tracejit_core.primitives[primitive.name]


def test_a_primitive_of_ones_own(own_primitive):
    twice_p = own_primitive
    twice_p.def_impl(lambda x: x * 2)
    twice_p.def_abstract_eval(lambda aval: aval)
    np.testing.assert_array_equal(twice_p.bind(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    text = str(jax.make_jaxpr(twice_p.bind)(jnp.ones(2)))
    assert "twice a" in text
    assert isinstance(jax.make_jaxpr(lambda x: x)(1.0).jaxpr.invars[0].aval, core.ShapedArray)


def test_atoms_jaxprs_in_params_and_the_top_trace():
    closed = jax.make_jaxpr(lambda x: jax.lax.cond(x > 0, jnp.sin, jnp.cos, x) * 2.0)(1.0)
    cond_eqn = next(e for e in closed.jaxpr.eqns if e.primitive.name == "cond")
    assert all(isinstance(atom, core.Atom) for atom in closed.jaxpr.eqns[-1].invars)
    inner = ext.jaxprs_in_params(cond_eqn.params)
    assert len(inner) == 2 and all(isinstance(j, ext.Jaxpr) for j in inner)
    assert ext.jaxprs_in_params({"x": 1}) == []

    seen = []

    def f(x):
        inner_trace = ext.find_top_trace([x])
        seen.append(inner_trace is ext.find_top_trace([1.0, x]))
        seen.append(type(inner_trace).__name__)
        return x * 2

    jax.jvp(lambda y: jax.vmap(f)(y), (jnp.ones(2),), (jnp.ones(2),))
    assert seen == [True, "BatchTrace"]
