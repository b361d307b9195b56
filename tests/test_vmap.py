"""API-level tests of `tracejit.vmap`: in_axes/out_axes forms, errors, unbatched values, and
compositions with jit, grad, custom_jvp/custom_vjp."""

import numpy as np
import pytest
from helpers import assert_close, vmap_reference

import tracejit.numpy as jnp
from tracejit import custom_jvp, custom_vjp, grad, jit, make_jaxpr, vmap
from tracejit._src.interpreters.batching import BatchTrace

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def prims(jaxpr):
    return [e.primitive.name for e in jaxpr.jaxpr.eqns]


# --- in_axes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_in_axes_int(axis):
    x = rand(3, 4)
    assert_close(vmap(jnp.sin, in_axes=axis)(x), vmap_reference(np.sin, [x], [axis]), 1e-5)


def test_in_axes_none_and_tuple():
    x, y = rand(3, 4), rand(4)
    f = lambda x, y: x + jnp.cos(y)
    assert_close(
        vmap(f, in_axes=(0, None))(x, y),
        vmap_reference(lambda a, b: a + np.cos(b), [x, y], [0, None]),
        1e-5,
    )
    assert_close(
        vmap(f, in_axes=[1, None])(x.T, y),
        vmap_reference(lambda a, b: a + np.cos(b), [x.T, y], [1, None]),
        1e-5,
    )
    assert_close(vmap(f, in_axes=(1, 0))(x.T, rand(3, 4)).shape, (3, 4), 1e-5)


def test_in_axes_pytree_prefix():
    p = {"a": rand(3, 2), "b": rand(2, 3)}
    f = lambda p, c: p["a"] * 2.0 + p["b"] + c
    out = vmap(f, in_axes=({"a": 0, "b": 1}, None))(p, 1.0)
    ref = np.stack([p["a"][i] * 2 + p["b"][:, i] + 1.0 for i in range(3)])
    assert_close(out, ref, 1e-5)
    # a prefix: one axis for the whole dict
    q = {"a": rand(3, 2), "b": rand(3, 2)}
    assert_close(vmap(lambda q: q["a"] - q["b"], in_axes=(0,))(q), q["a"] - q["b"], 1e-5)
    assert_close(vmap(lambda q: q["a"] - q["b"])(q), q["a"] - q["b"], 1e-5)


def test_in_axes_tuple_length_mismatch():
    with pytest.raises(ValueError, match="in_axes"):
        vmap(lambda x, y: x + y, in_axes=(0,))(rand(2), rand(2))


def test_kwargs_batched_along_zero():
    x, y = rand(3, 2), rand(3, 2)
    out = vmap(lambda x, scale: x * scale, in_axes=(1,))(x.T, scale=y)
    assert_close(out, x * y, 1e-5)


def test_axis_size_without_batched_argument():
    out = vmap(lambda x: x + 1.0, in_axes=None, axis_size=4)(np.float32(2.0))
    assert np.shape(out) == (4,)
    assert_close(out, np.full(4, 3.0), 1e-5)
    with pytest.raises(ValueError, match="axis_size"):
        vmap(lambda x: x, in_axes=None)(np.float32(1.0))


def test_axis_size_mismatch_raises():
    with pytest.raises(ValueError, match="axis_size"):
        vmap(jnp.sin, axis_size=5)(rand(3))


def test_inconsistent_sizes_error():
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        vmap(lambda x, y: x + y)(rand(3), rand(4))


@pytest.mark.parametrize("axis", [1, -2, 5])
def test_out_of_range_axis_error(axis):
    with pytest.raises(ValueError, match="rank"):
        vmap(jnp.sin, in_axes=axis)(rand(3))


def test_scalar_cannot_be_mapped():
    with pytest.raises(ValueError, match="rank"):
        vmap(jnp.sin)(np.float32(1.0))


