"""Derivatives of the binary elementwise primitives: numerical checks to second order in both
modes, derivatives by hand (JAX 0.10.2's values at the special points: pow at x = 0, max/min
ties and nans), zero tangents of the comparisons and bitwise operations, transposition of the
linear ones, jaxpr printouts against JAX's, and the seed MLP's gradient against a hand-written
backprop."""

import itertools

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src import dtypes
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.transpose import UndefinedPrimal, transpose_rules
from tracejit._src.test_util import check_grads
from tracejit.lax import reduce_sum, select_n

rng = np.random.default_rng(0)

# (x shape, y shape): equal shapes, rank-0 operands either side, size-1 dims both sides.
SHAPES = [((), ()), ((3,), (3,)), ((2, 3), ()), ((), (2, 3)), ((2, 1), (1, 3))]


def uniform(shape, low, high):
    return rng.uniform(low, high, shape)


def away_from_zero(shape, low=0.5, high=2.0):
    return uniform(shape, low, high) * rng.choice([-1.0, 1.0], shape)


def separated(x_shape, y_shape):
    """Operands at least 0.3 apart wherever they meet (no max/min ties)."""
    while True:
        x, y = uniform(x_shape, -2, 2), uniform(y_shape, -2, 2)
        if np.all(np.abs(x - y) >= 0.3):
            return x, y


def rem_operands(x_shape, y_shape):
    """x / y at least 0.08 from an integer (rem's kinks)."""
    y = away_from_zero(y_shape, 1.5, 2.5)
    out_shape = np.broadcast_shapes(x_shape, y_shape)
    if x_shape == out_shape:
        return (rng.integers(-2, 3, out_shape) + uniform(out_shape, 0.2, 0.8)) * y, y
    return away_from_zero(x_shape, 0.2, 1.2), y  # |x / y| in (0.08, 0.8)


# name -> (function, operand sampler): operands inside the domain, away from the kinks.
GRAD_OPS = {
    "add": (lax.add, lambda xs, ys: (uniform(xs, -2, 2), uniform(ys, -2, 2))),
    "sub": (lax.sub, lambda xs, ys: (uniform(xs, -2, 2), uniform(ys, -2, 2))),
    "mul": (lax.mul, lambda xs, ys: (uniform(xs, -2, 2), uniform(ys, -2, 2))),
    "div": (lax.div, lambda xs, ys: (uniform(xs, -2, 2), away_from_zero(ys))),
    "rem": (lax.rem, rem_operands),
    "pow": (lax.pow, lambda xs, ys: (uniform(xs, 0.5, 2.0), uniform(ys, -1.5, 1.5))),
    "max": (lax.max, separated),
    "min": (lax.min, separated),
    "atan2": (lax.atan2, lambda xs, ys: (away_from_zero(xs), away_from_zero(ys))),
}


@pytest.mark.parametrize("name", list(GRAD_OPS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_check_grads(name, shapes):
    fun, sample = GRAD_OPS[name]
    x, y = sample(*shapes)
    check_grads(fun, (x, y), order=2, modes=("fwd", "rev"))


def test_rem_operands_avoid_kinks():
    for shapes in SHAPES:
        x, y = rem_operands(*shapes)
        q = np.abs(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)) / y)
        assert np.all(np.abs(q - np.round(q)) >= 0.08), (shapes, q)


def complex_sample(shape, low=0.5, high=2.0):
    return uniform(shape, low, high) + 1j * uniform(shape, -1.0, 1.0)


# Holomorphic in both operands: forward mode is the complex derivative and reverse mode its
# (unconjugated) transpose.
COMPLEX_OPS = {
    "add": lax.add,
    "sub": lax.sub,
    "mul": lax.mul,
    "div": lax.div,
    "pow": lax.pow,  # the base's real part is positive: away from log's branch cut
    "atan2": lax.atan2,
}


