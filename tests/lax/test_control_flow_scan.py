"""`lax.scan`: eager and jit against NumPy loops (dtypes, pytrees, reverse, consts, closures),
derivatives to second order in both modes, vmap against per-example loops over every operand
group and axis, a 1,000-step RNN whose gradient matches a hand-written float64 NumPy backprop
and whose reverse-mode residuals are stacked once per step (loop constants never are), and JAX's
errors. Golden jaxprs are in test_control_flow_jaxprs.py."""

import re

import numpy as np
import pytest
from helpers import assert_tree_equal, check_eager_jit_numpy, check_vmap

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.jaxpr import check_jaxpr
from tracejit.test_util import check_grads

_rng = np.random.default_rng(2)
f32, f16, i32, c64 = np.float32, np.float16, np.int32, np.complex64


def r(*shape, dtype=f32):
    return _rng.standard_normal(shape).astype(dtype)


def np_scan(f, init, xs, length=None, reverse=False):
    """The reference: a Python loop over the leading axis of the NumPy pytree `xs`."""
    leaves, tree = jax.tree_util.tree_flatten(xs)
    n = length if length is not None else len(leaves[0])
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, [None] * n
    for i in order:
        x = jax.tree_util.tree_unflatten(tree, [leaf[i] for leaf in leaves]) if leaves else None
        carry, ys[i] = f(carry, x)
    if ys and jax.tree_util.tree_leaves(ys[0]):
        stacked = jax.tree_util.tree_map(lambda *y: np.stack(y), *ys)
    else:
        stacked = ys[0] if ys else None
    return carry, stacked


# --- eager, jit and NumPy -------------------------------------------------------------------

_W = (0.4 * r(3, 3)).astype(f32)


def _cumsum_step(c, x):
    return c + x, c * x


SCAN_CASES = [
    # (id, function of args, args, NumPy reference)
    (
        "f32_cumsum",
        lambda c, xs: lax.scan(_cumsum_step, c, xs),
        (r(3), r(5, 3)),
        lambda c, xs: np_scan(_cumsum_step, c, xs),
    ),
    (
        "reverse",
        lambda c, xs: lax.scan(_cumsum_step, c, xs, reverse=True),
        (r(3), r(5, 3)),
        lambda c, xs: np_scan(_cumsum_step, c, xs, reverse=True),
    ),
    (
        "i32",
        lambda c, xs: lax.scan(lambda c, x: (c * 2 + x, c - x), c, xs),
        (np.int32(1), np.arange(6, dtype=i32)),
        lambda c, xs: np_scan(lambda c, x: (np.int32(c * 2 + x), np.int32(c - x)), c, xs),
    ),
    (
        "c64",
        lambda c, xs: lax.scan(lambda c, x: (c * x, jnp.real(c)), c, xs),
        (np.complex64(1 + 0.5j), (r(4) + 1j * r(4)).astype(c64)),
        lambda c, xs: np_scan(lambda c, x: (np.complex64(c * x), np.float32(c.real)), c, xs),
    ),
    (
        "f16",
        lambda c, xs: lax.scan(_cumsum_step, c, xs),
        (r(2, dtype=f16), r(4, 2, dtype=f16)),
        lambda c, xs: np_scan(_cumsum_step, c, xs),
    ),
    (
        "pytree_carry_xs_ys",
        lambda c, xs: lax.scan(
            lambda c, x: (
                {"h": jnp.tanh(_W @ c["h"] + x["u"]), "n": c["n"] + 1},
                (c["h"].sum(), {"k": x["v"] * c["n"]}),
            ),
            c,
            xs,
        ),
        ({"h": r(3), "n": np.int32(0)}, {"u": r(4, 3), "v": r(4, 2)}),
        lambda c, xs: np_scan(
            lambda c, x: (
                {"h": np.tanh(_W @ c["h"] + x["u"]).astype(f32), "n": np.int32(c["n"] + 1)},
                (np.float32(c["h"].sum()), {"k": (x["v"] * c["n"]).astype(f32)}),
            ),
            c,
            xs,
        ),
    ),
    (
        "no_xs_length",
        lambda c: lax.scan(lambda c, _: (c * 1.5, c), c, None, length=4),
        (r(2),),
        lambda c: np_scan(lambda c, _: (c * np.float32(1.5), c), c, None, length=4),
    ),
    (
        "ys_none",
        lambda c, xs: lax.scan(lambda c, x: (c + x, None), c, xs),
        (r(2), r(3, 2)),
        lambda c, xs: np_scan(lambda c, x: (c + x, None), c, xs),
    ),
    (
        "carry_empty",
        lambda xs: lax.scan(lambda c, x: (c, jnp.sin(x)), (), xs),
        (r(3, 2),),
        lambda xs: ((), np.sin(xs)),
    ),
    (
        "closure_array_const",
        lambda c, xs: lax.scan(lambda c, x: (jnp.tanh(_W @ c) + x, _W @ x), c, xs),
        (r(3), r(4, 3)),
        lambda c, xs: np_scan(lambda c, x: ((np.tanh(_W @ c) + x).astype(f32), _W @ x), c, xs),
    ),
    (
        "closure_over_outer_arg",  # w is a tracer of the enclosing jit
        lambda c, xs, w: lax.scan(lambda c, x: (c * w + x, c + w), c, xs),
        (r(2), r(5, 2), r(2)),
        lambda c, xs, w: np_scan(lambda c, x: (c * w + x, c + w), c, xs),
    ),
    (
        "length_zero",
        lambda c, xs: lax.scan(_cumsum_step, c, xs),
        (r(2), np.zeros((0, 2), f32)),
        lambda c, xs: (c, np.zeros((0, 2), f32)),
    ),
    (
        "unroll_2",
        lambda c, xs: lax.scan(_cumsum_step, c, xs, unroll=2),
        (r(3), r(5, 3)),
        lambda c, xs: np_scan(_cumsum_step, c, xs),
    ),
    (
        "unroll_true_reverse",
        lambda c, xs: lax.scan(_cumsum_step, c, xs, reverse=True, unroll=True),
        (r(3), r(5, 3)),
        lambda c, xs: np_scan(_cumsum_step, c, xs, reverse=True),
    ),
]


