"""Basic indexing and `.at[]` updates against NumPy, eagerly and staged; golden jaxprs and errors
from JAX 0.10.2."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp
from tracejit.errors import NonConcreteBooleanIndexError

E = Ellipsis
INDICES = [
    0,
    1,
    -1,
    -4,
    (1, 2),
    (-1, -2),
    slice(1, 3),
    slice(None),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(None, None, -2),
    slice(3, 0, -2),
    slice(-1, -4, -1),
    slice(5, 10),
    slice(2, 1),
    slice(-10, 10),
    (slice(None), slice(1, 4, 2)),
    (1, slice(None, None, -1)),
    (slice(None, None, -1), 2),
    None,
    (E, None),
    (None, E),
    (E, 1),
    (1, E),
    E,
    (1, None, slice(2, None)),
    (None, slice(None, None, -2), slice(1, 3), None),
    (-2, slice(-1, -4, -1)),
    np.int32(2),
    (np.int64(1), slice(None)),
    (),
    (slice(1, 2), None, 1),
    (slice(None, None, 3), slice(None, None, -3)),
]


def ids(index):
    return repr(index).replace(" ", "")


@pytest.mark.parametrize("index", INDICES, ids=ids)
def test_getitem_matches_numpy(index):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = check_traced_matches_eager(lambda v: v[index], jnp.asarray(x))
    expected = x[index]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("index", [(), 0, slice(None, None, -1), None, E])
def test_getitem_on_rank_0_and_1(index):
    for x in (np.arange(5, dtype=np.int32), np.float32(3.0)):
        if np.ndim(x) == 0 and index not in ((), None, E):
            continue
        out = check_traced_matches_eager(lambda v, i=index: v[i], jnp.asarray(x))
        np.testing.assert_array_equal(np.asarray(out), np.asarray(x)[index])


def test_out_of_range_integers_are_clamped():
    x = jnp.arange(4)
    assert int(x[10]) == 3 and int(x[-10]) == 0
    assert int(x.at[10].get()) == 3


def test_weak_type_kept():
    out = check_traced_matches_eager(lambda w: w[None], jnp.asarray(2.0))
    assert out.weak_type and out.shape == (1,)


def test_traced_integer_index():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    for i in (0, 2, -1, -4):
        out = check_traced_matches_eager(lambda v, k: v[k], jnp.asarray(x), jnp.asarray(i))
        np.testing.assert_array_equal(np.asarray(out), x[i])
        out = check_traced_matches_eager(lambda v, k: v[1:3, k], jnp.asarray(x), jnp.asarray(i))
        np.testing.assert_array_equal(np.asarray(out), x[1:3, i])


GOLDEN = [
    (
        1,
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,5] = slice[limit_indices=(2, 5) start_indices=(1, 0) strides=None] a\n"
            "    c:f32[5] = squeeze[dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        -1,
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,5] = slice[limit_indices=(4, 5) start_indices=(3, 0) strides=None] a\n"
            "    c:f32[5] = squeeze[dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        (1, 2),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,1] = slice[limit_indices=(2, 3) start_indices=(1, 2) strides=None] a\n"
            "    c:f32[] = squeeze[dimensions=(0, 1)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        slice(1, 3),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[2,5] = slice[limit_indices=(3, 5) start_indices=(1, 0) strides=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        (slice(None), slice(1, 4, 2)),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[4,2] = slice[limit_indices=(4, 4) start_indices=(0, 1) strides=(1, 2)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        slice(None, None, -1),
        "{ lambda ; a:f32[4,5]. let b:f32[4,5] = rev[dimensions=(0,)] a in (b,) }",
    ),
    (
        slice(None, None, -2),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[2,5] = slice[limit_indices=(4, 5) start_indices=(1, 0) strides=(2, 1)] a\n"
            "    c:f32[2,5] = rev[dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        slice(3, 0, -2),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[2,5] = slice[limit_indices=(4, 5) start_indices=(1, 0) strides=(2, 1)] a\n"
            "    c:f32[2,5] = rev[dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        None,
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,4,5] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        (E, None),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[4,5,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        (E, 1),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[4,1] = slice[limit_indices=(4, 2) start_indices=(0, 1) strides=None] a\n"
            "    c:f32[4] = squeeze[dimensions=(1,)] b\n"
            "  in (c,) }"
        ),
    ),
    (slice(None), "{ lambda ; a:f32[4,5]. let  in (a,) }"),
    (
        (1, None, slice(2, None)),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,3] = slice[limit_indices=(2, 5) start_indices=(1, 2) strides=None] a\n"
            "    c:f32[3] = squeeze[dimensions=(0,)] b\n"
            "    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n"
            "  in (d,) }"
        ),
    ),
    (
        slice(5, 10),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[0,5] = slice[limit_indices=(4, 5) start_indices=(4, 0) strides=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        (1, slice(None, None, -1)),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[1,5] = slice[limit_indices=(2, 5) start_indices=(1, 0) strides=None] a\n"
            "    c:f32[1,5] = rev[dimensions=(1,)] b\n"
            "    d:f32[5] = squeeze[dimensions=(0,)] c\n"
            "  in (d,) }"
        ),
    ),
    (
        (None, slice(None, None, -2), slice(1, 3), None),
        (
            "{ lambda ; a:f32[4,5]. let\n"
            "    b:f32[2,2] = slice[limit_indices=(4, 3) start_indices=(1, 1) strides=(2, 1)] a\n"
            "    c:f32[2,2] = rev[dimensions=(0,)] b\n"
            "    d:f32[1,2,2,1] = broadcast_in_dim[broadcast_dimensions=(1, 2)] c\n"
            "  in (d,) }"
        ),
    ),
]


@pytest.mark.parametrize("index,expected", GOLDEN, ids=[ids(g[0]) for g in GOLDEN])
def test_getitem_golden(index, expected):
    assert str(tracejit.make_jaxpr(lambda v: v[index])(jnp.zeros((4, 5)))) == expected


def test_iteration():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    rows = list(jnp.asarray(x))
    assert len(rows) == 2
    for row, expected in zip(rows, x, strict=True):
        np.testing.assert_array_equal(np.asarray(row), expected)
    out = check_traced_matches_eager(lambda v: list(v), jnp.asarray(x))
    assert len(out) == 2
    assert str(tracejit.make_jaxpr(lambda v: list(v))(jnp.zeros((2, 3)))) == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n"
        "    c:f32[3] = squeeze[dimensions=(0,)] b\n"
        "    d:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] a\n"
        "    e:f32[3] = squeeze[dimensions=(0,)] d\n"
        "  in (c, e) }"
    )
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.asarray(1.0))


def test_indexing_errors():
    x = jnp.zeros((4, 5))
    with pytest.raises(
        IndexError, match="Too many indices: array is 2-dimensional, but 3 were indexed"
    ):
        x[1, 2, 3]
    with pytest.raises(IndexError, match=r"an index can only have a single ellipsis \('...'\)"):
        x[..., ...]
    with pytest.raises(
        TypeError, match="Indexer must have integer or boolean type, got indexer with type float64"
    ):
        x[1.0]
    with pytest.raises(TypeError, match="JAX does not support string indexing"):
        x["a"]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]
    with pytest.raises(
        NonConcreteBooleanIndexError, match="Array boolean indices must be concrete; got bool"
    ):
        tracejit.make_jaxpr(lambda v: v[v > 0])(x)
    with pytest.raises(IndexError):
        jnp.zeros((0, 3))[0]


def test_immutability():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"does not support item assignment.*x\.at\[idx\]\.set"):
        x[0] = 1.0
    with pytest.raises(TypeError, match="does not support item assignment"):
        tracejit.make_jaxpr(lambda v: v.__setitem__(0, 1.0))(x)
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view[0] = 1.0


# --------------------------------------------------------------------------------------------
# .at[]

UPDATE_INDICES = [
    0,
    -1,
    10,
    -10,
    (1, 2),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(None, None, -2),
    slice(3, 0, -2),
    (slice(None), slice(1, 4, 2)),
    (E, 1),
    None,
    (1, None, slice(2, None)),
    slice(5, 10),
    slice(2, 1),
    (slice(1, 2), slice(None, None, -3)),
    (),
    E,
]


def numpy_update(x, index, method, y):
    out = x.copy()
    clamp_dropped = False
    try:
        region = out[index]
    except IndexError:
        clamp_dropped = True
    if clamp_dropped:
        return out  # out-of-range updates are dropped
    y = np.broadcast_to(np.asarray(y, dtype=x.dtype), region.shape)
    ops = {
        "set": lambda r, v: v,
        "add": np.add,
        "multiply": np.multiply,
        "min": np.minimum,
        "max": np.maximum,
        "subtract": np.subtract,
        "divide": np.divide,
        "power": np.power,
    }
    out[index] = ops[method](region, y)
    return out


@pytest.mark.parametrize(
    "method", ["set", "add", "multiply", "min", "max", "subtract", "divide", "power"]
)
@pytest.mark.parametrize("index", UPDATE_INDICES, ids=ids)
def test_at_updates_match_numpy(index, method):
    x = np.arange(20, dtype=np.float32).reshape(4, 5) / 4
    y = np.float32(1.5)
    out = check_traced_matches_eager(
        lambda v: getattr(v.at[index], method)(y), jnp.asarray(x), rtol=1e-5
    )
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), numpy_update(x, index, method, y), rtol=1e-5)


@pytest.mark.parametrize(
    "index,values",
    [
        ((slice(1, 3), slice(None, None, 2)), np.arange(6, dtype=np.float32).reshape(2, 3)),
        (slice(None, None, -1), np.arange(5, dtype=np.float32)),
        ((slice(None, None, -2), slice(1, None, 2)), np.arange(4, dtype=np.float32).reshape(2, 2)),
        ((1, None), np.arange(5, dtype=np.float32)[None]),
        (1, np.arange(5, dtype=np.float32)),
    ],
)
def test_at_set_arrays(index, values):
    x = np.zeros((4, 5), np.float32)
    out = check_traced_matches_eager(
        lambda v, w: v.at[index].set(w), jnp.asarray(x), jnp.asarray(values)
    )
    np.testing.assert_array_equal(np.asarray(out), numpy_update(x, index, "set", values))


def test_at_dtypes_and_weak_types():
    x = jnp.arange(4)
    out = x.at[1].set(2.7)
    assert out.dtype == np.int32 and np.asarray(out).tolist() == [0, 2, 2, 3]
    out = x.at[1].add(2.7)
    assert out.dtype == np.int32
    w = jnp.asarray(2.0).at[()].set(3)
    assert (w.dtype, w.weak_type, float(w)) == (np.float32, True, 3.0)
    assert float(jnp.zeros(3).at[1].get()) == 0.0
    out = jnp.arange(5.0).at[1:3].apply(lambda v: v * 10)
    assert np.asarray(out).tolist() == [0.0, 10.0, 20.0, 3.0, 4.0]


def test_at_with_traced_index():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for i in (0, 2, -1):
        out = check_traced_matches_eager(
            lambda v, k: v.at[k].set(-1.0), jnp.asarray(x), jnp.asarray(i)
        )
        expected = x.copy()
        expected[i] = -1
        np.testing.assert_array_equal(np.asarray(out), expected)
        out = check_traced_matches_eager(
            lambda v, k: v.at[:, k].add(100.0), jnp.asarray(x), jnp.asarray(i)
        )
        expected = x.copy()
        expected[:, i] += 100
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_at_does_not_modify_the_original():
    x = jnp.zeros(3)
    y = x.at[0].set(5.0)
    assert np.asarray(x).tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(y).tolist() == [5.0, 0.0, 0.0]


def test_at_golden_contiguous_update():
    # As JAX 0.10.2 stages it: a scatter even at static indices.
    jaxpr = tracejit.make_jaxpr(lambda v, w: v.at[1:3].set(w))(jnp.zeros((4, 5)), jnp.ones((2, 5)))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[4,5] b:f32[2,5]. let\n"
        "    c:i32[1] = broadcast_in_dim 1:i32[]\n"
        "    d:f32[4,5] = scatter[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, 1), "
        "inserted_window_dims=(), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), "
        "scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=True\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      unique_indices=True\n"
        "      update_consts=()\n"
        "      update_jaxpr=None\n"
        "    ] a c b\n"
        "  in (d,) }"
    )


def test_at_errors():
    x = jnp.zeros((4, 5))
    with pytest.raises(ValueError):
        x.at[1].set(jnp.ones(4))


def test_traced_index_golden():
    jaxpr = tracejit.make_jaxpr(lambda v, i: v[i])(jnp.zeros((4, 5)), 1)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[4,5] b:i32[]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
        "    d:bool[] = lt c 0:i32[]\n"
        "    e:i32[] = add c 4:i32[]\n"
        "    f:i32[] = select_n d c e\n"
        "    g:bool[] = lt 0:i32[] 0:i32[]\n"
        "    h:i32[] = add 0:i32[] 5:i32[]\n"
        "    i:i32[] = select_n g 0:i32[] h\n"
        "    j:f32[1,5] = dynamic_slice[slice_sizes=(1, 5)] a f i\n"
        "    k:f32[5] = squeeze[dimensions=(0,)] j\n"
        "  in (k,) }"
    )
