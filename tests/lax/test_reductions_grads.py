"""Derivatives of the reductions, cumulative reductions, dot_general and sort: numerical checks
to second order in both modes (complex operands too where the function is holomorphic),
derivatives by hand and JAX 0.10.2's values at the special points (max/min ties averaged,
products with zeros, cummax ties split along the scan's tree), zero tangents of the
integer-valued primitives, transposition of the linear ones (cumsum, dot_general, sort in its
riding operands), jaxpr printouts against JAX's, and the linearized MLP's O(layers) residuals."""

import textwrap

import numpy as np
import pytest
from helpers import bf16

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dtypes
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.partial_eval import linearize_flat
from tracejit._src.interpreters.staging import DebugInfo
from tracejit._src.test_util import check_grads
from tracejit._src.tree_util import tree_flatten, tree_unflatten
from tracejit.lax import convert_element_type

rng = np.random.default_rng(0)


def distinct(shape, complex_=False):
    """Real values at least 0.1 apart from each other (no ties for max/min/sort); `complex_`
    is only there for the samplers to share one signature."""
    size = int(np.prod(shape, dtype=int))
    values = rng.permutation(size) * 0.25 - size * 0.125 + rng.uniform(0, 0.1, size)
    return values.reshape(shape)


def normal(shape, complex_=False):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def products(shape, complex_=False):
    """Factors of size about 1 (products neither vanish nor blow up)."""
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    return x * np.exp(1j * rng.uniform(-1, 1, shape)) if complex_ else x


def jacobian_fwd(f, x):
    """The Jacobian of f at x, column by column with jvp (shape: f's output + x's)."""
    x = np.asarray(x, np.float64)
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        columns.append(np.asarray(jax.jvp(f, (x,), (e.reshape(x.shape),))[1]))
    out_shape = columns[0].shape
    return np.stack(columns, -1).reshape(out_shape + x.shape)


def jacobian_rev(f, x):
    """The Jacobian of f at x, row by row with vjp."""
    x = np.asarray(x, np.float64)
    out, f_vjp = jax.vjp(f, x)
    out_shape = np.shape(out)
    rows = []
    for i in range(int(np.prod(out_shape, dtype=int))):
        e = np.zeros(int(np.prod(out_shape, dtype=int)))
        e[i] = 1.0
        rows.append(np.asarray(f_vjp(e.reshape(out_shape))[0]))
    return np.stack(rows).reshape(out_shape + x.shape)


def assert_jacobians(f, x, expected):
    with _x64():
        np.testing.assert_allclose(jacobian_fwd(f, x), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jacobian_rev(f, x), expected, rtol=1e-12, atol=1e-12)


class _x64:
    """64-bit types on inside the block (hand-derived values compared to 1e-12)."""

    def __enter__(self):
        self.previous = jax.config.read("jax_enable_x64")
        jax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        jax.config.update("jax_enable_x64", self.previous)


# --------------------------------------------------------------------------------------------
# (1) numerical checks, second order, forward and reverse