# JAX 0.10.2's messages, word for word: arguments named by parameter and path, the most
# common size first, the axis as the user gave it.
SIZE_ERRORS = [
    (
        lambda: vmap(lambda a, b: a, in_axes=(-1, 0))(rand(3, 2), np.ones(4, np.int32)),
        [
            "one axis had size 2: axis -1 of argument a of type float32[3,2]",
            "one axis had size 4: axis 0 of argument b of type int32[4]",
        ],
    ),
    (
        lambda: vmap(lambda a, b, c, d: a)(rand(3, 2), rand(4), rand(5, 5), rand(4)),
        [
            "most axes (2 of them) had size 4, e.g. axis 0 of argument b of type float32[4]",
            "one axis had size 3: axis 0 of argument a of type float32[3,2]",
            "one axis had size 5: axis 0 of argument c of type float32[5,5]",
        ],
    ),
    (
        lambda: vmap(lambda a, b: a)((rand(3, 2), {"u": [rand(4)]}), rand(3)),
        [
            "most axes (2 of them) had size 3, e.g. axis 0 of argument a[0] of type float32[3,2]",
            "one axis had size 4: axis 0 of argument a[1]['u'][0] of type float32[4]",
        ],
    ),
    (
        lambda: vmap(lambda a, b: a)(rand(3), b={"z": rand(4)}),
        [
            "one axis had size 3: axis 0 of argument a of type float32[3]",
            "one axis had size 4: axis 0 of kwargs['b']['z'] of type float32[4]",
        ],
    ),
    (
        lambda: vmap(lambda *args: args[0])(rand(3), rand(4)),
        [
            "one axis had size 3: axis 0 of argument args of type float32[3]",
            "one axis had size 4: axis 0 of args[1] of type float32[4]",
        ],
    ),
    (
        lambda: vmap(max)(rand(3), rand(4)),
        [
            "one axis had size 3: axis 0 of args[0] of type float32[3]",
            "one axis had size 4: axis 0 of args[1] of type float32[4]",
        ],
    ),
    (
        lambda: vmap(lambda a, b: a, axis_size=5)(rand(3), rand(3)),
        [
            "the `axis_size` argument was 5",
            "most axes (2 of them) had size 3, e.g. axis 0 of argument a of type float32[3]",
        ],
    ),
]


@pytest.mark.parametrize("call, detail", SIZE_ERRORS)
def test_inconsistent_sizes_name_the_arguments(call, detail):
    with pytest.raises(ValueError) as info:
        call()
    lines = ";\n".join(f"  * {line}" for line in detail)
    assert str(info.value) == f"vmap got inconsistent sizes for array axes to be mapped:\n{lines}"


TUPLE_OF_ENTRIES = (
    "in_axes must be an int, None, or a tuple of entries corresponding to the positional "
    "arguments passed to the function, but got "
)
CONTAINER = "must be an int, None, or (nested) container with those types as leaves, but got "


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"in_axes": {"a": 0}}, TUPLE_OF_ENTRIES + "{'a': 0}."),
        ({"in_axes": np.int64(0)}, TUPLE_OF_ENTRIES + "0."),
        ({"in_axes": (0.5,)}, "in_axes " + CONTAINER + "(0.5,)."),
        ({"in_axes": ({"p": True},)}, "in_axes " + CONTAINER + "({'p': True},)."),
        ({"out_axes": {"a": 0.5}}, "out_axes " + CONTAINER + "{'a': 0.5}."),
    ],
)
def test_bad_axes_specifications_raise_type_error_when_vmap_is_called(kwargs, message):
    with pytest.raises(TypeError) as info:
        vmap(lambda a: a, **kwargs)
    assert str(info.value) == "vmap " + message


def test_out_axes_errors_name_the_output():
    with pytest.raises(ValueError) as info:
        vmap(lambda a: {"k": [1.0, a.T]}, in_axes=1, out_axes={"k": [None, None]})(rand(3, 2))
    assert str(info.value) == (
        "at vmap out_axes['k'][1], got axis spec None but output was batched on axis 1"
    )
    with pytest.raises(ValueError, match="^axis -4 is out of bounds for array of dimension 2$"):
        vmap(lambda a: a, out_axes=-4)(rand(3, 2))


