"""`jnp.ufunc`: jnp's fourteen ufuncs and `frompyfunc`, their attributes and the methods reduce,
accumulate, outer, at and reduceat against NumPy's ufunc methods, eagerly and under jit;
derivatives against finite differences; vmap against a loop. Dtypes, weak types and errors
that NumPy cannot give: `test_jax_reference_ufuncs.py`."""

import inspect

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_vmap, f32, i32

import tracejit
import tracejit.numpy as jnp
from tracejit.test_util import check_grads

UFUNCS = [
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "subtract",
]
BINARY = [n for n in UFUNCS if n != "negative"]
RNG = np.random.default_rng(0)
X = RNG.integers(-4, 5, (3, 4)).astype(i32)
F = RNG.uniform(-2, 2, (3, 4)).astype(f32)
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor"}


def operand(name):
    """Integers for the bitwise ufuncs, floats for the others."""
    return X if name in INTEGER_ONLY else F


def as_jax_dtype(want, got_dtype):
    """NumPy's result in the dtype JAX gives (NumPy widens to 64 bits, JAX does not)."""
    return np.asarray(want).astype(got_dtype)


def test_jnp_ufuncs_are_the_ufuncs_jax_has():
    ufuncs = sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc))
    assert ufuncs == UFUNCS


@pytest.mark.parametrize("name", UFUNCS)
def test_attributes_are_numpys(name):
    u, ref = getattr(jnp, name), getattr(np, name)
    assert (u.nin, u.nout, u.nargs) == (ref.nin, ref.nout, ref.nin)
    assert u.identity == ref.identity
    assert u.__name__ == name and repr(u) == f"<jnp.ufunc '{name}'>"
    assert str(inspect.signature(u)) == "(*args, out=None, where=None)"


