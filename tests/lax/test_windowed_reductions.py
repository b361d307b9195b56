"""`lax.reduce_window` and the primitives of windowed reductions (`lax/windowed_reductions.py`,
`lax/window_selection.py`, `lax/windows.py`): sums, maxima, minima and any computation over a
grid of window shapes, strides, paddings and dilations, 1-D to 4-D, against a float64 fold of
each window written out here; eagerly, staged and compiled; derivatives by finite differences
and, where elements tie, against gradients recorded from JAX 0.10.2
(`make_jax_reference_windowed_reductions.py`); vmap against a loop; JAX's errors."""

import functools
import importlib.util
import pathlib

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.lax.window_selection import select_and_scatter
from tracejit.test_util import check_grads

_spec = importlib.util.spec_from_file_location(
    "windowed_reference",
    pathlib.Path(__file__).parent / "make_jax_reference_windowed_reductions.py",
)
recorded = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorded)
DATA = dict(np.load(recorded.DATA))


def fold_windows(xs, inits, op, window, strides, padding, base=None, dilation=None):
    """The specification: each window folds the operand elements it covers into `inits` in
    row-major order (`op(acc, element)` on tuples); holes and padding are no elements."""
    shape, ndim = xs[0].shape, xs[0].ndim
    base = base or (1,) * ndim
    dilation = dilation or (1,) * ndim
    out_shape = []
    for n, w, s, (lo, hi), b, d in zip(shape, window, strides, padding, base, dilation):
        size = ((n - 1) * b + 1 if n else 0) + lo + hi
        out_shape.append(max(0, (size - ((w - 1) * d + 1)) // s + 1))
    outs = [np.empty(out_shape, x.dtype) for x in xs]
    for o in np.ndindex(*out_shape):
        acc = tuple(inits)
        for k in np.ndindex(*window):
            q = [
                oi * s + ki * d - lo
                for oi, ki, s, d, (lo, _) in zip(o, k, strides, dilation, padding)
            ]
            if all(qi % b == 0 and 0 <= qi // b < n for qi, b, n in zip(q, base, shape)):
                acc = op(acc, tuple(x[tuple(qi // b for qi, b in zip(q, base))] for x in xs))
        for out, a in zip(outs, acc):
            out[o] = a
    return outs


def reference(x, combine, init, *geometry):
    (out,) = fold_windows([x], [init], lambda a, e: (combine(a[0], e[0]),), *geometry)
    return out


# (shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
GEOMETRIES = [
    ((7,), (3,), (1,), ((0, 0),), (1,), (1,)),
    ((7,), (2,), (3,), ((2, 1),), (2,), (1,)),
    ((6,), (3,), (2,), ((-1, 2),), (1,), (2,)),
    ((4, 6), (2, 3), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2)),
    ((4, 4), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((5, 5), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), (1, 1)),
    ((3, 4, 5), (2, 2, 3), (1, 2, 1), ((0, 1), (1, 1), (0, 0)), (1, 1, 2), (2, 1, 1)),
    ((2, 6, 6, 3), (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0)), None, None),
    ((2, 3, 5, 5), (1, 1, 2, 2), (1, 1, 2, 2), ((0, 0),) * 4, None, None),
    ((4, 6), (7, 2), (1, 1), ((0, 0), (0, 0)), None, None),  # no window fits: empty
    ((4,), (1,), (1,), ((-6, 0),), None, None),  # cropped away: empty
]

MONOIDS = {
    "sum": (lax.add, 0.0, np.add),
    "max": (lax.max, -np.inf, np.maximum),
    "min": (lax.min, np.inf, np.minimum),
}


def sample(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("name", MONOIDS)
def test_sum_max_min_fold_their_windows(name, geometry):
    computation, init, combine = MONOIDS[name]
    shape, *params = geometry
    x = sample(shape)
    want = reference(x.astype(np.float64), combine, init, *params)
    fun = lambda v: lax.reduce_window(v, init, computation, *params)
    check_eager_jit_numpy(fun, [x], want.astype(np.float32), tol=1e-5)
    assert f"reduce_window_{name}[" in jaxpr_text(fun, x)


@pytest.mark.parametrize("geometry", GEOMETRIES[:7], ids=str)
def test_any_computation_folds_its_windows(geometry):
    shape, *params = geometry
    x = sample(shape) / 2
    product = lambda v: lax.reduce_window(v, 1.0, lax.mul, *params)
    want = reference(x.astype(np.float64), np.multiply, 1.0, *params)
    check_eager_jit_numpy(product, [x], want.astype(np.float32), tol=1e-5)
    logaddexp = lambda a, b: jnp.maximum(a, b) + jnp.log1p(jnp.exp(-jnp.abs(a - b)))
    soft = lambda v: lax.reduce_window(v, -np.inf, logaddexp, *params)
    want = reference(x.astype(np.float64), np.logaddexp, -np.inf, *params)
    check_eager_jit_numpy(soft, [x], want.astype(np.float32), tol=1e-5)
    assert "reduce_window[" in jaxpr_text(soft, x)


def argmax_pairs(a, b):
    """(max, index of the first max): JAX's example of a reduction over two operands."""
    keep = a[0] >= b[0]
    return lax.select(keep, a[0], b[0]), lax.select(keep, a[1], b[1])


@pytest.mark.parametrize("geometry", [GEOMETRIES[3], GEOMETRIES[5], GEOMETRIES[7]], ids=str)
def test_two_operands_at_once_argmax_in_each_window(geometry):
    shape, *params = geometry
    x = np.round(sample(shape) * 2)  # ties, resolved towards the first element
    index = np.arange(x.size, dtype=np.int32).reshape(shape)
    fun = lambda v, i: lax.reduce_window((v, i), (-np.inf, np.int32(-1)), argmax_pairs, *params)
    op = lambda acc, e: (max(acc[0], e[0]), acc[1] if acc[0] >= e[0] else e[1])
    want = fold_windows([x, index], [-np.inf, -1], op, *params)
    check_eager_jit_numpy(fun, [x, index], tuple(want))


def test_integer_windows_wrap_and_empty_windows_give_the_identity():
    x = np.full(3, 100, np.int8)
    check_eager_jit_numpy(
        lambda v: lax.reduce_window(v, 0, lax.add, (2,), (1,)), [x], np.int8([-56, -56])
    )
    lowest = np.iinfo(np.int32).min
    fun = lambda v: lax.reduce_window(v, lowest, lax.max, (2,), (1,), ((3, 0),))
    want = np.int32([lowest, lowest, 1, 1, 1])
    check_eager_jit_numpy(fun, [np.ones(3, np.int32)], want)


def test_max_propagates_nan_and_prefers_positive_zero():
    x = np.float32([1, np.nan, 2, -0.0, 0.0, -0.0])
    fun = lambda v: lax.reduce_window(v, -np.inf, lax.max, (2,), (1,))
    for out in (fun(x), tracejit.jit(fun)(x)):
        out = np.asarray(out)
        assert np.isnan(out[:2]).all() and out[2] == 2
        assert not np.signbit(out[3:]).any()
    fun = lambda v: lax.reduce_window(v, np.inf, lax.min, (2,), (1,))
    assert np.signbit(np.asarray(tracejit.jit(fun)(x))[3:]).all()


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_narrow_float_sums_accumulate_in_float32(dtype):
    x = np.linspace(1, 3, 40).astype(dtype).reshape(4, 10)
    fun = lambda v: lax.reduce_window(v, 0.0, lax.add, (4, 10), (1, 1))
    want = np.asarray(x, np.float64).sum(keepdims=True).astype(dtype)
    check_eager_jit_numpy(fun, [x], want, tol=1e-2)


@pytest.mark.parametrize(
    "computation, init, dtype, primitive",
    [
        (lax.add, 0.0, np.float32, "reduce_window_sum"),
        (lax.add, 0, np.float32, "reduce_window_sum"),  # JAX checks the initial value only
        (lax.max, -np.inf, np.float32, "reduce_window_max"),
        (lax.max, -np.inf, np.int32, "reduce_window_max"),
        (lax.max, False, np.bool_, "reduce_window_max"),
        (lax.min, np.iinfo(np.int32).max, np.int32, "reduce_window_min"),
        (lax.add, 1.0, np.float32, "reduce_window"),
        (lax.mul, 1.0, np.float32, "reduce_window"),
        (jnp.maximum, -np.inf, np.float32, "reduce_window"),
    ],
)
def test_lax_monoids_from_their_identity_become_their_primitives(
    computation, init, dtype, primitive
):
    x = np.ones((3, 4), dtype)
    text = jaxpr_text(lambda v: lax.reduce_window(v, init, computation, (2, 2), (1, 1)), x)
    assert f"= {primitive}[" in text


def test_printed_jaxprs_are_jaxs():
    x = np.ones((4, 6), np.float32)
    text = jaxpr_text(lambda v: lax.reduce_window(v, 0.0, lax.add, (2, 3), (1, 2), "SAME"), x)
    assert text == (
        "{ lambda ; a:f32[4,6]. let\n"
        "    b:f32[4,3] = reduce_window_sum[\n"
        "      base_dilation=(1, 1)\n"
        "      padding=((0, 1), (0, 1))\n"
        "      window_dilation=(1, 1)\n"
        "      window_dimensions=(2, 3)\n"
        "      window_strides=(1, 2)\n"
        "    ] a\n"
        "  in (b,) }"
    )
    text = jaxpr_text(lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 3), (1, 2)), x)
    assert "      consts=()\n" in text
    assert "      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }\n" in text
    grad = tracejit.grad(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 3), (1, 2)).sum())
    assert "select_and_scatter_add[\n      padding=((0, 0), (0, 0))\n      select_prim=ge\n" in (
        jaxpr_text(grad, x)
    )


def test_padding_strings_as_jax_computes_them():
    x = recorded.TIES
    for name in ("sum_same", "sum_same_lower"):
        fun, args = recorded.CASES[name]
        check_eager_jit_numpy(
            lambda v, fun=fun: fun(tracejit, select_and_scatter, v), args, DATA[f"{name}/0"]
        )
    # SAME: a window every `stride` elements, from the dilated window, the undilated operand
    assert lax.reduce_window(np.ones(10), 0.0, lax.add, (3,), (2,), "SAME", None, (2,)).shape == (
        5,
    )
    assert lax.reduce_window(np.ones(10), 0.0, lax.add, (3,), (2,), "SAME", (2,)).shape == (9,)
    assert lax.reduce_window_shape_tuple((10,), (3,), (2,), ((1, 2),), (2,), (2,)) == (9,)
    assert lax.reduce_window_shape_tuple((4, 6), (7, 2), (1, 1), ((0, 0), (0, 0))) == (0, 5)
    assert lax.reduce_window(x, 0.0, lax.add, (2, 2)).shape == (2, 3)  # strides default to 1


def test_initial_values_count_once_per_window_as_xla_skips_padding_and_holes():
    for name in ("add_init_one_padded", "add_init_one_base_dilation", "mul_padded_dilated"):
        fun, args = recorded.CASES[name]
        check_eager_jit_numpy(
            lambda v, fun=fun: fun(tracejit, select_and_scatter, v), args, DATA[f"{name}/0"]
        )


def test_weak_types_follow_the_operand():
    out = lax.reduce_window(jnp.full((3,), 2.0) + 1.0, 0.0, lax.add, (2,), (1,))
    assert out.weak_type
    assert not lax.reduce_window(np.ones(3, np.float32), 0.0, lax.add, (2,), (1,)).weak_type


# --- derivatives ------------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", GEOMETRIES[:8], ids=str)
def test_sum_derivatives_to_second_order(geometry):
    shape, *params = geometry
    fun = lambda v: lax.reduce_window(v, 0.0, lax.add, *params)
    check_grads(fun, [sample(shape, 1, np.float64)], 2, modes=("fwd", "rev"))


# every window holds an element (else its -inf has no finite differences)
@pytest.mark.parametrize("geometry", [GEOMETRIES[0], *GEOMETRIES[2:8]], ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_derivatives_away_from_ties(name, geometry):
    computation, init, _ = MONOIDS[name]
    shape, window, strides, padding, base, dilation = geometry
    fun = lambda v: lax.reduce_window(
        v, init, computation, window, strides, padding, base, dilation
    )
    x = sample(shape, 2, np.float64)
    dilated = dilation is not None and any(d != 1 for d in dilation)
    check_grads(fun, [x], 1 if dilated else 2, modes=("fwd",) if dilated else ("fwd", "rev"))


def test_max_pooling_vjp_with_window_dilation_is_not_implemented_as_in_jax():
    fun = lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), "VALID", None, (2, 1))
    with pytest.raises(NotImplementedError, match="window_dilation=\\(2, 1\\)"):
        tracejit.grad(lambda v: fun(v).sum())(np.ones((4, 6), np.float32))


TIE_CASES = [name for name in recorded.CASES if name.startswith(("max_", "min_"))]


@pytest.mark.parametrize("name", TIE_CASES)
def test_ties_nans_and_infinities_route_derivatives_as_jax(name):
    fun, args = recorded.CASES[name]
    outs = [DATA[f"{name}/{i}"] for i in range(2 if "jvp" in name else 1)]
    want = tuple(outs) if len(outs) > 1 else outs[0]
    check_eager_jit_numpy(lambda v: fun(tracejit, select_and_scatter, v), args, want, replay=False)


def test_any_computation_differentiates_forward_with_two_operands():
    pair = lambda v: lax.reduce_window(
        (v, v),
        (0.0, 1.0),
        lambda a, b: (a[0] + b[0], a[1] * b[1]),
        (2, 2),
        (1, 1),
        ((1, 0), (0, 1)),
    )
    check_grads(pair, [sample((3, 4), 3, np.float64)], 2, modes=("fwd",))
    text = jaxpr_text(
        lambda v, t: tracejit.jvp(pair, (v,), (t,)), *[np.ones((3, 4), np.float32)] * 2
    )
    assert "] a a b b 0.0:f32[] 1.0:f32[] 0.0:f32[] 0.0:f32[]" in text


# --- vmap -------------------------------------------------------------------------------------

BATCHED = [
    lambda v: lax.reduce_window(v, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1)), (2, 1), (1, 1)),
    lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (2, 1), "SAME"),
    lambda v: lax.reduce_window(
        (v, v), (np.inf, 1.0), lambda a, b: (lax.min(a[0], b[0]), a[1] * b[1]), (2, 3), (1, 1)
    ),
    tracejit.grad(
        lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), ((1, 1), (0, 1))).sum()
    ),
    lambda v: tracejit.jvp(
        lambda u: lax.reduce_window(u, np.inf, lax.min, (2, 2), (1, 2), "VALID", (2, 1)),
        (v,),
        (v * v,),
    ),
    lambda v: select_and_scatter(
        v, lax.ge, (2, 2), (1, 1), ((1, 0), (0, 0)), jnp.ones((4, 4)), 1.0, lax.mul
    ),
]


