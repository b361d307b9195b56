"""Slicing primitives (`lax/slicing.py`): static slices and clamped dynamic slices/updates.

Each case runs eagerly and staged (`check_traced_matches_eager`), with start indices both
static (Python/NumPy ints) and traced, against a NumPy reference of XLA's semantics (negative
indices wrap once, then starts clamp into the operand); printouts come from the reference JAX.
"""

import numpy as np
import pytest
from helpers import bf16, check_exact, check_traced_matches_eager, small_integers

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.jaxpr import eval_jaxpr

DTYPES = [np.float32, np.float16, bf16, np.int32, np.uint8, np.bool_, np.complex64]
dtype_id = lambda d: np.dtype(d).name


def xla_starts(shape, starts, sizes):
    """XLA's start indices: negative ones wrap once, then each clamps to [0, dim - size]."""
    starts = [s + d if s < 0 else s for s, d in zip(starts, shape, strict=True)]
    return [min(max(s, 0), d - n) for s, d, n in zip(starts, shape, sizes, strict=True)]


def np_dynamic_slice(x, starts, sizes):
    starts = xla_starts(x.shape, starts, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


def np_dynamic_update_slice(x, update, starts):
    starts = xla_starts(x.shape, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))] = update
    return out


# --- slice ----------------------------------------------------------------------------------
SLICES = [
    ((4, 5), (1, 0), (3, 5), None),
    ((4, 5), (0, 1), (4, 5), (2, 3)),
    ((6,), (1,), (6,), (4,)),
    ((2, 3), (1, 0), (1, 3), None),  # empty result
    ((0, 3), (0, 1), (0, 2), (1, 1)),
    ((), (), (), None),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape,start,limit,strides", SLICES, ids=str)
def test_slice(shape, start, limit, strides, dtype):
    x = small_integers(shape, dtype)
    expected = x[
        tuple(
            slice(s, e, st)
            for s, e, st in zip(start, limit, strides or [1] * len(shape), strict=True)
        )
    ]
    check_exact(lambda x: lax.slice(x, start, limit, strides), [x], expected)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.bool_], ids=dtype_id)
def test_slice_in_dim_and_index_in_dim(dtype):
    x = small_integers((3, 5), dtype)
    check_exact(lambda x: lax.slice_in_dim(x, 1, 4, 2, axis=1), [x], x[:, 1:4:2])
    check_exact(lambda x: lax.slice_in_dim(x, -3, None, axis=-1), [x], x[:, -3:])
    check_exact(lambda x: lax.slice_in_dim(x, None, -1), [x], x[:-1])
    check_exact(lambda x: lax.index_in_dim(x, 1, axis=1), [x], x[:, 1:2])
    check_exact(lambda x: lax.index_in_dim(x, -1, axis=0, keepdims=False), [x], x[-1])
    check_exact(lambda x: lax.index_in_dim(x, 2, axis=-1, keepdims=False), [x], x[:, 2])


# --- dynamic_slice --------------------------------------------------------------------------
DYNAMIC_SLICES = [
    ((4, 5), (1, 2), (2, 3)),
    ((4, 5), (-1, -2), (1, 2)),  # negative indices wrap
    ((4, 5), (3, 4), (2, 3)),  # clamped so the slice stays inside
    ((4, 5), (100, -100), (1, 2)),
    ((6,), (2,), (0,)),
    ((0, 3), (0, 1), (0, 2)),
    ((), (), ()),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape,starts,sizes", DYNAMIC_SLICES, ids=str)
def test_dynamic_slice(shape, starts, sizes, dtype):
    x = small_integers(shape, dtype)
    expected = np_dynamic_slice(x, starts, sizes)
    check_exact(lambda x: lax.dynamic_slice(x, starts, sizes), [x], expected)  # static indices
    indices = [np.int32(s) for s in starts]
    check_exact(lambda x, *i: lax.dynamic_slice(x, i, sizes), [x, *indices], expected)  # traced
    if shape:
        vector = np.array(starts, np.int32)
        check_exact(lambda x, v: lax.dynamic_slice(x, v, sizes), [x, vector], expected)


def test_dynamic_slice_index_dtypes(enable_x64):
    x = small_integers((4, 5), np.float32)
    for dtype in (np.int8, np.int16, np.uint32, np.int64):
        i, j = dtype(3), dtype(1)
        check_exact(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), [x, i, j], x[2:4, 1:3])
    jaxpr = make_jaxpr(lambda x: lax.dynamic_slice(x, (1, -1), (1, 2)))(x)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[4,5]. let\n"
        "    b:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a 1:i64[] 4:i64[]\n"
        "  in (b,) }"
    )


