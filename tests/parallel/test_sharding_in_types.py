"""Shardings in types on Explicit mesh axes, as JAX 0.10.2 gives them (recorded by
`make_jax_reference_sharding_in_types.py`): the types `make_jaxpr` gives each function of
arrays placed on a 2x2 mesh, the types and layouts of its eager and jitted results, and JAX's
`ShardingTypeError`s; the values of those results are those of the same functions on
unsharded arrays."""

import json
import os

import pytest
from parallel.devices import needs_plugin, run_with_devices

pytestmark = needs_plugin

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def answers():
    out = run_with_devices(
        f"""
        import json, sys
        sys.path.insert(0, {HERE!r})
        from sharding_in_types_cases import run_all
        print(json.dumps(run_all(jax, jnp, lax, NamedSharding, P)))
        """
    )
    return json.loads(out)


with open(os.path.join(HERE, "data", "sharding_in_types.json")) as _file:
    JAX_ANSWERS = json.load(_file)


# Cases refused with JAX's error class, whose message names another operation: jnp builds these
# functions from other primitives than JAX does (`x.at[1].add` slices and updates a slice where
# JAX scatters, `tile` broadcasts and reshapes where JAX has a `tile` primitive, and `.at[].set`
# broadcasts its updates unsharded), so the refusing rule is another one.
REFUSED_BY_ANOTHER_RULE = {"at_add_row_split", "at_set", "tile"}


@pytest.mark.parametrize("name", sorted(JAX_ANSWERS))
def test_types_and_errors_are_jax_s(answers, name):
    if name in REFUSED_BY_ANOTHER_RULE:
        assert answers[name]["error"][0] == JAX_ANSWERS[name]["error"][0]
    else:
        assert answers[name] == JAX_ANSWERS[name]


def test_values_are_those_of_unsharded_arrays():
    out = run_with_devices(
        f"""
        import sys
        sys.path.insert(0, {HERE!r})
        from sharding_in_types_cases import check_values
        print(len(check_values(jax, jnp, lax, NamedSharding, P)))
        """
    )
    errors = sum("error" in answer for answer in JAX_ANSWERS.values())
    assert int(out) == len(JAX_ANSWERS) - errors


@needs_plugin
def test_shape_dtype_structs_carry_shardings_into_types():
    # JAX 0.10.2's reprs and types, recorded by hand (abstract tracing needs no devices' data)
    run_with_devices(
        """
        import pytest
        mesh = jax.make_mesh((2, 2), ("i", "j"))
        s = jax.ShapeDtypeStruct((8, 4), np.float32, sharding=NamedSharding(mesh, P("i", "j")))
        assert repr(s) == (
            "ShapeDtypeStruct(shape=(8, 4), dtype=float32, sharding=NamedSharding(mesh=Mesh("
            "'i': 2, 'j': 2, axis_types=(Explicit, Explicit)), spec=P('i', 'j'), "
            "memory_kind=device))"
        )
        text = str(jax.make_jaxpr(lambda x: x.sum(0))(s))
        assert text == (  # (JAX 0.10.2's printout)
            "{ lambda ; a:f32[8@i,4@j]. let\\n"
            "    b:f32[4@j] = reduce_sum[axes=(0,) out_sharding=None] a\\n"
            "  in (b,) }"
        ), text
        out = jax.eval_shape(lambda x: x.sum(0), s)
        assert out.sharding.spec == P("j") and out.shape == (4,)
        assert s != jax.ShapeDtypeStruct((8, 4), np.float32)
        with pytest.raises(ValueError, match="mesh context"):
            jax.ShapeDtypeStruct((8, 4), np.float32, sharding=P("i"))
        with jax.set_mesh(mesh):
            t = jax.ShapeDtypeStruct((8, 4), np.float32, sharding=P("i"))
        assert str(jax.make_jaxpr(lambda x: x * 2)(t).out_avals[0]) == "float32[8@i,4]"
        """
    )


@needs_plugin
def test_explicit_and_auto_axes_over_some_mesh_axes():
    # JAX 0.10.2's types, recorded by hand: within `f` (`seen`), of the results
    run_with_devices(
        """
        from tracejit.sharding import AxisType, auto_axes, explicit_axes
        x = np.arange(32, dtype=np.float32).reshape(8, 4)
        auto = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
        mixed = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Explicit, AxisType.Auto))
        seen = []
        def f(v):
            seen.append(str(jax.typeof(v)))
            return v * 2
        cases = [
            (auto, explicit_axes(f, axes="i", in_sharding=P("i", None)), "float32[8@i,4]",
             "float32[8,4]"),
            (auto, explicit_axes(f, in_sharding=P("i", "j")), "float32[8@i,4@j]", "float32[8,4]"),
            (mixed, explicit_axes(f, axes="j", in_sharding=P(None, "j")), "float32[8,4@j]",
             "float32[8,4]"),
            (mixed, auto_axes(f, axes="i", out_sharding=P("i", None)), "float32[8,4]",
             "float32[8@i,4]"),
        ]
        for mesh, g, inside, result in cases:
            v = jax.device_put(x, NamedSharding(mesh, P("i", "j")))
            with jax.set_mesh(mesh):
                seen.clear()
                out = jax.jit(g)(v)
                assert seen[0] == inside, (seen, inside)
                assert str(jax.typeof(out)) == result, (jax.typeof(out), result)
                close(out, x * 2)
                close(g(v), x * 2)
                assert str(jax.make_jaxpr(g)(v).out_avals[0]) == result
        """
    )
