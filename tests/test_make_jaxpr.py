"""The seed's make_jaxpr examples print exactly as JAX prints them."""

import functools

import numpy as np
import pytest
from helpers import jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

FUNC1_JAXPR = """\
{ lambda ; a:f32[8] b:f32[8]. let
    c:f32[8] = sin b
    d:f32[8] = mul c 3.0:f32[]
    e:f32[8] = add a d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }"""


def func1(first, second):
    temp = first + jnp.sin(second) * 3.0
    return jnp.sum(temp)


def func2(inner, first, second):
    temp = first + inner(second) * 3.0
    return jnp.sum(temp)


def inner(second):
    if second.shape[0] > 4:
        return jnp.sin(second)
    else:
        assert False


def func3(first, second):
    return func2(inner, first, second)


def test_func1():
    assert jaxpr_text(func1, jnp.zeros(8), jnp.ones(8)) == FUNC1_JAXPR


def test_func3_python_control_flow_on_shapes_leaves_only_the_branch_taken():
    assert jaxpr_text(func3, jnp.zeros(8), jnp.ones(8)) == FUNC1_JAXPR


def test_log2_stages_the_constant_work_too():
    def log2(x):
        ln_x = lax.log(x)
        ln_2 = lax.log(2.0)
        return ln_x / ln_2

    assert jaxpr_text(log2, jnp.ones(3)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = log a\n"
        "    c:f32[] = log 2.0:f32[]\n"
        "    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
        "    e:f32[3] = div b d\n"
        "  in (e,) }"
    )


def test_seed_slide_f_depends_on_rank_not_value():
    def f(x):
        if x.ndim == 0:
            return 2 * x**3.0
        else:
            return 3 * x

    assert jaxpr_text(f, 0.0) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = pow a 3.0:f32[]\n"
        "    c:f32[] = mul 2.0:f32[] b\n"
        "  in (c,) }"
    )
    assert jaxpr_text(f, jnp.ones(4)) == (
        "{ lambda ; a:f32[4]. let b:f32[4] = mul 3.0:f32[] a in (b,) }"
    )


def test_seed_slide_f_on_values_raises_bool_conversion():
    def f(x):
        if x > 0:
            return 2 * x**3.0
        else:
            return 3 * x

    with pytest.raises(jax.errors.TracerBoolConversionError, match="if x > 0"):
        jax.make_jaxpr(f)(1.0)


def test_mlp_loss_jaxpr_is_typed_and_replays():
    def predict(params, inputs):
        for W, b in params:
            outputs = jnp.dot(inputs, W) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return jnp.sum((preds - targets) ** 2)

    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(5, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 3)), rng.normal(size=3)),
    ]
    batch = (rng.normal(size=(7, 5)), rng.normal(size=(7, 3)))
    text = jaxpr_text(loss, params, batch)
    assert text.count("dot_general") == 2 and text.count("tanh") == 2
    expected = loss([(W.astype(np.float32), b.astype(np.float32)) for W, b in params], batch)
    np.testing.assert_allclose(float(loss(params, batch)), float(expected), rtol=1e-5)


def _closing_over(x, y):
    @jax.jit
    def inner(a):
        return a * y

    return inner(x - 1.0) + x