# (shape, axes): rank 0, no axes, one axis, several, all.
REDUCTION_CASES = [((), ()), ((5,), (0,)), ((3, 4), (1,)), ((2, 3, 4), (0, 2)), ((2, 3), (0, 1))]
REDUCTIONS = {
    "reduce_sum": (lax.reduce_sum, normal),
    "reduce_max": (lax.reduce_max, distinct),
    "reduce_min": (lax.reduce_min, distinct),
    "reduce_prod": (lax.reduce_prod, products),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("shape,axes", REDUCTION_CASES, ids=str)
def test_reduction_check_grads(name, shape, axes):
    fun, sample = REDUCTIONS[name]
    check_grads(lambda x: fun(x, axes), (sample(shape),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod"])
def test_reduction_check_grads_complex(name):
    fun, sample = REDUCTIONS[name]
    check_grads(lambda x: fun(x, (0, 2)), (sample((2, 3, 2), True),), order=2)


@pytest.mark.parametrize(
    "x",
    [np.array([2.0, 0.0, 3.0, -1.5]), np.array([[0.5, 0.0], [0.0, 2.0]]), np.zeros((2, 3))],
    ids=["one zero", "two zeros", "all zeros"],
)
def test_reduce_prod_check_grads_with_zeros(x):
    # The product is a polynomial: its derivatives are smooth through zeros, and the rule
    # (exclusive prefix times suffix products) is exact there.
    axes = tuple(range(x.ndim))
    check_grads(lambda x: lax.reduce_prod(x, axes), (x,), order=2)
    check_grads(lambda x: lax.reduce_prod(x, (x.ndim - 1,)), (x,), order=2)


# (shape, axis): length 1, even and odd lengths (the scan's two cases), both axes of a matrix.
CUMULATIVE_CASES = [((1,), 0), ((6,), 0), ((7,), 0), ((3, 4), 0), ((3, 5), 1), ((2, 3, 2), 1)]
CUMULATIVES = {
    "cumsum": (lax.cumsum, normal),
    "cumprod": (lax.cumprod, products),
    "cummax": (lax.cummax, distinct),
    "cummin": (lax.cummin, distinct),
    "cumlogsumexp": (lax.cumlogsumexp, normal),
}


@pytest.mark.parametrize("name", list(CUMULATIVES))
@pytest.mark.parametrize("shape,axis", CUMULATIVE_CASES, ids=str)
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_check_grads(name, shape, axis, reverse):
    fun, sample = CUMULATIVES[name]
    x = sample(shape)
    check_grads(lambda x: fun(x, axis, reverse), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_check_grads_complex(name, reverse):
    fun, sample = CUMULATIVES[name]
    check_grads(lambda x: fun(x, 1, reverse), (sample((2, 5), True),), order=2)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_check_grads_with_zeros(reverse):
    x = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.5, -1.0, 0.0, 2.0, 1.5]])
    check_grads(lambda x: lax.cumprod(x, 1, reverse), (x,), order=2)


# (lhs shape, rhs shape, dimension_numbers): matrix products, vectors, an outer product, batch
# dimensions anywhere, several contracting dimensions in any order, non-adjacent free ones.
DOT_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((3,), (3, 2), (((0,), (0,)), ((), ()))),
    ((2, 3), (3,), (((1,), (0,)), ((), ()))),
    ((3,), (4,), (((), ()), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((2, 3, 4, 5), (5, 2, 6, 3), (((3, 1), (0, 3)), ((0,), (1,)))),
    ((4, 3, 2), (2, 5, 3, 4), (((0,), (3,)), ((2,), (0,)))),
    ((5, 2, 3, 4, 6), (4, 6, 2, 3, 5), (((4, 3), (1, 0)), ((1, 0), (2, 4)))),
    ((3, 2, 4), (4, 2, 3), (((2, 0), (0, 2)), ((1,), (1,)))),
    ((2, 3), (2, 3), (((), ()), ((0, 1), (0, 1)))),
    # one operand's cotangent an outer product (the other operand has no free dimensions),
    # taken in the order that needs no transpose where one exists
    ((3, 5), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3), (2, 3, 4), (((1,), (1,)), ((0,), (0,)))),
    ((2, 3), (4, 3, 2), (((1,), (1,)), ((0,), (2,)))),
    ((2, 4, 3), (3, 2), (((2,), (0,)), ((0,), (1,)))),
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dimension_numbers", DOT_CASES, ids=str)
def test_dot_general_check_grads(lhs_shape, rhs_shape, dimension_numbers):
    lhs, rhs = normal(lhs_shape), normal(rhs_shape)

    def f(lhs, rhs):
        return lax.dot_general(lhs, rhs, dimension_numbers)

    check_grads(f, (lhs, rhs), order=2, modes=("fwd", "rev"))
    # each operand alone (the other a constant): the rules' one-sided cases
    check_grads(lambda lhs: f(lhs, rhs), (lhs,), order=1)
    check_grads(lambda rhs: f(lhs, rhs), (rhs,), order=1)


def test_dot_general_check_grads_complex():
    lhs, rhs = normal((2, 3, 4), True), normal((2, 4, 5), True)
    check_grads(
        lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (lhs, rhs), order=2
    )


# sort: (operand shapes, dimension, num_keys, number of operands)
SORT_CASES = [
    ((5,), 0, 1, 1),
    ((3, 4), 1, 1, 1),
    ((3, 4), 0, 1, 1),
    ((3, 4), 1, 1, 2),
    ((4, 3), 0, 2, 3),
    ((2, 3, 4), 2, 1, 3),
]


@pytest.mark.parametrize("shape,dimension,num_keys,n", SORT_CASES, ids=str)
def test_sort_check_grads(shape, dimension, num_keys, n):
    operands = tuple(distinct(shape) for _ in range(n))

    def f(*xs):
        return lax.sort(xs, dimension, num_keys=num_keys)

    check_grads(f, operands, order=2, modes=("fwd", "rev"))


def test_sort_check_grads_integer_keys():
    keys = rng.integers(0, 3, (3, 6))  # ties in the first key, broken by the second
    x, y = distinct((3, 6)), distinct((3, 6))

    def f(x, y):
        return lax.sort((keys, x, y), 1, num_keys=2)[1:]

    check_grads(f, (x, y), order=3, modes=("fwd", "rev"))


def test_sort_check_grads_complex_values():
    keys = distinct((4,))
    values = normal((4,), True)
    check_grads(lambda v: lax.sort_key_val(keys, v)[1], (values,), order=2)


# --------------------------------------------------------------------------------------------
# (2) values by hand and at the special points (JAX 0.10.2's)


def test_reduce_max_ties_average():
    x = np.array([1.0, 3.0, 3.0])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.max(x))(x), [0.0, 0.5, 0.5])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.min(x))(-x), [0.0, 0.5, 0.5])
    x = np.array([[1.0, 2.0], [1.0, 1.0]])
    third = 1 / 3
    with _x64():
        g = jax.grad(lambda x: lax.reduce_min(x, (0, 1)))(x)
    np.testing.assert_allclose(g, [[third, 0.0], [third, third]], rtol=1e-15)
    x = np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    expected = np.zeros((2, 2, 3))
    expected[0, 0] = [0.0, 0.5, 0.5]
    expected[1, 1] = third
    assert_jacobians(lambda x: lax.reduce_max(x, (1,)), x, expected)