@pytest.mark.parametrize("name,fun,args,ref", SCAN_CASES, ids=[c[0] for c in SCAN_CASES])
def test_scan_matches_numpy(name, fun, args, ref):
    tol = 1e-2 if name == "f16" else 1e-5
    check_eager_jit_numpy(fun, args, ref(*args), tol)


def test_scan_weakly_typed_initial_carry_takes_the_body_type():
    carry, ys = lax.scan(lambda c, x: (c + x, c), 0, np.arange(3, dtype=np.int8))
    assert carry.dtype == np.int8 and ys.dtype == np.int8
    assert_tree_equal((carry, ys), (np.int8(3), np.array([0, 0, 1], np.int8)), 0)
    carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3, dtype=f32))
    assert carry.dtype == f32 and not carry.weak_type and ys.weak_type  # as JAX


# --- derivatives ----------------------------------------------------------------------------


def _rnn_like(c, xs, w):
    def step(c, x):
        h, s = c
        h = jnp.tanh(w @ h + x)
        return (h, s + jnp.sin(h).sum()), (h * s, jnp.cos(x))

    return lax.scan(step, c, xs)


GRAD_CASES = [
    (
        "consts_multiple_carries_ys",
        lambda h, s, xs, w: _rnn_like((h, s), xs, w),
        (r(3), np.float32(0.5), r(4, 3), 0.5 * r(3, 3)),
    ),
    (
        "reverse",
        lambda c, xs: lax.scan(lambda c, x: (jnp.sin(c) * x, c * c), c, xs, reverse=True),
        (r(2), r(4, 2)),
    ),
    (
        "closure_traced",
        lambda c, xs, w: lax.scan(lambda c, x: (c * jnp.exp(w * x), c + w), c, xs),
        (r(2), 0.5 * r(3, 2), r(2)),
    ),
    (
        "pytree_xs_only_ys",
        lambda xs: lax.scan(lambda c, x: (c, x["a"] * jnp.tanh(x["b"])), (), xs)[1],
        ({"a": r(3, 2), "b": r(3, 2)},),
    ),
    (
        "no_xs",
        lambda c: lax.scan(lambda c, _: (jnp.sin(c) + c, c * c), c, None, length=3),
        (r(2),),
    ),
]


