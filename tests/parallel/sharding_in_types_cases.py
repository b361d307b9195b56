"""Functions of arrays placed on Explicit mesh axes, shared by the test of shardings in types
and the script recording JAX's answers (`make_jax_reference_sharding_in_types.py`):
`run_all(jax)` gives, per case, the types `make_jaxpr` gives the outputs, the types and specs
of the eager and the jitted results, or the error's class and message."""

import numpy as np

# name -> (function of jax, jnp, lax and P; arguments as (shape, spec entries) on the 2x2 mesh
# with axes "i", "j", spec None: an unsharded array; for functions refusing unsharded arrays,
# their values' NumPy function)
CASES = {
    "sin_mul": ("lambda x: jnp.sin(x) * 2", [((8, 4), ("i", "j"))]),
    "add_replicated": ("lambda x, y: x + y", [((8, 4), ("i", "j")), ((8, 4), ())]),
    "add_unsharded": ("lambda x, y: x + y", [((8, 4), ("i", None)), ((8, 4), None)]),
    "add_row": ("lambda x, y: x + y", [((8, 4), ("i", "j")), ((1, 4), ())]),
    "add_fills_in": ("lambda x, y: x - y", [((8, 4), ("i", None)), ((8, 4), (None, "j"))]),
    "mismatch": ("lambda x, y: x * y", [((8, 4), ("i", "j")), ((8, 4), ("j", "i"))]),
    "where": ("lambda x: jnp.where(x > 3, x, 0.0)", [((8, 4), ("i", "j"))]),
    "cast": ("lambda x: x.astype(jnp.int32)", [((8, 4), ("i", "j"))]),
    "pow": ("lambda x: x**2 + jnp.abs(x)", [((8, 4), (("i", "j"),))]),
    "sum_0": ("lambda x: x.sum(0)", [((8, 4), ("i", "j"))]),
    "sum_1": ("lambda x: x.sum(1)", [((8, 4), ("i", "j"))]),
    "sum_keepdims": ("lambda x: x.sum(1, keepdims=True)", [((8, 4), ("i", "j"))]),
    "max_all": ("lambda x: x.max()", [((8, 4), ("i", "j"))]),
    "mean": ("lambda x: x.mean()", [((8, 4), ("i", "j"))]),
    "argmax": ("lambda x: jnp.argmax(x, 1)", [((8, 4), ("i", "j"))]),
    "cumsum_bad": ("lambda x: jnp.cumsum(x, 0)", [((8, 4), ("i", "j"))]),
    "cumsum_ok": ("lambda x: jnp.cumsum(x, 1)", [((8, 4), ("i", None))]),
    "sort_bad": ("lambda x: jnp.sort(x, 0)", [((8, 4), ("i", "j"))]),
    "transpose": ("lambda x: x.T", [((8, 4), ("i", "j"))]),
    "expand": ("lambda x: x[None]", [((8, 4), ("i", "j"))]),
    "broadcast_to": ("lambda x: jnp.broadcast_to(x, (3, 8, 4))", [((8, 4), ("i", "j"))]),
    "broadcast_unit": ("lambda x: jnp.broadcast_to(x, (8, 4))", [((8, 1), ("i", None))]),
    "reshape_merge": ("lambda x: x.reshape(32)", [((8, 4), ("i", "j"))]),
    "reshape_merge_first": ("lambda x: x.reshape(32)", [((8, 4), ("i", None))]),
    "reshape_merge_bad": ("lambda x: x.reshape(32)", [((8, 4), (None, "j"))]),
    "reshape_split": ("lambda x: x.reshape(2, 4, 4)", [((8, 4), ("i", "j"))]),
    "reshape_split_two": ("lambda x: x.reshape(2, 4, 4)", [((8, 4), (("i", "j"), None))]),
    "reshape_unit": ("lambda x: x.reshape(1, 8, 4)", [((8, 4), ("i", None))]),
    "reshape_squeeze": ("lambda x: x.reshape(8, 4)", [((8, 1, 4), ("i", None, "j"))]),
    "reshape_bad": ("lambda x: x.reshape(4, 8)", [((8, 4), ("i", None))]),
    "squeeze": ("lambda x: jnp.squeeze(x, 1)", [((8, 1, 4), ("i", None, "j"))]),
    "matmul_free": ("lambda x, y: x @ y", [((8, 4), ("i", None)), ((4, 4), (None, "j"))]),
    "matmul_one_side": ("lambda x, y: x @ y", [((8, 4), (None, "j")), ((4, 4), ())]),
    "matmul_contracting": ("lambda x: x @ x.T", [((8, 4), ("i", "j"))]),
    "matmul_same_axis": ("lambda x, y: x @ y", [((8, 4), ("i", None)), ((4, 4), (None, "i"))]),
    "batched_matmul": (
        "lambda x, y: jnp.einsum('bij,bjk->bik', x, y)",
        [((4, 4, 4), ("i", None, None)), ((4, 4, 4), ())],
    ),
    "concatenate": ("lambda x: jnp.concatenate([x, x], 1)", [((8, 4), ("i", "j"))]),
    "stack": ("lambda x: jnp.stack([x, x])", [((8, 4), ("i", "j"))]),
    "rev": ("lambda x: x[::-1]", [((8, 4), ("i", None))]),
    "pad": ("lambda x: jnp.pad(x, 1)", [((8, 4), ("i", None))]),
    "column_of": ("lambda x: x[:, 1]", [((8, 4), ("i", "j"))]),
    "slice_indivisible": ("lambda x: lax.slice(x, (0, 0), (3, 4))", [((8, 4), ("i", "j"))]),
    "cond": (
        "lambda x: lax.cond(True, lambda v: v * 2, lambda v: v, x)",
        [((8, 4), ("i", "j"))],
    ),
    "while": (
        "lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1]",
        [((8, 4), ("i", "j"))],
    ),
    "scan": (
        "lambda x: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(4), x)[1]",
        [((8, 4), (None, "j"))],
    ),
    "grad": ("jax.grad(lambda x: (jnp.tanh(x) * x).sum())", [((8, 4), ("i", "j"))]),
    "data_parallel_grad": (
        "jax.grad(lambda w, x: jnp.mean((x @ w) ** 2))",
        [((4, 2), ()), ((8, 4), ("i", None))],
    ),
    "vmap": ("jax.vmap(lambda r: r * r.sum())", [((8, 4), ("i", "j"))]),
    "softmax": ("lambda x: jax.nn.softmax(x, axis=1)", [((8, 4), ("i", None))]),
    "conv_data_parallel": (
        "lambda x, w: lax.conv(x, w, (1, 1), 'SAME')",
        [((4, 3, 6, 6), ("i",)), ((5, 3, 3, 3), ())],
    ),
    "conv_spatial": (
        "lambda x, w: lax.conv(x, w, (1, 1), 'SAME')",
        [((4, 3, 6, 6), (None, None, "j")), ((5, 3, 3, 3), ())],
    ),
    "conv_features": (
        "lambda x, w: lax.conv(x, w, (1, 1), 'SAME')",
        [((4, 4, 6, 6), (None, "j")), ((5, 4, 3, 3), (None, "j"))],
    ),
    "conv_grad": (
        "jax.grad(lambda w, x: (lax.conv(x, w, (1, 1), 'SAME') ** 2).sum())",
        [((5, 3, 3, 3), ()), ((4, 3, 6, 6), ("i",))],
    ),
    "dynamic_update_slice": (
        "lambda x: lax.dynamic_update_slice(x, jnp.ones((2, 4)), (0, 0))",
        [((8, 4), ("i",))],
    ),
    "top_k": ("lambda x: lax.top_k(x, 2)[0]", [((8, 4), ("i",))]),
    "row_of": ("lambda x: x[0]", [((8, 4), (None, "j"))]),
    "inner_jit": ("jax.jit(lambda x: x * 2)", [((8, 4), ("i", "j"))]),
    "mlp": (
        "lambda x, w: jnp.tanh(x @ w).sum(1)",
        [((8, 4), ("i", None)), ((4, 6), ())],
    ),
    "matmul_out_sharding": (
        "lambda x: jnp.matmul(x, x.T, out_sharding=NamedSharding(mesh, P('i', None)))",
        [((8, 4), ("i", "j"))],
    ),
    "dot_out_sharding": (
        "lambda x: jnp.dot(x, x.T, out_sharding=NamedSharding(mesh, P(None, 'j')))",
        [((8, 4), ("i", "j"))],
    ),
    "auto_axes": (
        "jax.sharding.auto_axes(lambda x: x @ x.T, out_sharding=NamedSharding(mesh, P('i')))",
        [((8, 4), ("i", "j"))],
    ),
    "auto_axes_some": (
        (
            "jax.sharding.auto_axes(lambda x: x @ x.T, axes='j', "
            "out_sharding=NamedSharding(mesh, P('i')))"
        ),
        [((8, 4), ("i", "j"))],
    ),
    "reshard_unsharded": (
        "lambda x: jax.sharding.reshard(x * 2, NamedSharding(mesh, P('j')))",
        [((8, 4), None)],
    ),
    "shard_map": (
        "jax.shard_map(lambda x: x * 2, mesh=mesh, in_specs=P('i', 'j'), out_specs=P('i', 'j'))",
        [((8, 4), ("i", "j"))],
        "lambda x: x * 2",
    ),
    "shard_map_inferred": (
        "jax.shard_map(lambda x: lax.psum(x, 'j'), mesh=mesh, out_specs=P('i'))",
        [((8, 4), ("i", "j"))],
        "lambda x: x[:, :2] + x[:, 2:]",
    ),
    "shard_map_unsharded": (
        "jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('i'), out_specs=P('i'))",
        [((8, 4), ())],
    ),
    "shard_map_mismatch": (
        "jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('j'), out_specs=P('j'))",
        [((8, 4), ("i", "j"))],
    ),
    "reshard": (
        "lambda x: jax.sharding.reshard(x, NamedSharding(mesh, P(None, 'i')))",
        [((8, 4), ("i", "j"))],
    ),
    # gather and scatter, windows, tiling, concatenation, filled arrays like another
    "gather_rows": ("lambda x: x[jnp.array([0, 2, 1])]", [((8, 4), ("i", "j"))]),
    "gather_rows_whole": ("lambda x: x[jnp.array([0, 2, 1])]", [((8, 4), (None, "j"))]),
    "gather_columns": ("lambda x: x[:, jnp.array([0, 2])]", [((8, 4), ("i", None))]),
    "gather_columns_split": ("lambda x: x[:, jnp.array([0, 2])]", [((8, 4), ("i", "j"))]),
    "gather_dynamic_row": ("lambda x: x[jnp.argmax(x[:, 0])]", [((8, 4), (None, "j"))]),
    "take": ("lambda x: jnp.take(x, jnp.array([3, 0, 1]), axis=1)", [((8, 4), ("i", None))]),
    "take_split": ("lambda x: jnp.take(x, jnp.array([3, 0, 1]), axis=1)", [((8, 4), ("i", "j"))]),
    "take_flat": ("lambda x: jnp.take(x, jnp.array([3, 0, 1]))", [((8, 4), ("i", None))]),
    "take_along_axis": (
        "lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)",
        [((8, 4), ("i", None))],
    ),
    "at_set": ("lambda x: x.at[jnp.array([0, 3])].set(0.0)", [((8, 4), ("i", "j"))]),
    "at_set_whole": ("lambda x: x.at[jnp.array([0, 3])].set(0.0)", [((8, 4), (None, "j"))]),
    "at_add_row": ("lambda x: x.at[1].add(1.0)", [((8, 4), (None, "j"))]),
    "at_add_row_split": ("lambda x: x.at[1].add(1.0)", [((8, 4), ("i", "j"))]),
    "at_set_columns": (
        "lambda x: x.at[:, jnp.array([1, 2])].set(x[:, :2])",
        [((8, 4), ("i", None))],
    ),
    "reduce_window": (
        "lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), 'VALID')",
        [((8, 4), (None, "j"))],
    ),
    "reduce_window_split": (
        "lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), 'VALID')",
        [((8, 4), ("i", "j"))],
    ),
    "reduce_window_max": (
        "lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 2), 'VALID')",
        [((8, 4), ("i", None))],
    ),
    "cummax": ("lambda x: lax.cummax(x, axis=1)", [((8, 4), ("i", None))]),
    "cummax_bad": ("lambda x: lax.cummax(x, axis=0)", [((8, 4), ("i", None))]),
    "cumprod": ("lambda x: jnp.cumprod(x, axis=1)", [((8, 4), ("i", None))]),
    "tile": ("lambda x: jnp.tile(x, (2, 1))", [((8, 4), ("i", "j"))]),
    "tile_whole": ("lambda x: jnp.tile(x, (1, 2))", [((8, 4), ("i", None))]),
    "repeat": ("lambda x: jnp.repeat(x, 2, axis=1)", [((8, 4), ("i", None))]),
    "repeat_split": ("lambda x: jnp.repeat(x, 2, axis=0)", [((8, 4), ("i", None))]),
    "concatenate_split": ("lambda x: jnp.concatenate([x, x], 0)", [((8, 4), ("i", "j"))]),
    "concatenate_mixed": (
        "lambda x, y: jnp.concatenate([x, y], 1)",
        [((8, 4), ("i", None)), ((8, 4), ())],
    ),
    "concatenate_constant": (
        "lambda x: jnp.concatenate([x, jnp.zeros((8, 4))], 1)",
        [((8, 4), ("i", None))],
    ),
    "pad_split": ("lambda x: jnp.pad(x, ((0, 0), (1, 1)))", [((8, 4), ("i", "j"))]),
    "pad_interior": (
        "lambda x: lax.pad(x, 0.0, ((0, 0, 0), (1, 1, 1)))",
        [((8, 4), ("i", None))],
    ),
    "dynamic_slice": ("lambda x: lax.dynamic_slice(x, (2, 0), (4, 4))", [((8, 4), (None, "j"))]),
    "dynamic_slice_split": (
        "lambda x: lax.dynamic_slice(x, (2, 0), (4, 4))",
        [((8, 4), ("i", "j"))],
    ),
    "dynamic_slice_index": (
        "lambda x: lax.dynamic_slice_in_dim(x, jnp.argmax(x[0]), 2, 1)",
        [((8, 4), ("i", None))],
    ),
    "ones_like": ("lambda x: jnp.ones_like(x)", [((8, 4), ("i", "j"))]),
    "zeros_like": ("lambda x: jnp.zeros_like(x)", [((8, 4), ("i", None))]),
    "full_like": ("lambda x: jnp.full_like(x, 3.0)", [((8, 4), (None, "j"))]),
    "empty_like": ("lambda x: jnp.empty_like(x) * 0", [((8, 4), ("i", "j"))]),
    "stack_split": ("lambda x: jnp.stack([x, x], 1)", [((8, 4), ("i", "j"))]),
    "split": ("lambda x: jnp.split(x, 2, axis=1)[0]", [((8, 4), ("i", None))]),
    "split_bad": ("lambda x: jnp.split(x, 2, axis=0)[0]", [((8, 4), ("i", None))]),
    "lax_split": ("lambda x: lax.split(x, (2, 6), axis=0)[1]", [((8, 4), ("i", "j"))]),
    "lax_split_bad": ("lambda x: lax.split(x, (1, 3), axis=1)[0]", [((8, 4), ("i", "j"))]),
    "top_k_split": ("lambda x: lax.top_k(x, 2)[0]", [((8, 4), ("i", "j"))]),
    "flip": ("lambda x: jnp.flip(x, 0)", [((8, 4), ("i", "j"))]),
    "roll": ("lambda x: jnp.roll(x, 1, axis=1)", [((8, 4), ("i", None))]),
    "roll_split": ("lambda x: jnp.roll(x, 1, axis=0)", [((8, 4), ("i", None))]),
    "gather_sharded_indices": (
        "lambda x: x[jax.sharding.reshard(jnp.arange(8) % 4, NamedSharding(mesh, P('i')))]",
        [((8, 4), ())],
    ),
    "gather_vmapped": (
        (
            "lambda x: jax.vmap(lambda r, i: r[i])"
            "(x, jax.sharding.reshard(jnp.arange(8) % 4, NamedSharding(mesh, P('i'))))"
        ),
        [((8, 4), ("i", None))],
        "lambda x: x[np.arange(8), np.arange(8) % 4]",
    ),
    "scatter_vmapped": (
        (
            "lambda x: jax.vmap(lambda r, i: r.at[i].add(1.0))"
            "(x, jax.sharding.reshard(jnp.arange(8) % 4, NamedSharding(mesh, P('i'))))"
        ),
        [((8, 4), ("i", None))],
        "lambda x: x + (np.arange(4) == np.arange(8)[:, None] % 4)",
    ),
    "at_set_column_updates": (
        "lambda x, u: x.at[:, 1].set(u)",
        [((8, 4), ("i", None)), ((8,), ("i",))],
    ),
    "reduce_window_strided": (
        "lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (2, 1), 'VALID')",
        [((8, 4), ("i", "j"))],
    ),
    "reduce_window_same": (
        "lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), 'SAME')",
        [((8, 4), ("i", "j"))],
    ),
    "max_pool_grad": (
        (
            "jax.grad(lambda x: "
            "lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 2), 'VALID').sum())"
        ),
        [((8, 4), ("i", None))],
    ),
    "gather_grad": ("jax.grad(lambda x: x[:, jnp.array([0, 2])].sum())", [((8, 4), ("i", None))]),
    "dynamic_slice_bad": ("lambda x: lax.dynamic_slice(x, (2, 0), (3, 4))", [((8, 4), ("i", "j"))]),
}