def test_reduce_max_nan_gives_nan_gradient():
    g = jax.grad(lambda x: lax.reduce_max(x, (0,)))(np.array([1.0, np.nan], np.float32))
    assert np.all(np.isnan(np.asarray(g)))


def test_reduce_max_value():
    x = np.array([[0.5, -1.0, 2.0], [4.0, 3.0, -2.0]])
    t = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _, tangent = jax.jvp(lambda x: lax.reduce_max(x, (1,)), (x,), (t,))
    np.testing.assert_allclose(tangent, [3.0, 4.0])


def test_reduce_prod_by_hand():
    x = np.array([2.0, 3.0, 5.0])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.prod(x))(x), [15.0, 10.0, 6.0])


def test_reduce_prod_with_zeros():
    # one zero: only its own derivative survives (the product of the others); two: none does.
    assert_jacobians(
        lambda x: lax.reduce_prod(x, (0,)), [2.0, 0.0, 3.0, 4.0, 5.0], [0, 120, 0, 0, 0]
    )
    assert_jacobians(lambda x: lax.reduce_prod(x, (0,)), [2.0, 0.0, 3.0, 0.0], [0] * 4)
    x = np.array([[2.0, 0.0], [3.0, 4.0]])
    assert_jacobians(lambda x: lax.reduce_prod(x, (0, 1)), x, np.array([[0.0, 24.0], [0.0, 0.0]]))
    expected = np.zeros((2, 2, 2))
    expected[0] = [[3.0, 0.0], [2.0, 0.0]]
    expected[1] = [[0.0, 4.0], [0.0, 0.0]]
    assert_jacobians(lambda x: lax.reduce_prod(x, (0,)), x, expected)


def test_reduce_prod_hessian_at_a_zero():
    # JAX: hessian(prod)([2., 0., 3., 4.]) has the row and column of the zero: 12, 8, 6.
    x = np.array([2.0, 0.0, 3.0, 4.0])
    with _x64():
        hessian = jacobian_fwd(jax.grad(lambda x: lax.reduce_prod(x, (0,))), x)
    expected = np.zeros((4, 4))
    expected[1] = expected[:, 1] = [12.0, 0.0, 8.0, 6.0]
    np.testing.assert_allclose(hessian, expected)


def test_reduce_prod_complex_with_a_zero():
    x = np.array([1 + 2j, 0j, 3 - 1j])
    g = jax.grad(lambda x: lax.reduce_prod(x, (0,)), holomorphic=True)(x)
    np.testing.assert_allclose(g, [0, 5 + 5j, 0])