# --- out_axes --------------------------------------------------------------------------------


@pytest.mark.parametrize("out_axis", [0, 1, -1])
def test_out_axes_int(out_axis):
    x = rand(3, 4)
    assert_close(
        vmap(jnp.sin, out_axes=out_axis)(x), vmap_reference(np.sin, [x], [0], out_axis % 2), 1e-5
    )


def test_out_axes_none_for_unbatched_output():
    x, y = rand(3), rand(2)
    a, b = vmap(lambda x, y: (jnp.sin(x), jnp.cos(y)), in_axes=(0, None), out_axes=(0, None))(x, y)
    assert_close(a, np.sin(x), 1e-5)
    assert_close(b, np.cos(y), 1e-5)


def test_out_axes_none_on_batched_output_raises():
    with pytest.raises(ValueError, match="out_axes"):
        vmap(jnp.sin, out_axes=None)(rand(3))


def test_out_axes_pytree():
    x = rand(3, 2)
    out = vmap(lambda x: {"s": jnp.sin(x), "c": jnp.cos(x)}, out_axes={"s": 0, "c": 1})(x)
    assert_close(out["s"], np.sin(x), 1e-5)
    assert_close(out["c"], np.cos(x).T, 1e-5)


def test_unbatched_output_is_broadcast():
    out = vmap(lambda x, y: jnp.cos(y), in_axes=(0, None))(rand(3), rand(2))
    assert np.shape(out) == (3, 2)


# --- unbatched values stay unbatched ---------------------------------------------------------


def test_unbatched_operand_not_broadcast():
    x, y = rand(5, 3), rand(3)
    f = vmap(lambda x, y: x * jnp.sin(y), in_axes=(0, None))
    assert_close(f(x, y), x * np.sin(y), 1e-5)
    jaxpr = make_jaxpr(f)(x, y)
    (sin_eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "sin"]
    assert sin_eqn.invars[0] is jaxpr.jaxpr.invars[1]  # sin of y itself
    assert tuple(sin_eqn.outvars[0].aval.shape) == (3,)


def test_no_unrolling():
    f = lambda x, y: jnp.sum(jnp.sin(x) * y)
    counts = [
        len(make_jaxpr(vmap(f, in_axes=(0, None)))(rand(n, 3), rand(3)).jaxpr.eqns) for n in (2, 7)
    ]
    assert counts[0] == counts[1]


# --- compositions ----------------------------------------------------------------------------


def test_vmap_of_vmap_different_axes():
    x = rand(2, 3, 4)
    f = vmap(vmap(jnp.sin, in_axes=1, out_axes=0), in_axes=0, out_axes=1)
    # inner maps axis 1 of x[i] (size 4)... x[i] has shape (3, 4): inner maps its axis 1
    assert_close(f(x), np.sin(x).transpose(2, 0, 1), 1e-5)


def test_vmap_of_vmap_two_arguments():
    x, y = rand(2, 3), rand(3, 2)
    f = vmap(vmap(lambda a, b: a * b, in_axes=(0, 0)), in_axes=(0, 1))
    assert_close(f(x, y), x * y.T, 1e-5)


def test_jit_of_vmap():
    x = rand(4, 3)
    assert_close(jit(vmap(lambda x: jnp.sin(x) * 2.0))(x), np.sin(x) * 2, 1e-5)


def test_vmap_of_jit_is_one_call():
    x, y = rand(4, 3), rand(3)
    g = jit(lambda x, y: jnp.sin(x) + y)
    f = vmap(g, in_axes=(0, None))
    assert_close(f(x, y), np.sin(x) + y, 1e-5)
    jaxpr = make_jaxpr(f)(x, y)
    assert prims(jaxpr) == ["jit"]
    assert_close(vmap(g, in_axes=(1, None), out_axes=1)(x.T, y), (np.sin(x) + y).T, 1e-5)


