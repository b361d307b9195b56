"""`lax.while_loop` and `lax.fori_loop`: eager and jit against NumPy loops (dtypes, pytree
carries, closures), forward-mode derivatives of while, reverse mode of fori_loop with a static
trip count and of `while_loop(max_iterations=N)`, the refusal of reverse mode otherwise, vmap
against per-example loops (members finishing at different iteration counts), and JAX's
carry-mismatch errors. Golden jaxprs are in test_control_flow_jaxprs.py."""

import re

import numpy as np
import pytest
from helpers import assert_tree_equal, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.test_util import check_grads

_rng = np.random.default_rng(1)
f32, i32, c64 = np.float32, np.int32, np.complex64


def r(*shape, dtype=f32):
    return _rng.standard_normal(shape).astype(dtype)


# --- NumPy references -----------------------------------------------------------------------


def np_while(cond, body, val):
    while cond(val):
        val = body(val)
    return val


def np_fori(lower, upper, body, val):
    for i in range(lower, upper):
        val = body(i, val)
    return val


_W = (0.5 * r(3, 3)).astype(f32)
_X = r(3)


def _collatz(n):  # an integer loop whose trip count depends on the value
    return lax.while_loop(
        lambda c: c[0] != 1,
        lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
        (n, np.int32(0)),
    )


def _np_collatz(n):
    return np_while(
        lambda c: c[0] != 1,
        lambda c: (np.int32(c[0] // 2 if c[0] % 2 == 0 else 3 * c[0] + 1), np.int32(c[1] + 1)),
        (n, np.int32(0)),
    )


# (id, function, args, NumPy reference)
WHILE_CASES = [
    (
        "f32_doubling",
        lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x),
        (np.float32(0.3),),
        lambda x: np.float32(np_while(lambda c: c < 10.0, lambda c: c * 2.0, x)),
    ),
    ("i32_collatz", _collatz, (np.int32(27),), _np_collatz),
    (
        "zero_iterations",
        lambda x: lax.while_loop(lambda c: c.sum() > 100, lambda c: c + 1, x),
        (_X,),
        lambda x: x,
    ),
    (
        "pytree_carry",
        lambda x: lax.while_loop(
            lambda c: c["i"] < 5,
            lambda c: {"i": c["i"] + 1, "v": (jnp.tanh(_W @ c["v"][0]), c["v"][1] * 2)},
            {"i": np.int32(0), "v": (x, np.float32(1))},
        ),
        (_X,),
        lambda x: np_while(
            lambda c: c["i"] < 5,
            lambda c: {
                "i": np.int32(c["i"] + 1),
                "v": (np.tanh(_W @ c["v"][0]).astype(f32), np.float32(c["v"][1] * 2)),
            },
            {"i": np.int32(0), "v": (x, np.float32(1))},
        ),
    ),
    (
        "closure_over_outer_args",  # n read by cond_fun, w by body_fun: tracers under jit
        lambda x, n, w: lax.while_loop(
            lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * w + 1), (np.int32(0), x)
        )[1],
        (_X, np.int32(4), np.float32(0.5)),
        lambda x, n, w: np_fori(0, n, lambda i, v: v * w + 1, x),
    ),
    (
        "c64",
        lambda z: lax.while_loop(lambda c: jnp.abs(c) < 5, lambda c: c * (1 + 1j), z),
        (np.complex64(0.1 + 0.2j),),
        lambda z: np.complex64(np_while(lambda c: abs(c) < 5, lambda c: c * (1 + 1j), z)),
    ),
]


@pytest.mark.parametrize("name,fun,args,ref", WHILE_CASES, ids=[c[0] for c in WHILE_CASES])
def test_while_matches_numpy(name, fun, args, ref):
    check_eager_jit_numpy(fun, args, ref(*args), tol=1e-5)


def test_while_weakly_typed_python_carry():
    out = lax.while_loop(lambda c: c < 5, lambda c: c + 1, 0)
    assert out.dtype == np.int32 and out.weak_type and int(out) == 5


