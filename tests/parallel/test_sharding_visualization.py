"""`jax.debug.visualize_sharding` draws the same table as JAX 0.10.2 (recorded with rich,
`make_jax_reference_visualization.py`), on 4 devices; its errors; `inspect_array_sharding`."""

import os

from parallel.devices import needs_plugin, run_with_devices

pytestmark = needs_plugin

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "visualize_sharding.txt")


def test_drawings_are_jax_s():
    out = run_with_devices(
        f"""
        import sys
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        from visualization_cases import draw_all
        draw_all(jax, NamedSharding, P)
        """
    )
    with open(DATA) as file:
        assert out == file.read()


def test_bad_input_and_inspection():
    run_with_devices(
        """
        import pytest
        mesh = jax.make_mesh((2, 2), ("x", "y"))
        for shape in [(), (2, 2, 2)]:
            with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dim"):
                jax.debug.visualize_sharding(shape, NamedSharding(mesh, P()))
        with pytest.raises(ValueError, match="does not evenly divide"):
            jax.debug.visualize_sharding((3, 4), NamedSharding(mesh, P("x")))
        with pytest.raises(NotImplementedError, match="max_width"):
            jax.debug.visualize_sharding((2, 100), NamedSharding(mesh, P("x", "y")))
        x = jax.device_put(np.zeros((4, 4)), NamedSharding(mesh, P("x")))
        seen = []
        jax.debug.inspect_array_sharding({"a": x, "b": jnp.ones(2)}, callback=seen.append)
        assert seen == [x.sharding, jnp.ones(2).sharding]
        """
    )


def test_inspection_under_jit_reports_xla_s_layout_when_compiling():
    # as JAX 0.10.2 on 4 CPU devices: XLA keeps the argument's layout for u * 2 and transposes
    # it for u.T; the callbacks run once, when the program is compiled
    run_with_devices(
        """
        import pytest
        from tracejit.sharding import AxisType, SingleDeviceSharding
        mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
        seen = []
        def f(u):
            jax.debug.inspect_array_sharding(u * 2, callback=lambda s: seen.append(("2u", s)))
            v = u.T
            jax.debug.inspect_array_sharding(v, callback=lambda s: seen.append(("uT", s)))
            return v.sum(0)
        a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        g = jax.jit(f)
        x = jax.device_put(a, NamedSharding(mesh, P("x", "y")))
        close(g(x), a.sum(1))
        assert seen == [("2u", NamedSharding(mesh, P("x", "y"))), ("uT", NamedSharding(mesh, P("y", "x")))]
        g(x)
        assert len(seen) == 2  # (compiled once)
        seen.clear()
        jax.jit(f)(jax.device_put(a, NamedSharding(mesh, P("x"))))
        assert [s.spec for _, s in seen] == [P("x"), P(None, "x")]
        seen.clear()
        jax.jit(f)(a)  # one device
        assert seen == [("2u", SingleDeviceSharding(jax.devices()[0]))] * 1 + [("uT", SingleDeviceSharding(jax.devices()[0]))]
        assert "inspect_sharding[callback=" in str(jax.make_jaxpr(f)(a))
        inner = jax.jit(lambda u: jax.jit(f)(u) * 1)
        with pytest.raises(NotImplementedError, match="inside a call"):
            inner(x)
        """
    )