@pytest.mark.parametrize("name", list(COMPLEX_OPS))
@pytest.mark.parametrize("shapes", [((), ()), ((2, 3), ()), ((2, 1), (1, 3))], ids=str)
def test_check_grads_complex(name, shapes):
    x, y = complex_sample(shapes[0]), complex_sample(shapes[1])
    check_grads(COMPLEX_OPS[name], (x, y), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("shapes", [((), ()), ((3,), ()), ((2, 3), (2, 3)), ((), (2, 1))], ids=str)
def test_check_grads_pow_integer_exponent(shapes):
    x = away_from_zero(shapes[0])  # negative bases are fine with integer exponents
    y = rng.integers(-3, 4, shapes[1]).astype(np.int32)
    check_grads(lambda x: lax.pow(x, y), (x,), order=2, modes=("fwd", "rev"))


def test_check_grads_pow_negative_base_integral_float_exponent():
    x = np.array([-2.0, -0.5, 1.5])
    check_grads(lambda x: lax.pow(x, np.full(3, 3.0)), (x,), order=2, modes=("fwd", "rev"))


# --- values by hand ---------------------------------------------------------------------------


def assert_grads(f, args, expected, argnums=(0, 1)):
    got = jax.grad(f, argnums)(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12, atol=0)


@pytest.fixture
def x64(enable_x64):
    with np.errstate(all="ignore"):  # eager mul of 0 * inf warns in NumPy, not in JAX
        yield


@pytest.mark.usefixtures("x64")
def test_values_by_hand():
    x, y = 1.3, -0.7
    assert_grads(lax.sub, (x, y), (1.0, -1.0))
    assert_grads(lax.div, (x, y), (1 / y, -x / y**2))
    assert_grads(lax.pow, (x, y), (y * x ** (y - 1), np.log(x) * x**y))
    assert_grads(lax.atan2, (x, y), (y / (x * x + y * y), -x / (x * x + y * y)))
    assert_grads(lax.max, (x, y), (1.0, 0.0))
    assert_grads(lax.min, (x, y), (0.0, 1.0))
    # rem(x, y) = x - y * trunc(x / y)
    assert_grads(lax.rem, (5.5, 2.0), (1.0, -2.0))
    assert_grads(lax.rem, (-5.5, 2.0), (1.0, 2.0))
    assert_grads(lax.rem, (5.5, -2.0), (1.0, 2.0))


@pytest.mark.usefixtures("x64")
def test_values_by_hand_broadcasting():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = 2.0
    gx, gy = jax.grad(lambda x, y: reduce_sum(lax.div(x, y), (0, 1)), (0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx), np.full((2, 3), 0.5))
    np.testing.assert_allclose(np.asarray(gy), -x.sum() / 4)
    col = np.array([[1.0], [3.0]])
    gx, gy = jax.grad(lambda x, y: reduce_sum(lax.sub(x, y), (0, 1)), (0, 1))(x, col)
    assert gx.shape == (2, 3) and gy.shape == (2, 1)
    np.testing.assert_allclose(np.asarray(gy), np.full((2, 1), -3.0))


@pytest.mark.usefixtures("x64")
def test_pow_special_points_match_jax():
    def d_base(y):
        return jax.grad(lambda x: lax.pow(x, y))

    def d_exp(x):
        return jax.grad(lambda y: lax.pow(x, y))

    # d/dy x**y = log(x) x**y, taken as 0 at x = 0 (JAX: jax.grad(lambda y: 0.**y)(2.) == 0)
    assert float(d_exp(0.0)(2.0)) == 0.0
    assert float(d_exp(0.0)(0.0)) == 0.0
    assert np.isnan(float(d_exp(0.0)(-1.0)))  # 0 * inf
    assert np.isnan(float(d_exp(-2.0)(3.0)))  # log of a negative base
    # d/dx x**y = y x**(y-1), float exponent
    assert float(d_base(2.0)(0.0)) == 0.0
    assert float(d_base(1.0)(0.0)) == 1.0
    assert np.isnan(float(d_base(0.0)(0.0)))  # 0 * inf, as JAX
    assert float(d_base(0.5)(0.0)) == np.inf
    assert float(d_base(3.0)(-2.0)) == 12.0
    # integer exponents: y = 0 gives 0, even at x = 0
    assert float(d_base(3)(2.0)) == 12.0
    assert float(d_base(0)(0.0)) == 0.0
    assert float(d_base(1)(0.0)) == 1.0
    assert float(d_base(-1)(0.0)) == -np.inf


@pytest.mark.usefixtures("x64")
def test_pow_integer_exponent_has_no_tangent():
    x, y = np.array([1.5, -2.0]), np.array([2, 3], np.int32)
    out, f_vjp = jax.vjp(lax.pow, x, y)
    ct_x, ct_y = f_vjp(np.ones(2))
    np.testing.assert_allclose(np.asarray(out), x**y)
    np.testing.assert_allclose(np.asarray(ct_x), y * x ** (y - 1))
    assert ct_y.dtype == dtypes.float0 and ct_y.shape == (2,)
    _, t = jax.jvp(lax.pow, (x, y), (np.ones(2), np.zeros(2, dtypes.float0)))
    np.testing.assert_allclose(np.asarray(t), y * x ** (y - 1))


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("fun", [lax.max, lax.min], ids=["max", "min"])
def test_max_min_ties_and_nans_match_jax(fun):
    assert_grads(fun, (1.0, 1.0), (0.5, 0.5))  # a tie splits the derivative evenly
    assert float(jax.grad(lambda x: fun(x, x))(1.0)) == 1.0
    assert_grads(fun, (np.nan, 1.0), (0.0, 0.0))  # a nan result has no derivative
    assert_grads(fun, (1.0, np.nan), (0.0, 0.0))
    assert_grads(fun, (np.inf, np.inf), (0.5, 0.5))
    x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
    gx, gy = jax.grad(lambda x, y: reduce_sum(fun(x, y), (0,)), (0, 1))(x, y)
    expected = np.array([0.0, 0.5, 1.0]) if fun is lax.max else np.array([1.0, 0.5, 0.0])
    np.testing.assert_allclose(np.asarray(gx), expected)
    np.testing.assert_allclose(np.asarray(gy), 1.0 - expected)
    _, t = jax.jvp(lambda x: fun(x, 1 + 1j), (1 + 1j,), (1.0 + 0j,))  # complex ties too
    assert complex(t) == 0.5


@pytest.mark.usefixtures("x64")
def test_special_points_of_div_rem_atan2_match_jax():
    assert_grads(lax.div, (1.0, 0.0), (np.inf, -np.inf))
    assert_grads(lax.rem, (1.0, 0.0), (1.0, -np.inf))
    gx, gy = jax.grad(lax.atan2, (0, 1))(0.0, 0.0)
    assert np.isnan(float(gx)) and np.isnan(float(gy))


# --- non-differentiable primitives ------------------------------------------------------------

ZERO_TANGENT_FLOAT = {
    lax.eq: np.equal,
    lax.ne: np.not_equal,
    lax.lt: np.less,
    lax.le: np.less_equal,
    lax.gt: np.greater,
    lax.ge: np.greater_equal,
}
ZERO_TANGENT_INT = [
    lax.bitwise_and,
    lax.bitwise_or,
    lax.bitwise_xor,
    lax.shift_left,
    lax.shift_right_logical,
    lax.shift_right_arithmetic,
]
ZERO_TANGENT_PRIMITIVES = [
    lax.eq_p, lax.ne_p, lax.lt_p, lax.le_p, lax.gt_p, lax.ge_p, lax.and_p, lax.or_p, lax.xor_p,
    lax.shift_left_p, lax.shift_right_logical_p, lax.shift_right_arithmetic_p,
]  # fmt: skip


@pytest.mark.parametrize("fun", list(ZERO_TANGENT_FLOAT), ids=lambda f: f.__name__)
def test_comparisons_have_zero_tangents(fun):
    x, y = np.array([1.0, 2.0, 3.0], np.float32), np.array([2.0, 2.0, 2.0], np.float32)
    out, t = jax.jvp(fun, (x, y), (np.ones(3, np.float32), np.ones(3, np.float32)))
    np.testing.assert_array_equal(np.asarray(out), ZERO_TANGENT_FLOAT[fun](x, y))
    assert t.dtype == dtypes.float0 and t.shape == (3,)
    # through a select on the comparison: d/dx of x*x where it holds, of 3x elsewhere
    g = jax.grad(
        lambda x: reduce_sum(select_n(fun(x, y), lax.mul(x, np.float32(3)), lax.mul(x, x)), (0,))
    )(x)
    np.testing.assert_allclose(np.asarray(g), np.where(ZERO_TANGENT_FLOAT[fun](x, y), 2 * x, 3))


@pytest.mark.parametrize("fun", ZERO_TANGENT_INT, ids=lambda f: f.__name__)
def test_bitwise_and_shifts_have_zero_tangents(fun):
    x, y = np.array([5, 6, 7], np.int32), np.array([1, 2, 3], np.int32)
    zeros = np.zeros(3, dtypes.float0)
    out, t = jax.jvp(fun, (x, y), (zeros, zeros))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(fun(x, y)))
    assert t.dtype == dtypes.float0 and t.shape == (3,)
    ct_x, ct_y = jax.vjp(fun, x, y)[1](np.zeros(3, dtypes.float0))
    assert ct_x.dtype == ct_y.dtype == dtypes.float0


