"""dot, matmul, vdot, inner, outer, tensordot and einsum against NumPy, eagerly and staged;
golden jaxprs from JAX 0.10.2."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp


def sample(shape, dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.rand(*shape) > 0.5)
    if np.dtype(dtype).kind in "iu":
        return rng.randint(-3, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return np.asarray(rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
    return np.asarray(rng.randn(*shape)).astype(dtype)


CASES = [
    ("dot mm", jnp.dot, np.dot, [(2, 3), (3, 4)]),
    ("dot mv", jnp.dot, np.dot, [(3, 4), (4,)]),
    ("dot vm", jnp.dot, np.dot, [(3,), (3, 4)]),
    ("dot vv", jnp.dot, np.dot, [(4,), (4,)]),
    ("dot 3d", jnp.dot, np.dot, [(2, 3, 4), (5, 4, 2)]),
    ("dot scalar", jnp.dot, np.dot, [(2, 3), ()]),
    ("dot empty", jnp.dot, np.dot, [(2, 0), (0, 3)]),
    ("matmul", jnp.matmul, np.matmul, [(2, 3), (3, 4)]),
    ("matmul vm", jnp.matmul, np.matmul, [(3,), (3, 4)]),
    ("matmul mv", jnp.matmul, np.matmul, [(3, 4), (4,)]),
    ("matmul vv", jnp.matmul, np.matmul, [(4,), (4,)]),
    ("matmul batch", jnp.matmul, np.matmul, [(5, 2, 3), (5, 3, 4)]),
    ("matmul bcast", jnp.matmul, np.matmul, [(5, 1, 2, 3), (7, 3, 4)]),
    ("matmul bcast2", jnp.matmul, np.matmul, [(2, 3), (7, 3, 4)]),
    ("matmul ones", jnp.matmul, np.matmul, [(1, 2, 3), (1, 3, 4)]),
    ("matmul v batch", jnp.matmul, np.matmul, [(3,), (5, 3, 4)]),
    ("matmul batch v", jnp.matmul, np.matmul, [(5, 2, 3), (3,)]),
    ("matmul mixed", jnp.matmul, np.matmul, [(2, 1, 2, 3), (1, 6, 3, 2)]),
    ("matmul op", lambda a, b: a @ b, np.matmul, [(4, 2, 3), (3, 5)]),
    ("vdot", jnp.vdot, np.vdot, [(2, 3), (2, 3)]),
    ("inner", jnp.inner, np.inner, [(2, 3), (4, 3)]),
    ("inner vv", jnp.inner, np.inner, [(3,), (3,)]),
    ("inner scalar", jnp.inner, np.inner, [(3,), ()]),
    ("outer", jnp.outer, np.outer, [(2, 3), (4,)]),
    ("tensordot", jnp.tensordot, np.tensordot, [(2, 3, 4), (3, 4, 5)]),
    (
        "tensordot 1",
        lambda a, b: jnp.tensordot(a, b, 1),
        lambda a, b: np.tensordot(a, b, 1),
        [(2, 3), (3, 4)],
    ),
    (
        "tensordot 0",
        lambda a, b: jnp.tensordot(a, b, 0),
        lambda a, b: np.tensordot(a, b, 0),
        [(2,), (3,)],
    ),
    (
        "tensordot axes",
        lambda a, b: jnp.tensordot(a, b, axes=([0], [1])),
        lambda a, b: np.tensordot(a, b, axes=([0], [1])),
        [(2, 3), (4, 2)],
    ),
    (
        "tensordot int axes",
        lambda a, b: jnp.tensordot(a, b, axes=(1, 0)),
        lambda a, b: np.tensordot(a, b, axes=(1, 0)),
        [(2, 3), (3, 2)],
    ),
    (
        "einsum mm",
        lambda a, b: jnp.einsum("ij,jk->ik", a, b),
        lambda a, b: np.einsum("ij,jk->ik", a, b),
        [(2, 3), (3, 4)],
    ),
    (
        "einsum rows",
        lambda a, b: jnp.einsum("ij,ij->i", a, b),
        lambda a, b: np.einsum("ij,ij->i", a, b),
        [(2, 3), (2, 3)],
    ),
    (
        "einsum implicit",
        lambda a, b: jnp.einsum("ij,jk", a, b),
        lambda a, b: np.einsum("ij,jk", a, b),
        [(2, 3), (3, 4)],
    ),
    (
        "einsum batch",
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
        lambda a, b: np.einsum("bij,bjk->bik", a, b),
        [(5, 2, 3), (5, 3, 4)],
    ),
    (
        "einsum ellipsis",
        lambda a, b: jnp.einsum("...ij,...jk->...ik", a, b),
        lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
        [(5, 2, 3), (5, 3, 4)],
    ),
    (
        "einsum outer",
        lambda a, b: jnp.einsum("i,j->ji", a, b),
        lambda a, b: np.einsum("i,j->ji", a, b),
        [(3,), (4,)],
    ),
    (
        "einsum three",
        lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c),
        lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c),
        [(2, 3), (3, 4), (4, 5)],
    ),
    (
        "einsum sum",
        lambda a: jnp.einsum("ijk->j", a),
        lambda a: np.einsum("ijk->j", a),
        [(2, 3, 4)],
    ),
    (
        "einsum transpose",
        lambda a: jnp.einsum("ij->ji", a),
        lambda a: np.einsum("ij->ji", a),
        [(2, 3)],
    ),
]


@pytest.mark.parametrize("name,fun,ref,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_matches_numpy(name, fun, ref, shapes, dtype):
    arrays = [sample(s, dtype, seed=i) for i, s in enumerate(shapes)]
    out = check_traced_matches_eager(fun, *[jnp.asarray(a) for a in arrays], rtol=1e-5, atol=1e-5)
    expected = ref(*arrays)
    assert out.dtype == np.dtype(dtype) and out.shape == np.shape(expected)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "x,y,dtype,weak",
    [
        ((np.int32, (2, 3)), (np.float32, (3,)), np.float32, False),
        ((np.int8, (2, 3)), (np.int8, (3,)), np.int8, False),
        ((np.bool_, (2, 3)), (np.bool_, (3,)), np.bool_, False),
        ((np.float16, (2, 3)), (np.float32, (3,)), np.float32, False),
    ],
)
def test_dot_result_dtypes(x, y, dtype, weak):
    a = jnp.asarray(sample(x[1], x[0]))
    b = jnp.asarray(sample(y[1], y[0], seed=1))
    out = check_traced_matches_eager(jnp.dot, a, b, rtol=1e-2, atol=1e-2)
    assert (out.dtype, out.weak_type) == (np.dtype(dtype), weak)
    expected = np.dot(np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64))
    if dtype == np.bool_:
        expected = expected > 0
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=1e-2)


def test_weak_operands():
    out = jnp.dot(2, jnp.ones(3, jnp.float16))
    assert (out.dtype, out.weak_type) == (np.float16, False)
    out = jnp.dot(jnp.asarray(2.0), jnp.asarray(3.0))
    assert (out.dtype, out.weak_type) == (np.float32, True)
    assert jnp.dot(jnp.ones(3), 2.0).dtype == np.float32


def test_vdot_conjugates():
    a = sample((3,), np.complex64, 1)
    b = sample((3,), np.complex64, 2)
    np.testing.assert_allclose(np.asarray(jnp.vdot(a, b)), np.vdot(a, b), rtol=1e-5)


GOLDEN = [
    (
        jnp.dot,
        [(2, 3), (3,)],
        (
            "{ lambda ; a:f32[2,3] b:f32[3]. let\n"
            "    c:f32[2] = dot_general[\n"
            "      dimension_numbers=(([1], [0]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "  in (c,) }"
        ),
    ),
    (
        jnp.matmul,
        [(5, 2, 3), (5, 3, 4)],
        (
            "{ lambda ; a:f32[5,2,3] b:f32[5,3,4]. let\n"
            "    c:f32[5,2,4] = dot_general[\n"
            "      dimension_numbers=(([2], [1]), ([0], [0]))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "  in (c,) }"
        ),
    ),
    (
        jnp.matmul,
        [(5, 1, 2, 3), (7, 3, 4)],
        (
            "{ lambda ; a:f32[5,1,2,3] b:f32[7,3,4]. let\n"
            "    c:f32[5,2,3] = squeeze[dimensions=(1,)] a\n"
            "    d:f32[5,2,7,4] = dot_general[\n"
            "      dimension_numbers=(([2], [1]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] c b\n"
            "    e:f32[5,7,2,4] = transpose[permutation=(0, 2, 1, 3)] d\n"
            "  in (e,) }"
        ),
    ),
    (
        jnp.matmul,
        [(2, 3), (7, 3, 4)],
        (
            "{ lambda ; a:f32[2,3] b:f32[7,3,4]. let\n"
            "    c:f32[2,7,4] = dot_general[\n"
            "      dimension_numbers=(([1], [1]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "    d:f32[7,2,4] = transpose[permutation=(1, 0, 2)] c\n"
            "  in (d,) }"
        ),
    ),
    (
        jnp.matmul,
        [(1, 2, 3), (1, 3, 4)],
        (
            "{ lambda ; a:f32[1,2,3] b:f32[1,3,4]. let\n"
            "    c:f32[2,3] = squeeze[dimensions=(0,)] a\n"
            "    d:f32[3,4] = squeeze[dimensions=(0,)] b\n"
            "    e:f32[2,4] = dot_general[\n"
            "      dimension_numbers=(([1], [0]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] c d\n"
            "    f:f32[1,2,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] e\n"
            "  in (f,) }"
        ),
    ),
    (
        jnp.outer,
        [(2, 3), (4,)],
        (
            "{ lambda ; a:f32[2,3] b:f32[4]. let\n"
            "    c:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
            "    d:f32[6,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c\n"
            "    e:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
            "    f:f32[6,4] = mul d e\n"
            "  in (f,) }"
        ),
    ),
    (
        jnp.tensordot,
        [(2, 3, 4), (3, 4, 5)],
        (
            "{ lambda ; a:f32[2,3,4] b:f32[3,4,5]. let\n"
            "    c:f32[2,5] = dot_general[\n"
            "      dimension_numbers=(([1, 2], [0, 1]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda a, b: jnp.einsum("ij,jk->ik", a, b),
        [(2, 3), (3, 4)],
        (
            "{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
            "    c:f32[2,4] = dot_general[\n"
            "      dimension_numbers=(([1], [0]), ([], []))\n"
            "      preferred_element_type=float32\n"
            "    ] a b\n"
            "  in (c,) }"
        ),
    ),
]


@pytest.mark.parametrize("fun,shapes,expected", GOLDEN)
def test_golden(fun, shapes, expected):
    assert str(tracejit.make_jaxpr(fun)(*[jnp.zeros(s) for s in shapes])) == expected


def test_dot_with_int_and_float_operands_is_not_converted():
    jaxpr = tracejit.make_jaxpr(jnp.dot)(jnp.zeros((2, 3), jnp.int32), jnp.zeros(3))
    assert str(jaxpr) == (
        "{ lambda ; a:i32[2,3] b:f32[3]. let\n"
        "    c:f32[2] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "  in (c,) }"
    )


def test_errors():
    with pytest.raises(
        ValueError, match="matmul input operand 1 must have ndim at least 1, but it has ndim 0"
    ):
        jnp.matmul(jnp.ones((2, 3)), 1.0)
    with pytest.raises(
        ValueError,
        match=r"Incompatible types for matmul arguments: "
        r"float32\[2,2,3\] and float32\[3,3,4\]",
    ):
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 4)))
    with pytest.raises(
        TypeError, match="dot_general requires contracting dimensions to have the same shape"
    ):
        jnp.ones((2, 3)) @ jnp.ones((2, 3))
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
        tracejit.make_jaxpr(jnp.dot)(jnp.ones((2, 3)), jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="einsum"):
        jnp.einsum("ij,jk->ik", jnp.ones((2, 3)))