def test_vmap_of_jit_unbatched_output():
    g = jit(lambda x, y: (jnp.sin(x), jnp.cos(y)))
    a, b = vmap(g, in_axes=(0, None))(rand(4, 3), np.ones(2, np.float32))
    assert np.shape(a) == (4, 3) and np.shape(b) == (4, 2)
    assert_close(b, np.broadcast_to(np.cos(np.ones(2)), (4, 2)), 1e-5)


def test_vmap_of_grad():
    x = rand(5)
    assert_close(vmap(grad(lambda x: jnp.sin(x) * x))(x), np.cos(x) * x + np.sin(x), 1e-5)


def test_vmap_of_grad_with_unbatched_argument():
    x, w = rand(5, 3), rand(3)
    g = vmap(grad(lambda x, w: jnp.sum(jnp.sin(x * w))), in_axes=(0, None))
    assert_close(g(x, w), np.cos(x * w) * w, 1e-5)


def test_grad_of_summed_vmap():
    x = rand(5)
    g = grad(lambda x: jnp.sum(vmap(jnp.sin)(x)))
    assert_close(g(x), np.cos(x), 1e-5)


def test_grad_of_vmap_of_dot():
    w, xs = rand(3), rand(4, 3)
    g = grad(lambda w: jnp.sum(vmap(lambda x: jnp.dot(x, w))(xs) ** 2))
    assert_close(g(w), 2 * xs.T @ (xs @ w), 1e-5)


def _mlp_loss(params, x, y):
    for W, b in params:
        x = jnp.tanh(jnp.dot(x, W) + b)
    return jnp.sum((x - y) ** 2)


def test_per_example_gradients_of_an_mlp():
    """Per-example weight gradients are batched outer products: they come out of one
    dot_general each in the weights' layout, with no transpose after them (which XLA CPU
    would write twice), and match per-example gradients, eagerly and under jit."""
    params = [(rand(6, 5), rand(5)), (rand(5, 3), rand(3))]
    xs, ys = rand(4, 6), rand(4, 3)
    per_example = vmap(grad(_mlp_loss), in_axes=(None, 0, 0))
    expected = [grad(_mlp_loss)(params, x, y) for x, y in zip(xs, ys)]
    for got in (per_example(params, xs, ys), jit(per_example)(params, xs, ys)):
        for layer, (gW, gb) in enumerate(got):
            assert_close(gW, np.stack([e[layer][0] for e in expected]), 1e-5)
            assert_close(gb, np.stack([e[layer][1] for e in expected]), 1e-5)
    assert "transpose" not in prims(make_jaxpr(per_example)(params, xs, ys))


def test_vmap_of_jit_of_grad():
    x = rand(5)
    assert_close(vmap(jit(grad(jnp.sin)))(x), np.cos(x), 1e-5)


def test_grad_of_vmap_of_jit():
    x = rand(5)
    assert_close(grad(lambda x: jnp.sum(vmap(jit(jnp.sin))(x)))(x), np.cos(x), 1e-5)


# --- custom derivatives ----------------------------------------------------------------------


def _custom_sin():
    @custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 3.0 * t  # a deliberately wrong derivative: the rule must be used

    return f


def _custom_vjp_sin():
    @custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, g):
        return (5.0 * g, None)  # deliberately wrong for x, zero for y

    f.defvjp(fwd, bwd)
    return f


def test_vmap_of_custom_jvp_value():
    x = rand(4)
    assert_close(vmap(_custom_sin())(x), np.sin(x), 1e-5)


def test_vmap_of_grad_of_custom_jvp():
    x = rand(4)
    assert_close(vmap(grad(_custom_sin()))(x), np.full(4, 3.0), 1e-5)


def test_grad_of_vmap_of_custom_jvp():
    x = rand(4)
    f = _custom_sin()
    assert_close(grad(lambda x: jnp.sum(vmap(f)(x)))(x), np.full(4, 3.0), 1e-5)
    jaxpr = make_jaxpr(vmap(f))(x)
    assert "custom_jvp_call" in prims(jaxpr)