def test_cumsum_transpose_is_reverse_cumsum():
    x = np.arange(1.0, 5.0)
    _, f_vjp = jax.vjp(lambda x: lax.cumsum(x, 0), x)
    np.testing.assert_allclose(f_vjp(np.array([1.0, 2.0, 3.0, 4.0]))[0], [10.0, 9.0, 7.0, 4.0])
    _, f_vjp = jax.vjp(lambda x: lax.cumsum(x, 0, reverse=True), x)
    np.testing.assert_allclose(f_vjp(np.array([1.0, 2.0, 3.0, 4.0]))[0], [1.0, 3.0, 6.0, 10.0])


def test_cumprod_with_zeros():
    x = [2.0, 0.0, 3.0, 0.0, 5.0]
    expected = np.zeros((5, 5))
    expected[0, 0], expected[1, 1], expected[2, 1] = 1.0, 2.0, 6.0
    assert_jacobians(lambda x: lax.cumprod(x, 0), x, expected)
    expected = np.zeros((5, 5))
    expected[2, 3], expected[3, 3], expected[4, 4] = 15.0, 5.0, 1.0
    assert_jacobians(lambda x: lax.cumprod(x, 0, reverse=True), x, expected)


def test_cumprod_by_hand():
    x = np.array([2.0, 3.0, 5.0])
    expected = [[1.0, 0.0, 0.0], [3.0, 2.0, 0.0], [15.0, 10.0, 6.0]]
    assert_jacobians(lambda x: lax.cumprod(x, 0), x, expected)


def test_cummax_ties_follow_the_scan_tree():
    # JAX defines these JVPs as those of a parallel prefix scan of pairwise max, which splits a
    # tie's tangent in halves at each level: its values, not a uniform average.
    x = np.full(5, 2.0)
    expected = [
        [1, 0, 0, 0, 0],
        [0.5, 0.5, 0, 0, 0],
        [0.25, 0.25, 0.5, 0, 0],
        [0.25, 0.25, 0.25, 0.25, 0],
        [0.125, 0.125, 0.125, 0.125, 0.5],
    ]
    assert_jacobians(lambda x: lax.cummax(x, 0), x, expected)
    assert_jacobians(lambda x: lax.cummax(x, 0, reverse=True), x, np.flip(np.array(expected)))
    expected = [
        [1, 0, 0, 0, 0],
        [0, 1, 0, 0, 0],
        [0, 0.5, 0.5, 0, 0],
        [0, 0.5, 0.5, 0, 0],
        [0, 0.25, 0.25, 0, 0.5],
    ]
    assert_jacobians(lambda x: lax.cummin(x, 0), [3.0, 1.0, 1.0, 2.0, 1.0], expected)


def test_cummax_by_hand():
    x = [1.0, 3.0, 2.0, 4.0]
    expected = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    assert_jacobians(lambda x: lax.cummax(x, 0), x, expected)


def test_cumlogsumexp_by_hand():
    x = np.array([0.5, -1.0, 2.0, -np.inf])
    out = np.logaddexp.accumulate(x)
    expected = np.tril(np.exp(x[None, :] - out[:, None]))  # d out_i / d x_j = softmax weights
    expected[:, 3] = 0.0
    assert_jacobians(lambda x: lax.cumlogsumexp(x, 0), x, expected)
    with _x64():
        g = jax.grad(lambda x: lax.cumlogsumexp(x, 0).sum())(x[:3])
    np.testing.assert_allclose(g, [1.9928648683336805, 0.22153809707704383, 0.7855970345892758])


def test_dot_by_hand(enable_x64):
    x, W = normal((3, 4)), normal((4, 5))
    ct = normal((3, 5))
    _, f_vjp = jax.vjp(lambda x, W: lax.dot(x, W), x, W)
    ct_x, ct_W = f_vjp(ct)
    np.testing.assert_allclose(ct_x, ct @ W.T, rtol=1e-6)
    np.testing.assert_allclose(ct_W, x.T @ ct, rtol=1e-6)
    t_x, t_W = normal((3, 4)), normal((4, 5))
    _, tangent = jax.jvp(lambda x, W: lax.dot(x, W), (x, W), (t_x, t_W))
    np.testing.assert_allclose(tangent, t_x @ W + x @ t_W, rtol=1e-5)