FORI_CASES = [
    ("static", lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x), (_X,), 0, 5),
    ("offset", lambda x: lax.fori_loop(3, 7, lambda i, c: c * 0.5 + i, x), (_X,), 3, 7),
    ("empty", lambda x: lax.fori_loop(5, 2, lambda i, c: c * 0.5 + i, x), (_X,), 5, 2),
    (
        "numpy_bounds",
        lambda x: lax.fori_loop(np.int32(1), np.int32(4), lambda i, c: c * 0.5 + i, x),
        (_X,),
        1,
        4,
    ),
]


@pytest.mark.parametrize("name,fun,args,lo,hi", FORI_CASES, ids=[c[0] for c in FORI_CASES])
def test_fori_static_matches_numpy(name, fun, args, lo, hi):
    want = np_fori(lo, hi, lambda i, c: (c * 0.5 + i).astype(f32), args[0])
    check_eager_jit_numpy(fun, args, want)


@pytest.mark.parametrize("lo,hi", [(0, 6), (2, 5), (4, 1)])
def test_fori_dynamic_bounds_under_jit(lo, hi):
    fun = lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, c: c * 0.5 + i, x)
    want = np_fori(lo, hi, lambda i, c: (c * 0.5 + i).astype(f32), _X)
    check_eager_jit_numpy(fun, (np.int32(lo), np.int32(hi), _X), want)


def test_fori_pytree_carry_and_index_use():
    def fun(x):
        def body(i, c):
            acc, xs = c
            return acc + xs[i], xs.at[i].set(xs[i] * 2)

        return lax.fori_loop(0, 4, body, (np.float32(0), x))

    x = r(4)
    check_eager_jit_numpy(fun, (x,), (np.float32(x.sum()), x * 2))


# --- derivatives ----------------------------------------------------------------------------


def _while_poly(x, w):
    """Three iterations whatever the values: the counter decides, so derivatives are smooth."""
    return lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * w + c[1]), (np.int32(0), x)
    )[1]


def test_while_jvp_matches_finite_differences():
    check_grads(_while_poly, (r(3), r(3)), order=2, modes=["fwd"])


def test_while_jvp_value_of_value_dependent_trip_count():
    """x doubles until it reaches 10: the derivative is 2**k, k the trip count."""
    fun = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    for x, k in ((0.3, 6), (3.0, 2), (11.0, 0)):
        y, t = jax.jvp(fun, (np.float32(x),), (np.float32(1),))
        assert float(y) == np.float32(x) * 2**k and float(t) == 2**k
        y, t = jax.jit(lambda x: jax.jvp(fun, (x,), (np.float32(1),)))(np.float32(x))
        assert float(t) == 2**k


def test_while_jvp_through_closure_of_enclosing_jvp():
    def fun(w):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * w), (0, 1.0))[1]

    y, t = jax.jvp(fun, (np.float32(1.5),), (np.float32(1),))
    np.testing.assert_allclose([y, t], [1.5**4, 4 * 1.5**3], rtol=1e-6)


_WHILE_GRAD_MESSAGE = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop"
)


def test_grad_of_while_raises_jax_error():
    fun = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    with pytest.raises(ValueError, match=re.escape(_WHILE_GRAD_MESSAGE)):
        jax.grad(fun)(np.float32(1.0))
    with pytest.raises(ValueError, match=re.escape(_WHILE_GRAD_MESSAGE)):
        # n is traced by jit: dynamic bounds, a while loop
        jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x)))(
            np.float32(1.0), np.int32(3)
        )
    # n not differentiated by grad stays concrete: a static trip count, as in JAX
    g = jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x))
    assert float(g(np.float32(1.0), 3)) == 8.0
    _, pullback = jax.vjp(_while_poly, r(3), r(3))  # linearizing works; transposing does not
    with pytest.raises(ValueError, match=re.escape(_WHILE_GRAD_MESSAGE)):
        pullback(r(3))
    with pytest.raises(ValueError, match=re.escape(_WHILE_GRAD_MESSAGE)):
        jax.jit(jax.grad(lambda x: _while_poly(x, x).sum()))(r(3))


