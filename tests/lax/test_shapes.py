"""Shape, dtype-conversion and selection primitives (`lax/shapes.py`), generated from op specs.

Every case runs eagerly and staged (`check_traced_matches_eager`) and is compared with a NumPy
reference; special values (conversions, select_n's clamping) and the golden printouts come from
the reference JAX.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest
from helpers import bf16, check_exact, check_traced_matches_eager, small_integers

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr

ALL_DTYPES = [np.float32, np.float16, bf16, np.int32, np.uint8, np.bool_, np.complex64]


def np_broadcast_in_dim(x, shape, dims):
    expanded = [1] * len(shape)
    for d, size in zip(dims, x.shape, strict=True):
        expanded[d] = size
    order = np.argsort(dims)
    return np.broadcast_to(np.transpose(x, order).reshape(expanded), shape)


def np_pad(x, value, config):
    """Interior padding by scattering, then edge padding/cropping, one axis at a time."""
    for axis, (low, high, interior) in enumerate(config):
        size = x.shape[axis]
        expanded = list(x.shape)
        expanded[axis] = size + max(size - 1, 0) * interior
        out = np.full(expanded, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        out[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(low, 0), max(high, 0))
        out = np.pad(out, widths, constant_values=value)
        index[axis] = slice(max(-low, 0), out.shape[axis] - max(-high, 0))
        x = out[tuple(index)]
    return x


# Op specs: (id, fun of the arrays, NumPy reference, operand shapes). Every spec runs on every
# dtype of its list.
SHAPE_SPECS = [
    (
        "bid_scalar",
        lambda x: lax.broadcast_in_dim(x, (2, 3), ()),
        lambda x: np.broadcast_to(x, (2, 3)),
        [()],
    ),
    (
        "bid_lead",
        lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
        lambda x: np_broadcast_in_dim(x, (4, 2, 3), (1, 2)),
        [(2, 3)],
    ),
    (
        "bid_ones",
        lambda x: lax.broadcast_in_dim(x, (2, 5, 3), (0, 2)),
        lambda x: np_broadcast_in_dim(x, (2, 5, 3), (0, 2)),
        [(1, 3)],
    ),
    (
        "bid_permuted",
        lambda x: lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)),
        lambda x: np_broadcast_in_dim(x, (3, 4, 2), (2, 0)),
        [(2, 3)],
    ),
    (
        "bid_empty",
        lambda x: lax.broadcast_in_dim(x, (0, 3), (0, 1)),
        lambda x: np.zeros((0, 3), x.dtype),
        [(0, 1)],
    ),
    (
        "broadcast",
        lambda x: lax.broadcast(x, (4, 1)),
        lambda x: np.broadcast_to(x, (4, 1, *x.shape)),
        [(2, 3)],
    ),
    (
        "broadcast_to_rank",
        lambda x: lax.broadcast_to_rank(x, 3),
        lambda x: x.reshape(1, *x.shape),
        [(2, 3)],
    ),
    ("expand_dims", lambda x: lax.expand_dims(x, (0, -1)), lambda x: x[None, ..., None], [(2, 3)]),
    ("expand_dims_scalar", lambda x: lax.expand_dims(x, (0,)), lambda x: np.reshape(x, (1,)), [()]),
    ("reshape", lambda x: lax.reshape(x, (3, 2)), lambda x: x.reshape(3, 2), [(2, 3)]),
    ("reshape_dims", lambda x: lax.reshape(x, (6,), (1, 0)), lambda x: x.T.reshape(6), [(2, 3)]),
    ("reshape_scalar", lambda x: lax.reshape(x, (1, 1)), lambda x: np.reshape(x, (1, 1)), [()]),
    ("reshape_to_scalar", lambda x: lax.reshape(x, ()), lambda x: x.reshape(()), [(1, 1)]),
    ("reshape_empty", lambda x: lax.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), [(0, 5)]),
    (
        "transpose",
        lambda x: lax.transpose(x, (2, 0, 1)),
        lambda x: x.transpose(2, 0, 1),
        [(2, 3, 4)],
    ),
    ("transpose_empty", lambda x: lax.transpose(x, (1, 0)), lambda x: x.T, [(0, 3)]),
    ("squeeze", lambda x: lax.squeeze(x, (0, -1)), lambda x: x.reshape(2, 3), [(1, 2, 3, 1)]),
    ("squeeze_scalar", lambda x: lax.squeeze(x, (0,)), lambda x: x.reshape(()), [(1,)]),
    ("rev", lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1], [(2, 3, 4)]),
    ("rev_none", lambda x: lax.rev(x, ()), lambda x: x, [(2, 3)]),
    ("rev_scalar", lambda x: lax.rev(x, ()), lambda x: x, [()]),
    (
        "concatenate",
        lambda x, y: lax.concatenate([x, y, x], 1),
        lambda x, y: np.concatenate([x, y, x], 1),
        [(2, 3), (2, 1)],
    ),
    (
        "concatenate_empty",
        lambda x, y: lax.concatenate([x, y], 0),
        lambda x, y: np.concatenate([x, y]),
        [(0, 3), (2, 3)],
    ),
    ("concatenate_one", lambda x: lax.concatenate([x], 0), lambda x: x, [(2,)]),
    ("copy", lambda x: lax.copy_p.bind(x), lambda x: x, [(2, 3)]),
    ("copy_scalar", lambda x: lax.copy_p.bind(x), lambda x: x, [()]),
]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("spec", SHAPE_SPECS, ids=lambda s: s[0])
def test_shape_op_matches_numpy(spec, dtype):
    _, fun, reference, shapes = spec
    args = [small_integers(shape, dtype, seed) for seed, shape in enumerate(shapes)]
    check_exact(fun, args, reference(*args))


PAD_CONFIGS = [
    ((2, 3), ((1, 2, 0), (0, 1, 0))),
    ((2, 3), ((0, 0, 1), (1, 1, 2))),
    ((2, 5), ((-1, 1, 1), (2, -3, 2))),
    ((4,), ((-2, -1, 0),)),
    ((3,), ((-4, 0, 1),)),
    ((2, 3), ((-1, -1, 0), (0, 0, 0))),
    ((0, 2), ((1, 1, 3), (0, 0, 0))),
    ((), ()),
]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,config", PAD_CONFIGS, ids=str)
def test_pad_matches_numpy(shape, config, dtype):
    x = small_integers(shape, dtype)
    value = np.asarray(small_integers((), dtype, seed=7) if dtype != np.bool_ else True, dtype)
    check_exact(lambda x, v: lax.pad(x, v, config), [x, value], np_pad(x, value, config))


def test_pad_matches_jax_on_negative_and_interior_padding():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = lax.pad(x, -1.0, ((-1, 1, 1), (2, -3, 2)))
    expected = np.full((3, 12), -1.0, np.float32)
    expected[1, 2::3] = [5, 6, 7, 8]
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize(
    "dtype",
    [np.int32, np.uint8, np.int8, np.float32, np.float16, bf16, np.complex64],
    ids=lambda d: np.dtype(d).name,
)
def test_iota(dtype):
    check_exact(lambda: lax.iota(dtype, 5), [], np.arange(5).astype(dtype))
    expected = np.broadcast_to(np.arange(3).astype(dtype)[None, :, None], (2, 3, 4))
    check_exact(lambda: lax.broadcasted_iota(dtype, (2, 3, 4), 1), [], expected)
    check_exact(lambda: lax.iota(dtype, 0), [], np.zeros(0, dtype))


def test_iota_rounds_and_wraps_as_xla():
    # Values from the reference JAX: uint8 wraps, bfloat16/float16 round to nearest even.
    assert np.asarray(lax.iota(np.uint8, 300))[255:258].tolist() == [255, 0, 1]
    assert np.asarray(lax.iota(bf16, 300))[256:262].astype(float).tolist() == [
        256,
        256,
        258,
        260,
        260,
        260,
    ]
    assert float(np.asarray(lax.iota(np.float16, 3000))[2049]) == 2048.0


def test_iota_64_bit(enable_x64):
    assert lax.iota(np.int64, 3).dtype == np.int64
    assert lax.iota(int, 3).dtype == np.int64


def test_iota_truncates_64_bit_dtypes_with_a_warning():
    with pytest.warns(UserWarning, match="int64 requested in broadcasted_iota"):
        assert lax.iota(np.int64, 3).dtype == np.int32


# --- convert_element_type -------------------------------------------------------------------
CONVERSIONS = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES]


@pytest.mark.parametrize("old,new", CONVERSIONS, ids=lambda d: np.dtype(d).name)
def test_convert_element_type_matches_numpy_on_exact_values(old, new):
    x = small_integers((2, 3), old)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        source = x.real if np.dtype(old).kind == "c" and np.dtype(new).kind != "c" else x
        if np.dtype(new).kind in "iu" and np.dtype(old).kind not in "iub":  # XLA saturates
            info = ml_dtypes.iinfo(new)
            source = np.clip(source.astype(np.float64), info.min, info.max)
        expected = source.astype(new)
        check_exact(lambda x: lax.convert_element_type(x, new), [x], expected)


SPECIAL = np.array(
    [
        1e10,
        -1e10,
        np.nan,
        np.inf,
        -np.inf,
        2.7,
        -2.7,
        0.5,
        -0.5,
        2147483520.0,
        3e9,
        255.9,
        256.0,
        -1.0,
    ],
    np.float32,
)
# What the reference JAX gives on CPU: truncation toward zero, saturation, NaN -> 0.
SPECIAL_EXPECTED = {
    np.int32: [
        2147483647,
        -2147483648,
        0,
        2147483647,
        -2147483648,
        2,
        -2,
        0,
        0,
        2147483520,
        2147483647,
        255,
        256,
        -1,
    ],
    np.int8: [127, -128, 0, 127, -128, 2, -2, 0, 0, 127, 127, 127, 127, -1],
    np.uint8: [255, 0, 0, 255, 0, 2, 0, 0, 0, 255, 255, 255, 255, 0],
    np.uint32: [4294967295, 0, 0, 4294967295, 0, 2, 0, 0, 0, 2147483520, 3000000000, 255, 256, 0],
    np.int16: [32767, -32768, 0, 32767, -32768, 2, -2, 0, 0, 32767, 32767, 255, 256, -1],
    np.bool_: [True] * 14,
}


@pytest.mark.parametrize("new", list(SPECIAL_EXPECTED), ids=lambda d: np.dtype(d).name)
def test_convert_float_to_int_saturates_like_xla(new):
    check_exact(
        lambda x: lax.convert_element_type(x, new), [SPECIAL], np.array(SPECIAL_EXPECTED[new], new)
    )


def test_convert_special_values_from_other_dtypes():
    h = np.array([65504, np.nan, -np.inf, 1e4], np.float16)
    assert np.asarray(lax.convert_element_type(h, np.int32)).tolist() == [
        65504,
        0,
        -2147483648,
        10000,
    ]
    assert np.asarray(lax.convert_element_type(h, np.int8)).tolist() == [127, 0, -128, 127]
    i = np.array([2**31 - 1, -(2**31), 300, -300, 0, 1, 16777217], np.int32)
    assert np.asarray(lax.convert_element_type(i, np.int8)).tolist() == [-1, 0, 44, -44, 0, 1, 1]
    assert np.asarray(lax.convert_element_type(i, np.float16)).tolist()[:3] == [
        np.inf,
        -np.inf,
        300.0,
    ]
    assert np.asarray(lax.convert_element_type(i, np.float32)).tolist()[-1] == 16777216.0
    f = np.array([np.nan, 0.0, -0.0, 0.1], np.float32)
    assert np.asarray(lax.convert_element_type(f, np.bool_)).tolist() == [True, False, False, True]
    c = np.array([1.5 + 2j, np.nan + 1j, 1j, 0j], np.complex64)
    with pytest.warns(np.exceptions.ComplexWarning):
        assert np.asarray(lax.convert_element_type(c, np.int32)).tolist() == [1, 0, 0, 0]
    with pytest.warns(np.exceptions.ComplexWarning):
        assert np.asarray(lax.convert_element_type(c, np.bool_)).tolist() == [
            True,
            True,
            False,
            False,
        ]
    big = np.array([1e10], np.float32)
    assert np.asarray(lax.convert_element_type(big, bf16)).astype(float).tolist() == [9999220736.0]


def test_convert_64_bit_saturation(enable_x64):
    f = np.array(
        [
            1e30,
            -1e30,
            np.nan,
            9.223372036854775e18,
            -9.223372036854775808e18,
            2.5,
            -2.5,
            1.8446744073709552e19,
        ]
    )
    assert np.asarray(lax.convert_element_type(f, np.int64)).tolist() == [
        9223372036854775807,
        -9223372036854775808,
        0,
        9223372036854774784,
        -9223372036854775808,
        2,
        -2,
        9223372036854775807,
    ]
    assert np.asarray(lax.convert_element_type(f, np.uint64)).tolist() == [
        18446744073709551615,
        0,
        0,
        9223372036854774784,
        0,
        2,
        0,
        18446744073709551615,
    ]


def test_convert_element_type_weak_types_and_shortcuts():
    out = lax.convert_element_type(2.0, np.float32)
    assert out.dtype == np.float32 and not out.weak_type
    assert lax.convert_element_type(2, float).dtype == np.float32
    assert lax.convert_element_type(True, int).dtype == np.int32
    x = lax.convert_element_type(np.ones(3, np.float32), np.float32)
    assert lax.convert_element_type(x, np.float32) is x  # no-op conversions return the operand
    jaxpr = make_jaxpr(lambda x: lax.convert_element_type(x, "float32"))(np.float32(1))
    assert not jaxpr.eqns
    jaxpr = make_jaxpr(lambda x: lax.convert_element_type(x, np.float32))(1.0)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "  in (b,) }"
    )


# --- bitcast_convert_type -------------------------------------------------------------------
BITCASTS = [
    (np.float32, np.int32, (2, 3)),
    (np.int32, np.float32, (4,)),
    (np.float32, np.uint8, (2, 3)),
    (np.float32, np.uint8, ()),
    (np.float32, np.float16, (3,)),
    (np.uint8, np.float32, (3, 4)),
    (np.uint8, np.float32, (4,)),
    (np.float16, np.int32, (2,)),
    (bf16, np.int16, (5,)),
    (np.int8, np.uint8, (0,)),
    (np.bool_, np.bool_, (3,)),
    (np.complex64, np.complex64, (3,)),
]


@pytest.mark.parametrize("old,new,shape", BITCASTS, ids=str)
def test_bitcast_convert_type_matches_numpy_view(old, new, shape):
    x = small_integers(shape, old)
    old, new = np.dtype(old), np.dtype(new)
    if old.itemsize > new.itemsize:
        expected = np.ascontiguousarray(x).reshape(*shape, 1).view(new)
    elif old.itemsize < new.itemsize:
        expected = np.ascontiguousarray(x).view(new).reshape(shape[:-1])
    else:
        expected = x.view(new)
    check_exact(lambda x: lax.bitcast_convert_type(x, new), [x], expected)


def test_bitcast_is_little_endian_like_xla():
    assert np.asarray(lax.bitcast_convert_type(np.float32(1.0), np.uint8)).tolist() == [
        0,
        0,
        128,
        63,
    ]
    transposed = np.arange(6, dtype=np.float32).reshape(2, 3).T
    out = lax.bitcast_convert_type(transposed, np.uint8)
    assert out.shape == (3, 2, 4)
    np.testing.assert_array_equal(
        np.asarray(out), np.ascontiguousarray(transposed)[..., None].view(np.uint8)
    )


# --- select_n, clamp ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (2, 3), (0,)], ids=str)
def test_select(shape, dtype):
    pred, x, y = (
        small_integers(shape, np.bool_, 1),
        small_integers(shape, dtype, 2),
        small_integers(shape, dtype, 3),
    )
    check_exact(lax.select, [pred, x, y], np.where(pred, x, y))
    check_exact(lax.select, [np.bool_(True), x, y], x)
    check_exact(lambda p, a: lax.select_n(p, a), [pred, x], x)


@pytest.mark.parametrize(
    "which_dtype", [np.int32, np.uint8, np.int8], ids=lambda d: np.dtype(d).name
)
@pytest.mark.parametrize(
    "dtype", [np.float32, bf16, np.int32, np.bool_], ids=lambda d: np.dtype(d).name
)
def test_select_n_with_integer_which(which_dtype, dtype):
    cases = [small_integers((2, 4), dtype, seed) for seed in range(3)]
    which = np.array([[0, 1, 2, 1], [2, 2, 0, 1]], which_dtype)
    check_exact(lax.select_n, [which, *cases], np.choose(which, cases))
    check_exact(lax.select_n, [which_dtype(2), *cases], cases[2])


def test_select_n_clamps_out_of_range_which_as_xla():
    cases = [np.full(5, i, np.float32) for i in range(3)]
    out = lax.select_n(np.array([0, 1, 2, 5, -1], np.int32), *cases)
    assert np.asarray(out).tolist() == [0.0, 1.0, 2.0, 2.0, 0.0]
    many = [np.full(2, i, np.int32) for i in range(40)]
    assert np.asarray(lax.select_n(np.array([39, 3], np.int32), *many)).tolist() == [39, 3]


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float16, bf16, np.int32, np.uint8, np.bool_],
    ids=lambda d: np.dtype(d).name,
)
def test_clamp(dtype):
    x, lo, hi = (
        small_integers((2, 3), dtype, 1),
        small_integers((2, 3), dtype, 2),
        small_integers((2, 3), dtype, 3),
    )
    check_exact(lax.clamp, [lo, x, hi], np.minimum(np.maximum(x, lo), hi))
    lo, hi = small_integers((), dtype, 4), small_integers((), dtype, 5)
    check_exact(lax.clamp, [lo, x, hi], np.minimum(np.maximum(x, lo), hi))
    check_exact(
        lax.clamp,
        [lo, small_integers((), dtype, 6), hi],
        np.minimum(np.maximum(small_integers((), dtype, 6), lo), hi),
    )


def test_clamp_large_arrays():
    x = np.linspace(-2, 2, 5000, dtype=np.float32)
    check_exact(lambda x: lax.clamp(np.float32(-1), x, np.float32(1)), [x], np.clip(x, -1, 1))


def test_clamp_values_from_jax():
    assert (
        np.asarray(lax.clamp(np.float32(2), np.arange(4, dtype=np.float32), np.float32(1))).tolist()
        == [1.0] * 4
    )
    assert np.isnan(np.asarray(lax.clamp(1.0, np.float32(np.nan), 2.0)))
    assert np.asarray(
        lax.clamp(np.uint8(3), np.arange(6, dtype=np.uint8), np.uint8(4))
    ).tolist() == [3, 3, 3, 3, 4, 4]


# --- weak types -----------------------------------------------------------------------------
W = 2.0  # a weak float32 scalar
F = np.float32(2.0)  # a strong one
WEAK_CASES = [
    ("bid", lambda x: lax.broadcast_in_dim(x, (3,), ()), [W], True),
    ("reshape", lambda x: lax.reshape(x, (1, 1)), [W], True),
    ("transpose", lambda x: lax.transpose(lax.broadcast(x, (2, 3)), (1, 0)), [W], True),
    ("squeeze", lambda x: lax.squeeze(lax.broadcast(x, (1,)), (0,)), [W], True),
    ("expand_dims", lambda x: lax.expand_dims(x, (0,)), [W], True),
    ("rev", lambda x: lax.rev(lax.broadcast(x, (2,)), (0,)), [W], True),
    ("pad_weak_weak", lambda x, v: lax.pad(lax.broadcast(x, (2,)), v, ((1, 1, 0),)), [W, W], True),
    (
        "pad_weak_strong",
        lambda x, v: lax.pad(lax.broadcast(x, (2,)), v, ((1, 1, 0),)),
        [W, F],
        False,
    ),
    (
        "pad_strong_weak",
        lambda x, v: lax.pad(lax.broadcast(x, (2,)), v, ((1, 1, 0),)),
        [F, W],
        False,
    ),
    (
        "concat_weak",
        lambda x, y: lax.concatenate([lax.broadcast(x, (2,)), lax.broadcast(y, (1,))], 0),
        [W, W],
        True,
    ),
    (
        "concat_mixed",
        lambda x, y: lax.concatenate([lax.broadcast(x, (2,)), lax.broadcast(y, (1,))], 0),
        [W, F],
        False,
    ),
    ("convert", lambda x: lax.convert_element_type(x, np.float32), [W], False),
    ("convert_int", lambda x: lax.convert_element_type(x, np.int32), [W], False),
    ("bitcast", lambda x: lax.bitcast_convert_type(x, np.int32), [W], False),
    ("select_n_weak_which", lambda p, x, y: lax.select_n(p, x, y), [1, W, W], True),
    ("select_mixed", lambda p, x, y: lax.select(p, x, y), [np.bool_(True), W, F], False),
    ("clamp_weak", lax.clamp, [0.0, W, 3.0], True),
    ("clamp_mixed", lax.clamp, [0.0, F, 3.0], False),
    ("copy", lambda x: lax.copy_p.bind(x), [W], True),
    ("iota", lambda x: lax.iota(np.float32, 3), [W], False),
]


@pytest.mark.parametrize(
    "fun,args,weak", [c[1:] for c in WEAK_CASES], ids=[c[0] for c in WEAK_CASES]
)
def test_weak_types_follow_jax(fun, args, weak):
    assert check_traced_matches_eager(fun, *args).weak_type == weak
    assert make_jaxpr(fun)(*args).out_avals[0].weak_type == weak


def test_select_n_is_weak_when_every_case_is():
    # JAX: the cases decide; `which` (a bool, never weak) does not count.
    fun = lambda p, x, y: lax.select(p, x, y)
    assert check_traced_matches_eager(fun, np.bool_(True), W, W).weak_type
    assert make_jaxpr(fun)(np.bool_(True), W, W).out_avals[0].weak_type


# --- golden printouts (the reference JAX's, minus its sharding params) ----------------------
X = np.zeros((2, 3), np.float32)
GOLDEN = [
    (
        lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
        [X],
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: lax.reshape(x, (3, 2), (1, 0)),
        [X],
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[3,2] = reshape[dimensions=(1, 0) new_sizes=(3, 2) sharding=None] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: lax.squeeze(lax.expand_dims(x, (0,)), (0,)),
        [X],
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
            "    c:f32[2,3] = squeeze[dimensions=(0,)] b\n"
            "  in (c,) }"
        ),
    ),
    (
        lambda x: lax.rev(x, (0,)),
        [X],
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = rev[dimensions=(0,)] a in (b,) }",
    ),
    (
        lambda x: lax.pad(x, 0.0, ((1, 2, 0), (-1, 0, 1))),
        [X],
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:f32[5,4] = pad[padding_config=((1, 2, 0), (-1, 0, 1))] a 0.0:f32[]\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda x: lax.concatenate([x, x], 0),
        [X],
        "{ lambda ; a:f32[2,3]. let b:f32[4,3] = concatenate[dimension=0] a a in (b,) }",
    ),
    (
        lambda: lax.broadcasted_iota(np.float32, (2, 3), 1),
        [],
        (
            "{ lambda ; . let\n"
            "    a:f32[2,3] = iota[dimension=1 dtype=float32 shape=(2, 3) sharding=None] \n"
            "  in (a,) }"
        ),
    ),
    (
        lambda x: lax.bitcast_convert_type(x, np.uint8),
        [X],
        (
            "{ lambda ; a:f32[2,3]. let\n"
            "    b:u8[2,3,4] = bitcast_convert_type[new_dtype=uint8] a\n"
            "  in (b,) }"
        ),
    ),
    (
        lambda p, x: lax.select(p, x, x),
        [np.zeros((2, 3), bool), X],
        "{ lambda ; a:bool[2,3] b:f32[2,3]. let c:f32[2,3] = select_n a b b in (c,) }",
    ),
    (
        lambda x: lax.select_n(np.int32(1), x, x, x),
        [X],
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = select_n 1:i32[] a a a in (b,) }",
    ),
    (
        lambda x: lax.clamp(0.0, x, 1.0),
        [X],
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = clamp 0.0:f32[] a 1.0:f32[] in (b,) }",
    ),
    (
        lambda x: lax.copy_p.bind(x),
        [X],
        "{ lambda ; a:f32[2,3]. let b:f32[2,3] = copy a in (b,) }",
    ),
]


@pytest.mark.parametrize("fun,args,expected", GOLDEN, ids=range(len(GOLDEN)))
def test_golden_jaxpr(fun, args, expected):
    assert str(make_jaxpr(fun)(*args)) == expected


def test_identity_wrappers_stage_nothing():
    for fun in [
        lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)),
        lambda x: lax.broadcast(x, ()),
        lambda x: lax.broadcast_to_rank(x, 2),
        lambda x: lax.reshape(x, (2, 3), (0, 1)),
        lambda x: lax.transpose(x, (0, 1)),
        lambda x: lax.squeeze(x, ()),
        lambda x: lax.expand_dims(x, ()),
        lambda x: lax.concatenate([x], 1),
        lambda x: lax.convert_element_type(x, np.float32),
    ]:
        assert not make_jaxpr(fun)(X).eqns
    assert len(make_jaxpr(lambda x: lax.rev(x, ()))(X).eqns) == 1  # JAX binds these
    assert len(make_jaxpr(lambda x: lax.reshape(x, ()))(np.float32(0)).eqns) == 1


# --- errors: eager and staged raise the same type, naming the op and shapes/dtypes -----------
I32 = np.zeros((2, 3), np.int32)
B = np.zeros((2, 3), bool)
B3 = np.zeros(3, bool)
X3 = np.zeros(3, np.float32)
X23 = np.zeros((2, 2), np.float32)
ERRORS = [
    (
        lambda x: lax.broadcast_in_dim(x, (3,), (0,)),
        [X],
        TypeError,
        "broadcast_dimensions must have length equal to operand ndim",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 4), (0, 1)),
        [X],
        TypeError,
        "operand of shape (2, 3), target broadcast shape (2, 4)",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 2)),
        [X],
        TypeError,
        "broadcast_in_dim broadcast_dimensions must be a subset",
    ),
    (
        lambda x: lax.broadcast_in_dim(x, (2, -3), (0, 1)),
        [X],
        TypeError,
        "broadcast_in_dim shape must have every element be nonnegative",
    ),
    (
        lambda x: lax.broadcast_in_dim(np.zeros((3, 3), np.float32), (2, 3), (1, 1)),
        [X],
        TypeError,
        "must not contain duplicates",
    ),
    (
        lambda x: lax.reshape(x, (4, 2)),
        [X],
        TypeError,
        "reshape total size must be unchanged, got new_sizes (4, 2)",
    ),
    (lambda x: lax.reshape(x, (-1, 6)), [X], TypeError, "reshape new_sizes must all be positive"),
    (
        lambda x: lax.reshape(x, (3, 2), (0, 0)),
        [X],
        TypeError,
        "reshape dimensions must be a permutation",
    ),
    (
        lambda x: lax.transpose(x, (0, 0)),
        [X],
        TypeError,
        "transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) for operand shape (2, 3)",
    ),
    (lambda x: lax.transpose(x, (-1, 0)), [X], TypeError, "transpose permutation"),
    (
        lambda x: lax.squeeze(x, (0,)),
        [X],
        ValueError,
        "cannot select an axis to squeeze out which has size not equal to one, got shape=(2, 3)",
    ),
    (
        lambda x: lax.squeeze(x, (2,)),
        [X],
        ValueError,
        "axis 2 is out of bounds for array of dimension 2",
    ),
    (
        lambda x: lax.expand_dims(x, (3,)),
        [X],
        ValueError,
        "axis 3 is out of bounds for array of dimension 3",
    ),
    (lambda x: lax.expand_dims(x, (0, 0)), [X], ValueError, "repeated axis in lax.expand_dims"),
    (
        lambda x: lax.rev(x, (2,)),
        [X],
        TypeError,
        "rev dimensions must all be less than operand ndim",
    ),
    (
        lambda x: lax.rev(x, (-1,)),
        [X],
        TypeError,
        "rev dimensions must have every element be nonnegative",
    ),
    (lambda x: lax.rev(x, (0, 0)), [X], TypeError, "rev dimensions must be unique"),
    (
        lambda x: lax.pad(x, np.int32(0), ((0, 0, 0), (0, 0, 0))),
        [X],
        TypeError,
        "pad operand and padding_value must be same dtype: got float32 and int32",
    ),
    (
        lambda x: lax.pad(x, np.zeros(1, np.float32), ((0, 0, 0), (0, 0, 0))),
        [X],
        ValueError,
        "padding_value must be a scalar",
    ),
    (
        lambda x: lax.pad(x, 0.0, ((0, 0, 0),)),
        [X],
        ValueError,
        "length of padding_config must equal the number of axes of operand",
    ),
    (
        lambda x: lax.pad(x, 0.0, ((0, 0, -1), (0, 0, 0))),
        [X],
        ValueError,
        "interior padding in padding_config must be nonnegative",
    ),
    (
        lambda x: lax.pad(x, 0.0, ((-2, -1, 0), (0, 0, 0))),
        [X],
        ValueError,
        "padding is not at least 0, got result shape (-1, 3)",
    ),
    (lambda x: lax.concatenate([], 0), [X], ValueError, "concatenate requires a non-empty"),
    (
        lambda x, y: lax.concatenate([x, y], 0),
        [X, I32],
        TypeError,
        "lax.concatenate requires arguments to have the same dtypes, got float32, int32",
    ),
    (
        lambda x, y: lax.concatenate([x, y], 0),
        [X, X23],
        TypeError,
        "concatenating along dimension 0 for shapes (2, 3), (2, 2)",
    ),
    (
        lambda x, y: lax.concatenate([x, y], 0),
        [X, X3],
        TypeError,
        "Cannot concatenate arrays with different numbers of dimensions: got (2, 3), (3,)",
    ),
    (
        lambda x: lax.concatenate([x, x], 2),
        [X],
        TypeError,
        "concatenate dimension out of bounds: dimension 2 for shapes (2, 3), (2, 3)",
    ),
    (lambda x: lax.concatenate([x, x], -1), [X], TypeError, "concatenate dimension out of bounds"),
    (lambda: lax.iota(np.bool_, 3), [], TypeError, "iota does not accept dtype bool"),
    (
        lambda: lax.iota(np.float32, -1),
        [],
        TypeError,
        "iota shape must have every element be nonnegative",
    ),
    (
        lambda: lax.broadcasted_iota(np.int32, (2, 3), 2),
        [],
        ValueError,
        "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)",
    ),
    (lambda x: lax.convert_element_type(x, None), [X], ValueError, "dtype must be specified"),
    (lambda x: lax.convert_element_type(x, "foo"), [X], TypeError, "foo"),
    (
        lambda x: lax.bitcast_convert_type(x, np.bool_),
        [X],
        TypeError,
        "does not support bool or complex values unless the operand and destination types match. Got operand dtype=float32",
    ),
    (
        lambda x: lax.bitcast_convert_type(x, np.float32),
        [X.astype(np.complex64)],
        TypeError,
        "bitcast_convert_type does not support bool or complex",
    ),
    (
        lambda x: lax.bitcast_convert_type(x, np.float32),
        [X.astype(np.float16)],
        ValueError,
        "Attempting to convert array of shape (2, 3) from float16 of size 16 bits to float32",
    ),
    (
        lambda x: lax.bitcast_convert_type(np.zeros((), np.uint8), np.float32),
        [X],
        ValueError,
        "Attempting to convert array of shape ()",
    ),
    (
        lambda b, x: lax.select(b, x, x),
        [B3, X],
        TypeError,
        "select `which` must be scalar or have the same shape as cases, got `which` shape (3,) but case shape (2, 3)",
    ),
    (
        lambda x: lax.select(x, x, x),
        [X],
        TypeError,
        "select `which` must be boolean or integer type, got float32",
    ),
    (
        lambda b, x, y: lax.select(b, x, y),
        [B, X, I32],
        TypeError,
        "lax.select requires arguments to have the same dtypes, got int32, float32",
    ),
    (
        lambda b, x, y: lax.select(b, x, y),
        [B, X, X3],
        TypeError,
        "select cases must have the same shapes, got [(3,), (2, 3)]",
    ),
    (lambda b, x: lax.select_n(b), [B, X], ValueError, "select_n() must have at least one case"),
    (
        lambda b, x: lax.select_n(b, x, x, x),
        [B, X],
        TypeError,
        "select with boolean `which` cannot have > 2 cases",
    ),
    (
        lambda x, y: lax.clamp(np.int32(0), x, np.float32(1)),
        [X, I32],
        TypeError,
        "lax.clamp requires arguments to have the same dtypes, got int32, float32, float32",
    ),
    (
        lambda lo, x: lax.clamp(lo, x, x),
        [X3, X],
        TypeError,
        "clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(3,), operand.shape=(2, 3)",
    ),
    (
        lambda x, hi: lax.clamp(0.0, x, hi),
        [X, X3],
        TypeError,
        "max.shape=(3,), operand.shape=(2, 3)",
    ),
]


@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
@pytest.mark.parametrize("fun,args,error,message", ERRORS, ids=range(len(ERRORS)))
def test_errors(fun, args, error, message, staged):
    with pytest.raises(error) as info:
        (make_jaxpr(fun) if staged else fun)(*args)
    assert message in str(info.value)