@pytest.mark.parametrize("primitive", ZERO_TANGENT_PRIMITIVES, ids=lambda p: p.name)
def test_zero_tangent_rules_registered(primitive):
    x = np.array([1, 2], np.int32) if primitive.name not in "eq ne lt le gt ge" else np.ones(2)
    _, t = ad.jvp_rules[primitive]((x, x), (np.ones(2), np.ones(2)))
    assert type(t) is ad.Zero and t.aval.dtype == dtypes.float0 and t.aval.shape == (2,)


def test_nextafter_is_not_differentiable_as_in_jax():
    x = np.array([1.0, 2.0], np.float32)
    with pytest.raises(NotImplementedError, match="nextafter"):
        jax.jvp(lambda x: lax.nextafter(x, x), (x,), (x,))
    one, two = np.float32(1), np.float32(2)  # constants, no tangent: fine
    g = jax.grad(lambda x: lax.mul(x, lax.nextafter(one, two)))(np.float32(3))
    assert float(g) == float(np.nextafter(one, two))


# --- transposition of the linear primitives -----------------------------------------------------


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul_left", "mul_right", "div"])
def test_linear_transposes(name, shapes):
    x, y = uniform(shapes[0], -2, 2), away_from_zero(shapes[1])
    fun = {
        "add": lambda x, y: lax.add(x, y),
        "sub": lambda x, y: lax.sub(x, y),
        "mul_left": lambda x: lax.mul(x, y),
        "mul_right": lambda y: lax.mul(x, y),
        "div": lambda x: lax.div(x, y),
    }[name]
    args = (x,) if name in ("mul_left", "div") else (y,) if name == "mul_right" else (x, y)
    check_grads(fun, args, order=1, modes=("rev",))