def test_vmap_of_custom_vjp_value_and_grad():
    x, y = rand(4), rand(4)
    f = _custom_vjp_sin()
    assert_close(vmap(f)(x, y), np.sin(x) * y, 1e-5)
    assert_close(vmap(grad(f))(x, y), np.full(4, 5.0), 1e-5)


def test_grad_of_vmap_of_custom_vjp():
    x, y = rand(4), rand(3)
    f = _custom_vjp_sin()
    g = grad(lambda x, y: jnp.sum(vmap(f, in_axes=(0, None))(x[:, None] * np.ones(3), y)))
    assert_close(g(x, y), np.full(4, 15.0), 1e-5)
    gy = grad(lambda y: jnp.sum(vmap(f, in_axes=(0, None))(np.ones((4, 3), np.float32), y)))
    assert_close(gy(y), np.zeros(3), 1e-5)


def test_batch_custom_helpers_when_installed(monkeypatch):
    """The logic meant for BatchTrace.process_custom_{jvp,vjp}_call, installed for this test."""
    from tracejit._src import custom_derivatives as cd

    monkeypatch.setattr(BatchTrace, "process_custom_jvp_call", cd.batch_custom_jvp_call, False)
    monkeypatch.setattr(BatchTrace, "process_custom_vjp_call", cd.batch_custom_vjp_call, False)
    x, y = rand(4), rand(3)
    f = _custom_sin()
    assert_close(vmap(f)(x), np.sin(x), 1e-5)
    assert_close(grad(lambda x: jnp.sum(vmap(f)(x)))(x), np.full(4, 3.0), 1e-5)
    assert_close(jit(grad(lambda x: jnp.sum(vmap(f)(x))))(x), np.full(4, 3.0), 1e-5)
    assert "custom_jvp_call" in prims(make_jaxpr(vmap(f))(x))
    assert_close(vmap(grad(f))(x), np.full(4, 3.0), 1e-5)
    v = _custom_vjp_sin()
    assert_close(
        vmap(v, in_axes=(0, None))(np.ones((4, 3), np.float32), y),
        np.sin(1.0) * y * np.ones((4, 3)),
        1e-5,
    )
    g = grad(lambda x, y: jnp.sum(vmap(v, in_axes=(0, None))(x[:, None] * np.ones(3), y)))
    assert_close(g(x, y), np.full(4, 15.0), 1e-5)
    gy = grad(lambda y: jnp.sum(vmap(v, in_axes=(0, None))(np.ones((4, 3), np.float32), y)))
    assert_close(gy(y), np.zeros(3), 1e-5)
    assert_close(vmap(grad(v))(x, x), np.full(4, 5.0), 1e-5)


@pytest.mark.parametrize("axes", [(0, None), (None, 1), (1, 0), (-1, -1)])
def test_add_any(axes):
    from tracejit._src.interpreters.ad import add_any_p

    x, y = rand(3, 4), rand(3, 4)
    xs = np.moveaxis(x, 0, axes[0]) if axes[0] is not None else x[0]
    ys = np.moveaxis(y, 0, axes[1]) if axes[1] is not None else y[0]
    out = vmap(add_any_p.bind, in_axes=axes)(xs, ys)
    assert_close(out, vmap_reference(np.add, [xs, ys], axes), 1e-5)
    counts = {
        len(make_jaxpr(vmap(add_any_p.bind, in_axes=(0, None)))(rand(n, 2), rand(2)).jaxpr.eqns)
        for n in (2, 7)
    }
    assert len(counts) == 1


def test_in_axes_not_a_prefix_raises():
    with pytest.raises(ValueError, match="tree prefix"):
        vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": rand(3)})


def test_constant_output_is_broadcast():
    out = vmap(lambda x: 1.0)(rand(3, 2))
    assert np.shape(out) == (3,)
    assert_close(out, np.ones(3), 1e-5)
    assert vmap(lambda: jnp.ones(2), axis_size=3)().shape == (3, 2)