@pytest.mark.parametrize("name,fun,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_scan_grads(name, fun, args):
    check_grads(fun, args, order=2, modes=["fwd", "rev"])


def test_scan_grad_with_integer_carry():
    def loss(x):
        (n, y), _ = lax.scan(lambda c, _: ((c[0] + 1, c[1] * x), None), (0, 1.0), None, length=4)
        return y * n

    np.testing.assert_allclose(jax.grad(loss)(np.float32(1.5)), 4 * 4 * 1.5**3, rtol=1e-6)


def test_scan_grad_residual_kinds():
    """Reverse mode reads three kinds of residuals: a known carry (stacked per step), a scanned
    input and a loop constant (both handed over as they are); each gives the hand value."""
    xs = np.arange(1.0, 5.0, dtype=f32)

    def ys_of_known_carry(xs, reverse):
        return lax.scan(lambda c, x: (c * 2, c * x), 1.5, xs, reverse=reverse)[1].sum()

    got = jax.grad(ys_of_known_carry)(xs, False)  # dy_t/dx_t = c_t = 1.5 * 2**t
    assert_tree_equal(got, np.array([1.5, 3.0, 6.0, 12.0], f32), 0)
    got = jax.grad(ys_of_known_carry)(xs, True)  # the carry runs from the end
    assert_tree_equal(got, np.array([12.0, 6.0, 3.0, 1.5], f32), 0)
    product = jax.grad(lambda xs: lax.scan(lambda c, x: (c * x, None), 1.5, xs)[0])(xs)
    assert_tree_equal(product, np.array([36.0, 18.0, 12.0, 9.0], f32), 0)
    const = jax.grad(lambda w: lax.scan(lambda c, x: (c + w * x, None), 0.0, xs)[0])(f32(2))
    assert float(const) == 10.0


# --- the 1,000-step RNN ---------------------------------------------------------------------

T, H, D = 1000, 8, 3


def _rnn_params(dtype):
    rng = np.random.default_rng(7)
    return (
        (rng.standard_normal((H, H)) * 0.3).astype(dtype),
        rng.standard_normal((H, D)).astype(dtype),
        (rng.standard_normal(H) * 0.1).astype(dtype),
        rng.standard_normal(H).astype(dtype),
    )


def _rnn_data(dtype):
    rng = np.random.default_rng(8)
    return (rng.standard_normal(H) * 0.1).astype(dtype), rng.standard_normal((T, D)).astype(dtype)


def rnn_loss(params, h0, xs):
    W, U, b, v = params

    def step(h, x):
        h = jnp.tanh(W @ h + U @ x + b)
        return h, v @ h

    h, ys = lax.scan(step, h0, xs)
    return ys.sum() + (h * h).sum()


def np_rnn_loss_and_grad(params, h0, xs):
    """Forward and hand-written backprop through time, in float64."""
    W, U, b, v = (p.astype(np.float64) for p in params)
    h0, xs = h0.astype(np.float64), xs.astype(np.float64)
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + U @ x + b))
    loss = sum(v @ h for h in hs[1:]) + hs[-1] @ hs[-1]
    dW, dU, db, dv = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b), np.zeros_like(v)
    dh = 2 * hs[-1]
    for t in range(len(xs), 0, -1):
        dh = dh + v
        dv += hs[t]
        da = dh * (1 - hs[t] ** 2)
        dW += np.outer(da, hs[t - 1])
        dU += np.outer(da, xs[t - 1])
        db += da
        dh = W.T @ da
    return loss, ((dW, dU, db, dv), dh)


def test_rnn_1000_steps_forward_and_backward_float32():
    params, (h0, xs) = _rnn_params(f32), _rnn_data(f32)
    want_loss, want_grads = np_rnn_loss_and_grad(params, h0, xs)
    np.testing.assert_allclose(rnn_loss(params, h0, xs), want_loss, rtol=1e-4)
    grad = jax.jit(jax.grad(rnn_loss, argnums=(0, 1)))(params, h0, xs)
    for got, want in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(want_grads)):
        assert got.dtype == f32
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


def test_rnn_1000_steps_gradient_float64_eager(enable_x64):
    params, (h0, xs) = _rnn_params(np.float64), _rnn_data(np.float64)
    want_loss, want_grads = np_rnn_loss_and_grad(params, h0, xs)
    loss, grad = jax.value_and_grad(rnn_loss, argnums=(0, 1))(params, h0, xs)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    for got, want in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(want_grads)):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_rnn_gradient_vs_finite_differences_on_a_few_entries(enable_x64):
    params, (h0, xs) = _rnn_params(np.float64), _rnn_data(np.float64)
    grads = jax.grad(rnn_loss)(params, h0, xs)
    eps = 1e-6
    for which, index in ((0, (1, 2)), (1, (4, 0)), (2, (3,)), (3, (7,))):
        bumped = [list(params), list(params)]
        for sign, ps in zip((1, -1), bumped):
            p = ps[which].copy()
            p[index] += sign * eps
            ps[which] = p
        fd = (rnn_loss(tuple(bumped[0]), h0, xs) - rnn_loss(tuple(bumped[1]), h0, xs)) / (2 * eps)
        np.testing.assert_allclose(grads[which][index], fd, rtol=1e-6)