@pytest.mark.usefixtures("x64")
def test_transpose_rules_directly():
    x, y, ct = np.arange(6.0).reshape(2, 3), np.float64(2.0), np.ones((2, 3))
    x_u, y_u = UndefinedPrimal(ad.get_aval(x)), UndefinedPrimal(ad.get_aval(y))
    ct_x, none = transpose_rules[lax.div_p](ct, x_u, y)
    assert none is None
    np.testing.assert_allclose(np.asarray(ct_x), np.full((2, 3), 0.5))
    with pytest.raises(TypeError, match="numerator"):
        transpose_rules[lax.div_p](ct, x, y_u)
    ct_x, ct_y = transpose_rules[lax.sub_p](ct, x_u, y_u)
    np.testing.assert_allclose(np.asarray(ct_x), ct)
    assert ct_y.shape == () and float(ct_y) == -6.0


# --- jaxprs, against JAX 0.10.2's (less its out_sharding params) -----------------------------

_X = np.array([2.0, 3.0], np.float32)
_Y = np.array([1.5, 2.0], np.float32)
_S = np.float32(2.0)


def _jvp2(f):
    return lambda x, y, t, u: jax.jvp(f, (x, y), (t, u))


def _grad2(f):
    return jax.grad(lambda x, y: reduce_sum(f(x, y), (0,)), (0, 1))


JAXPR_CASES = {
    "sub_grad_scalar": (_grad2(lax.sub), (_X, _S)),
    "sub_jvp": (_jvp2(lax.sub), (_X, _S, _X, _S)),
    "div_grad_scalar": (_grad2(lax.div), (_X, _S)),
    "div_jvp": (_jvp2(lax.div), (_X, _Y, _X, _Y)),
    "max_jvp_scalar": (_jvp2(lax.max), (_X, _S, _X, _S)),
    "min_grad": (_grad2(lax.min), (_X, _Y)),
    "rem_jvp_scalar": (_jvp2(lax.rem), (_S, _Y, _S, _Y)),
    "atan2_grad": (_grad2(lax.atan2), (_X, _Y)),
    "pow_jvp": (_jvp2(lax.pow), (_X, _Y, _X, _Y)),
    "pow_jvp_scalar": (_jvp2(lax.pow), (_X, _S, _X, _S)),
    "pow_grad": (_grad2(lax.pow), (_X, _Y)),
}

