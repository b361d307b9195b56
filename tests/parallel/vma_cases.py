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
    # bodies within the body, typed as JAX traces them
    "jit": ("lambda a: jax.jit(lambda v: v * 2 + 1)(a)", "P('b')", "P('b')"),
    "jit_claims": ("lambda a: jax.jit(lambda v: v * 2)(a)", "P('b')", "P()"),
    "cond": ("lambda a: lax.cond(True, lambda v: v * 2, lambda v: v, a)", "P('b', 'a')", "P('b')"),
    "cond_zeros_like": (
        "lambda a: lax.cond(True, lambda v: v * 2, lambda v: jnp.zeros_like(v), a)",
        "P('b', 'a')",
        "P('b', 'a')",
    ),
    "cond_varying_index": (
        "lambda a: lax.cond(a.sum() > 0, lambda v: v * 2, lambda v: v, jnp.ones(3))",
        "P('b')",
        "P('b')",
    ),
    "while": (
        "lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, a))[1]",
        "P('b')",
        "P('b')",
    ),
    "while_widens": (
        (
            "lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + a), "
            "(0, jnp.zeros((4, 4))))[1]"
        ),
        "P('b')",
        "P('b')",
    ),
    "scan": ("lambda a: lax.scan(lambda c, r: (c + r, c * r), a[0], a)[1]", "P('b')", "P('b')"),
    "scan_psum": (
        "lambda a: lax.scan(lambda c, r: (c + lax.psum(r, 'a'), None), a[0] * 0, a)[0]",
        "P(None, 'a')",
        "P('a')",
    ),
    "scan_widens": (
        "lambda a: lax.scan(lambda c, r: (c + r, None), jnp.zeros(4), a)[0]",
        "P('b')",
        "P('b')",
    ),
    "scan_narrows": (
        "lambda a: lax.scan(lambda c, r: (lax.psum(c, 'b'), r), a[0], a)[0]",
        "P('b')",
        "P('b')",
    ),
    "scan_tuple_widens": (
        "lambda a: lax.scan(lambda c, r: ((c[0] + r, c[1]), None), (jnp.zeros(4), 1.0), a)[0][0]",
        "P('b')",
        "P('b')",
    ),
    "fori_loop": ("lambda a: lax.fori_loop(0, 2, lambda i, c: c * 2, a)", "P('b')", "P('b')"),
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
    return _typed(eqn.params["jaxpr"])


def _typed(jaxpr) -> dict:
    """A jaxpr's input types and, per equation, its primitive, result types and (where it holds
    any) the same of its bodies, in the order of their parameters' names."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return {
        "in": [v.aval.str_short(short_dtypes=True) for v in jaxpr.invars],
        "eqns": [
            [e.primitive.name, [v.aval.str_short(short_dtypes=True) for v in e.outvars]]
            + ([[_typed(b) for b in _bodies(e)]] if _bodies(e) else [])
            for e in jaxpr.eqns
        ],
    }


def _bodies(eqn) -> list:
    found = []
    for name in sorted(eqn.params):
        value = eqn.params[name]
        for item in value if isinstance(value, tuple) else (value,):
            if hasattr(getattr(item, "jaxpr", item), "eqns"):
                found.append(item)
    return found


def run_all(jax, jnp, lax, P) -> dict:
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((2, 2), ("b", "a"), axis_types=(auto, auto))
    return {name: _answer(jax, jnp, lax, P, mesh, name) for name in CASES}
