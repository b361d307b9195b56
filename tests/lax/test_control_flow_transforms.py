"""Control flow nested in control flow and composed with transformations (a scan inside a
while inside a cond; cond inside scan; scan inside scan; jit/grad/vmap at every level), and
the composites built on scan and slicing: `lax.map` and `lax.associative_scan`, against NumPy."""

import functools

import helpers
import numpy as np
import pytest
from helpers import assert_tree_equal, check_vmap

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.jaxpr import check_jaxpr
from tracejit.test_util import check_grads

# Nested loops accumulate float32 rounding: this file compares to 1e-5.
check_eager_jit_numpy = functools.partial(helpers.check_eager_jit_numpy, tol=1e-5)

_rng = np.random.default_rng(3)
f32, i32 = np.float32, np.int32


def r(*shape, dtype=f32):
    return _rng.standard_normal(shape).astype(dtype)


# --- a scan inside a while inside a cond ----------------------------------------------------


def _inner_scan(c, xs):
    return lax.scan(lambda c, x: (c + 0.1 * x * x + 0.05 * jnp.sin(c), c.sum()), c, xs)


def nested(p, c, xs, max_iterations=None):
    """cond(p): while sum(c) < 5, c = scan(...)(c) + 0.5 (counting the trips); else c * 2.
    Every trip grows sum(c) by more than 0.3, so the while always ends."""

    def grow(c):
        n, c = lax.while_loop(
            lambda s: s[1].sum() < 5.0,
            lambda s: (s[0] + 1, _inner_scan(s[1], xs)[0] + 0.5),
            (np.int32(0), c),
            max_iterations=max_iterations,
        )
        return c, n

    return lax.cond(p, grow, lambda c: (c * 2.0, np.int32(-1)), c)


def np_nested(p, c, xs):
    if not p:
        return (c * 2).astype(f32), np.int32(-1)
    n = 0
    while c.sum() < 5:
        for x in xs:
            c = (c + f32(0.1) * x * x + f32(0.05) * np.sin(c)).astype(f32)
        c, n = (c + 0.5).astype(f32), n + 1
    return c, np.int32(n)


_C, _XS = np.array([0.1, 0.2], f32), r(3, 2)


@pytest.mark.parametrize("p", [True, False])
@pytest.mark.parametrize("max_iterations", [None, 30])
def test_scan_in_while_in_cond_matches_numpy(p, max_iterations):
    fun = lambda p, c, xs: nested(p, c, xs, max_iterations)
    want = np_nested(p, _C, _XS)
    assert want[1] > 1 or not p  # several trips of the while
    check_eager_jit_numpy(fun, (np.bool_(p), _C, _XS), want)


def test_scan_in_while_in_cond_vmap():
    """Batched predicate of the cond, batched predicate of the while (members need different
    trip counts), batched xs of the innermost scan."""
    p = np.array([True, False, True, True])
    c = np.stack([_C, _C, _C * 3, _C * 0.5])
    check_vmap(nested, (p, c, _XS), (0, 0, None), tol=1e-5, jit=True)
    check_vmap(nested, (np.bool_(True), c, _XS), (None, 0, None), tol=1e-5, jit=True)
    check_vmap(
        nested, (p, _C, np.stack([_XS, _XS * 0.5, _XS, -_XS])), (0, None, 0), tol=1e-5, jit=True
    )


def test_scan_in_while_in_cond_jvp_and_bounded_grad():
    t = np.array([1.0, -0.5], f32)
    _, want_t = jax.jvp(lambda c: nested(True, c, _XS)[0], (_C,), (t,))
    # reverse mode needs max_iterations; it agrees with forward mode through the same path
    g = jax.jacrev(lambda c: nested(True, c, _XS, 30)[0])(_C)
    np.testing.assert_allclose(np.asarray(g) @ t, want_t, rtol=1e-4, atol=1e-5)
    check_grads(lambda c: nested(True, c, _XS)[0], (_C,), order=1, modes=["fwd"], atol=1e-3)
    check_grads(lambda c: nested(True, c, _XS, 30)[0], (_C,), order=1, modes=["rev"], atol=1e-3)
    grad = jax.grad(lambda c: nested(True, c, _XS, 30)[0].sum())
    np.testing.assert_allclose(jax.jit(grad)(_C), grad(_C), rtol=1e-5)
    # the untaken branch: d(2c)/dc
    assert_tree_equal(
        jax.grad(lambda c: nested(False, c, _XS, 30)[0].sum())(_C), np.full(2, 2, f32), 0
    )
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(lambda c: nested(True, c, _XS)[0].sum())(_C)