def test_dot_general_cotangents_in_operand_dtypes(enable_x64):
    a, b = normal((3, 4)).astype(np.float32), normal((4, 5)).astype(np.float32)

    def loss(a, b, preferred):
        return jnp.sum(lax.dot_general(a, b, (((1,), (0,)), ((), ())), None, preferred))

    for preferred in (np.float64, np.float32, bf16, None):
        out = lax.dot_general(a, b, (((1,), (0,)), ((), ())), None, preferred)
        ga, gb = jax.grad(loss, argnums=(0, 1))(a, b, preferred)
        assert (ga.dtype, gb.dtype) == (np.float32, np.float32), preferred
        np.testing.assert_allclose(
            ga, np.ones((3, 5)) @ b.T, rtol=1e-2 if out.dtype == bf16 else 1e-5
        )
    # mixed operand dtypes: each cotangent in its own operand's dtype
    c = normal((4, 5)).astype(bf16)
    ga, gc = jax.grad(loss, argnums=(0, 1))(a, c, None)
    assert (ga.dtype, gc.dtype) == (np.float32, bf16)
    # a real operand times a complex one: the real part of the cotangent
    z = normal((4, 5), True)
    _, f_vjp = jax.vjp(lambda a: lax.dot(a, z), a.astype(np.float64))
    ct = normal((3, 5), True)
    (ga,) = f_vjp(ct)
    assert ga.dtype == np.float64
    np.testing.assert_allclose(ga, (ct @ z.T).real)


def test_sort_gradient_is_the_inverse_permutation():
    x = np.array([3.0, 1.0, 4.0, 2.0])
    g = jax.grad(lambda x: jnp.sum(lax.sort(x) * jnp.arange(4.0)))(x)
    np.testing.assert_allclose(g, [2.0, 0.0, 3.0, 1.0])
    keys = np.array([1, 0, 1, 0])
    v, w = np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0])

    def f(v, w):
        return jnp.sum(lax.sort((keys, v, w), num_keys=2)[2] * jnp.arange(4.0))

    gv, gw = jax.grad(f, argnums=(0, 1))(v, w)
    np.testing.assert_allclose(gv, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(gw, [2.0, 0.0, 3.0, 1.0])


def test_sort_tangents_ride_along():
    x = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    t = np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])
    y, ty = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.ones((2, 3))
    (_, ys), (txs, tys) = jax.jvp(lambda x, y: lax.sort((x, y), 1), (x, y), (t, ty))
    np.testing.assert_allclose(txs, [[20.0, 30.0, 10.0], [50.0, 40.0, 60.0]])
    np.testing.assert_allclose(ys, [[2.0, 3.0, 1.0], [5.0, 4.0, 6.0]])
    np.testing.assert_allclose(tys, np.ones((2, 3)))


# --------------------------------------------------------------------------------------------
# (3) jaxprs against JAX's (JAX 0.10.2's printouts, sharding params left out)


def assert_jaxpr(closed, expected):
    assert str(closed).strip() == textwrap.dedent(expected).strip()


def test_jaxpr_reduce_max_jvp(enable_x64):
    x = np.array([1.0, 3.0, 3.0])
    closed = jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: lax.reduce_max(x, (0,)), (x,), (t,)))(
        x, x
    )
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f64[3] b:f64[3]. let
            c:f64[] = reduce_max[axes=(0,)] a
            d:f64[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] c
            e:bool[3] = eq a d
            f:f64[3] = convert_element_type[new_dtype=float64 weak_type=False] e
            g:f64[] = reduce_sum[axes=(0,) out_sharding=None] f
            h:f64[3] = mul b f
            i:f64[] = reduce_sum[axes=(0,) out_sharding=None] h
            j:f64[] = div i g
          in (c, j) }
        """,
    )


def test_jaxpr_grad_max(enable_x64):
    closed = jax.make_jaxpr(jax.grad(lambda x: jnp.max(x)))(np.array([1.0, 3.0, 3.0]))
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f64[3]. let
            b:f64[] = reduce_max[axes=(0,)] a
            c:f64[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] b
            d:bool[3] = eq a c
            e:f64[3] = convert_element_type[new_dtype=float64 weak_type=False] d
            f:f64[] = reduce_sum[axes=(0,) out_sharding=None] e
            g:f64[] = div 1.0:f64[] f
            h:f64[3] = broadcast_in_dim g
            i:f64[3] = mul h e
          in (i,) }
        """,
    )