JAXPRS = {
    "sub_grad_scalar": """\
{ lambda ; a:f32[2] b:f32[]. let
    c:f32[2] = sub a b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[2] = broadcast_in_dim 1.0:f32[]
    e:f32[2] = neg d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (d, f) }
""",
    "sub_jvp": """\
{ lambda ; a:f32[2] b:f32[] c:f32[2] d:f32[]. let
    e:f32[2] = sub a b
    f:f32[2] = sub c d
  in (e, f) }
""",
    "div_grad_scalar": """\
{ lambda ; a:f32[2] b:f32[]. let
    c:f32[2] = div a b
    d:f32[] = integer_pow[y=-2] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[2] = broadcast_in_dim 1.0:f32[]
    f:f32[2] = mul e d
    g:f32[2] = mul f a
    h:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    i:f32[] = neg h
    j:f32[2] = div e b
  in (j, i) }
""",
    "div_jvp": """\
{ lambda ; a:f32[2] b:f32[2] c:f32[2] d:f32[2]. let
    e:f32[2] = div a b
    f:f32[2] = div c b
    g:f32[2] = neg d
    h:f32[2] = mul g a
    i:f32[2] = integer_pow[y=-2] b
    j:f32[2] = mul h i
    k:f32[2] = add_any f j
  in (e, k) }
""",
    "max_jvp_scalar": """\
{ lambda ; a:f32[2] b:f32[] c:f32[2] d:f32[]. let
    e:f32[2] = max a b
    f:bool[2] = eq a e
    g:f32[2] = broadcast_in_dim 1.0:f32[]
    h:f32[2] = broadcast_in_dim 0.0:f32[]
    i:f32[2] = select_n f h g
    j:bool[2] = eq b e
    k:f32[2] = broadcast_in_dim 2.0:f32[]
    l:f32[2] = broadcast_in_dim 1.0:f32[]
    m:f32[2] = select_n j l k
    n:f32[2] = div i m
    o:f32[2] = mul c n
    p:bool[2] = eq b e
    q:f32[2] = broadcast_in_dim 1.0:f32[]
    r:f32[2] = broadcast_in_dim 0.0:f32[]
    s:f32[2] = select_n p r q
    t:bool[2] = eq a e
    u:f32[2] = broadcast_in_dim 2.0:f32[]
    v:f32[2] = broadcast_in_dim 1.0:f32[]
    w:f32[2] = select_n t v u
    x:f32[2] = div s w
    y:f32[2] = mul d x
    z:f32[2] = add_any o y
  in (e, z) }
""",
    "min_grad": """\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = min a b
    d:bool[2] = eq a c
    e:f32[2] = broadcast_in_dim 1.0:f32[]
    f:f32[2] = broadcast_in_dim 0.0:f32[]
    g:f32[2] = select_n d f e
    h:bool[2] = eq b c
    i:f32[2] = broadcast_in_dim 2.0:f32[]
    j:f32[2] = broadcast_in_dim 1.0:f32[]
    k:f32[2] = select_n h j i
    l:f32[2] = div g k
    m:bool[2] = eq b c
    n:f32[2] = broadcast_in_dim 1.0:f32[]
    o:f32[2] = broadcast_in_dim 0.0:f32[]
    p:f32[2] = select_n m o n
    q:bool[2] = eq a c
    r:f32[2] = broadcast_in_dim 2.0:f32[]
    s:f32[2] = broadcast_in_dim 1.0:f32[]
    t:f32[2] = select_n q s r
    u:f32[2] = div p t
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    v:f32[2] = broadcast_in_dim 1.0:f32[]
    w:f32[2] = mul v u
    x:f32[2] = mul v l
  in (x, w) }
""",
    "rem_jvp_scalar": """\
{ lambda ; a:f32[] b:f32[2] c:f32[] d:f32[2]. let
    e:f32[2] = rem a b
    f:f32[2] = broadcast_in_dim c
    g:f32[2] = neg d
    h:f32[2] = div a b
    i:f32[2] = sign h
    j:f32[2] = div a b
    k:f32[2] = abs j
    l:f32[2] = floor k
    m:f32[2] = mul i l
    n:f32[2] = mul g m
    o:f32[2] = add_any f n
  in (e, o) }
""",
    "atan2_grad": """\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = atan2 a b
    d:f32[2] = square a
    e:f32[2] = square b
    f:f32[2] = add d e
    g:f32[2] = div b f
    h:f32[2] = neg a
    i:f32[2] = square a
    j:f32[2] = square b
    k:f32[2] = add i j
    l:f32[2] = div h k
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    m:f32[2] = broadcast_in_dim 1.0:f32[]
    n:f32[2] = mul m l
    o:f32[2] = mul m g
  in (o, n) }
""",
    "pow_jvp": """\
{ lambda ; a:f32[2] b:f32[2] c:f32[2] d:f32[2]. let
    e:f32[2] = pow a b
    f:f32[2] = broadcast_in_dim 1.0:f32[]
    g:f32[2] = sub b f
    h:f32[2] = pow a g
    i:f32[2] = mul b h
    j:f32[2] = mul c i
    k:bool[2] = eq a 0.0:f32[]
    l:f32[2] = broadcast_in_dim 1.0:f32[]
    m:f32[2] = select_n k a l
    n:f32[2] = log m
    o:f32[2] = mul n e
    p:f32[2] = mul d o
    q:f32[2] = add_any j p
  in (e, q) }
""",
    "pow_jvp_scalar": """\
{ lambda ; a:f32[2] b:f32[] c:f32[2] d:f32[]. let
    e:f32[2] = pow a b
    f:f32[] = sub b 1.0:f32[]
    g:f32[2] = pow a f
    h:f32[2] = mul b g
    i:f32[2] = mul c h
    j:bool[2] = eq a 0.0:f32[]
    k:f32[2] = broadcast_in_dim 1.0:f32[]
    l:f32[2] = select_n j a k
    m:f32[2] = log l
    n:f32[2] = mul m e
    o:f32[2] = mul d n
    p:f32[2] = add_any i o
  in (e, p) }
""",
    "pow_grad": """\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = pow a b
    d:f32[2] = broadcast_in_dim 1.0:f32[]
    e:f32[2] = sub b d
    f:f32[2] = pow a e
    g:f32[2] = mul b f
    h:bool[2] = eq a 0.0:f32[]
    i:f32[2] = broadcast_in_dim 1.0:f32[]
    j:f32[2] = select_n h a i
    k:f32[2] = log j
    l:f32[2] = mul k c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    m:f32[2] = broadcast_in_dim 1.0:f32[]
    n:f32[2] = mul m l
    o:f32[2] = mul m g
  in (o, n) }
""",
}


