"""A custom derivative rule that returns the wrong structure, shape or dtype raises JAX's error
naming the rule, at the moment JAX raises it: a wrongly shaped cotangent would otherwise come
back as a silently wrong gradient."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp

X = jnp.ones(3)


def with_bwd(bwd):
    @jax.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    return lambda a: jnp.sum(f(a, 2.0))


def with_jvp(rule):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(rule)
    return f


def cotangent_rule(r, g):
    return g


@pytest.mark.parametrize(
    ("bwd", "error", "message"),
    [
        (cotangent_rule, TypeError, r"rule cotangent_rule must produce .* tuple of length equal"),
        (lambda r, g: (g, g, g), TypeError, r"bwd output structure PyTreeDef\(\(\*, \*, \*\)\)"),
        (lambda r, g: [g, g], ValueError, r"at output\[1\] .* float32\[3\] .* float32\[\]"),
        (lambda r, g: (g[:2], 0.0), ValueError, r"at output\[0\] .* float32\[2\] .* float32\[3\]"),
    ],
)
def test_a_bwd_rule_of_the_wrong_structure_or_shape_raises(bwd, error, message):
    with pytest.raises(error, match=message):
        jax.grad(with_bwd(bwd))(X)


def test_a_bwd_rule_may_return_none_for_a_zero_cotangent():
    np.testing.assert_array_equal(jax.grad(with_bwd(lambda r, g: (g, None)))(X), [1, 1, 1])


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (lambda p, t: jnp.sin(p[0]), r"must produce a pair \(list or tuple of length two\)"),
        (lambda p, t: (jnp.sin(p[0]), t[0][:2]), r"Expected float32\[3\] .* but got float32\[2\]"),
        (
            lambda p, t: (jnp.sin(p[0]), t[0].astype(jnp.int32)),
            r"Expected float32\[3\] \(tangent type of float32\[3\]\) but got int32\[3\]",
        ),
        (lambda p, t: (jnp.sin(p[0]), (t[0], t[0])), r"equal container \(pytree\) structures"),
    ],
)
def test_a_jvp_rule_of_the_wrong_structure_shape_or_dtype_raises(rule, message):
    with pytest.raises(TypeError, match=message):
        jax.jvp(with_jvp(rule), (X,), (X,))
