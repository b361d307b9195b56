"""The arrays `visualize_sharding` draws in the tests, shared by the test and the script that
records JAX's drawings (`make_jax_reference_visualization.py`): `draw_all(jax, ...)` prints
them all with the library given."""

import numpy as np

# (shape, mesh shape, spec entries, keyword arguments)
CASES = [
    ((4, 4), (2, 2), ("x", "y"), {}),
    ((4, 4), (2, 2), ("x",), {}),
    ((4, 4), (2, 2), (), {}),
    ((8, 4), (2, 2), ("y", "x"), {}),
    ((8,), (2, 2), (("x", "y"),), {}),
    ((8,), (2, 2), ("x",), {}),
    ((4, 6), (2, 2), (None, "y"), {}),
    ((4, 100), (4,), ("x",), {}),
    ((100, 4), (4,), (None, "x"), {}),
    ((4, 4), (2, 2), ("x", "y"), {"scale": 2.0}),
    ((6, 4), (2, 2), ("x",), {}),
    ((12, 32), (4,), (None, "x"), {}),
    ((8,), (2, 2), (), {}),
    ((8,), (2, 2), (), {"min_width": 3}),
    ((4, 4), (2, 2), ("x", "y"), {"min_width": 3, "scale": 0.3}),
    ((3, 5), (2, 2), (), {}),
    ((16, 16), (4,), (("x",), None), {"scale": 0.5}),
]


def draw_all(jax, NamedSharding, P) -> None:
    meshes = {(2, 2): jax.make_mesh((2, 2), ("x", "y")), (4,): jax.make_mesh((4,), ("x",))}
    for shape, mesh, spec, kwargs in CASES:
        print(shape, spec, kwargs)
        sharding = NamedSharding(meshes[mesh], P(*spec))
        jax.debug.visualize_sharding(shape, sharding, use_color=False, **kwargs)
    print("one device")
    jax.debug.visualize_array_sharding(jax.device_put(np.zeros(3), jax.devices()[2]))