@pytest.mark.parametrize("index", range(len(BATCHED)))
@pytest.mark.parametrize("axis", [0, 2])
def test_vmap_matches_a_loop(index, axis):
    x = np.moveaxis(sample((3, 4, 5)), 0, axis)
    check_vmap(BATCHED[index], [x], (axis,), tol=1e-6, jit=True)


def test_vmap_over_initial_values_is_not_implemented_as_in_jax():
    fun = lambda v, i: lax.reduce_window(v, i, lax.mul, (2,), (1,))
    with pytest.raises(NotImplementedError, match="initial values"):
        tracejit.vmap(fun)(np.ones((3, 4), np.float32), np.ones(3, np.float32))


# --- select_and_scatter -----------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in recorded.CASES if n.startswith("select_and_scatter")])
def test_select_and_scatter_as_jax(name):
    fun, args = recorded.CASES[name]
    bound = functools.partial(fun, tracejit, select_and_scatter)
    check_eager_jit_numpy(bound, args, DATA[f"{name}/0"])


def test_select_and_scatter_is_not_differentiable_as_in_jax():
    fun = lambda v: select_and_scatter(v, lax.ge, (2,), (1,), ((0, 0),), jnp.ones(2), 0.0, lax.add)
    with pytest.raises(NotImplementedError, match="'select_and_scatter' not implemented"):
        tracejit.jvp(fun, (np.ones(3, np.float32),), (np.ones(3, np.float32),))