# A jit call's body is printed with the names of the call's operands and results, as JAX 0.10.2
# prints it; its transformations keep the function's name.
NESTED_JIT_PRINTOUTS = [
    pytest.param(
        lambda x: jax.jvp(jax.jit(jnp.sin), (x,), (1.0,)),
        (1.0,),
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] c:f32[] = jit[\n"
        "      name=sin\n"
        "      jaxpr={ lambda ; a:f32[] d:f32[]. let\n"
        "          b:f32[] = sin a\n"
        "          e:f32[] = cos a\n"
        "          c:f32[] = mul d e\n"
        "        in (b, c) }\n"
        "    ] a 1.0:f32[]\n"
        "  in (b, c) }",
        id="jvp_of_jit",
    ),
    pytest.param(
        jax.vmap(jax.jit(jnp.sin)),
        (jnp.ones(3),),
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=sin\n"
        "      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }\n"
        "    ] a\n"
        "  in (b,) }",
        id="vmap_of_jit",
    ),
    pytest.param(
        jax.grad(jax.jit(jnp.sin)),
        (1.0,),
        "{ lambda ; a:f32[]. let\n"
        "    _:f32[] b:f32[] = jit[\n"
        "      name=sin\n"
        "      jaxpr={ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a in (_, b) }\n"
        "    ] a\n"
        "    c:f32[] = jit[\n"
        "      name=sin\n"
        "      jaxpr={ lambda ; b:f32[] d:f32[]. let c:f32[] = mul d b in (c,) }\n"
        "    ] b 1.0:f32[]\n"
        "  in (c,) }",
        id="grad_of_jit",
    ),
    pytest.param(
        lambda x: jax.jit(jnp.sin)(x) + 1,
        (1.0,),
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=sin\n"
        "      jaxpr={ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n"
        "    ] a\n"
        "    c:f32[] = add b 1.0:f32[]\n"
        "  in (c,) }",
        id="jit_then_add",
    ),
    pytest.param(
        _closing_over,
        (1.0, 2.0),
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    c:f32[] = sub a 1.0:f32[]\n"
        "    d:f32[] = jit[\n"
        "      name=inner\n"
        "      jaxpr={ lambda ; b:f32[] c:f32[]. let d:f32[] = mul c b in (d,) }\n"
        "    ] b c\n"
        "    e:f32[] = add d a\n"
        "  in (e,) }",
        id="jit_closing_over_an_argument",
    ),
    pytest.param(
        lambda x, y: jax.jit(lambda a, b: (a * b, a + 1.0, b))(x + 1, y),
        (1.0, 2.0),
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    c:f32[] = add a 1.0:f32[]\n"
        "    d:f32[] e:f32[] f:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; c:f32[] b:f32[]. let\n"
        "          d:f32[] = mul c b\n"
        "          e:f32[] = add c 1.0:f32[]\n"
        "        in (d, e, b) }\n"
        "    ] c b\n"
        "  in (d, e, f) }",
        id="jit_of_a_pytree_passing_an_input_through",
    ),
    pytest.param(
        lambda x: jax.jit(lambda a: jax.jit(jnp.cos)(a) * 2)(x),
        (1.0,),
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[]. let\n"
        "          c:f32[] = jit[\n"
        "            name=cos\n"
        "            jaxpr={ lambda ; a:f32[]. let c:f32[] = cos a in (c,) }\n"
        "          ] a\n"
        "          b:f32[] = mul c 2.0:f32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }",
        id="jit_in_jit",
    ),
    pytest.param(
        lambda x: jax.jit(lambda a: (a, a))(x),
        (1.0,),
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] c:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[]. let  in (a, a) }\n"
        "    ] a\n"
        "  in (b, c) }",
        id="jit_returning_its_input_twice",
    ),
]


def _sines(x):
    for _ in range(11):
        x = jnp.sin(x)
    return x


def _scaled_by(c):
    def f(x):
        return x * c

    return jax.jit(f)


def _increment(x):
    return x + 1


_double, _triple = _scaled_by(2.0), _scaled_by(3.0)
_plus_two = jax.jit(functools.partial(lambda x, y: x + y, y=2.0))

_SINES_LISTED_APART = (
    "let jaxpr = { lambda ; a:f32[]. let\n"
    + "".join(f"    {b}:f32[] = sin {a}\n" for a, b in zip("abcdefghijk", "bcdefghijkl"))
    + "  in (l,) } in\n"
)