def test_scan_in_while_in_cond_vmap_of_grad():
    p = np.array([True, False, True])
    c = np.stack([_C, _C, _C * 3])
    g = jax.grad(lambda p, c: nested(p, c, _XS, 30)[0].sum(), argnums=1)
    check_vmap(g, (p, c), (0, 0), tol=1e-4, jit=True)


def test_vmap_batched_predicate_with_int_bool_complex_outputs():
    p = np.array([True, False, True])

    def fun(p, x):
        return lax.cond(
            p,
            lambda a: (a > 0, (a * 3).astype(jnp.int32), a * 1j),
            lambda a: (a < 0, a.astype(jnp.int32), jnp.conj(a + 1j)),
            x,
        )

    check_vmap(fun, (p, np.array([1.5, -2.0, -0.5], f32)), (0, 0), tol=1e-5, jit=True)


def test_vmap_batched_predicate_around_a_scan_and_its_grad():
    p = np.array([True, False, True])

    def fun(p, v):
        def scanned(v):
            return lax.scan(lambda c, x: (c * jnp.sin(x) + x, None), 1.0, v)[0]

        return lax.cond(p, scanned, lambda v: (v**2).sum(), v)

    xs = r(3, 4)
    check_vmap(fun, (p, xs), (0, 0), tol=1e-5, jit=True)
    got = jax.grad(lambda xs: jax.vmap(fun)(p, xs).sum())(xs)
    want = np.stack([jax.grad(fun, argnums=1)(p[i], xs[i]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# --- cond inside scan -----------------------------------------------------------------------


def cond_in_scan(c, xs):
    step = lambda c, x: (
        lax.cond(x > 0, lambda a: jnp.sin(a) + x, lambda a: a * x, c),
        c,
    )
    return lax.scan(step, c, xs)


def np_cond_in_scan(c, xs):
    ys = []
    for x in xs:
        ys.append(c)
        c = (np.sin(c) + x if x > 0 else c * x).astype(f32)
    return c, np.array(ys, f32)


def test_cond_in_scan():
    xs = np.array([0.5, -1.2, 2.0, -0.3, 0.7], f32)
    check_eager_jit_numpy(cond_in_scan, (np.float32(0.3), xs), np_cond_in_scan(0.3, xs))
    check_grads(cond_in_scan, (np.float32(0.3), xs), order=2, modes=["fwd", "rev"])
    # the predicate inside the scan becomes batched when the xs are
    check_vmap(cond_in_scan, (r(4), r(4, 5)), (0, 0), tol=1e-5, jit=True)
    check_vmap(cond_in_scan, (np.float32(0.3), r(5, 4)), (None, 1), tol=1e-5, jit=True)
    check_vmap(
        jax.grad(lambda c, xs: cond_in_scan(c, xs)[0]), (r(4), r(4, 5)), (0, 0), tol=1e-5, jit=True
    )


def test_switch_and_fori_in_scan():
    def fun(c, idx):
        def step(c, i):
            c = lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * 0.5], c)
            return lax.fori_loop(0, 2, lambda j, a: a + 0.1 * j, c), c

        return lax.scan(step, c, idx)

    idx = np.array([0, 2, 1, 1, 0], i32)
    c, ys = np.float32(0.4), []
    for i in idx:
        c = [np.sin, np.cos, lambda a: a * 0.5][i](c).astype(f32)
        ys.append(c)
        c = np.float32(c + 0.1)
    check_eager_jit_numpy(fun, (np.float32(0.4), idx), (c, np.array(ys, f32)))
    check_grads(lambda c: fun(c, idx), (np.float32(0.4),), order=2, modes=["fwd", "rev"])
    check_vmap(fun, (r(3), np.array([[0, 1], [2, 2], [1, 0]], i32)), (0, 0), tol=1e-5, jit=True)


# --- scan inside scan -----------------------------------------------------------------------


def scan_in_scan(c, xss, w):
    def outer(c, xs):
        c, inner_ys = lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), c, xs)
        return c * 0.9, inner_ys

    return lax.scan(outer, c, xss, reverse=True)