def test_jaxpr_grad_cumsum(enable_x64):
    closed = jax.make_jaxpr(jax.grad(lambda x: lax.cumsum(x, 0).sum()))(np.ones(3))
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f64[3]. let
            b:f64[3] = cumsum[axis=0 reverse=False] a
            _:f64[] = reduce_sum[axes=(0,) out_sharding=None] b
            c:f64[3] = broadcast_in_dim 1.0:f64[]
            d:f64[3] = cumsum[axis=0 reverse=True] c
          in (d,) }
        """,
    )


def test_jaxpr_grad_matmul():
    x, W = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    closed = jax.make_jaxpr(jax.grad(lambda x, W: jnp.sum(jnp.dot(x, W)), argnums=(0, 1)))(x, W)
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f32[3,4] b:f32[4,5]. let
            c:f32[3,5] = dot_general[
              dimension_numbers=(([1], [0]), ([], []))
              preferred_element_type=float32
            ] a b
            _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
            d:f32[3,5] = broadcast_in_dim 1.0:f32[]
            e:f32[5,4] = dot_general[
              dimension_numbers=(([0], [0]), ([], []))
              preferred_element_type=float32
            ] d a
            f:f32[4,5] = transpose[permutation=(1, 0)] e
            g:f32[3,4] = dot_general[
              dimension_numbers=(([1], [1]), ([], []))
              preferred_element_type=float32
            ] d b
          in (g, f) }
        """,
    )


def test_jaxpr_grad_dot_general_batch_and_contracting_dims():
    x, W = np.ones((2, 3, 4, 5), np.float32), np.ones((5, 2, 6, 3), np.float32)

    def f(x, W):
        return jnp.sum(lax.dot_general(x, W, (((3, 1), (0, 3)), ((0,), (1,)))))

    assert_jaxpr(
        jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(x, W),
        """
        { lambda ; a:f32[2,3,4,5] b:f32[5,2,6,3]. let
            c:f32[2,4,6] = dot_general[dimension_numbers=(([3, 1], [0, 3]), ([0], [1]))] a
              b
            _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
            d:f32[2,4,6] = broadcast_in_dim 1.0:f32[]
            e:f32[2,6,3,5] = dot_general[dimension_numbers=(([1], [2]), ([0], [0]))] d a
            f:f32[5,2,6,3] = transpose[permutation=(3, 0, 1, 2)] e
            g:f32[2,4,5,3] = dot_general[dimension_numbers=(([2], [2]), ([0], [1]))] d b
            h:f32[2,3,4,5] = transpose[permutation=(0, 3, 1, 2)] g
          in (h, f) }
        """,
    )