def test_dynamic_slice_without_negative_index_wrapping():
    x = small_integers((4, 5), np.float32)
    jaxpr = make_jaxpr(
        lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2), allow_negative_indices=False)
    )(x, np.int32(0))
    assert [e.primitive.name for e in jaxpr.eqns] == ["dynamic_slice"]
    out = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, x, np.int32(-1))[0]  # clamped, not wrapped
    np.testing.assert_array_equal(np.asarray(out), x[0:2, 1:3])
    jaxpr = make_jaxpr(
        lambda x, i: lax.dynamic_slice(x, (i, i), (1, 2), allow_negative_indices=(False, True))
    )(x, np.int32(1))
    assert [e.primitive.name for e in jaxpr.eqns] == ["lt", "add", "select_n", "dynamic_slice"]
    with pytest.raises(
        ValueError,
        match="Index -1 is out of bounds for dimension 5 if allow_negative_indices=False",
    ):
        lax.dynamic_slice(x, (0, -1), (1, 2), allow_negative_indices=False)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.int32, np.bool_], ids=dtype_id)
def test_dynamic_in_dim_wrappers(dtype):
    x = small_integers((3, 5), dtype)
    check_exact(
        lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1), [x, np.int32(-2)], x[:, 3:5]
    )
    check_exact(lambda x: lax.dynamic_slice_in_dim(x, 4, 2, axis=-1), [x], x[:, 3:5])
    check_exact(lambda x, i: lax.dynamic_index_in_dim(x, i, axis=0), [x, np.int32(-1)], x[2:3])
    check_exact(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, False), [x, np.int32(7)], x[:, 4])
    check_exact(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1), [x, np.int8(1)], x[:, 1:3])


# --- dynamic_update_slice -------------------------------------------------------------------
DYNAMIC_UPDATES = [
    ((4, 5), (2, 3), (1, 2)),
    ((4, 5), (1, 3), (-1, -2)),
    ((4, 5), (2, 3), (3, 4)),
    ((4, 5), (1, 3), (7, -1)),
    ((6,), (0,), (2,)),
    ((4, 5), (4, 5), (1, 1)),
    ((), (), ()),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape,update_shape,starts", DYNAMIC_UPDATES, ids=str)
def test_dynamic_update_slice(shape, update_shape, starts, dtype):
    x, update = small_integers(shape, dtype, 1), small_integers(update_shape, dtype, 2)
    expected = np_dynamic_update_slice(x, update, starts)
    check_exact(lambda x, u: lax.dynamic_update_slice(x, u, starts), [x, update], expected)
    indices = [np.int32(s) for s in starts]
    check_exact(lambda x, u, *i: lax.dynamic_update_slice(x, u, i), [x, update, *indices], expected)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.int32, np.bool_], ids=dtype_id)
def test_dynamic_update_in_dim_wrappers(dtype):
    x, row, col = (
        small_integers((3, 5), dtype, 1),
        small_integers((5,), dtype, 2),
        small_integers((3, 1), dtype, 3),
    )
    check_exact(
        lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 0),
        [x, row, np.int32(-1)],
        np_dynamic_update_slice(x, row[None], (2, 0)),
    )
    check_exact(
        lambda x, u: lax.dynamic_update_index_in_dim(x, u, 1, 1),
        [x, col],
        np_dynamic_update_slice(x, col, (0, 1)),
    )
    block = small_integers((3, 2), dtype, 4)
    check_exact(
        lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, axis=-1),
        [x, block, np.int32(4)],
        np_dynamic_update_slice(x, block, (0, 3)),
    )