def np_scan_in_scan(c, xss, w):
    yss = [None] * len(xss)
    for i in range(len(xss) - 1, -1, -1):
        ys = []
        for x in xss[i]:
            ys.append(c.sum())
            c = np.tanh(w @ c + x).astype(f32)
        c, yss[i] = (c * f32(0.9)).astype(f32), np.array(ys, f32)
    return c, np.array(yss)


def test_scan_in_scan():
    args = (r(3), r(4, 2, 3), 0.5 * r(3, 3))
    check_eager_jit_numpy(scan_in_scan, args, np_scan_in_scan(*args))
    check_grads(scan_in_scan, args, order=2, modes=["fwd", "rev"], atol=1e-4, rtol=1e-4)
    check_vmap(
        scan_in_scan, (r(2, 3), r(4, 2, 3), 0.5 * r(3, 3)), (0, None, None), tol=1e-5, jit=True
    )
    check_vmap(
        scan_in_scan, (r(3), r(4, 2, 3, 2), 0.5 * r(3, 3)), (None, 3, None), tol=1e-5, jit=True
    )
    check_vmap(
        scan_in_scan, (r(3), r(4, 2, 3), 0.5 * r(2, 3, 3)), (None, None, 0), tol=1e-5, jit=True
    )


def test_grad_of_scan_in_scan_residuals_are_not_constants_stacked():
    """The weights read by the inner scan stay constants of both backward scans."""
    args = (r(3), r(4, 2, 3), 0.5 * r(3, 3))
    closed = jax.make_jaxpr(jax.grad(lambda c, xss, w: scan_in_scan(c, xss, w)[0].sum(), 2))(*args)
    check_jaxpr(closed.jaxpr)
    text = str(closed)
    assert "f32[4,3,3]" not in text and "f32[2,3,3]" not in text and "f32[4,2,3,3]" not in text


# --- jit, grad and vmap inside bodies --------------------------------------------------------


def test_jit_and_grad_inside_scan_body():
    inner = jax.jit(lambda h, x: jnp.tanh(h * x))
    dinner = jax.grad(lambda h, x: jnp.tanh(h * x).sum())

    def fun(c, xs):
        return lax.scan(lambda c, x: (inner(c, x), dinner(c, x)), c, xs)

    c, xs = r(2), r(4, 2)
    h, ys = c, []
    for x in xs:
        ys.append((1 - np.tanh(h * x) ** 2) * x)
        h = np.tanh(h * x)
    check_eager_jit_numpy(fun, (c, xs), (h.astype(f32), np.array(ys, f32)))
    check_grads(fun, (c, xs), order=1, modes=["fwd", "rev"])
    check_vmap(fun, (r(3, 2), xs), (0, None), tol=1e-5, jit=True)


def test_vmap_inside_cond_and_while_bodies():
    def fun(p, x):
        return lax.cond(p, lambda a: jax.vmap(jnp.outer)(a, a).sum((1, 2)), lambda a: a[:, 0], x)

    x = r(4, 3)
    check_eager_jit_numpy(fun, (np.bool_(True), x), x.sum(1) ** 2, tol=1e-4)
    check_eager_jit_numpy(fun, (np.bool_(False), x), x[:, 0])

    def loop(x):
        return lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, jax.vmap(jnp.sin)(c[1])), (0, x)
        )[1]

    assert_tree_equal(jax.jit(loop)(x), np.sin(np.sin(np.sin(x))), 1e-6)