def test_a_ufunc_is_a_hashable_static_argument():
    assert jnp.add == jnp.add and jnp.add != jnp.subtract
    assert hash(jnp.add) == hash(jnp.add)
    apply = tracejit.jit(lambda u, x: u.reduce(x), static_argnums=0)
    assert_close(apply(jnp.add, X), X.sum(0), dtype=i32)
    assert_close(apply(jnp.maximum, X), X.max(0), dtype=i32)
    with pytest.raises(AttributeError):
        jnp.add.identity = 1


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("axis", [0, 1, None])
def test_reduce_matches_numpy(name, axis):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    if axis is None:  # NumPy reduces the flattened operand only where the order does not matter
        want = ref.reduce(x.ravel()).reshape(1, 1)
    else:
        want = ref.reduce(x, axis=axis, keepdims=True)
    got = u.reduce(x, axis=axis, keepdims=True)
    check_eager_jit_numpy(
        lambda v: u.reduce(v, axis=axis, keepdims=True), (x,), as_jax_dtype(want, got.dtype), 1e-5
    )


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "bitwise_or", "logical_and"])
def test_reduce_with_initial_and_where_matches_numpy(name):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    where = np.array([True, False, True, True])
    initial = {"logical_and": True}.get(name, 2)
    want = ref.reduce(x, axis=1, where=where, initial=initial)
    fun = lambda v: u.reduce(v, axis=1, where=where, initial=initial)
    check_eager_jit_numpy(fun, (x,), as_jax_dtype(want, fun(x).dtype), 1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_accumulate_matches_numpy(name):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    want = ref.accumulate(x, axis=1)
    got = u.accumulate(x, axis=1)
    check_eager_jit_numpy(lambda v: u.accumulate(v, axis=1), (x,), as_jax_dtype(want, got.dtype))


@pytest.mark.parametrize("name", BINARY)
def test_outer_matches_numpy(name):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    a, b = x[0], x[1:, :2]
    want = ref.outer(a, b)
    check_eager_jit_numpy(u.outer, (a, b), as_jax_dtype(want, u.outer(a, b).dtype), 1e-6)


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize(
    "index",
    [
        (np.array([0, 2, 0]), np.array([1, 1, 1])),
        1,
        (slice(None), 2),
        (np.array([[0], [2]]), np.array([0, 3])),
    ],
    ids=["repeated", "row", "slice", "broadcast"],
)
def test_at_matches_numpy(name, index):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    want = x.copy()
    args = () if name == "negative" else (x[0, 0] if name in INTEGER_ONLY else np.float32(1.5),)
    ref.at(want, index, *args)
    got = u.at(x, index, *args, inplace=False)
    check_eager_jit_numpy(
        lambda v: u.at(v, index, *args, inplace=False), (x,), as_jax_dtype(want, got.dtype), 1e-5
    )
    with pytest.raises(NotImplementedError, match="inplace=False"):
        u.at(x, index, *args)


@pytest.mark.parametrize("name", BINARY)
def test_reduceat_matches_numpy(name):
    u, ref, x = getattr(jnp, name), getattr(np, name), operand(name)
    if name.startswith("logical"):  # JAX keeps the operand's dtype (the replay checks floats)
        x = x > 0
    indices = np.array([0, 2, 1, 3])
    want = ref.reduceat(x, indices, axis=1)
    got = u.reduceat(x, indices, axis=1)
    check_eager_jit_numpy(
        lambda v: u.reduceat(v, indices, axis=1), (x,), as_jax_dtype(want, got.dtype), 1e-5
    )


def test_methods_refuse_out_and_unary_ufuncs():
    for call in [
        lambda: jnp.add(X, X, out=X),
        lambda: jnp.negative(X, where=True),
        lambda: jnp.logical_or(X, X, out=X),
        lambda: jnp.add.reduce(X, out=X),
        lambda: jnp.add.accumulate(X, out=X),
        lambda: jnp.add.reduceat(X, np.array([0]), out=X),
    ]:
        with pytest.raises(NotImplementedError):
            call()
    for method in ["reduce", "accumulate", "outer"]:
        with pytest.raises(ValueError, match="binary ufuncs"):
            getattr(jnp.negative, method)(X, X) if method == "outer" else getattr(
                jnp.negative, method
            )(X)


def test_derivatives_of_the_methods():
    x = RNG.uniform(0.5, 2, (3, 4))
    check_grads(lambda v: jnp.multiply.reduce(v, axis=1), (x,), 2)
    check_grads(lambda v: jnp.logaddexp.reduce(v, axis=None), (x,), 2)
    check_grads(lambda v: jnp.logaddexp2.reduce(v, axis=0, initial=1.0), (x,), 1)
    check_grads(lambda v: jnp.maximum.reduce(v, axis=0), (x,), 1)
    check_grads(lambda v: jnp.subtract.accumulate(v, axis=1), (x,), 2)
    check_grads(lambda v: jnp.multiply.outer(v[0], v[1]), (x,), 2)
    check_grads(lambda v: jnp.multiply.at(v, 0, v[2], inplace=False), (x,), 2)
    check_grads(lambda v: jnp.add.reduceat(v, np.array([0, 2]), axis=1), (x,), 1)
    # As in JAX, scatter_mul is differentiable only at a basic index (unique indices).
    rows = (np.array([0, 1]), 1)
    with pytest.raises(NotImplementedError, match="unique_indices"):
        tracejit.grad(lambda v: jnp.multiply.at(v, rows, v[2, :2], inplace=False).sum())(x)


def test_methods_under_vmap():
    check_vmap(lambda v: jnp.subtract.reduce(v), (F,), (1,))
    check_vmap(lambda v: jnp.maximum.accumulate(v), (F,), (0,))
    check_vmap(lambda v: jnp.add.at(v, np.array([0, 0, 1]), 1.0, inplace=False), (F,), (0,))
    check_vmap(lambda v: jnp.minimum.reduceat(v, np.array([0, 2])), (F,), (0,))
    check_vmap(jnp.multiply.outer, (F, F[0]), (0, None))


# --- frompyfunc -------------------------------------------------------------------------------


def affine(a, b):
    return a * 2 + b


AFFINE = jnp.frompyfunc(affine, 2, 1, identity=0)
AFFINE_NP = np.frompyfunc(affine, 2, 1, identity=0)


def as_float(x):
    return np.asarray(x, dtype=np.float64).astype(f32)


def test_frompyfunc_makes_a_ufunc_of_a_scalar_function():
    assert isinstance(AFFINE, jnp.ufunc)
    assert (AFFINE.nin, AFFINE.nout, AFFINE.identity, AFFINE.__name__) == (2, 1, 0, "affine")
    check_eager_jit_numpy(AFFINE, (F, F[0]), as_float(AFFINE_NP(F, F[0])), 1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_frompyfunc_methods_loop_over_calls(axis):
    check_eager_jit_numpy(
        lambda v: AFFINE.reduce(v, axis=axis), (F,), as_float(AFFINE_NP.reduce(F, axis=axis)), 1e-5
    )
    check_eager_jit_numpy(
        lambda v: AFFINE.accumulate(v, axis=axis),
        (F,),
        as_float(AFFINE_NP.accumulate(F, axis=axis)),
        1e-5,
    )
    indices = np.array([0, 2, 1])
    check_eager_jit_numpy(
        lambda v: AFFINE.reduceat(v, indices, axis=axis),
        (F,),
        as_float(AFFINE_NP.reduceat(F, indices, axis=axis)),
        1e-5,
    )
    check_eager_jit_numpy(AFFINE.outer, (F[0], F[1]), as_float(AFFINE_NP.outer(F[0], F[1])), 1e-6)
    want = F.astype(object)
    AFFINE_NP.at(want, (np.array([0, 0, 2]), np.array([1, 1, 3])), 1.5)
    check_eager_jit_numpy(
        lambda v: AFFINE.at(v, (np.array([0, 0, 2]), np.array([1, 1, 3])), 1.5, inplace=False),
        (F,),
        as_float(want),
        1e-6,
    )


def test_frompyfunc_reduce_starts_from_the_identity_under_where():
    where = np.array([True, False, True, False])
    want = np.zeros(F.shape[0], f32)  # from the identity, over the selected columns
    for column in np.flatnonzero(where):
        want = affine(want, F[:, column])
    fun = lambda v: AFFINE.reduce(v, axis=1, where=where)
    check_eager_jit_numpy(fun, (F,), as_float(want), 1e-6)
    with pytest.raises(ValueError, match="identity"):
        jnp.frompyfunc(affine, 2, 1).reduce(F, where=where)
    with pytest.raises(ValueError, match="zero-size"):
        jnp.frompyfunc(affine, 2, 1).reduce(np.zeros((0, 2)))


def test_frompyfunc_derivatives_and_vmap():
    x = RNG.uniform(0.5, 2, (3, 4))
    scaled = jnp.frompyfunc(lambda a, b: a * b + jnp.sin(b), 2, 1)
    check_grads(lambda v: scaled.reduce(v, axis=1), (x,), 2)
    check_grads(lambda v: scaled.accumulate(v, axis=0), (x,), 1)
    check_grads(lambda v: scaled(v, v[0]), (x,), 2)
    check_vmap(lambda v: scaled.accumulate(v), (F,), (1,))
    check_vmap(lambda v: scaled.reduce(v), (F,), (0,), jit=True)