def test_values_from_jax():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    assert np.asarray(lax.dynamic_slice(x, (5, -10), (1, 2))).tolist() == [[5.0, 6.0]]
    assert np.asarray(lax.dynamic_slice(x, (np.int32(-1), np.int32(-7)), (1, 2))).tolist() == [
        [5.0, 6.0]
    ]
    out = lax.dynamic_update_slice(x, -np.ones((1, 3), np.float32), (-1, -2))
    assert np.asarray(out).tolist() == [[0, 1, 2, 3, 4], [5, 6, -1, -1, -1]]
    out = lax.dynamic_update_index_in_dim(x, -np.ones((2,), np.float32), -1, 1)
    assert np.asarray(out).tolist() == [[0, 1, 2, 3, -1], [5, 6, 7, 8, -1]]
    assert np.asarray(lax.dynamic_index_in_dim(x, -1, 1, False)).tolist() == [4.0, 9.0]
    index = lax.convert_element_type(np.int32(-1), np.int32)  # an Array index
    assert np.asarray(lax.dynamic_slice(x, (index, index), (1, 1))).tolist() == [[9.0]]


# --- weak types -----------------------------------------------------------------------------
W = 2.0


def weak_vector(n):
    return lax.broadcast_in_dim(W, (n,), ())


@pytest.mark.parametrize(
    "fun,args,weak",
    [
        (lambda x: lax.slice(weak_vector(3), (1,), (2,)), [W], True),
        (lambda x: lax.dynamic_slice(x, (), ()), [W], True),
        (lambda x: lax.dynamic_update_slice(x, x, ()), [W], True),
        (lambda x: lax.dynamic_update_slice(weak_vector(3), weak_vector(1), (1,)), [W], False),
        (
            lambda x: lax.dynamic_update_slice(weak_vector(3), np.ones(1, np.float32), (1,)),
            [W],
            False,
        ),
        (lambda x: lax.dynamic_slice(x, (1,), (2,)), [np.zeros(3, np.float32)], False),
        (lambda x: lax.index_in_dim(weak_vector(3), 1, keepdims=False), [W], True),
    ],
    ids=["slice", "ds_rank0", "dus_rank0", "dus_weak", "dus_mixed", "ds_strong", "index_in_dim"],
)
def test_weak_types_follow_jax(fun, args, weak):
    assert check_traced_matches_eager(fun, *args).weak_type == weak
    assert make_jaxpr(fun)(*args).out_avals[0].weak_type == weak


def test_dynamic_slice_of_weak_operand_is_weak():
    # JAX: the operand decides; the start indices (never weak once normalized) do not count.
    fun = lambda x: lax.dynamic_slice(lax.broadcast(x, (3,)), (1,), (2,))
    assert check_traced_matches_eager(fun, W).weak_type
    assert make_jaxpr(fun)(W).out_avals[0].weak_type