def test_hessian_of_scan():
    def fun(x):
        return lax.scan(lambda c, a: (c * jnp.sin(a * c), None), 1.0, x)[0]

    x = 0.5 * r(3)
    hess = jax.hessian(fun)(x)
    eps = 1e-3
    grad = jax.grad(fun)
    cols = [(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(3, dtype=f32)]
    np.testing.assert_allclose(hess, np.stack(cols, 1), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(hess, np.asarray(hess).T, rtol=1e-5, atol=1e-6)


# --- lax.map --------------------------------------------------------------------------------


def test_map_matches_numpy():
    xs = r(5, 3)
    check_eager_jit_numpy(
        lambda xs: lax.map(lambda x: jnp.sin(x).sum(), xs), (xs,), np.sin(xs).sum(1)
    )
    pair = lambda xs: lax.map(lambda t: {"s": t[0] * t[1], "n": t[1] + 1}, xs)
    ints = np.arange(5, dtype=i32)
    check_eager_jit_numpy(
        pair, ((xs, ints),), {"s": (xs * ints[:, None]).astype(f32), "n": ints + 1}
    )


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 8])
def test_map_batch_size(batch_size):
    xs, w = r(7, 3), r(3)
    fun = lambda xs: lax.map(lambda x: (jnp.tanh(x @ w), x * 2), xs, batch_size=batch_size)
    check_eager_jit_numpy(fun, (xs,), (np.tanh(xs @ w), xs * 2))


def test_map_grad_and_vmap():
    fun = lambda xs, w: lax.map(lambda x: jnp.sin(x * w), xs)
    check_grads(fun, (r(4, 2), r(2)), order=2, modes=["fwd", "rev"])
    check_grads(lambda xs: lax.map(jnp.cos, xs, batch_size=3), (r(5),), order=1)
    check_vmap(fun, (r(3, 4, 2), r(2)), (0, None), tol=1e-5, jit=True)
    check_vmap(fun, (r(4, 2), r(3, 2)), (None, 0), tol=1e-5, jit=True)


# --- lax.associative_scan -------------------------------------------------------------------


def _np_accumulate(ufunc, x, axis, reverse):
    if reverse:
        return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
    return ufunc.accumulate(x, axis=axis)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    "op,ufunc,dtype",
    [
        (jnp.add, np.add, f32),
        (jnp.multiply, np.multiply, f32),
        (jnp.maximum, np.maximum, i32),
        (jnp.add, np.add, i32),
    ],
    ids=["cumsum", "cumprod", "cummax_int", "cumsum_int"],
)
def test_associative_scan_matches_numpy(op, ufunc, dtype, reverse, n):
    x = (
        _rng.integers(-5, 6, (n,)).astype(dtype)
        if dtype == i32
        else 0.5 + _rng.random(n).astype(f32)
    )
    want = _np_accumulate(ufunc, x, 0, reverse).astype(dtype)
    # (a single element comes back as it is, a NumPy array, as in JAX: no replay check)
    fun = lambda x: lax.associative_scan(op, x, reverse=reverse)
    check_eager_jit_numpy(fun, (x,), want, replay=n > 1)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_axis(axis, reverse):
    """(JAX 0.10.2 fails on a negative axis with reverse=True: `rev dimensions must have every
    element be nonnegative`; ours normalizes the axis first.)"""
    x = r(3, 5, 4)
    want = _np_accumulate(np.add, x, axis, reverse)
    fun = lambda x: lax.associative_scan(jnp.add, x, reverse=reverse, axis=axis)
    check_eager_jit_numpy(fun, (x,), want, tol=1e-5)