def test_grad_of_while_with_only_constant_carries_needing_no_tangent():
    """A loop whose carry does not depend on the differentiated input is fine in reverse mode
    (partial evaluation computes it, only the known part runs)."""

    def fun(x):
        n = lax.while_loop(lambda c: c < 10, lambda c: c + 3, 0)
        return x * n

    np.testing.assert_allclose(jax.grad(fun)(np.float32(2.0)), 12.0)


FORI_GRAD_CASES = [
    ("scalar", lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * (i + 1.0), x), (r(3),)),
    (
        "matrix_consts",
        lambda x, w: lax.fori_loop(1, 4, lambda i, c: jnp.tanh(w @ c) + c * i, x),
        (r(3), 0.5 * r(3, 3)),
    ),
    (
        "pytree",
        lambda x, y: lax.fori_loop(0, 3, lambda i, c: (c[0] * c[1], jnp.cos(c[0])), (x, y))[0],
        (r(2), r(2)),
    ),
]


@pytest.mark.parametrize("name,fun,args", FORI_GRAD_CASES, ids=[c[0] for c in FORI_GRAD_CASES])
def test_fori_static_grads(name, fun, args):
    check_grads(fun, args, order=2, modes=["fwd", "rev"])


def test_fori_static_grad_value():
    f = jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * c, x))  # x**8
    np.testing.assert_allclose(f(np.float32(1.1)), 8 * 1.1**7, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(f)(np.float32(1.1)), 8 * 1.1**7, rtol=1e-5)


def _bounded(x, w, max_iterations):
    # runs until the norm exceeds 4: the trip count depends on x
    return lax.while_loop(
        lambda c: jnp.sum(c * c) < 16.0,
        lambda c: c * w + 0.1,
        x,
        max_iterations=max_iterations,
    )


def test_while_max_iterations_equals_unbounded_loop():
    x, w = np.array([0.3, -0.2], f32), np.array([1.5, 1.3], f32)
    want = _bounded(x, w, None)
    assert_tree_equal(_bounded(x, w, 50), want, 0)
    assert_tree_equal(jax.jit(lambda x, w: _bounded(x, w, 50))(x, w), want, 1e-6)
    # stopped early when max_iterations is too small: exactly 2 steps
    assert_tree_equal(_bounded(x, w, 2), (x * w + 0.1) * w + 0.1, 1e-7)


def test_while_max_iterations_grad_matches_finite_differences():
    x, w = np.array([0.3, -0.2], f32), np.array([1.5, 1.3], f32)
    check_grads(lambda x, w: _bounded(x, w, 20), (x, w), order=2, modes=["fwd", "rev"])
    # the hand-derived gradient: k steps of c -> c * w + 0.1 give dc/dx = w**k
    k = 0
    c = x.astype(np.float64)
    while np.sum(c * c) < 16:
        c, k = c * w + 0.1, k + 1
    g = jax.grad(lambda x: _bounded(x, w, 20).sum())(x)
    np.testing.assert_allclose(g, w.astype(np.float64) ** k, rtol=1e-5)


# --- vmap -----------------------------------------------------------------------------------


def _count_to(n, x, w):
    return lax.while_loop(
        lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * w + 1.0), (np.int32(0), x)
    )


VMAP_WHILE_CASES = [
    # the predicate is batched: members stop after 0, 1, 3, 5 iterations
    ("pred_batched", (np.array([0, 1, 3, 5], i32), r(4, 2), np.float32(0.5)), (0, 0, None)),
    ("only_bound_batched", (np.array([3, 0, 2], i32), r(2), np.float32(0.5)), (0, None, None)),
    ("carry_batched", (np.int32(3), r(2, 4), r(4)), (None, 1, 0)),
    ("body_const_batched", (np.int32(2), r(2), r(5)), (None, None, 0)),
]


