"""`checkpoint`/`remat`: the backward pass recomputes what the forward pass does not keep."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.ad_checkpoint import checkpoint_name, checkpoint_policies
from tracejit.test_util import check_grads


def sin_sin(x):
    return jnp.sin(jnp.sin(x))


def mlp_layer(w, x):
    return jnp.tanh(jnp.tanh(x @ w) @ w.T)


_W = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32) * 0.5
_X = np.random.default_rng(1).normal(size=(2, 3)).astype(np.float32)


def test_values_and_derivatives_are_those_of_the_function():
    f = jax.checkpoint(mlp_layer)
    np.testing.assert_allclose(f(_W, _X), mlp_layer(_W, _X), rtol=1e-6)
    loss = lambda w, x: jnp.sum(f(w, x) ** 2)
    plain = lambda w, x: jnp.sum(mlp_layer(w, x) ** 2)
    for transform in (jax.grad, lambda g: jax.jit(jax.grad(g))):
        np.testing.assert_allclose(transform(loss)(_W, _X), jax.grad(plain)(_W, _X), rtol=1e-5)
    check_grads(loss, (_W.astype(np.float64), _X.astype(np.float64)), order=2)
    np.testing.assert_allclose(jax.hessian(jax.checkpoint(sin_sin))(1.0), jax.hessian(sin_sin)(1.0))
    per_example = jax.vmap(jax.grad(loss), (None, 0))(_W, _X[:, None])
    np.testing.assert_allclose(
        per_example, [jax.grad(plain)(_W, _X[i : i + 1]) for i in range(2)], rtol=1e-5
    )


def test_static_argnums_and_decorator_form():
    @jax.checkpoint
    def f(x):
        return jnp.sin(x) * 2

    g = jax.checkpoint(lambda x, n: x**n, static_argnums=(1,))
    np.testing.assert_allclose(jax.grad(f)(0.5), 2 * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(g)(2.0, 3), 12.0)


# As JAX 0.10.2 prints them: the forward part of reverse mode runs inline and keeps nothing;
# the transposed `remat2` recomputes `sin d` from the input.
GOLDEN = [
    (
        jax.checkpoint(sin_sin),
        (
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = remat2[\n"
            "      differentiated=False\n"
            "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }\n"
            "      policy=None\n"
            "      prevent_cse=True\n"
            "    ] a\n"
            "  in (b,) }"
        ),
    ),
    (
        jax.grad(jax.checkpoint(sin_sin)),
        (
            "{ lambda ; a:f32[]. let\n"
            "    b:f32[] = sin a\n"
            "    _:f32[] = sin b\n"
            "    c:f32[] = remat2[\n"
            "      differentiated=True\n"
            "      jaxpr={ lambda ; d:f32[] e:f32[]. let\n"
            "          f:f32[] = sin d\n"
            "          g:f32[] = cos d\n"
            "          h:f32[] = cos f\n"
            "          i:f32[] = mul e h\n"
            "          j:f32[] = mul i g\n"
            "        in (j,) }\n"
            "      policy=None\n"
            "      prevent_cse=True\n"
            "    ] a 1.0:f32[]\n"
            "  in (c,) }"
        ),
    ),
]


@pytest.mark.parametrize("fun, expected", GOLDEN)
def test_jaxprs_print_as_jax_does(fun, expected):
    assert str(jax.make_jaxpr(fun)(1.0)) == expected


def test_a_checkpointed_scan_body_keeps_only_the_carries():
    """Without checkpointing, reverse mode through the scan stacks the tanh outputs of both
    layers for every step; with it, only each step's carry."""
    w = jnp.asarray(_W[:, :3])

    def run(step):
        return lambda h: jnp.sum(lax.scan(lambda c, _: (step(c), None), h, None, length=5)[0])

    step = lambda c: jnp.tanh(jnp.tanh(c @ w) @ w)

    def stacked_residuals(f):
        eqn = next(
            e for e in jax.make_jaxpr(jax.grad(f))(jnp.ones(3)).eqns if e.primitive.name == "scan"
        )
        return [v.aval.shape for v in eqn.outvars[1:]]

    assert len(stacked_residuals(run(step))) > len(stacked_residuals(run(jax.checkpoint(step))))
    assert stacked_residuals(run(jax.checkpoint(step))) == [(5, 3)]
    np.testing.assert_allclose(
        jax.grad(run(jax.checkpoint(step)))(jnp.ones(3)),
        jax.grad(run(step))(jnp.ones(3)),
        rtol=1e-5,
    )


def test_the_compiled_recomputation_is_guarded_from_cse():
    text = jax.jit(jax.grad(jax.checkpoint(sin_sin))).lower(1.0).as_text()
    assert "stablehlo.optimization_barrier" in text


def test_static_arguments_by_position_or_name_and_keyword_arguments():
    def scaled(x, n, *, y):
        return jnp.sin(x) * n * y

    for checkpointed in (
        jax.checkpoint(scaled, static_argnums=1),
        jax.checkpoint(scaled, static_argnames="n"),
    ):
        got = jax.grad(checkpointed)(0.5, 3, y=2.0)
        np.testing.assert_allclose(got, np.cos(0.5) * 6.0, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="`concrete` option"):
        jax.checkpoint(scaled, concrete=True)


def _remat_inputs(fun, x):
    """The operands of the recomputing `remat2` in the jaxpr of `grad(fun)`."""
    jaxpr = jax.make_jaxpr(jax.grad(fun))(x).jaxpr
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "remat2"]
    return eqn.invars


W = np.full((3, 3), 0.5, np.float32)


def _mlp(x):
    return jnp.sin(jnp.tanh(x @ W) @ W)


def _named_mlp(x):
    hidden = checkpoint_name(jnp.tanh(x @ W), "hidden")
    return jnp.sin(hidden @ W)


_policies = checkpoint_policies


@pytest.mark.parametrize(
    ("policy", "fun", "num_saved"),
    [
        (None, _mlp, 0),
        (_policies.nothing_saveable, _mlp, 0),
        (_policies.dots_saveable, _mlp, 2),  # both products; tanh and sin are recomputed
        (_policies.save_only_these_names("hidden"), _named_mlp, 1),
        (_policies.save_any_names_but_these("hidden"), _named_mlp, 0),
        (
            _policies.save_from_both_policies(_policies.nothing_saveable, _policies.dots_saveable),
            _mlp,
            2,
        ),
    ],
)
def test_policies_choose_the_residuals_and_keep_the_gradient(policy, fun, num_saved):
    checkpointed = jax.checkpoint(fun, policy=policy)

    def loss(x):
        return checkpointed(x).sum()

    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    assert len(_remat_inputs(loss, x)) == 2 + num_saved  # the input, its cotangent, saved
    want = jax.grad(lambda x: fun(x).sum())(x)
    np.testing.assert_allclose(jax.grad(loss)(x), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(x), want, rtol=1e-6)


def test_checkpoint_name_is_the_identity_under_transformations():
    x = jnp.arange(3.0)
    assert "name[name=a]" in str(jax.make_jaxpr(lambda x: checkpoint_name(x, "a"))(x))
    np.testing.assert_array_equal(jax.vmap(lambda v: checkpoint_name(v * 2, "b"))(x), x * 2)
    assert jax.grad(lambda v: checkpoint_name(jnp.sin(v), "c"))(0.5) == np.cos(np.float32(0.5))
    np.testing.assert_array_equal(jax.jit(lambda v: checkpoint_name(v, "d"))(x), x)