# JAX 0.10.2 lists a jaxpr apart (`let name = ... in`, before the jaxpr that uses it) when it is
# used more than once or has more than ten equations; variables do not take those names.
SHARED_JAXPR_PRINTOUTS = [
    pytest.param(
        lambda x: _double(_double(x)) + _triple(_triple(x)),
        (1.0,),
        "let f = { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) } in\n"
        "let f1 = { lambda ; c:f32[]. let d:f32[] = mul c 3.0:f32[] in (d,) } in\n"
        "{ lambda ; e:f32[]. let\n"
        "    g:f32[] = jit[name=f jaxpr=f] e\n"
        "    h:f32[] = jit[name=f jaxpr=f] g\n"
        "    i:f32[] = jit[name=f jaxpr=f1] e\n"
        "    j:f32[] = jit[name=f jaxpr=f1] i\n"
        "    k:f32[] = add h j\n"
        "  in (k,) }",
        id="two_functions_named_f_each_used_twice",
    ),
    pytest.param(
        lambda x: _plus_two(x) + _plus_two(x),
        (1.0,),
        "let lambda = { lambda ; a:f32[]. let b:f32[] = add a 2.0:f32[] in (b,) } in\n"
        "{ lambda ; c:f32[]. let\n"
        "    d:f32[] = jit[name=<lambda> jaxpr=lambda] c\n"
        "    e:f32[] = jit[name=<lambda> jaxpr=lambda] c\n"
        "    f:f32[] = add d e\n"
        "  in (f,) }",
        id="a_partial_named_after_its_function",
    ),
    pytest.param(
        lambda x: lax.scan(lambda c, _: (_sines(c), None), x, None, length=3)[0],
        (1.0,),
        _SINES_LISTED_APART + "{ lambda ; m:f32[]. let\n"
        "    n:f32[] = scan[\n"
        "      jaxpr=jaxpr\n"
        "      length=3\n"
        "      num_carry=1\n"
        "      num_consts=0\n"
        "      reverse=False\n"
        "      unroll=1\n"
        "    ] m\n"
        "  in (n,) }",
        id="a_scan_body_of_eleven_equations",
    ),
    pytest.param(
        lambda x: lax.cond(x > 0, _sines, jnp.sin, x),
        (1.0,),
        _SINES_LISTED_APART + "{ lambda ; m:f32[]. let\n"
        "    n:bool[] = gt m 0.0:f32[]\n"
        "    o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] n\n"
        "    p:f32[] = cond[\n"
        "      branches=({ lambda ; q:f32[]. let r:f32[] = sin q in (r,) } jaxpr)\n"
        "    ] o m\n"
        "  in (p,) }",
        id="one_branch_listed_apart",
    ),
    pytest.param(
        lambda x: lax.while_loop(lambda c: c < 3, _sines, x),
        (1.0,),
        _SINES_LISTED_APART + "{ lambda ; m:f32[]. let\n"
        "    n:f32[] = while[\n"
        "      body_jaxpr=jaxpr\n"
        "      body_nconsts=0\n"
        "      cond_jaxpr={ lambda ; o:f32[]. let p:bool[] = lt o 3.0:f32[] in (p,) }\n"
        "      cond_nconsts=0\n"
        "    ] m\n"
        "  in (n,) }",
        id="a_while_body_of_eleven_equations",
    ),
    pytest.param(
        lambda x: lax.switch(1, [_increment, _increment, jnp.sin], x),
        (1.0,),
        "let jaxpr = { lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) } in\n"
        "{ lambda ; c:f32[]. let\n"
        "    d:i32[] = clamp 0:i32[] 1:i32[] 2:i32[]\n"
        "    e:f32[] = cond[\n"
        "      branches=(jaxpr jaxpr { lambda ; f:f32[]. let g:f32[] = sin f in (g,) })\n"
        "    ] d c\n"
        "  in (e,) }",
        id="one_function_for_two_branches",
    ),
]


@pytest.mark.parametrize("fun, args, expected", SHARED_JAXPR_PRINTOUTS)
def test_shared_jaxprs_are_listed_apart(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


def test_names_of_jitted_callables():
    class Callable:
        def __call__(self, x):
            return x + 1

    assert jax.jit(functools.partial(jnp.add, 1.0)).__name__ == "add"
    assert "name=<unnamed function>" in str(jax.make_jaxpr(jax.jit(Callable()))(1.0))


@pytest.mark.parametrize("fun, args, expected", NESTED_JIT_PRINTOUTS)
def test_nested_jit_printouts(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


def test_grad_of_jit_runs_forward_and_backward_compiled():
    from tracejit._src import dispatch

    calls = []
    run = dispatch.run_jaxpr

    def counting(jaxpr, name, args):
        calls.append(name)
        return run(jaxpr, name, args)

    dispatch.run_jaxpr = counting
    try:
        g = jax.grad(jax.jit(lambda w: jnp.sum(jnp.tanh(w) ** 2)))(jnp.arange(3.0))
    finally:
        dispatch.run_jaxpr = run
    np.testing.assert_allclose(
        g, 2 * np.tanh(np.arange(3.0)) * (1 - np.tanh(np.arange(3.0)) ** 2), rtol=1e-6
    )
    assert calls == ["<lambda>", "<lambda>"]  # the known call, then the transposed one
