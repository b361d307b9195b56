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
        with pytest.raises(NotImplementedError, match="inside jit"):
            jax.jit(lambda u: jax.debug.inspect_array_sharding(u, callback=print))(x)
        """
    )