# --- golden printouts (the reference JAX's) -------------------------------------------------
X = np.zeros((2, 5), np.float32)
GOLDEN = [
    (
        lambda x: lax.slice(x, (0, 1), (2, 3)),
        [X],
        (
            "{ lambda ; a:f32[2,5]. let\n"
            "    b:f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: lax.slice_in_dim(x, 1, 4, 2, axis=1),
        [X],
        (
            "{ lambda ; a:f32[2,5]. let\n"
            "    b:f32[2,2] = slice[limit_indices=(2, 4) start_indices=(0, 1) strides=(1, 2)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: lax.dynamic_slice(x, (-1, -2), (1, 2)),
        [X],
        (
            "{ lambda ; a:f32[2,5]. let\n"
            "    b:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a 1:i32[] 3:i32[]\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 2)),
        [X, np.int32(1)],
        (
            "{ lambda ; a:f32[2,5] b:i32[]. let\n"
            "    c:bool[] = lt b 0:i32[]\n"
            "    d:i32[] = add b 2:i32[]\n"
            "    e:i32[] = select_n c b d\n"
            "    f:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a e 0:i32[]\n"
            "  in (f,) }"
        ),
    ),
    (
        lambda x, i: lax.dynamic_slice(x, i, (1, 2)),
        [np.zeros((4, 5), np.float32), np.array([1, 2], np.int32)],
        (
            "{ lambda ; a:f32[4,5] b:i32[2]. let\n"
            "    c:i32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] b\n"
            "    d:i32[] = squeeze[dimensions=(0,)] c\n"
            "    e:i32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] b\n"
            "    f:i32[] = squeeze[dimensions=(0,)] e\n"
            "    g:bool[] = lt d 0:i32[]\n"
            "    h:i32[] = add d 4:i32[]\n"
            "    i:i32[] = select_n g d h\n"
            "    j:bool[] = lt f 0:i32[]\n"
            "    k:i32[] = add f 5:i32[]\n"
            "    l:i32[] = select_n j f k\n"
            "    m:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a i l\n"
            "  in (m,) }"
        ),
    ),
    (
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i, -1)),
        [X, np.zeros((1, 2), np.float32), np.int32(0)],
        (
            "{ lambda ; a:f32[2,5] b:f32[1,2] c:i32[]. let\n"
            "    d:bool[] = lt c 0:i32[]\n"
            "    e:i32[] = add c 2:i32[]\n"
            "    f:i32[] = select_n d c e\n"
            "    g:f32[2,5] = dynamic_update_slice a b f 4:i32[]\n"
            "  in (g,) }"
        ),
    ),
    (
        lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
        [X, np.int32(1)],
        (
            "{ lambda ; a:f32[2,5] b:i32[]. let\n"
            "    c:bool[] = lt b 0:i32[]\n"
            "    d:i32[] = add b 5:i32[]\n"
            "    e:i32[] = select_n c b d\n"
            "    f:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] a 0:i32[] e\n"
            "  in (f,) }"
        ),
    ),
    (
        lambda x: lax.dynamic_slice(x, (), ()),
        [np.float32(1)],
        "{ lambda ; a:f32[]. let b:f32[] = dynamic_slice[slice_sizes=()] a in (b,) }",
    ),
]


@pytest.mark.parametrize("fun,args,expected", GOLDEN, ids=range(len(GOLDEN)))
def test_golden_jaxpr(fun, args, expected):
    assert str(make_jaxpr(fun)(*args)) == expected


def test_index_in_dim_stages_slice_and_squeeze():
    jaxpr = make_jaxpr(lambda x: lax.index_in_dim(x, -1, axis=1, keepdims=False))(X)
    assert [e.primitive.name for e in jaxpr.eqns] == ["slice", "squeeze"]
    assert jaxpr.eqns[0].params == {
        "start_indices": (0, 4),
        "limit_indices": (2, 5),
        "strides": (1, 1),
    }
    assert jaxpr.eqns[1].params == {"dimensions": (1,)}


# --- errors ---------------------------------------------------------------------------------
I8 = np.int8(0)
ERRORS = [
    (
        lambda x: lax.slice(x, (-1, 0), (2, 3)),
        [X],
        TypeError,
        "slice start_indices must have every element be nonnegative, got (-1, 0)",
    ),
    (
        lambda x: lax.slice(x, (0, 0), (3, 3)),
        [X],
        TypeError,
        "slice limit_indices must be less than or equal to operand shape, got limit_indices (3, 3) for operand shape (2, 5)",
    ),
    (
        lambda x: lax.slice(x, (2, 0), (1, 3)),
        [X],
        TypeError,
        "slice limit_indices must be greater than or equal to start_indices",
    ),
    (
        lambda x: lax.slice(x, (0,), (2, 3)),
        [X],
        TypeError,
        "slice start_indices must have length equal to the number of dimensions of the operand, got indices (0,) for operand shape (2, 5)",
    ),
    (
        lambda x: lax.slice(x, (0, 0), (2,)),
        [X],
        TypeError,
        "slice limit_indices must have the same length as start_indices",
    ),
    (
        lambda x: lax.slice(x, (0, 0), (2, 3), (1,)),
        [X],
        TypeError,
        "slice strides must have length equal to the number of dimensions",
    ),
    (
        lambda x: lax.slice(x, (0, 0), (2, 3), (1, -1)),
        [X],
        TypeError,
        "slice strides must have every element be positive",
    ),
    (
        lambda x: lax.slice(x, (0, 0), (2, 3), (1, 0)),
        [X],
        TypeError,
        "slice strides must have every element be positive",
    ),
    (
        lambda x: lax.slice_in_dim(x, 0, 10, axis=1),
        [X],
        TypeError,
        "got limit_indices (2, 10) for operand shape (2, 5)",
    ),
    (
        lambda x: lax.slice_in_dim(x, -10, None, axis=1),
        [X],
        TypeError,
        "slice start_indices must have every element be nonnegative, got (0, -5)",
    ),
    (lambda x: lax.slice_in_dim(x, 0, 2, axis=2), [X], IndexError, "axis 2 is out of bounds"),
    (
        lambda x: lax.index_in_dim(x, 5, axis=1),
        [X],
        IndexError,
        "index 5 is out of bounds for axis 1 with size 5",
    ),
    (
        lambda x: lax.index_in_dim(x, -6, axis=1),
        [X],
        IndexError,
        "index -6 is out of bounds for axis 1 with size 5",
    ),
    (
        lambda x: lax.dynamic_slice(x, (0,), (1, 2)),
        [X],
        ValueError,
        "Length of slice indices must match number of operand dimensions (1 vs (2, 5))",
    ),
    (
        lambda x: lax.dynamic_slice(x, (0, 0), (1,)),
        [X],
        ValueError,
        "dynamic_slice slice_sizes must have one size per operand dimension",
    ),
    (
        lambda x: lax.dynamic_slice(x, (0, 0), (3, 2)),
        [X],
        TypeError,
        "dynamic_slice slice_sizes must be less than or equal to operand shape, got slice_sizes (3, 2) for operand shape (2, 5)",
    ),
    (
        lambda x: lax.dynamic_slice(x, (0, 0), (-1, 2)),
        [X],
        TypeError,
        "dynamic_slice slice_sizes must be greater than or equal to zero",
    ),
    (
        lambda x, i: lax.dynamic_slice(x, (i, 1), (1, 2)),
        [X, I8],
        TypeError,
        "index arguments to dynamic_slice must be integers of the same type, got: int8, int32",
    ),
    (
        lambda x: lax.dynamic_slice(x, (np.uint8(1), np.int32(2)), (1, 2)),
        [X],
        TypeError,
        "index arguments to dynamic_slice must be integers of the same type, got: uint8, int32",
    ),
    (
        lambda x: lax.dynamic_slice(x, (1.0, 0), (1, 2)),
        [X],
        TypeError,
        "must be integers of the same type, got: float32, int32",
    ),
    (
        lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 2)),
        [X, np.float32(1)],
        TypeError,
        "must be integers of the same type, got: float32, int32",
    ),
    (
        lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 2)),
        [X, np.zeros(2, np.int32)],
        TypeError,
        "start_indices arguments to dynamic_slice must be scalars,  got indices (ShapedArray(int32[2]), ShapedArray(int32[]))",
    ),
    (
        lambda x, u: lax.dynamic_update_slice(x, u, (0, 0)),
        [X, np.zeros(2, np.float32)],
        TypeError,
        "dynamic_update_slice update must have the same rank as operand, got update shape (2,) for operand shape (2, 5)",
    ),
    (
        lambda x, u: lax.dynamic_update_slice(x, u, (0, 0)),
        [X, np.zeros((3, 2), np.float32)],
        TypeError,
        "dynamic_update_slice update shape must be smaller than operand shape, got update shape (3, 2) for operand shape (2, 5)",
    ),
    (
        lambda x, u: lax.dynamic_update_slice(x, u, (0, 0)),
        [X, np.zeros((1, 2), np.int32)],
        TypeError,
        "lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, int32",
    ),
    (
        lambda x, u: lax.dynamic_update_slice(x, u, (0,)),
        [X, np.zeros((1, 2), np.float32)],
        ValueError,
        "Length of slice indices must match number of operand dimensions (1 vs (2, 5))",
    ),
    (
        lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(0), np.int8(0))),
        [X, np.zeros((1, 2), np.float32)],
        TypeError,
        "index arguments to dynamic_update_slice must be integers of the same type, got int32, int8",
    ),
]


@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
@pytest.mark.parametrize("fun,args,error,message", ERRORS, ids=range(len(ERRORS)))
def test_errors(fun, args, error, message, staged):
    with pytest.raises(error) as info:
        (make_jaxpr(fun) if staged else fun)(*args)
    assert message in str(info.value)