@pytest.mark.parametrize(
    "name,args,in_axes", VMAP_WHILE_CASES, ids=[c[0] for c in VMAP_WHILE_CASES]
)
def test_vmap_while(name, args, in_axes):
    check_vmap(_count_to, args, in_axes, jit=True)


def test_vmap_while_value_dependent_predicate():
    fun = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    check_vmap(fun, (np.array([0.3, 3.0, 11.0, 0.01], f32),), (0,), jit=True)
    check_vmap(_collatz, (np.array([1, 6, 27, 7], i32),), (0,), jit=True)


def test_vmap_while_unbatched_predicate_keeps_one_while():
    text = jaxpr_text(jax.vmap(lambda x: _count_to(np.int32(3), x, np.float32(2.0))), r(4))
    assert text.count("while[") == 1 and "reduce_or" not in text
    text = jaxpr_text(
        jax.vmap(lambda n: _count_to(n, np.float32(1), np.float32(2))), np.ones(3, i32)
    )
    assert "reduce_or" in text  # a batched predicate loops while any member's holds


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_vmap_fori_dynamic_bounds(in_axes):
    fun = lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x)
    n = np.array([4, 0, 2], i32) if in_axes[0] is not None else np.int32(3)
    x = r(3, 2) if in_axes[1] is not None else r(2)
    check_vmap(fun, (n, x), in_axes, jit=True)


def test_vmap_fori_static():
    fun = lambda x, w: lax.fori_loop(0, 4, lambda i, c: jnp.tanh(w @ c) + i, x)
    check_vmap(fun, (r(5, 3), 0.5 * r(3, 3)), (0, None), jit=True)
    check_vmap(fun, (r(3), 0.5 * r(3, 3, 5)), (None, 2), jit=True)


def test_vmap_of_jvp_of_while_and_vmap_of_grad_of_fori():
    fun = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    xs = np.array([0.3, 3.0, 11.0], f32)
    tangent = jax.vmap(lambda x: jax.jvp(fun, (x,), (np.float32(1),))[1])(xs)
    assert_tree_equal(tangent, np.array([64.0, 4.0, 1.0], f32), 0)
    g = jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * c, x))
    x = np.array([1.1, 0.9, -1.0], f32)
    assert_tree_equal(jax.jit(jax.vmap(g))(x), (8 * x.astype(np.float64) ** 7).astype(f32), 1e-5)


def test_vmap_while_max_iterations_grad():
    x, w = r(4, 2) * 0.3, np.array([1.5, 1.3], f32)
    g = jax.grad(lambda x: _bounded(x, w, 20).sum())
    check_vmap(g, (x,), (0,), tol=1e-5, jit=True)


# --- errors ---------------------------------------------------------------------------------


def _raises_exactly(exc, message, fun):
    with pytest.raises(exc) as info:
        fun()
    assert str(info.value) == message


_STRUCTURE = "{} body function carry input and carry output must have the same pytree "
_STRUCTURE += "structure, but they differ:\n\n{}\n\nRevise the function so that the carry "
_STRUCTURE += "output has the same pytree structure as the carry input."
_TYPES = "{} body function carry input and carry output must have equal types, but they "
_TYPES += "differ:\n\n{}\n\nRevise the function so that all output types match the "
_TYPES += "corresponding input types."


def test_error_while_carry_dtype_names_leaf_path_and_types():
    _raises_exactly(
        TypeError,
        _TYPES.format(
            "while_loop",
            "The input carry component c['b'] has type float32[3] but the corresponding output "
            "carry component has type int32[3], so the dtypes do not match.",
        ),
        lambda: lax.while_loop(
            lambda c: c["a"] < 3,
            lambda c: {"a": c["a"] + 1, "b": c["b"].astype(jnp.int32)},
            {"a": 0, "b": jnp.zeros(3)},
        ),
    )