def _value(shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7.0


def arguments(jax, NamedSharding, P, mesh, name):
    return [
        jax.device_put(_value(shape), NamedSharding(mesh, P(*spec)))
        if spec is not None
        else _value(shape)
        for shape, spec in CASES[name][1]
    ]


# (JAX differentiates on Explicit axes only within a mesh context: its seed cotangent is resharded)
UNDER_MESH = {"grad", "data_parallel_grad", "conv_grad"}
# (nor does it scatter into them outside one: its updates are placed on the context mesh)
UNDER_MESH |= {"at_set", "at_set_whole", "at_add_row", "at_add_row_split", "at_set_columns"}
UNDER_MESH |= {"ones_like", "zeros_like", "full_like", "empty_like", "at_set_column_updates"}
UNDER_MESH |= {"scatter_vmapped", "max_pool_grad", "gather_grad"}


def _answer(scope, mesh, name):
    if name in UNDER_MESH:
        with scope["jax"].set_mesh(mesh):
            return _answer_here(scope, mesh, name)
    return _answer_here(scope, mesh, name)


def _answer_here(scope, mesh, name):
    jax, NamedSharding, P = scope["jax"], scope["NamedSharding"], scope["P"]
    fun = eval(CASES[name][0], dict(scope, mesh=mesh))
    args = arguments(jax, NamedSharding, P, mesh, name)
    try:
        traced = [str(a) for a in jax.make_jaxpr(fun)(*args).out_avals]
        eager = fun(*args)
        jitted = jax.jit(fun)(*args)
    except Exception as err:  # noqa: BLE001  (the answer is the error)
        return {"error": [type(err).__name__, str(err)]}
    return {
        "traced": traced,
        "eager": str(jax.typeof(eager)),
        "eager_spec": _spec_of(eager),
        "jit": str(jax.typeof(jitted)),
        "jit_spec": _spec_of(jitted),
    }


def _spec_of(array) -> str:
    """The spec of an array's NamedSharding, or the name of its other kind of sharding."""
    sharding = array.sharding
    return repr(sharding.spec) if hasattr(sharding, "spec") else type(sharding).__name__


def check_values(jax, jnp, lax, NamedSharding, P) -> list:
    """Asserts that each case's eager and jitted results on the mesh are its results on
    unsharded arrays; returns the names of the cases checked (those raising none)."""
    scope = {"jax": jax, "jnp": jnp, "lax": lax, "P": P, "NamedSharding": NamedSharding}
    mesh = jax.make_mesh((2, 2), ("i", "j"))
    checked = []
    for name, (source, inputs, *reference) in CASES.items():
        fun = eval(source, dict(scope, mesh=mesh))
        args = arguments(jax, NamedSharding, P, mesh, name)
        try:
            with jax.set_mesh(mesh):
                results = [fun(*args), jax.jit(fun)(*args)]
        except Exception:  # noqa: BLE001, S112  (the errors are compared with JAX's)
            continue
        on_one_device = eval(reference[0]) if reference else fun
        expected = np.asarray(on_one_device(*[jnp.asarray(_value(shape)) for shape, _ in inputs]))
        for result in results:
            np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6, err_msg=name)
        checked.append(name)
    return checked


def run_all(jax, jnp, lax, NamedSharding, P) -> dict:
    scope = {"jax": jax, "jnp": jnp, "lax": lax, "P": P, "NamedSharding": NamedSharding}
    mesh = jax.make_mesh((2, 2), ("i", "j"))
    return {name: _answer(scope, mesh, name) for name in CASES}
