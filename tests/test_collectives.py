"""Collectives over named vmap axes: each member sees the reduction over all members."""

import numpy as np
import pytest
from helpers import assert_close

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

X = jnp.arange(4.0)


def test_psum_normalizes_across_the_mapped_axis():
    assert_close(
        jax.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(X), np.arange(4.0) / 6.0, 1e-6
    )


def test_pmean_pmax_pmin():
    assert_close(jax.vmap(lambda x: lax.pmean(x, "i"), axis_name="i")(X), [1.5] * 4, 1e-6)
    assert_close(
        jax.vmap(lambda x: lax.pmax(x, "i") - lax.pmin(x, "i"), axis_name="i")(X), [3.0] * 4, 1e-6
    )


def test_all_gather_and_axis_index():
    gathered = jax.vmap(lambda x: lax.all_gather(x, "i"), axis_name="i")(X)
    assert_close(gathered, np.tile(np.arange(4.0), (4, 1)), 1e-6)
    assert_close(jax.vmap(lambda x: lax.axis_index("i"), axis_name="i")(X), [0, 1, 2, 3], 1e-6)


def test_unbatched_operand_of_psum_counts_every_member():
    assert_close(jax.vmap(lambda x: lax.psum(1.0, "i") + 0 * x, axis_name="i")(X), [4.0] * 4, 1e-6)


def test_nested_axes_are_told_apart():
    ones = jnp.ones((2, 3))
    inner = jax.vmap(jax.vmap(lambda x: lax.psum(x, "j"), axis_name="j"), axis_name="i")
    outer = jax.vmap(jax.vmap(lambda x: lax.psum(x, "i"), axis_name="j"), axis_name="i")
    both = jax.vmap(jax.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i")
    assert_close(inner(ones), np.full((2, 3), 3.0), 1e-6)
    assert_close(outer(ones), np.full((2, 3), 2.0), 1e-6)
    assert_close(both(ones), np.full((2, 3), 6.0), 1e-6)


def test_the_staged_collective_is_a_positional_reduction():
    text = str(jax.make_jaxpr(jax.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i"))(X))
    assert text == (
        "{ lambda ; a:f32[4]. let\n"
        "    b:f32[] = psum[axes=(0,) axis_index_groups=None] a\n"
        "    c:f32[4] = div a b\n"
        "  in (c,) }"
    )


def test_collectives_compose_with_jit_and_grad():
    f = jax.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
    assert_close(jax.jit(f)(X), f(X), 1e-6)
    g = jax.grad(lambda x: jnp.sum(jax.vmap(lambda v: v * lax.psum(v, "i"), axis_name="i")(x)))
    assert_close(g(X), 2 * np.full(4, np.sum(np.arange(4.0))), 1e-6)


def test_unbound_axis_names_raise_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(1.0, "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        jax.vmap(lambda x: lax.psum(x, "k"), axis_name="i")(X)


def test_collectives_inside_control_flow_bodies():
    xs = jnp.arange(1.0, 5.0)  # the axis sums to 10
    in_cond = jax.vmap(
        lambda x: lax.cond(x > 2, lambda y: y / lax.psum(y, "i"), lambda y: y, x), axis_name="i"
    )
    assert_close(in_cond(xs), [1.0, 2.0, 0.3, 0.4], 1e-6)
    assert_close(jax.jit(in_cond)(xs), [1.0, 2.0, 0.3, 0.4], 1e-6)
    # Per-member code transposes psum as a psum (as JAX does): with the branch taken by members
    # 2 and 3 only, d/dx_k = 1/S - (sum over those members of x_j/S^2) = 0.1 - 0.07.
    branchy = lambda x: lax.cond(x > 2, lambda y: y / lax.psum(y, "i"), lambda y: y, x)
    assert_close(jax.vmap(jax.grad(branchy), axis_name="i")(xs), [1.0, 1.0, 0.03, 0.03], 1e-6)
    in_scan = jax.vmap(
        lambda x: lax.scan(lambda c, y: (c + lax.psum(y, "i"), c), 0.0, jnp.stack([x, x]))[0],
        axis_name="i",
    )
    assert_close(in_scan(xs), [20.0] * 4, 1e-6)
    unbatched_in_loop = jax.vmap(
        lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(1.0, "i"), x), axis_name="i"
    )
    assert_close(unbatched_in_loop(xs), xs + 12, 1e-6)
    in_predicate = jax.vmap(
        lambda x: lax.while_loop(lambda c: c < lax.psum(1.0, "i") * 3, lambda c: c + 1, x),
        axis_name="i",
    )
    assert_close(in_predicate(xs), [12.0] * 4, 1e-6)
    gathered = jax.vmap(
        lambda x: lax.cond(
            x > 2,
            lambda y: lax.all_gather(y, "i"),
            lambda y: jnp.zeros(4) + lax.axis_index("i"),
            x,
        ),
        axis_name="i",
    )
    assert_close(gathered(xs), [[0.0] * 4, [1.0] * 4, [1, 2, 3, 4], [1, 2, 3, 4]], 1e-6)
    with pytest.raises(NameError, match="unbound axis name: k"):
        jax.vmap(lambda x: lax.cond(x > 0, lambda y: lax.psum(y, "k"), lambda y: y, x))(xs)


def test_grad_through_all_gather_sums_the_members_cotangents():
    # Every member computes f(all x) = sum_j w_j x_j^2, so x_i reaches each of the n members'
    # outputs: its gradient is n * 2 w_i x_i, whether vmap is inside grad or outside it.
    w = jnp.arange(1.0, 5.0)
    f = lambda x: jnp.sum(w * lax.all_gather(x, "i") ** 2)
    expected = 4 * 2 * np.arange(1.0, 5.0) * np.asarray(X + 1)
    xs = X + 1
    assert_close(jax.vmap(jax.grad(f), axis_name="i")(xs), expected, 1e-6)
    assert_close(jax.grad(lambda x: jnp.sum(jax.vmap(f, axis_name="i")(x)))(xs), expected, 1e-6)
    assert_close(jax.jit(jax.vmap(jax.grad(f), axis_name="i"))(xs), expected, 1e-6)


def test_the_transpose_of_all_gather_is_a_reduce_scatter():
    # The adjoint identity: the members' <ct_i, all_gather(t)> sum to <transpose(ct), t>.
    rng = np.random.default_rng(0)
    t, ct = rng.normal(size=(4, 3)), rng.normal(size=(4, 4, 3))

    def member_vjp(x, cotangent):
        _, vjp = jax.vjp(lambda y: lax.all_gather(y, "i"), x)
        return vjp(cotangent)[0]

    ct_t = jax.vmap(member_vjp, axis_name="i")(t, ct)
    assert_close(ct_t, np.sum(ct, axis=0), 1e-6)
    np.testing.assert_allclose(np.sum(ct * t), np.sum(np.asarray(ct_t) * t), rtol=1e-5)