def test_jaxpr_grad_vector_matrix_product_has_no_transpose():
    """The cotangent of W in `dot(x, W)` for a vector x is an outer product, taken as
    `dot_general(x, ct)` in W's layout (JAX takes `dot_general(ct, x)` and transposes it,
    which XLA CPU writes twice when it is a result)."""
    x, W = np.ones(4, np.float32), np.ones((4, 5), np.float32)
    closed = jax.make_jaxpr(jax.grad(lambda x, W: jnp.sum(jnp.dot(x, W)), argnums=(0, 1)))(x, W)
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f32[4] b:f32[4,5]. let
            c:f32[5] = dot_general[
              dimension_numbers=(([0], [0]), ([], []))
              preferred_element_type=float32
            ] a b
            _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
            d:f32[5] = broadcast_in_dim 1.0:f32[]
            e:f32[4,5] = dot_general[
              dimension_numbers=(([], []), ([], []))
              preferred_element_type=float32
            ] a d
            f:f32[4] = dot_general[
              dimension_numbers=(([0], [1]), ([], []))
              preferred_element_type=float32
            ] d b
          in (f, e) }
        """,
    )
    x, W, ct = normal(4), normal((4, 5)), normal(5)
    _, f_vjp = jax.vjp(lambda x, W: lax.dot(x, W), x, W)
    ct_x, ct_W = f_vjp(ct)
    np.testing.assert_allclose(ct_W, np.outer(x, ct), rtol=1e-6)
    # atol: float32 sums that cancel (the inputs depend on which tests ran before, under xdist)
    np.testing.assert_allclose(ct_x, W @ ct, rtol=1e-6, atol=1e-6)


def test_jaxpr_dot_general_preferred_element_type():
    x, W = np.ones((3, 4), bf16), np.ones((4, 5), bf16)

    def f(x, W):
        return lax.dot_general(x, W, (((1,), (0,)), ((), ())), preferred_element_type=np.float32)

    assert_jaxpr(
        jax.make_jaxpr(jax.grad(lambda x, W: jnp.sum(f(x, W)), argnums=(0, 1)))(x, W),
        """
        { lambda ; a:bf16[3,4] b:bf16[4,5]. let
            c:f32[3,5] = dot_general[
              dimension_numbers=(([1], [0]), ([], []))
              preferred_element_type=float32
            ] a b
            _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
            d:f32[3,5] = broadcast_in_dim 1.0:f32[]
            e:f32[5,4] = dot_general[
              dimension_numbers=(([0], [0]), ([], []))
              preferred_element_type=float32
            ] d a
            f:f32[4,5] = transpose[permutation=(1, 0)] e
            g:bf16[4,5] = convert_element_type[new_dtype=bfloat16 weak_type=False] f
            h:f32[3,4] = dot_general[
              dimension_numbers=(([1], [1]), ([], []))
              preferred_element_type=float32
            ] d b
            i:bf16[3,4] = convert_element_type[new_dtype=bfloat16 weak_type=False] h
          in (i, g) }
        """,
    )
    assert_jaxpr(
        jax.make_jaxpr(lambda x, W, t, u: jax.jvp(f, (x, W), (t, u)))(x, W, x, W),
        """
        { lambda ; a:bf16[3,4] b:bf16[4,5] c:bf16[3,4] d:bf16[4,5]. let
            e:f32[3,5] = dot_general[
              dimension_numbers=(([1], [0]), ([], []))
              preferred_element_type=float32
            ] a b
            f:f32[3,5] = dot_general[
              dimension_numbers=(([1], [0]), ([], []))
              preferred_element_type=float32
            ] c b
            g:f32[3,5] = dot_general[
              dimension_numbers=(([1], [0]), ([], []))
              preferred_element_type=float32
            ] a d
            h:f32[3,5] = add_any f g
          in (e, h) }
        """,
    )


def test_jaxpr_sort_jvp():
    # JAX gathers the tangent with the permutation of an iota sorted along; tracejit sorts it
    # along with the keys instead (the same permutation, and linear in the tangent).
    x = np.ones((2, 3), np.float32)
    closed = jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: lax.sort(x), (x,), (t,)))(x, x)
    assert_jaxpr(
        closed,
        """
        { lambda ; a:f32[2,3] b:f32[2,3]. let
            c:f32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a
            _:f32[2,3] d:f32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a b
          in (c, d) }
        """,
    )


# --------------------------------------------------------------------------------------------
# (4) the non-differentiable primitives: zero tangents


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_have_zero_tangents(name):
    fun = getattr(lax, name)
    x = np.array([[1.0, 3.0, 2.0], [0.0, -1.0, 4.0]], np.float32)
    out, tangent = jax.jvp(lambda x: fun(x, 1, np.int32), (x,), (np.ones_like(x),))
    assert tangent.dtype == dtypes.float0 and tangent.shape == out.shape == (2,)
    # an index times the sum: only the sum is differentiated (JAX: [1., 1., 1.] at argmax 1)
    g = jax.grad(lambda x: convert_element_type(fun(x, 0, np.int32), np.float32) * jnp.sum(x))(x[0])
    np.testing.assert_allclose(g, [1.0, 1.0, 1.0] if name == "argmax" else [0.0, 0.0, 0.0])


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or", "reduce_xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.bool_])
def test_bitwise_reductions_have_zero_tangents(name, dtype):
    fun = getattr(lax, name)
    x = np.array([[1, 0, 1], [1, 1, 1]], dtype)
    t = np.zeros(x.shape, dtypes.float0)
    out, tangent = jax.jvp(lambda x: fun(x, (1,)), (x,), (t,))
    assert tangent.dtype == dtypes.float0 and tangent.shape == out.shape
    # the rule itself, as a trace that reaches it with a symbolic zero would call it
    out, tangent = ad.jvp_rules[getattr(lax, name + "_p")](
        (x,), (ad.Zero.from_primal_value(x),), axes=(1,)
    )
    assert type(tangent) is ad.Zero


def test_integer_operands_have_zero_tangents():
    i = np.array([3, 1, 2], np.int32)
    for fun in (
        lambda i: lax.reduce_max(i, (0,)),
        lambda i: lax.reduce_prod(i, (0,)),
        lambda i: lax.cummax(i, 0),
        lambda i: lax.cumprod(i, 0),
        lambda i: lax.sort(i),
    ):
        _, tangent = jax.jvp(fun, (i,), (np.zeros(3, dtypes.float0),))
        assert tangent.dtype == dtypes.float0


def test_sort_keys_without_tangent_leave_values_tangent_only():
    keys, values = np.array([2.0, 0.0, 1.0]), np.array([1.0, 2.0, 3.0])
    _, (t_keys, t_values) = jax.jvp(
        lambda v: lax.sort_key_val(keys, v), (values,), (np.array([1.0, 10.0, 100.0]),)
    )
    np.testing.assert_allclose(t_keys, 0.0)
    np.testing.assert_allclose(t_values, [10.0, 100.0, 1.0])


# --------------------------------------------------------------------------------------------
# (5) transposition of the linear primitives: the adjoint identity, and the transpose of the
# transpose


@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_transpose_adjoint(reverse):
    x = normal((3, 5))
    check_grads(lambda x: lax.cumsum(x, 1, reverse), (x,), order=3, modes=("rev",))


@pytest.mark.parametrize("lhs_shape,rhs_shape,dimension_numbers", DOT_CASES[7:], ids=str)
def test_dot_general_transposes_have_operand_layout(
    lhs_shape, rhs_shape, dimension_numbers, enable_x64
):
    lhs, rhs = normal(lhs_shape), normal(rhs_shape)
    out, f_vjp = jax.vjp(lambda a, b: lax.dot_general(a, b, dimension_numbers), lhs, rhs)
    ct = normal(out.shape)
    ct_lhs, ct_rhs = f_vjp(ct)
    assert ct_lhs.shape == lhs_shape and ct_rhs.shape == rhs_shape
    # <ct, lhs . rhs> is the same contraction whichever operand's cotangent it is read through
    inner = float(np.sum(np.asarray(ct) * np.asarray(out)))
    np.testing.assert_allclose(np.sum(ct_lhs * lhs), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(ct_rhs * rhs), inner, rtol=1e-10)


def test_sort_transpose_of_transpose():
    keys = distinct((2, 5))
    v = normal((2, 5))

    def permute(v):
        return lax.sort_key_val(keys, v, 1)[1]

    # third order in reverse mode transposes the transposed sort (sorted by the permutation)
    check_grads(permute, (v,), order=3, modes=("rev",))
    _, f_vjp = jax.vjp(permute, v)
    ct = normal((2, 5))
    np.testing.assert_allclose(f_vjp(permute(ct))[0], ct)


# --------------------------------------------------------------------------------------------
# the MLP: O(layers) residuals in reverse mode


def _mlp_loss(params, inputs, targets):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return jnp.sum((outputs - targets) ** 2)


def _residual_count(num_layers, width=4, batch=3):
    params = [
        (normal((width, width)).astype(np.float32), normal((width,)).astype(np.float32))
        for _ in range(num_layers)
    ]
    inputs = normal((batch, width)).astype(np.float32)
    targets = normal((batch, width)).astype(np.float32)
    leaves, tree = tree_flatten(params)

    def loss(*leaves):
        return [_mlp_loss(tree_unflatten(tree, leaves), inputs, targets)]

    arrays = [jnp.asarray(leaf) for leaf in leaves]
    _, linear = linearize_flat(loss, arrays, DebugInfo(loss, "linearize"))
    return len(linear.consts)


def test_linearized_mlp_has_linearly_many_residuals():
    r2, r4, r8 = (_residual_count(n) for n in (2, 4, 8))
    # equal growth per layer: 4 more layers add twice what 2 more layers add
    assert r8 - r4 == 2 * (r4 - r2), (r2, r4, r8)
    assert (r4 - r2) // 2 <= 4, (r2, r4, r8)  # a few residuals per layer


def test_mlp_gradient_matches_backprop():
    params = [(normal((4, 5)), normal((5,))), (normal((5, 3)), normal((3,)))]
    inputs, targets = normal((2, 4)), normal((2, 3))
    with _x64():
        grads = jax.grad(_mlp_loss)(params, inputs, targets)
    # by hand
    (W1, b1), (W2, b2) = params
    h = np.tanh(inputs @ W1 + b1)
    out = h @ W2 + b2
    d_out = 2 * (out - targets)
    d_h = d_out @ W2.T * (1 - h**2)
    expected = [(inputs.T @ d_h, d_h.sum(0)), (h.T @ d_out, d_out.sum(0))]
    for (gW, gb), (eW, eb) in zip(grads, expected, strict=True):
        np.testing.assert_allclose(gW, eW, rtol=1e-10)
        np.testing.assert_allclose(gb, eb, rtol=1e-10)