def test_associative_scan_pytree_linear_recurrence():
    """h_t = a_t * h_{t-1} + b_t as the composition of affine maps (a, b), a pytree."""

    def compose(f, g):  # g after f
        return g[0] * f[0], g[0] * f[1] + g[1]

    a, b = 0.9 * r(7, 2), r(7, 2)
    h, hs = np.zeros(2, f32), []
    for t in range(7):
        h = a[t] * h + b[t]
        hs.append(h)
    out = lax.associative_scan(compose, (a, b))
    np.testing.assert_allclose(out[1], np.array(hs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[0], np.cumprod(a, 0), rtol=1e-5)
    check_grads(lambda a, b: lax.associative_scan(compose, (a, b))[1], (a, b), order=1)


def test_associative_scan_grad_and_vmap():
    fun = lambda x: lax.associative_scan(jnp.multiply, x)
    check_grads(fun, (0.5 + np.abs(r(6)),), order=2, modes=["fwd", "rev"])
    check_vmap(fun, (r(3, 5),), (0,), tol=1e-5, jit=True)
    check_vmap(fun, (r(5, 3),), (1,), tol=1e-5, jit=True)


def test_associative_scan_errors():
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(jnp.add, (jnp.zeros(3), jnp.zeros(4)))


_XS4 = np.arange(4.0, dtype=f32)


def test_jit_closing_over_outer_tracer_inside_bodies():
    """An inner jit reading a tracer of the enclosing transformation through its closure."""

    def scan_loss(w):
        return lax.scan(lambda c, x: (jax.jit(lambda a, b: a * b + w)(c, x), None), 1.0, _XS4)[0]

    assert float(jax.grad(scan_loss)(np.float32(0.5))) == 16.0
    assert float(jax.jvp(scan_loss, (np.float32(0.5),), (np.float32(1),))[1]) == 16.0
    assert float(jax.jit(scan_loss)(np.float32(0.5))) == 8.0

    def cond_loss(w):
        return lax.cond(True, lambda a: jax.jit(lambda b: b * w)(a), lambda a: a, 2.0)

    assert float(jax.grad(cond_loss)(np.float32(0.5))) == 2.0
    assert float(jax.jit(cond_loss)(np.float32(3.0))) == 6.0

    def while_fun(w):
        return lax.while_loop(lambda c: c < 10, lambda c: jax.jit(lambda a: a * 2 + w)(c), 1.0)

    assert float(jax.jit(while_fun)(np.float32(0.5))) == 11.5
    assert float(jax.grad(lambda w: jax.jit(lambda a: a * 2 + w)(1.0))(np.float32(0.5))) == 1.0


def test_jit_inside_bodies_taking_outer_values_as_arguments():
    def scan_loss(w):
        step = lambda c, x: (jax.jit(lambda a, b, w: a * b + w)(c, x, w), None)
        return lax.scan(step, 1.0, _XS4)[0]

    assert float(jax.grad(scan_loss)(np.float32(0.5))) == 16.0
    assert float(jax.jit(scan_loss)(np.float32(0.5))) == 8.0
    assert float(jax.jit(jax.grad(scan_loss))(np.float32(0.5))) == 16.0


# --- custom derivatives inside bodies --------------------------------------------------------


@jax.custom_jvp
def _sin_fast_jvp(x):
    return jnp.sin(x)


_sin_fast_jvp.defjvp(lambda p, t: (jnp.sin(p[0]), 10.0 * t[0]))


@jax.custom_vjp
def _sin_big_vjp(x):
    return jnp.sin(x)


_sin_big_vjp.defvjp(lambda x: (jnp.sin(x), x), lambda res, ct: (100.0 * ct,))

_X3 = np.array([0.1, 0.2, 0.3], f32)


def test_custom_jvp_and_vjp_rules_are_used_inside_bodies():
    """Values as JAX 0.10.2 computes them: the user's rules, not the primitives'."""

    def scan_with(fn):
        return lambda c: lax.scan(lambda c, x: (fn(c) * x, None), c, _X3)[0]

    c = np.float32(0.5)
    np.testing.assert_allclose(jax.grad(scan_with(_sin_fast_jvp))(c), 6.0, rtol=1e-5)
    np.testing.assert_allclose(jax.grad(scan_with(_sin_big_vjp))(c), 6000.0, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(scan_with(_sin_big_vjp)))(c), 6000.0, rtol=1e-5)
    got = jax.vmap(jax.grad(scan_with(_sin_big_vjp)))(np.array([0.5, 1.0], f32))
    np.testing.assert_allclose(got, [6000.0, 6000.0], rtol=1e-5)
    cond = lambda c: lax.cond(c > 0, _sin_big_vjp, _sin_fast_jvp, c)
    assert float(jax.grad(cond)(c)) == 100.0
    assert float(jax.grad(lambda c: lax.cond(c > 0, _sin_fast_jvp, _sin_big_vjp, c))(c)) == 10.0

    def while_fun(c):
        body = lambda s: (s[0] + 1, _sin_fast_jvp(s[1]))
        return lax.while_loop(lambda s: s[0] < 2, body, (0, c))[1]

    y, t = jax.jvp(while_fun, (c,), (np.float32(1),))
    np.testing.assert_allclose([y, t], [np.sin(np.sin(0.5)), 100.0], rtol=1e-5)