def test_error_while_carry_structure():
    _raises_exactly(
        TypeError,
        _STRUCTURE.format(
            "while_loop",
            "The input carry c is a <class 'tuple'> but the corresponding component of the "
            "carry output is a <class 'list'>, so their Python types differ.",
        ),
        lambda: lax.while_loop(lambda c: False, lambda c: [c[0], c[1]], (1.0, 2.0)),
    )
    _raises_exactly(
        TypeError,
        _STRUCTURE.format(
            "while_loop",
            "The input carry component c[1] is a tuple of length 2 but the corresponding "
            "component of the carry output is a tuple of length 1, so the lengths do not match.",
        ),
        lambda: lax.while_loop(lambda c: False, lambda c: (c[0], (c[1][0],)), (1.0, (2.0, 3.0))),
    )


def test_error_while_carry_shape_and_dtype():
    _raises_exactly(
        TypeError,
        _TYPES.format(
            "while_loop",
            "The input carry c has type float32[2] but the corresponding output carry component "
            "has type int32[1], so the dtypes do not match, and the shapes do not match.",
        ),
        lambda: lax.while_loop(lambda c: False, lambda c: c[:1].astype(jnp.int32), jnp.zeros(2)),
    )


def test_error_fori_carry_names_loop_carry():
    _raises_exactly(
        TypeError,
        _TYPES.format(
            "scan",
            "The input carry component loop_carry[1] has type float32[2] but the corresponding "
            "output carry component has type int32[2], so the dtypes do not match.",
        ),
        lambda: lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), jnp.zeros(2)),
    )


def test_error_while_predicate_not_boolean_scalar():
    _raises_exactly(
        TypeError,
        "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(bool[2])].",
        lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2)),
    )
    _raises_exactly(
        TypeError,
        "cond_fun must return a boolean scalar, but got output type(s) "
        "[ShapedArray(int32[], weak_type=True)].",
        lambda: lax.while_loop(lambda c: 1, lambda c: c + 1, np.float32(1)),
    )


def test_fori_takes_the_bounds_jax_takes():
    # Concrete bounds of any scalar type count as ints (the index stays a weak int) ...
    out = lax.fori_loop(0.5, 3.7, lambda i, c: c + i, 0.0)
    assert (out.dtype, out.weak_type, float(out)) == (np.float32, True, 3.0)
    out = lax.fori_loop(False, True, lambda i, c: c + i, 0)
    assert (out.dtype, out.weak_type, int(out)) == (np.int32, True, 0)
    out = lax.fori_loop(jnp.int32(0), 3, lambda i, c: c + i, jnp.int8(0))
    assert (out.dtype, int(out)) == (np.int8, 3)
    # ... traced float bounds loop over a float index.
    out = jax.jit(lambda a, b: lax.fori_loop(a, b, lambda i, c: c + i, 0.0))(0.0, 3.0)
    assert float(out) == 3.0


def test_error_fori_bounds_of_two_strong_types():
    with pytest.raises(TypeError, match="must have equal types, got int8 and int32"):
        lax.fori_loop(jnp.int8(0), jnp.int32(3), lambda i, c: c + i, 0)
    with pytest.raises(TypeError, match="must have equal types, got int8 and int32"):
        jax.jit(lambda a, b: lax.fori_loop(a, b, lambda i, c: c + i, 0))(jnp.int8(0), jnp.int32(3))


def test_error_a_weak_carry_the_body_makes_another_kind():
    # JAX promotes a Python-scalar carry to what it and the output promote to (0 with an f32
    # output becomes f32), then requires equal types: 0. made int32 is an error.
    xs = jnp.arange(3.0)
    with pytest.raises(TypeError, match="input carry c has type float32.*int32"):
        lax.scan(lambda c, x: (c.astype(jnp.int32), x), 0.0, xs)
    with pytest.raises(TypeError, match="input carry c has type float32.*int32"):
        lax.while_loop(lambda c: c < 3, lambda c: c.astype(jnp.int32) + 1, 0.0)
    with pytest.raises(TypeError, match=r"loop_carry\[1\] has type float32.*int32"):
        lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), 0.0)
    carry, _ = lax.scan(lambda c, x: (c + x, x), 0, xs)  # 0 promotes with f32 to f32
    assert carry.dtype == np.float32 and float(carry) == 3.0