# --- bad input --------------------------------------------------------------------------------

X = np.ones((4, 6), np.float32)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((X, 0.0, lax.add, (2,), (1,)), TypeError, "wrong number of window_dimensions"),
        ((X, 0.0, lax.add, (2, 2), (1,)), TypeError, "inconsistent window_strides"),
        ((X, 0.0, lax.add, (0, 2), (1, 1)), TypeError, "strictly positive, got \\(0, 2\\)"),
        ((X, 0.0, lax.add, (1, 2), (0, 1)), TypeError, "window_strides must have every"),
        ((X, 0.0, lax.add, (1, 2), (1, 1), "VALID", (0, 1)), TypeError, "dilations must be pos"),
        ((X, 0.0, lax.add, (1, 2), (1, 1), "VALID", None, (1,)), TypeError, "window_dilation"),
        ((X, np.zeros(2, np.float32), lax.mul, (1, 2), (1, 1)), TypeError, "to be scalars"),
        ((X, np.int32(1), lax.mul, (1, 2), (1, 1)), TypeError, "inconsistent dtypes"),
        ((X, 0.0, lax.add, (1, 2), (1, 1), "FOO"), RuntimeError, "Unrecognized padding type"),
        ((X, 0.0, lax.add, (1, 2), (1, 1), ((0, 0),)), ValueError, "padding"),
        ((X, 0.0, lax.add, (1, 2), (1, 1), ((0, 0, 0),) * 2), ValueError, "padding"),
        (((X, X), 0.0, lax.add, (1, 2), (1, 1)), ValueError, "same tree structure"),
        ((X, 0.0, lambda a, b: (a + b, a), (1, 2), (1, 1)), ValueError, "tree structure"),
        ((X > 0, False, lax.add, (1, 2), (1, 1)), TypeError, "reduce_window_sum"),
    ],
)
def test_bad_input_raises_jax_errors(args, error, match):
    with pytest.raises(error, match=match):
        lax.reduce_window(*args)
    with pytest.raises(error, match=match):
        tracejit.jit(lambda: lax.reduce_window(*args))()


def test_computations_closing_over_tracers_are_not_implemented_as_in_jax():
    fun = lambda v, s: lax.reduce_window(v, 0.0, lambda a, b: a + s * b, (2,), (1,))
    with pytest.raises(NotImplementedError, match="close over Tracers"):
        tracejit.jit(fun)(np.ones(3, np.float32), np.float32(2))
    with pytest.raises(ValueError, match="padding"):
        lax.reduce_window_shape_tuple((10,), (3,), (2,), "SAME")
