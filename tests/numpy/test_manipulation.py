"""Shape manipulation against NumPy, eagerly and staged; golden jaxprs and errors from JAX
0.10.2."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.arange(3, dtype=np.int32)

# (name, jnp function of the Arrays, NumPy function of the NumPy arrays, arrays)
CASES = [
    ("reshape", lambda x: jnp.reshape(x, (4, -1)), lambda x: np.reshape(x, (4, -1)), [X]),
    ("reshape method", lambda x: x.reshape(6, 4), lambda x: x.reshape(6, 4), [X]),
    ("reshape tuple", lambda x: x.reshape((3, 8)), lambda x: x.reshape((3, 8)), [X]),
    (
        "reshape F",
        lambda x: jnp.reshape(x, (4, 6), order="F"),
        lambda x: np.reshape(x, (4, 6), order="F"),
        [X],
    ),
    ("reshape scalar", lambda x: x.reshape(()), lambda x: x.reshape(()), [A[:1, :1]]),
    ("ravel", jnp.ravel, np.ravel, [X]),
    ("flatten", lambda x: x.flatten(), lambda x: x.flatten(), [X]),
    ("transpose", jnp.transpose, np.transpose, [X]),
    ("transpose axes", lambda x: jnp.transpose(x, (1, 0, 2)), lambda x: x.transpose(1, 0, 2), [X]),
    ("transpose method", lambda x: x.transpose(2, 0, 1), lambda x: x.transpose(2, 0, 1), [X]),
    ("transpose neg", lambda x: jnp.transpose(x, (-1, 0, 1)), lambda x: x.transpose(2, 0, 1), [X]),
    ("T", lambda x: x.T, lambda x: x.T, [A]),
    ("mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2), [X]),
    ("moveaxis", lambda x: jnp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [X]),
    (
        "moveaxis tuple",
        lambda x: jnp.moveaxis(x, (0, 1), (2, 0)),
        lambda x: np.moveaxis(x, (0, 1), (2, 0)),
        [X],
    ),
    ("swapaxes", lambda x: jnp.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), [X]),
    ("squeeze", jnp.squeeze, np.squeeze, [X.reshape(2, 1, 12, 1)]),
    (
        "squeeze axis",
        lambda x: jnp.squeeze(x, axis=-1),
        lambda x: np.squeeze(x, axis=-1),
        [X.reshape(2, 1, 12, 1)],
    ),
    (
        "squeeze method",
        lambda x: x.squeeze((1, 3)),
        lambda x: x.squeeze((1, 3)),
        [X.reshape(2, 1, 12, 1)],
    ),
    ("expand_dims", lambda x: jnp.expand_dims(x, (0, 3)), lambda x: np.expand_dims(x, (0, 3)), [A]),
    ("expand_dims neg", lambda x: jnp.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), [A]),
    (
        "concatenate",
        lambda x, y: jnp.concatenate([x, y]),
        lambda x, y: np.concatenate([x, y]),
        [A, A + 1],
    ),
    (
        "concatenate axis",
        lambda x, y: jnp.concatenate([x, y], axis=-1),
        lambda x, y: np.concatenate([x, y], axis=-1),
        [A, A[:, :1]],
    ),
    (
        "concatenate none",
        lambda x, y: jnp.concatenate([x, y], axis=None),
        lambda x, y: np.concatenate([x, y], axis=None),
        [A, B.astype(np.float32)],
    ),
    (
        "stack",
        lambda x, y: jnp.stack([x, y], axis=1),
        lambda x, y: np.stack([x, y], axis=1),
        [A, A],
    ),
    (
        "stack neg",
        lambda x, y: jnp.stack([x, y], axis=-1),
        lambda x, y: np.stack([x, y], -1),
        [B, B],
    ),
    ("hstack", lambda x, y: jnp.hstack([x, y]), lambda x, y: np.hstack([x, y]), [B, B]),
    ("hstack 2d", lambda x, y: jnp.hstack([x, y]), lambda x, y: np.hstack([x, y]), [A, A]),
    (
        "vstack",
        lambda x, y: jnp.vstack([x, y]),
        lambda x, y: np.vstack([x, y]),
        [A, np.ones(3, np.float32)],
    ),
    ("dstack", lambda x, y: jnp.dstack([x, y]), lambda x, y: np.dstack([x, y]), [B, B]),
    (
        "column_stack",
        lambda x, y: jnp.column_stack([x, y]),
        lambda x, y: np.column_stack([x, y]),
        [B, B],
    ),
    (
        "broadcast_to",
        lambda x: jnp.broadcast_to(x, (4, 2, 3)),
        lambda x: np.broadcast_to(x, (4, 2, 3)),
        [A],
    ),
    (
        "broadcast_to ones",
        lambda x: jnp.broadcast_to(x, (5, 3)),
        lambda x: np.broadcast_to(x, (5, 3)),
        [A[:1]],
    ),
    (
        "broadcast_arrays",
        lambda x, y: jnp.broadcast_arrays(x, y),
        lambda x, y: np.broadcast_arrays(x, y),
        [A[:, :1], B],
    ),
    ("atleast_1d", jnp.atleast_1d, np.atleast_1d, [np.float32(2)]),
    ("atleast_2d", jnp.atleast_2d, np.atleast_2d, [B]),
    ("atleast_3d 1d", jnp.atleast_3d, np.atleast_3d, [B]),
    ("atleast_3d 2d", jnp.atleast_3d, np.atleast_3d, [A]),
    ("atleast_3d 0d", jnp.atleast_3d, np.atleast_3d, [np.float32(2)]),
    ("flip", jnp.flip, np.flip, [X]),
    ("flip axis", lambda x: jnp.flip(x, 1), lambda x: np.flip(x, 1), [X]),
    ("flip tuple", lambda x: jnp.flip(x, (0, -1)), lambda x: np.flip(x, (0, -1)), [X]),
    ("fliplr", jnp.fliplr, np.fliplr, [A]),
    ("flipud", jnp.flipud, np.flipud, [A]),
    ("split", lambda x: jnp.split(x, 3, axis=1), lambda x: np.split(x, 3, axis=1), [A]),
    (
        "split indices",
        lambda x: jnp.split(x, [1, 3], axis=2),
        lambda x: np.split(x, [1, 3], 2),
        [X],
    ),
    ("split neg indices", lambda x: jnp.split(x, [-1]), lambda x: np.split(x, [-1]), [B]),
    (
        "array_split",
        lambda x: jnp.array_split(x, 3, axis=2),
        lambda x: np.array_split(x, 3, axis=2),
        [X],
    ),
    ("tile", lambda x: jnp.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1)), [A]),
    ("tile int", lambda x: jnp.tile(x, 2), lambda x: np.tile(x, 2), [B]),
    ("tile wide", lambda x: jnp.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [A]),
    ("repeat", lambda x: jnp.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), [A]),
    ("repeat none", lambda x: jnp.repeat(x, 3), lambda x: np.repeat(x, 3), [A]),
    ("repeat method", lambda x: x.repeat(2, axis=0), lambda x: x.repeat(2, axis=0), [A]),
    ("pad", lambda x: jnp.pad(x, 1), lambda x: np.pad(x, 1), [A]),
    (
        "pad pairs",
        lambda x: jnp.pad(x, ((1, 0), (2, 1)), constant_values=-1),
        lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=-1),
        [A],
    ),
    ("pad tuple", lambda x: jnp.pad(x, (1, 2)), lambda x: np.pad(x, (1, 2)), [B]),
    ("pad zero", lambda x: jnp.pad(x, 0), lambda x: np.pad(x, 0), [B]),
]


@pytest.mark.parametrize("name,fun,ref,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fun, ref, arrays):
    out = check_traced_matches_eager(fun, *[jnp.asarray(a) for a in arrays])
    expected = ref(*arrays)
    if isinstance(expected, (list, tuple)):
        assert len(out) == len(expected)
        pairs = zip(out, expected, strict=True)
    else:
        pairs = [(out, expected)]
    for got, want in pairs:
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_no_op_stages_nothing():
    x = jnp.zeros((2, 3))
    for fun in (
        lambda v: v.reshape(2, 3),
        lambda v: jnp.transpose(v, (0, 1)),
        lambda v: jnp.squeeze(v),
        lambda v: jnp.concatenate([v]),
        lambda v: jnp.broadcast_to(v, (2, 3)),
        lambda v: jnp.swapaxes(v, 0, 0),
        lambda v: jnp.ravel(v[0]),
    ):
        jaxpr = tracejit.make_jaxpr(fun)(x)
        assert len(jaxpr.eqns) <= 2 and all(
            e.primitive.name == "slice" or e.primitive.name == "squeeze" for e in jaxpr.eqns
        )
    assert str(tracejit.make_jaxpr(lambda v: v.reshape(2, 3))(x)) == (
        "{ lambda ; a:f32[2,3]. let  in (a,) }"
    )


GOLDEN = [
    (
        lambda x: x.reshape(3, -1),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: x.T,
        jnp.zeros((2, 3)),
        "{ lambda ; a:f32[2,3]. let\n    b:f32[3,2] = transpose[permutation=(1, 0)] a\n  in (b,) }",
    ),
    (
        lambda x: jnp.moveaxis(x, 0, -1),
        jnp.zeros((2, 3, 4)),
        (
            "{ lambda ; a:f32[2,3,4]. let\n"
            "    b:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.squeeze(x),
        jnp.zeros((1, 3, 1)),
        "{ lambda ; a:f32[1,3,1]. let b:f32[3] = squeeze[dimensions=(0, 2)] a in (b,) }",
    ),
    (
        lambda x: jnp.expand_dims(x, (0, 2)),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[1,2,1,3] = broadcast_in_dim[broadcast_dimensions=(1, 3)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.broadcast_to(x, (4, 2, 3)),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.broadcast_to(x, (2, 3)),
        jnp.zeros((1, 3)),
        (
            "{ lambda ; a:f32[1,3]. let\n"
            "    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.flip(x, 1),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2,3] = jit[\n"
            "      name=_flip\n"
            "      jaxpr={ lambda ; a:f32[2,3]. let\n"
            "          b:f32[2,3] = rev[dimensions=(1,)] a\n"
            "        in (b,) }\n"
            "    ] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: jnp.concatenate([x, x], axis=None),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
            "    c:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
            "    d:f32[12] = concatenate[dimension=0] b c\n"
            "  in (d,) }"
        ),
    ),
    (
        lambda x: jnp.repeat(x, 2, axis=0),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2,2,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a\n"
            "    c:f32[4,3] = reshape[dimensions=None new_sizes=(4, 3) sharding=None] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: jnp.atleast_2d(x),
        jnp.zeros(3),
        (
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[1,3] = jit[\n"
            "      name=atleast_2d\n"
            "      jaxpr={ lambda ; a:f32[3]. let\n"
            "          b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
            "        in (b,) }\n"
            "    ] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: x.reshape((3, 2), order="F"),
        jnp.zeros((2, 3)),
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[2,3] = reshape[dimensions=(1, 0) new_sizes=(2, 3) sharding=None] a\n"
            "    c:f32[3,2] = transpose[permutation=(1, 0)] b\n"
            "  in (c,) }"
        ),
    ),
]


@pytest.mark.parametrize("fun,arg,expected", GOLDEN)
def test_golden(fun, arg, expected):
    assert str(tracejit.make_jaxpr(fun)(arg)) == expected


def test_concatenate_promotes():
    jaxpr = tracejit.make_jaxpr(lambda x, y: jnp.concatenate([x, y]))(
        jnp.zeros((2, 3)), jnp.zeros((1, 3), jnp.int32)
    )
    assert str(jaxpr) == (
        "{ lambda ; a:f32[2,3] b:i32[1,3]. let\n"
        "    c:f32[1,3] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
        "    d:f32[3,3] = concatenate[dimension=0] a c\n"
        "  in (d,) }"
    )
    assert jnp.concatenate([jnp.ones(2, jnp.int8), jnp.ones(2, jnp.uint8)]).dtype == np.int16
    assert jnp.stack([1.0, 2.0]).shape == (2,)
    assert jnp.concatenate([jnp.ones(2), jnp.ones(2)], dtype=jnp.int32).dtype == np.int32


def test_errors():
    x = jnp.zeros((2, 3))
    with pytest.raises(
        TypeError,
        match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into "
        r"shape \(4, -1\) because the product of specified axis "
        r"sizes \(4\) does not evenly divide 6",
    ):
        x.reshape(4, -1)
    with pytest.raises(
        TypeError,
        match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into "
        r"shape 4 \(size 4\)",
    ):
        x.reshape(4)
    with pytest.raises(TypeError, match="can only specify one unknown axis size"):
        x.reshape(-1, -1)
    with pytest.raises(
        ValueError,
        match="cannot select an axis to squeeze out which has size "
        r"not equal to one, got shape=\(1, 3, 1\) and "
        r"dimensions=\(1,\)",
    ):
        jnp.squeeze(jnp.zeros((1, 3, 1)), axis=1)
    with pytest.raises(
        TypeError,
        match="Cannot concatenate arrays with different numbers of "
        r"dimensions: got \(3,\), \(1, 3\)",
    ):
        jnp.concatenate([jnp.zeros(3), jnp.zeros((1, 3))])
    with pytest.raises(TypeError, match="Cannot concatenate arrays with shapes that differ"):
        jnp.concatenate([x, jnp.zeros((1, 3))], axis=1)
    with pytest.raises(ValueError, match="Need at least one array to concatenate"):
        jnp.concatenate([])
    with pytest.raises(
        ValueError,
        match=r"All input arrays must have the same shape. Got \(3,\), "
        r"\(2,\)",
    ):
        jnp.stack([jnp.zeros(3), jnp.zeros(2)])
    with pytest.raises(
        ValueError,
        match=r"Incompatible types for broadcasting: input "
        r"type=float32\[2,3\] and requested type=float32\[4,3\]",
    ):
        jnp.broadcast_to(x, (4, 3))
    with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
        jnp.broadcast_to(x, (3,))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.expand_dims(x, 3)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        jnp.split(jnp.zeros(5), 2)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jnp.pad(x, -1)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'edges'"):
        jnp.pad(x, 1, mode="edges")
    with pytest.raises(TypeError, match="transpose permutation isn't a permutation"):
        jnp.transpose(x, (0, 0))  # JAX's class and words


_A = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize(
    "repeats, axis, total",
    [
        (np.array([1, 2, 0]), 1, None),
        (np.array([2, 0, 1, 1, 0, 3]), None, None),
        (np.array([3]), 0, None),  # one count for every element
        (2, 1, None),
        (np.array([1, 2]), 0, 5),  # the last element repeated to fill
        (np.array([1, 2]), 0, 2),  # extra elements dropped
        (2, 1, 4),
    ],
)
def test_repeat_with_counts_matches_numpy(repeats, axis, total):
    want = np.repeat(_A, repeats, axis=axis)
    flat = want.shape[0] if axis is None else want.shape[axis]
    if total is not None:  # JAX's total_repeat_length: truncate, or pad with the last element
        positions = np.minimum(np.arange(total), flat - 1)
        want = np.take(want, positions, axis=0 if axis is None else axis)
    got = jnp.repeat(_A, repeats, axis=axis, total_repeat_length=total)
    np.testing.assert_array_equal(got, want)
    check_traced_matches_eager(
        lambda a: jnp.repeat(a, repeats, axis=axis, total_repeat_length=total), _A
    )


def test_repeat_with_traced_counts_needs_a_total_length():
    f = tracejit.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=5))
    np.testing.assert_array_equal(f(jnp.array([1, 2, 0])), [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(f(jnp.array([0, 1, 4])), [1, 2, 2, 2, 2])
    with pytest.raises(tracejit.errors.ConcretizationTypeError):
        tracejit.jit(lambda r: jnp.repeat(jnp.arange(3), r))(jnp.array([1, 2, 0]))
    with pytest.raises(TypeError, match="repeat requires ndarray or scalar arguments"):
        jnp.repeat(_A, [1, 2])


def test_repeat_gradient_sums_the_copies():
    g = tracejit.grad(lambda x: jnp.sum(jnp.repeat(x, np.array([1, 3])) ** 2))
    np.testing.assert_allclose(g(jnp.array([1.0, 2.0])), [2.0, 12.0])


def test_column_stack_of_scalars_makes_one_row():
    # Found by tests/fuzz: a 0-d operand raised IndexError('tuple index out of range').
    got = jnp.column_stack([np.array(False), np.array(True)])
    np.testing.assert_array_equal(got, np.column_stack([np.array(False), np.array(True)]))
    assert got.shape == (1, 2)
    assert tracejit.jit(jnp.column_stack)([np.float32(1), np.arange(1.0)]).shape == (1, 2)