def test_rnn_reverse_mode_residuals_are_stacked_per_step_not_constants():
    """The forward scan of grad(loss) stacks per-step residuals (leading dim T); the weights
    are loop constants handed to the backward scan as they are, never stacked to (T, H, H)."""
    params, (h0, xs) = _rnn_params(f32), _rnn_data(f32)
    closed = jax.make_jaxpr(jax.grad(rnn_loss))(params, h0, xs)
    check_jaxpr(closed.jaxpr)
    scans = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    assert [e.params["reverse"] for e in scans] == [False, True]
    forward, backward = scans
    stacked = [v.aval.shape for v in forward.outvars if v.aval.shape[:1] == (T,)]
    assert len(stacked) >= 2 and all(len(s) <= 2 for s in stacked), stacked
    for eqn in scans:
        for v in (*eqn.outvars, *eqn.invars):
            assert v.aval.shape not in ((T, H, H), (T, H, D)), v.aval.shape
    # memory linear in T: every operand is O(T * H) or a weight
    assert all(np.prod(v.aval.shape) <= T * H for v in backward.invars)
    # W is read by the backward scan as a constant
    assert backward.params["num_consts"] >= 1
    assert (H, H) in [v.aval.shape for v in backward.invars[: backward.params["num_consts"]]]


def test_rnn_1000_steps_vmapped_over_sequences_jit_of_grad():
    """A batch of sequences through jit(vmap(grad)): each member's gradient is its own
    hand-written backprop."""
    params, (h0, _) = _rnn_params(f32), _rnn_data(f32)
    xss = np.random.default_rng(9).standard_normal((3, T, D)).astype(f32)
    grads = jax.jit(jax.vmap(jax.grad(rnn_loss), (None, None, 0)))(params, h0, xss)
    for b in range(3):
        want = np_rnn_loss_and_grad(params, h0, xss[b])[1][0]
        for got, w in zip(grads, want, strict=True):
            assert got.shape == (3, *w.shape)
            np.testing.assert_allclose(got[b], w, rtol=2e-4, atol=2e-4)


# --- vmap -----------------------------------------------------------------------------------


def _scan_fun(c, xs, w):
    return lax.scan(lambda c, x: (jnp.tanh(w @ c + x), (c * x).sum()), c, xs)


B = 3
VMAP_CASES = [
    ("carry", (r(B, 4), r(5, 4), r(4, 4)), (0, None, None)),
    ("xs_axis0", (r(4), r(B, 5, 4), r(4, 4)), (None, 0, None)),
    ("xs_axis1", (r(4), r(5, B, 4), r(4, 4)), (None, 1, None)),
    ("xs_last_axis", (r(4), r(5, 4, B), r(4, 4)), (None, -1, None)),
    ("consts", (r(4), r(5, 4), r(4, B, 4)), (None, None, 1)),
    ("all", (r(4, B), r(B, 5, 4), r(B, 4, 4)), (1, 0, 0)),
]


@pytest.mark.parametrize("name,args,in_axes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_scan(name, args, in_axes):
    check_vmap(_scan_fun, args, in_axes, tol=1e-5, jit=True)


def test_vmap_scan_reverse_pytree_and_unbatched_carry_becoming_batched():
    def fun(xs):  # the carry starts unbatched and becomes batched through the xs
        return lax.scan(
            lambda c, x: ({"s": c["s"] + x[0]}, x[1] * c["s"]), {"s": 0.0}, xs, reverse=True
        )

    check_vmap(fun, ((r(B, 4), r(B, 4)),), (0,), tol=1e-5, jit=True)


def test_vmap_of_grad_and_grad_of_vmap_of_scan():
    def loss(c, xs, w):
        carry, ys = _scan_fun(c, xs, w)
        return carry.sum() + ys.sum()

    c, xs, w = r(B, 4), r(B, 5, 4), 0.5 * r(4, 4)
    g = jax.grad(loss, argnums=(0, 2))
    check_vmap(g, (c, xs, w), (0, 0, None), tol=1e-5, jit=True)
    total = jax.grad(lambda w: jax.vmap(loss, (0, 0, None))(c, xs, w).sum())(w)
    per_example = sum(np.asarray(g(c[i], xs[i], w)[1]) for i in range(B))
    np.testing.assert_allclose(total, per_example, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda w: jax.vmap(loss, (0, 0, None))(
        c, xs, w).sum()))(w), per_example, rtol=1e-5, atol=1e-5)  # fmt: skip


# --- errors ---------------------------------------------------------------------------------


