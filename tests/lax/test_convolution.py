"""conv_general_dilated and its wrappers: values against a float64 NumPy reference over a grid
of dimension numbers, strides, paddings, dilations and group counts in 1-D, 2-D and 3-D;
second-order gradients in both operands; vmap against a loop over batch, feature and kernel
axes; jit against eager; NCHW and NHWC alike; dtypes, weak types, printing, lowering and the
errors of bad input as JAX 0.10.2 has them."""

import itertools

import numpy as np
import pytest
from helpers import (
    assert_close,
    b,
    bf16,
    c64,
    check_traced_matches_eager,
    check_vmap,
    f16,
    f32,
    f64,
    i8,
    i32,
    jaxpr_text,
)

import tracejit
from tracejit import lax
from tracejit.test_util import check_grads

LAYOUTS = {
    1: [None, ("NHC", "HIO", "NHC"), ("CHN", "OHI", "HNC")],
    2: [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "IOWH", "CNHW")],
    3: [None, ("NDHWC", "DHWIO", "NDHWC")],
}


def reference(x, w, strides, padding, lhs_dilation, rhs_dilation, dn, groups, batch_groups):
    """The convolution in float64, one kernel tap at a time (independent of the eager impl's
    windows): dilate, pad or crop, then add each tap's strided slice times its weights."""
    dnums = lax.conv_dimension_numbers(x.shape, w.shape, dn)
    x = np.transpose(np.asarray(x, f64), dnums.lhs_spec)
    w = np.transpose(np.asarray(w, f64), dnums.rhs_spec)
    x.ndim - 2
    kernel = w.shape[2:]
    if isinstance(padding, str):
        windows = [(k - 1) * r + 1 for k, r in zip(kernel, rhs_dilation, strict=True)]
        padding = lax.padtype_to_pads(x.shape[2:], windows, strides, padding)
    dilated = np.zeros(
        x.shape[:2] + tuple((n - 1) * a + 1 for n, a in zip(x.shape[2:], lhs_dilation))
    )
    dilated[(slice(None), slice(None), *(slice(None, None, a) for a in lhs_dilation))] = x
    grow = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    padded = np.pad(dilated, grow)
    padded = padded[
        (slice(None), slice(None))
        + tuple(
            slice(max(-lo, 0), size - max(-hi, 0))
            for size, (lo, hi) in zip(padded.shape[2:], padding, strict=True)
        )
    ]
    out_spatial = [
        max((p - (k - 1) * r - 1) // s + 1, 0)
        for p, k, r, s in zip(padded.shape[2:], kernel, rhs_dilation, strides, strict=True)
    ]
    n, c = x.shape[:2]
    o = w.shape[0]
    bg, fg = batch_groups, groups
    out = np.zeros((bg, fg, n // bg, o // (bg * fg), *out_spatial))
    for tap in () if 0 in out_spatial else itertools.product(*map(range, kernel)):
        window = tuple(
            slice(t * r, t * r + (m - 1) * s + 1, s)
            for t, r, m, s in zip(tap, rhs_dilation, out_spatial, strides, strict=True)
        )
        piece = padded[(slice(None), slice(None), *window)]
        piece = piece.reshape(bg, n // bg, fg, c // fg, *out_spatial)
        weights = w[(slice(None), slice(None), *tap)].reshape(bg, fg, o // (bg * fg), c // fg)
        out += np.einsum("bngc...,bgoc->bgno...", piece, weights)
    out = np.moveaxis(out, 2, 0).reshape(n // bg, o, *out_spatial)
    return np.transpose(out, np.argsort(dnums.out_spec))


def operand_shapes(nsp, dn, batch, features, outputs, groups, batch_groups, size=6, k=3):
    """The lhs and rhs shapes in the layouts `dn` names."""
    canonical_lhs = (batch * batch_groups, features * groups, *([size] * nsp))
    canonical_rhs = (outputs * groups * batch_groups, features, *([k] * nsp))
    dnums = lax.conv_dimension_numbers(canonical_lhs, canonical_rhs, dn)
    return (
        tuple(np.array(canonical_lhs)[np.argsort(dnums.lhs_spec)]),
        tuple(np.array(canonical_rhs)[np.argsort(dnums.rhs_spec)]),
    )


def _grid():
    rng = np.random.default_rng(0)
    cases = []
    for nsp, layouts in LAYOUTS.items():
        for dn, padding, (groups, batch_groups) in itertools.product(
            layouts, ("VALID", "SAME", "explicit"), ((1, 1), (2, 1), (1, 2))
        ):
            strides = tuple(int(s) for s in rng.integers(1, 3, nsp))
            rhs_dilation = tuple(int(d) for d in rng.integers(1, 3, nsp))
            lhs_dilation = (1,) * nsp
            if padding == "explicit":
                padding = tuple((int(lo), int(hi)) for lo, hi in rng.integers(-1, 3, (nsp, 2)))
                lhs_dilation = tuple(int(d) for d in rng.integers(1, 3, nsp))
            cases.append(
                (nsp, dn, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups)
            )
    return cases


GRID = _grid()


def _operands(case, seed=0, dtype=f64):
    nsp, dn, *_, groups, batch_groups = case
    lhs_shape, rhs_shape = operand_shapes(nsp, dn, 2, 2, 3, groups, batch_groups, size=5)
    rng = np.random.default_rng(seed)
    return rng.standard_normal(lhs_shape).astype(dtype), rng.standard_normal(rhs_shape).astype(
        dtype
    )


def _conv(case):
    _nsp, dn, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups = case
    return lambda x, w: lax.conv_general_dilated(
        x, w, strides, padding, lhs_dilation, rhs_dilation, dn, groups, batch_groups
    )


@pytest.fixture
def x64():
    with tracejit.enable_x64(True):
        yield


@pytest.mark.parametrize("case", GRID, ids=map(str, range(len(GRID))))
def test_matches_float64_reference(case, x64):
    x, w = _operands(case)
    got = _conv(case)(x, w)
    assert got.dtype == f64
    assert_close(got, reference(x, w, *case[2:6], case[1], *case[6:]), 1e-12)


@pytest.mark.parametrize("case", GRID[::4], ids=map(str, range(0, len(GRID), 4)))
def test_jit_and_staged_match_eager(case):
    x, w = _operands(case, dtype=f32)
    fun = _conv(case)
    assert_close(tracejit.jit(fun)(x, w), fun(x, w), 1e-5)
    check_traced_matches_eager(fun, x, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", GRID[1::5], ids=map(str, range(1, len(GRID), 5)))
def test_second_order_gradients_in_both_operands(case, x64):
    x, w = _operands(case, seed=1)
    check_grads(_conv(case), (x, w), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", GRID[2::5], ids=map(str, range(2, len(GRID), 5)))
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_vmap_matches_loop(case, in_axes):
    """Batched images (folded into the batch), kernels (into the output features), both (into
    the group counts), at leading and inner axes."""
    x, w = _operands(case, dtype=f32)
    rng = np.random.default_rng(3)
    args = [
        a if ax is None else np.stack([a + rng.standard_normal(a.shape) for _ in range(3)], ax)
        for a, ax in zip((x, w), in_axes, strict=True)
    ]
    check_vmap(_conv(case), args, in_axes, tol=1e-5, jit=True)


def test_vmap_over_batch_feature_and_kernel_axes():
    x = np.random.default_rng(0).standard_normal((4, 2, 3, 8)).astype(f32)
    w = np.random.default_rng(1).standard_normal((5, 3, 3)).astype(f32)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME")
    for axis in range(4):  # the image's batch, features, ... as the vmapped axis
        moved = np.moveaxis(x, 0, axis)
        check_vmap(conv, [moved, w], (axis, None), tol=1e-5)
    kernels = np.stack([w, 2 * w, -w], 1)  # a kernel axis in the middle
    check_vmap(conv, [x[0], kernels], (None, 1), tol=1e-5)


def test_nchw_and_nhwc_give_the_same_numbers():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 7)).astype(f32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(f32)
    params = {"window_strides": (2, 1), "padding": [(1, 2), (0, 1)], "rhs_dilation": (1, 2)}
    nchw = lax.conv_general_dilated(x, w, **params, dimension_numbers=("NCHW", "OIHW", "NCHW"))
    nhwc = lax.conv_general_dilated(
        x.transpose(0, 2, 3, 1),
        w.transpose(2, 3, 1, 0),
        **params,
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )
    assert_close(np.asarray(nhwc).transpose(0, 3, 1, 2), nchw, 1e-6)
    compiled = tracejit.jit(
        lambda x, w: lax.conv_general_dilated(
            x, w, **params, dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
    )(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0))
    assert_close(np.asarray(compiled).transpose(0, 3, 1, 2), nchw, 1e-5)


# --- dtypes and weak types ---------------------------------------------------------------------


def _small(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == b:
        return rng.random(shape) < 0.5
    return rng.integers(-100, 100, shape).astype(dtype)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_integers_wrap_and_booleans_are_any(compiled):
    run = tracejit.jit if compiled else (lambda f: f)
    conv = run(lambda x, w, **kw: lax.conv_general_dilated(x, w, (1,), "VALID", **kw))
    x, w = _small(i8, (2, 3, 6), 0), _small(i8, (4, 3, 3), 1)
    wide = reference(x, w, (1,), "VALID", (1,), (1,), None, 1, 1).astype(np.int64)
    assert_close(conv(x, w), wide.astype(i8), dtype=i8)  # wraps around in int8, as JAX's
    widened = run(
        lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=i32)
    )(x, w)
    assert_close(widened, wide, dtype=i32)
    xb, wb = _small(b, (2, 3, 6), 2), _small(b, (4, 3, 3), 3)
    want = reference(xb, wb, (1,), "VALID", (1,), (1,), None, 1, 1) > 0
    assert_close(conv(xb, wb), want, dtype=b)


@pytest.mark.parametrize("dtype", [f16, bf16, c64])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_other_dtypes_round_once(dtype, compiled):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 6)), rng.standard_normal((4, 3, 3))
    if dtype == c64:
        x, w = x + 1j * rng.standard_normal(x.shape), w + 1j * rng.standard_normal(w.shape)
    x, w = x.astype(dtype), w.astype(dtype)
    run = tracejit.jit if compiled else (lambda f: f)
    got = run(lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME"))(x, w)
    want = (
        reference(
            x.astype(np.complex128 if dtype == c64 else f64),
            w,
            (2,),
            "SAME",
            (1,),
            (1,),
            None,
            1,
            1,
        )
        if dtype != c64
        else _complex_reference(x, w)
    )
    assert_close(got, want, {f16: 2e-3, bf16: 1.6e-2, c64: 1e-5}[dtype], dtype=dtype)


def _complex_reference(x, w):
    real = lambda a, c: reference(a, c, (2,), "SAME", (1,), (1,), None, 1, 1)
    return (
        real(x.real, w.real)
        - real(x.imag, w.imag)
        + 1j * (real(x.real, w.imag) + real(x.imag, w.real))
    )


def test_preferred_element_type_sets_the_result_dtype():
    x, w = np.ones((1, 2, 4), f16), np.ones((3, 2, 2), f16)
    for run in (lambda f: f, tracejit.jit):
        conv = run(
            lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=f32)
        )
        out = conv(x, w)
        assert out.dtype == f32 and not out.weak_type
        assert_close(out, np.full((1, 3, 3), 4.0), dtype=f32)


def test_weak_only_when_both_operands_are_weak():
    from tracejit._src.lax.conversions import convert_element_type_p

    def weak(x):
        return convert_element_type_p.bind(x, new_dtype=f32, weak_type=True)

    x, w = np.ones((1, 2, 4), f32), np.ones((3, 2, 2), f32)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID")
    assert conv(weak(x), weak(w)).weak_type
    assert not conv(weak(x), w).weak_type
    staged = tracejit.make_jaxpr(lambda x, w: conv(weak(x), weak(w)))(x, w)
    assert staged.out_avals[0].weak_type


# --- printing and lowering ---------------------------------------------------------------------


def test_jaxpr_prints_as_jax():
    x, w = np.ones((2, 8, 8, 3), f32), np.ones((3, 3, 3, 4), f32)
    text = jaxpr_text(
        lambda x, w: lax.conv_general_dilated(
            x,
            w,
            (2, 1),
            [(1, 0), (2, 1)],
            lhs_dilation=(1, 2),
            rhs_dilation=(2, 1),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            precision="highest",
            preferred_element_type=f32,
        ),
        x,
        w,
    )
    assert text == (
        "{ lambda ; a:f32[2,8,8,3] b:f32[3,3,3,4]. let\n"
        "    c:f32[2,3,16,4] = conv_general_dilated[\n"
        "      batch_group_count=1\n"
        "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), "
        "rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))\n"
        "      feature_group_count=1\n"
        "      lhs_dilation=(1, 2)\n"
        "      out_sharding=None\n"
        "      padding=((1, 0), (2, 1))\n"
        "      precision=(Precision.HIGHEST, Precision.HIGHEST)\n"
        "      preferred_element_type=float32\n"
        "      rhs_dilation=(2, 1)\n"
        "      window_strides=(2, 1)\n"
        "    ] a b\n"
        "  in (c,) }"
    )


def test_gradient_jaxpr_is_made_of_convolutions():
    """As JAX's: the image's cotangent convolves the reversed kernel (features swapped), the
    kernel's convolves the image with the result's cotangent (batch and features swapped)."""
    x, w = np.ones((2, 3, 8, 8), f32), np.ones((4, 3, 3, 3), f32)
    loss = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME").sum()
    text = jaxpr_text(tracejit.grad(loss, argnums=(0, 1)), x, w)
    assert text.count("conv_general_dilated[") == 3
    assert "rev[dimensions=(2, 3)]" in text
    assert "lhs_spec=(1, 0, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(1, 0, 2, 3)" in text
    assert "lhs_spec=(0, 1, 2, 3), rhs_spec=(1, 0, 2, 3), out_spec=(0, 1, 2, 3)" in text


def test_lowers_to_one_stablehlo_convolution():
    x, w = np.ones((2, 8, 8, 3), f32), np.ones((3, 3, 3, 4), f32)
    text = (
        tracejit.jit(
            lambda x, w: lax.conv_general_dilated(
                x, w, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                feature_group_count=1,
            )
        )
        .lower(x, w)
        .as_text()
    )  # fmt: skip
    assert text.count("stablehlo.convolution") == 1
    assert "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>" in text
    assert "window_strides = array<i64: 2, 1>" in text


# --- wrappers and shape helpers ----------------------------------------------------------------


def test_conv_and_conv_with_general_padding_are_conv_general_dilated():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 7, 6)).astype(f32), rng.standard_normal((4, 3, 2, 3))
    w = w.astype(f32)
    assert_close(lax.conv(x, w, (2, 1), "SAME"), lax.conv_general_dilated(x, w, (2, 1), "SAME"))
    assert_close(
        lax.conv_with_general_padding(x, w, (1, 2), [(1, 0), (0, 2)], (2, 1), (1, 2)),
        lax.conv_general_dilated(x, w, (1, 2), [(1, 0), (0, 2)], (2, 1), (1, 2)),
    )


def test_conv_transpose_is_the_gradient_with_transpose_kernel():
    """With `transpose_kernel`, conv_transpose(ct, w) is the image cotangent of the strided
    convolution with the same kernel and padding."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 8, 3)).astype(f32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(f32)
    dn = ("NHWC", "HWIO", "NHWC")
    forward = lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn)
    out, vjp = tracejit.vjp(forward, x)
    ct = rng.standard_normal(out.shape).astype(f32)
    (want,) = vjp(ct)
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True)
    assert_close(got, want, 1e-5)


def test_shape_helpers_as_jax():
    nhwc = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 1), "SAME", nhwc) == (
        2, 4, 8, 4,
    )  # fmt: skip
    assert lax.conv_general_shape_tuple(
        (2, 8, 8, 3), (3, 3, 3, 4), (2, 1), [(1, 1), (0, 0)], nhwc
    ) == (2, 4, 6, 4)
    assert lax.conv_shape_tuple((2, 3, 8, 8), (4, 3, 3, 3), (2, 1), "SAME") == (2, 4, 4, 8)
    assert lax.conv_shape_tuple((4, 3, 8, 8), (4, 3, 3, 3), (2, 1), [(1, 1), (0, 0)], 2) == (
        2, 4, 4, 6,
    )  # fmt: skip
    assert lax.conv_shape_tuple((3, 3, 2, 2), (4, 3, 3, 3), (1, 1), [(0, 0), (0, 0)]) == (
        3, 4, 0, 0,
    )  # fmt: skip
    for padding, want in [("SAME", (2, 16, 8, 4)), ("VALID", (2, 17, 10, 4))]:
        got = lax.conv_transpose_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 1), padding, nhwc)
        assert got == want
    assert lax.conv_transpose_shape_tuple(
        (2, 8, 8, 3), (3, 3, 3, 4), (2, 1), [(1, 1), (0, 0)], nhwc
    ) == (2, 15, 6, 4)
    assert lax.padtype_to_pads((8, 8), (3, 3), (2, 1), "SAME") == [(0, 1), (1, 1)]
    assert lax.padtype_to_pads((8, 7), (3, 4), (2, 3), "SAME_LOWER") == [(1, 0), (2, 1)]
    assert lax.padtype_to_pads((8, 7), (3, 4), (2, 3), "valid") == [(0, 0), (0, 0)]
    assert lax.padtype_to_pads((2,), (9,), (1,), "SAME") == [(4, 4)]


def test_dimension_numbers_as_jax():
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == (
        (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2),
    )  # fmt: skip
    # spatial dimensions go in the order the kernel's string names them
    assert lax.conv_general_permutations(("NCHW", "OIWH", "NCHW")) == (
        (0, 1, 3, 2), (0, 1, 2, 3), (0, 1, 3, 2),
    )  # fmt: skip
    assert lax.conv_general_permutations(("CHWN", "IHWO", "WHCN")) == (
        (3, 0, 1, 2), (3, 0, 1, 2), (3, 2, 1, 0),
    )  # fmt: skip
    dnums = lax.conv_dimension_numbers((2, 3, 8, 8), (4, 3, 3, 3), None)
    assert dnums == lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    assert lax.conv_dimension_numbers((1,) * 4, (1,) * 4, dnums) is dnums


# --- bad input ---------------------------------------------------------------------------------

X, W = np.ones((2, 3, 8, 8), f32), np.ones((4, 3, 3, 3), f32)
BAD = [
    ("feature mismatch", {"rhs": np.ones((4, 2, 3, 3), f32)}, ValueError, "3 // 1 != 2"),
    ("groups do not divide", {"feature_group_count": 2}, ValueError, "2 does not divide 3"),
    (
        "outputs not a multiple",
        {
            "lhs": np.ones((2, 4, 8, 8), f32),
            "rhs": np.ones((3, 2, 3, 3), f32),
            "feature_group_count": 2,
        },
        ValueError,
        "3 is not a multiple of 2",
    ),
    (
        "batch groups",
        {"lhs": np.ones((3, 3, 8, 8), f32), "batch_group_count": 2},
        ValueError,
        "does not divide 3",
    ),
    ("both groups", {"feature_group_count": 3, "batch_group_count": 2}, ValueError, "At most one"),
    ("zero groups", {"feature_group_count": 0}, ValueError, "positive integer"),
    ("wrong rank", {"lhs": np.ones((2, 3, 8), f32)}, TypeError, "ndim to be equal, got 3 and 4"),
    ("strides length", {"window_strides": (1,)}, ValueError, "got 2 and 1"),
    ("zero stride", {"window_strides": (0, 1)}, ValueError, "window_strides must be positive"),
    ("zero dilation", {"rhs_dilation": (0, 1)}, TypeError, "All dilations must be positive"),
    ("string pad, lhs dilation", {"lhs_dilation": (2, 2)}, ValueError, "String padding"),
    ("too negative", {"padding": [(-9, 0), (0, 0)]}, ValueError, "Negative padding is larger"),
    ("pads length", {"padding": [(1, 1)]}, ValueError, "same number of dimensions"),
    ("pad triples", {"padding": [(0, 0, 0), (0, 0)]}, ValueError, r"\(low, high\) pairs"),
    ("padding name", {"padding": "FOO"}, RuntimeError, "Unrecognized padding type"),
    ("repeated letters", {"dimension_numbers": ("NCHH", "OIHW", "NCHW")}, TypeError, "duplicate"),
    ("string length", {"dimension_numbers": ("NCH", "OIHW", "NCHW")}, TypeError, "must have len"),
    ("no batch letter", {"dimension_numbers": ("XCHW", "OIHW", "NCHW")}, TypeError, "'N' and 'C'"),
    ("two strings", {"dimension_numbers": ("NCHW", "OIHW")}, TypeError, "must be length 3"),
    (
        "not a permutation",
        {"dimension_numbers": lax.ConvDimensionNumbers((0, 1, 2, 2), (0, 1, 2, 3), (0, 1, 2, 3))},
        TypeError,
        "permutation",
    ),
    ("dtypes differ", {"rhs": np.ones((4, 3, 3, 3), f16)}, TypeError, "same dtypes"),
    ("narrower preferred", {"preferred_element_type": f16}, TypeError, "narrower"),
    ("float to int", {"preferred_element_type": i32}, TypeError, "incompatible"),
    ("precision", {"precision": "foo"}, ValueError, "precision"),
]


@pytest.mark.parametrize(("case", "changes", "error", "match"), BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_jax_exception_types(case, changes, error, match):
    args = {"lhs": X, "rhs": W, "window_strides": (1, 1), "padding": "SAME", **changes}
    with pytest.raises(error, match=match):
        lax.conv_general_dilated(**args)
    with pytest.raises(error, match=match):
        tracejit.jit(lambda: lax.conv_general_dilated(**args))()


def test_conv_transpose_refuses_string_padding_with_strides():
    x, w = np.ones((1, 5, 1), f32), np.ones((3, 1, 1), f32)
    with pytest.raises(ValueError, match="String padding"):
        lax.conv_transpose(x, w, (2,), "SAME_LOWER")
    with pytest.raises(ValueError, match="4\\+ dimensional"):
        lax.conv_transpose(np.ones((1,) * 6, f32), np.ones((1,) * 6, f32), (1,) * 4, "SAME")
