"""`shard_map(check_vma=True)`: the bodies' types name the manual axes each value varies along
(`f32[4]{V:a}`), with `pvary`s where JAX stages them and JAX's errors for out_specs claiming
replication of varying values (recorded by `make_jax_reference_vma.py`); the typed bodies
compute what the untyped ones do, `pvary` being the identity in values and gradients."""

import json
import os

import pytest
from parallel.devices import needs_plugin, run_with_devices

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "data", "vma.json")) as _file:
    JAX_ANSWERS = json.load(_file)


@pytest.fixture(scope="module")
def answers():
    out = run_with_devices(
        f"""
        import json, sys
        sys.path.insert(0, {HERE!r})
        from vma_cases import run_all
        print(json.dumps(run_all(jax, jnp, lax, P)))
        """,
        platform="numpy",
    )
    return json.loads(out)


@pytest.mark.parametrize("name", sorted(JAX_ANSWERS))
def test_bodies_are_typed_as_jax_types_them(answers, name):
    assert answers[name] == JAX_ANSWERS[name]


@needs_plugin
def test_typed_bodies_compute_the_same_values_and_gradients():
    run_with_devices(
        """
        from tracejit.sharding import AxisType
        mesh = jax.make_mesh((2, 2), ("b", "a"), axis_types=(AxisType.Auto,) * 2)
        x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
        def body(u, c):
            return lax.psum(u * 2 + c + lax.axis_index("a"), "a")
        for check in (True, False):
            f = jax.shard_map(body, mesh=mesh, in_specs=(P("b", "a"), P()), out_specs=P("b"),
                              check_vma=check)
            c = np.float32(3)
            want = np.stack([x[:, :2], x[:, 2:]]).sum(0) * 2 + 2 * 3 + 1
            close(f(x, c), want)
            close(jax.jit(f)(x, c), want)
            grad = jax.grad(lambda u, k: f(u, k).sum(), argnums=(0, 1))(x, c)
            close(grad[0], np.full((8, 4), 2.0))
            close(grad[1], 2.0 * 8 * 2)
        text = str(jax.make_jaxpr(jax.shard_map(lambda u: lax.pcast(u, "a", to="varying"),
                   mesh=mesh, in_specs=P(), out_specs=P("a")))(x))
        assert "pvary[axes=('a',)] c" in text and "f32[8,4]{V:a}" in text, text
        """
    )


@needs_plugin
def test_typed_nested_bodies_compute_what_untyped_ones_do():
    run_with_devices(
        """
        from tracejit.sharding import AxisType
        mesh = jax.make_mesh((2, 2), ("b", "a"), axis_types=(AxisType.Auto,) * 2)
        x = np.arange(32.0, dtype=np.float32).reshape(8, 4) / 7
        def body(u, differentiated=False):
            u = jax.jit(lambda v: v * 2 + 1)(u)
            u = lax.cond(u.sum() > 0, lambda v: v * 3, lambda v: jnp.zeros_like(v), u)
            u = lax.fori_loop(0, 2, lambda i, c: c * 2, u)
            if not differentiated:
                u = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, u))[1]
            carry, ys = lax.scan(lambda c, r: (c + lax.psum(r, "a"), c * r), u[0] * 0, u)
            return ys + carry
        for spec in (P("b", "a"), P("b")):
            typed, untyped = (
                jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=c)
                for c in (True, False)
            )
            assert "{V:" in str(jax.make_jaxpr(typed)(x))
            want = untyped(x)
            close(typed(x), want)
            close(jax.jit(typed)(x), want)
            typed, untyped = (  # (reverse mode does not pass through while_loop)
                jax.shard_map(lambda u: body(u, True), mesh=mesh, in_specs=spec,
                              out_specs=spec, check_vma=c)
                for c in (True, False)
            )
            g = lambda f: jax.grad(lambda v: (f(v) ** 2).sum())(x)
            close(g(typed), g(untyped), 1e-4)
        """
    )