@pytest.mark.parametrize("name", list(JAXPR_CASES))
def test_jaxpr_matches_jax(name):
    fun, args = JAXPR_CASES[name]
    assert str(jax.make_jaxpr(fun)(*args)) + "\n" == JAXPRS[name]


# --- the seed's MLP -----------------------------------------------------------------------------


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return jnp.sum((preds - targets) ** 2)


def _backprop(params, inputs, targets):
    """The gradient of `loss` by hand, in float64 NumPy."""
    activations, pre = [inputs], []
    for W, b in params:
        pre.append(activations[-1] @ W + b)
        activations.append(np.tanh(pre[-1]))
    delta = 2.0 * (pre[-1] - targets)  # d loss / d outputs of the last layer (no tanh there)
    grads = []
    for layer in reversed(range(len(params))):
        W, _ = params[layer]
        grads.append((activations[layer].T @ delta, delta.sum(axis=0)))
        if layer:
            delta = (delta @ W.T) * (1.0 - activations[layer] ** 2)
    return grads[::-1]


@pytest.mark.usefixtures("enable_x64")
def test_mlp_gradient_matches_backprop():
    sizes = [5, 4, 3, 2]
    params = [
        (rng.normal(0, 0.5, (m, n)), rng.normal(0, 0.1, n)) for m, n in itertools.pairwise(sizes)
    ]
    inputs, targets = rng.normal(size=(6, 5)), rng.normal(size=(6, 2))
    grads = jax.grad(loss)(params, (inputs, targets))
    expected = _backprop(params, inputs, targets)
    assert len(grads) == len(expected)
    for (gW, gb), (eW, eb) in zip(grads, expected, strict=True):
        assert gW.dtype == np.float64 and gW.shape == eW.shape and gb.shape == eb.shape
        np.testing.assert_allclose(np.asarray(gW), eW, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gb), eb, rtol=1e-10, atol=1e-12)
    check_grads(lambda p: loss(p, (inputs, targets)), (params,), order=2, modes=("fwd", "rev"))