def _raises_exactly(exc, message, fun):
    with pytest.raises(exc) as info:
        fun()
    assert str(info.value) == message


def test_error_scan_lengths():
    _raises_exactly(
        ValueError,
        "scan got values with different leading axis sizes: 3, 4.",
        lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.zeros(3), jnp.zeros(4))),
    )
    _raises_exactly(
        ValueError,
        "scan got `length` argument of 4 which disagrees with leading axis sizes [3].",
        lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.zeros(3), length=4),
    )
    _raises_exactly(
        ValueError,
        "scan got no values to scan over and `length` not provided.",
        lambda: lax.scan(lambda c, x: (c, x), 0.0, None),
    )


def test_error_scan_no_leading_axis():
    """JAX 0.10.2 fails here with a bare `IndexError: tuple index out of range`; ours says
    what is wrong (a deliberate difference)."""
    with pytest.raises(ValueError, match=re.escape("scan got value with no leading axis")):
        lax.scan(lambda c, x: (c, x), 0.0, np.float32(1.0))


def test_error_scan_body_not_pair():
    """JAX prints the outputs' avals (`got ~float32[].`); ours the pytree structure."""
    with pytest.raises(TypeError, match="scan body output must be a pair, got"):
        lax.scan(lambda c, x: c, 0.0, jnp.zeros(3))
    with pytest.raises(TypeError, match="scan body output must be a pair, got"):
        lax.scan(lambda c, x: (c, x, x), 0.0, jnp.zeros(3))


_TYPES = (
    "scan body function carry input and carry output must have equal types, but they differ:"
    "\n\n{}\n\nRevise the function so that all output types match the corresponding input "
    "types."
)
_STRUCTURE = (
    "scan body function carry input and carry output must have the same pytree structure, but "
    "they differ:\n\n{}\n\nRevise the function so that the carry output has the same pytree "
    "structure as the carry input."
)


def test_error_scan_carry_types_name_the_leaf():
    xs = jnp.zeros(5)
    _raises_exactly(
        TypeError,
        _TYPES.format(
            "The input carry component c[1] has type float32[3] but the corresponding output "
            "carry component has type float32[2], so the shapes do not match."
        ),
        lambda: lax.scan(lambda c, x: ((c[0], jnp.zeros(2)), None), (1.0, jnp.zeros(3)), xs),
    )
    _raises_exactly(
        TypeError,
        _TYPES.format(
            "The input carry component c['a'][1] has type float32[2] but the corresponding "
            "output carry component has type int32[2], so the dtypes do not match."
        ),
        lambda: lax.scan(
            lambda c, x: ({"a": [c["a"][0], c["a"][1].astype(jnp.int32)]}, None),
            {"a": [1.0, jnp.zeros(2)]},
            xs,
        ),
    )


def test_error_scan_carry_structure():
    xs = jnp.zeros(5)
    _raises_exactly(
        TypeError,
        _STRUCTURE.format(
            "The input carry c is a <class 'tuple'> but the corresponding component of the "
            "carry output is a <class 'dict'>, so their Python types differ."
        ),
        lambda: lax.scan(lambda c, x: ({"a": c[0]}, None), (1.0,), xs),
    )
    _raises_exactly(
        TypeError,
        _STRUCTURE.format(
            "The input carry c is a <class 'dict'> with pytree metadata ('a',) but the "
            "corresponding component of the carry output is a <class 'dict'> with pytree "
            "metadata ('b',), so the pytree node metadata does not match."
        ),
        lambda: lax.scan(lambda c, x: ({"b": c["a"]}, None), {"a": 1.0}, xs),
    )


def test_error_scan_not_callable():
    _raises_exactly(
        TypeError, "lax.scan: f argument should be a callable.", lambda: lax.scan(1, 0.0, None, 3)
    )


@pytest.mark.parametrize("unroll", [2, 3, 7, 10, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_unrolled_scans_compile_to_the_same_values(unroll, reverse):
    """The lowering applies the body `unroll` times per loop trip (leftover steps after it)."""
    xs = np.arange(7.0, dtype=np.float32)
    f = lambda c, xs: lax.scan(
        lambda c, x: (c * 0.5 + x, c * x), c, xs, unroll=unroll, reverse=reverse
    )
    assert_tree_equal(jax.jit(f)(np.float32(1), xs), f(np.float32(1), xs), 1e-6)
    text = jax.jit(f).lower(np.float32(1), xs).as_text()
    steps = 7 if unroll is True else min(unroll, 7)
    assert text.count('"stablehlo.dynamic_slice"') == steps + 7 % steps