def test_error_python_while_on_tracer():
    def fun(x):
        while x < 10:
            x = x * 2
        return x

    with pytest.raises(jax.errors.TracerBoolConversionError, match="lax.while_loop"):
        jax.jit(fun)(np.float32(1.0))


def test_fori_static_index_is_weakly_typed():
    """With concrete bounds JAX's index is a weak int32: it does not promote a narrower carry."""
    assert_tree_equal(lax.fori_loop(0, 3, lambda i, c: c + i, np.int16(0)), np.int16(3), 0)
    out = lax.fori_loop(0, 3, lambda i, c: c + i, 0)
    assert out.dtype == np.int32 and out.weak_type and int(out) == 3
    seen = []
    lax.fori_loop(np.int16(0), np.int16(3), lambda i, c: seen.append(i) or c, 0.0)
    assert seen[0].dtype == np.int32 and seen[0].weak_type


def test_fori_index_with_float_carry():
    out = lax.fori_loop(0, 3, lambda i, c: c + i, np.float16(0))
    assert out.dtype == np.float16 and float(out) == 3.0


def test_vmap_loops_keep_weak_types():
    x = np.array([1.0, 3.0], f32)
    n, y = jax.vmap(
        lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))
    )(x)
    assert n.weak_type and not y.weak_type
    (n, y), _ = jax.vmap(
        lambda x: lax.scan(lambda c, a: ((c[0] + 1, c[1] * a), None), (0, 1.0), x)
    )(np.ones((2, 3), f32))
    assert n.weak_type and not y.weak_type
    n, y = jax.vmap(
        lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
    )(np.array([1, 3], i32))
    assert n.weak_type and y.weak_type
    assert_tree_equal((n, y), (np.array([1, 3], i32), np.array([2.0, 8.0], f32)), 0)


def test_fori_dynamic_keeps_weak_carry():
    out = jax.jit(lambda n: lax.fori_loop(5, n, lambda i, c: c + i, 0))(np.int32(2))
    assert int(out) == 0 and out.dtype == np.int32 and out.weak_type


def test_linearize_of_while_and_grad_through_known_carries():
    """linearize stages the tangent loop (no transpose needed); a gradient that only needs
    the loop's known carries (the counter) is fine in reverse mode."""

    def loop(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 2), (0, x))

    x = np.float32(0.5)
    want = 8 * np.cos(x) * np.cos(2 * np.sin(x)) * np.cos(2 * np.sin(2 * np.sin(x)))
    _, lin = jax.linearize(lambda x: loop(x)[1], x)
    np.testing.assert_allclose(lin(np.float32(1)), want, rtol=1e-5)
    jitted = jax.jit(lambda x: jax.linearize(lambda x: loop(x)[1], x)[1](np.float32(1)))
    np.testing.assert_allclose(jitted(x), want, rtol=1e-5)
    assert float(jax.grad(lambda x: loop(x)[0] * 1.0 + x)(x)) == 1.0


def test_vmap_while_predicate_batched_through_body_consts():
    """The predicate reads only the carry, which becomes batched through a batched body
    constant: members stop at different counts."""
    fun = lambda w: lax.while_loop(lambda c: c < 10, lambda c: c * w, 1.0)
    check_vmap(fun, (np.array([2.0, 3.0, 1.5], f32),), (0,), jit=True)
    assert_tree_equal(jax.vmap(fun)(np.array([2.0, 3.0], f32)), np.array([16.0, 27.0], f32), 0)
    y, t = jax.vmap(lambda w: jax.jvp(fun, (w,), (np.float32(1),)))(np.array([2.0, 3.0], f32))
    assert_tree_equal(y, np.array([16.0, 27.0], f32), 0)
    assert_tree_equal(t, np.array([32.0, 27.0], f32), 1e-6)  # d(w**k)/dw = k w**(k-1)
