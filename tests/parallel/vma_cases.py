"""shard_map bodies typed with `check_vma=True`, shared by the test and the script recording
JAX's answers (`make_jax_reference_vma.py`): `run_all(jax, jnp, lax, P)` gives per case the
body's argument types and, per equation, its primitive and result types, or the error's
class and message."""

import numpy as np

# name -> (body of `a` (and `c`), in_specs, out_specs); the mesh is 2x2 with axes ("b", "a")
# (not in alphabetical order: types name their axes in the mesh's order)
CASES = {
    "replicated_literal": ("lambda a: a * 2", "P('b', 'a')", "P('b', 'a')"),
    "mixed_operands": ("lambda a, c: a + c[:4]", "(P('b'), P())", "P('b')"),
    "psum_varying": ("lambda a: lax.psum(a, 'a')", "P(None, 'a')", "P()"),
    "psum_replicated": ("lambda a: lax.psum(a, 'a')", "P()", "P()"),
    "psum_both": ("lambda a: lax.psum(a.sum(), ('b', 'a'))", "P('b', 'a')", "P()"),
    "psum_mixed": ("lambda a: lax.psum(a, ('a', 'b'))", "P('b')", "P()"),
    "pmean": ("lambda a: lax.pmean(a, 'a')", "P(None, 'a')", "P()"),
    "pmax": ("lambda a: lax.pmax(a, 'a')", "P(None, 'a')", "P()"),
    "all_gather": ("lambda a: lax.all_gather(a, 'a', tiled=True)", "P('a')", "P('a')"),
    "all_gather_claimed": ("lambda a: lax.all_gather(a, 'a', tiled=True)", "P('a')", "P()"),
    "psum_scatter": ("lambda a: lax.psum_scatter(a, 'a', tiled=True)", "P()", "P('a')"),
    "ppermute": ("lambda a: lax.ppermute(a, 'a', [(0, 1), (1, 0)])", "P()", "P('a')"),
    "axis_index": ("lambda a: a + lax.axis_index('a')", "P()", "P('a')"),
    "pcast": ("lambda a: lax.pcast(a, 'a', to='varying')", "P()", "P('a')"),
    "pcast_again": ("lambda a: lax.pcast(a, 'a', to='varying')", "P('a')", "P('a')"),
    "pcast_mixed": ("lambda a: lax.pcast(a, ('a', 'b'), to='varying')", "P('a')", "P('a', 'b')"),
    "claims_replication": ("lambda a: a", "P('b')", "P()"),
    "claims_two": ("lambda a: (a, a * 2)", "P('b', 'a')", "(P('b'), P())"),
    "unchecked": ("lambda a: lax.pcast(a * 2, 'a', to='varying')", "P('b')", "P()"),
}


def _answer(jax, jnp, lax, P, mesh, name):
    source, in_specs, out_specs = CASES[name]
    scope = {"jax": jax, "jnp": jnp, "lax": lax, "P": P}
    body = eval(source, scope)
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    args = (x,) * body.__code__.co_argcount
    fun = jax.shard_map(
        body,
        mesh=mesh,
        in_specs=eval(in_specs, scope),
        out_specs=eval(out_specs, scope),
        check_vma=name != "unchecked",
    )
    try:
        eqn = jax.make_jaxpr(fun)(*args).eqns[0]
    except Exception as err:  # noqa: BLE001  (the answer is the error)
        # (JAX prints a set of states, whose order changes with the process's string hashes)
        message = str(err).replace("{'varying', 'invarying'}", "{'invarying', 'varying'}")
        return {"error": [type(err).__name__, message]}
    jaxpr = eqn.params["jaxpr"]
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return {
        "in": [v.aval.str_short(short_dtypes=True) for v in jaxpr.invars],
        "eqns": [
            [e.primitive.name, [v.aval.str_short(short_dtypes=True) for v in e.outvars]]
            for e in jaxpr.eqns
        ],
    }


def run_all(jax, jnp, lax, P) -> dict:
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((2, 2), ("b", "a"), axis_types=(auto, auto))
    return {name: _answer(jax, jnp, lax, P, mesh, name) for name in CASES}