def test_bfloat16_scan_and_cond():
    bf16 = jnp.bfloat16
    c, ys = jax.jit(lambda xs: lax.scan(lambda c, x: (c + x, c), bf16(0), xs))(jnp.ones(3, bf16))
    assert c.dtype == bf16 and ys.dtype == bf16
    assert float(c) == 3.0 and np.asarray(ys, f32).tolist() == [0.0, 1.0, 2.0]
    g = jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(bf16(0.5))
    assert g.dtype == bf16 and abs(float(g) - np.cos(0.5)) < 1e-2


# --- jacobians and nested vmaps ---------------------------------------------------------------


def _fd_jacobian(fun, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    cols = []
    for e in np.eye(x.size).reshape(x.size, *x.shape):
        hi = np.asarray(fun((x + eps * e).astype(f32)), np.float64)
        lo = np.asarray(fun((x - eps * e).astype(f32)), np.float64)
        cols.append((hi - lo) / (2 * eps))
    return np.stack(cols, -1).reshape(*np.shape(hi), *x.shape)


_WJ = (0.5 * r(3, 3)).astype(f32)
_XJ = r(4, 3)

JACOBIAN_CASES = [
    ("scan", lambda c: lax.scan(lambda c, x: (jnp.tanh(_WJ @ c + x), c * x), c, _XJ)[1]),
    ("cond", lambda x: lax.cond(x.sum() > 0, lambda a: jnp.sin(a) * a[::-1], lambda a: a**2, x)),
    (
        "while_max_iterations",
        lambda x: lax.while_loop(
            lambda c: jnp.sum(c * c) < 9.0, lambda c: c * 1.3 + 0.1, x, max_iterations=20
        ),
    ),
    ("fori", lambda x: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * c[::-1] + i, x)),
]


@pytest.mark.parametrize("name,fun", JACOBIAN_CASES, ids=[c[0] for c in JACOBIAN_CASES])
def test_jacrev_and_jacfwd(name, fun):
    """jacrev vmaps the transposed loop over cotangents, jacfwd the JVP over tangents."""
    x = np.array([0.7, 1.1, -0.4], f32)
    rev, fwd = jax.jacrev(fun)(x), jax.jacfwd(fun)(x)
    np.testing.assert_allclose(rev, fwd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rev, _fd_jacobian(fun, x), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(jax.jit(jax.jacrev(fun))(x), rev, rtol=1e-5, atol=1e-6)


def test_vmap_of_vmap():
    p = np.array([[True, False, True], [False, False, True]])
    x = r(2, 3)
    cond = jax.vmap(jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)))
    assert_tree_equal(cond(p, x), np.where(p, np.sin(x), np.cos(x)), 1e-6)

    def loop(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]

    n, xs = np.array([1, 2, 3], i32), np.array([2.0, 3.0], f32)
    got = jax.vmap(jax.vmap(loop, (0, None)), (None, 0))(n, xs)
    assert_tree_equal(got, (xs[:, None] ** n[None, :]).astype(f32), 0)

    def scan(c, xs):
        return lax.scan(lambda c, x: (c * x + 1, c), c, xs)

    c, xss = r(4), r(2, 3)
    carry, ys = jax.vmap(jax.vmap(scan, (0, None)), (None, 0))(c, xss)
    for i in range(2):
        for j in range(4):
            assert_tree_equal((carry[i, j], ys[i, j]), scan(c[j], xss[i]), 1e-6)


def test_vmap_out_axes_and_per_leaf_in_axes():
    def fun(t):
        return lax.scan(lambda c, x: (c + x["a"] * x["b"], c * x["a"]), 0.0, t)

    t = {"a": r(2, 3), "b": r(3, 2)}
    carry, ys = jax.vmap(fun, in_axes=({"a": 0, "b": 1},), out_axes=(0, 1))(t)
    for i in range(2):
        want_c, want_ys = fun({"a": t["a"][i], "b": t["b"][:, i]})
        assert_tree_equal((carry[i], ys[:, i]), (want_c, want_ys), 1e-6)


def test_grad_has_aux_through_scan():
    def loss(c):
        out = lax.scan(lambda c, x: (c * x, None), c, np.arange(1.0, 4.0, dtype=f32))[0]
        return out, {"steps": 3}

    g, aux = jax.grad(loss, has_aux=True)(np.float32(2.0))
    assert float(g) == 6.0 and aux == {"steps": 3}
