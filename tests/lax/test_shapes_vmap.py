"""vmap of the shape, conversion, selection and slicing primitives: over each argument axis,
several arguments at once and with some arguments unbatched, the result equals stacking
per-example results; the vectorized jaxpr does not grow with the batch size."""

import numpy as np
import pytest

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax as ls
from tracejit._src.api import make_jaxpr, vmap
from tracejit._src.lax import slicing as lsl

B = 3  # batch size
f32, i32, u8 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)


def _sample(rng, shape, dtype):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 3 if dtype == i32 else 250, shape).astype(dtype)
    return rng.uniform(-3, 3, shape).astype(dtype)


def _take(x, i, axis):
    return x if axis is None else np.take(x, i, axis=axis)


def _check_vmap(fun, args, in_axes, out_axes=0):
    """`vmap(fun)` equals a Python loop of `fun` over batch members, stacked at `out_axes`."""
    got = np.asarray(vmap(fun, in_axes, out_axes)(*args))
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    per_example = [
        np.asarray(fun(*[_take(a, i, ax) for a, ax in zip(args, in_axes)])) for i in range(size)
    ]
    want = np.stack(per_example, axis=out_axes)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def _batched(rng, spec, axis, size=B):
    """An argument of per-example `spec` = (shape, dtype), batched at `axis` (None: not)."""
    shape, dtype = spec
    if axis is None:
        return _sample(rng, shape, dtype)
    shape = list(shape)
    shape.insert(axis % (len(shape) + 1), size)
    return _sample(rng, tuple(shape), dtype)


def _axes_cases(specs, batchable):
    """in_axes tuples: each batchable argument alone at axes 0, 1, -1 (where its rank allows),
    then every batchable argument at once (at 0, and at -1)."""
    cases = []
    for i, (shape, _) in enumerate(specs):
        if i not in batchable:
            continue
        for ax in (0, 1, -1):
            if ax == 1 and len(shape) < 1:
                continue
            cases.append(tuple(ax if j == i else None for j in range(len(specs))))
    if len(batchable) > 1:
        for ax in (0, -1):
            cases.append(tuple(ax if j in batchable else None for j in range(len(specs))))
    return cases


def _idx(i):
    return np.int32(i)


# (id, function, per-example argument specs, positions that may be batched)
CASES = [
    ("broadcast_in_dim", lambda x: ls.broadcast_in_dim(x, (2, 3, 4), (1,)), [((3,), f32)], [0]),
    ("broadcast_size1", lambda x: ls.broadcast_in_dim(x, (3, 4), (0, 1)), [((1, 4), f32)], [0]),
    ("broadcast_perm", lambda x: ls.broadcast_in_dim(x, (4, 2, 3), (2, 0)), [((3, 4), f32)], [0]),
    ("broadcast_scalar", lambda x: ls.broadcast_in_dim(x, (2, 3), ()), [((), f32)], [0]),
    ("reshape", lambda x: ls.reshape(x, (6, 4)), [((2, 3, 4), f32)], [0]),
    ("reshape_dims", lambda x: ls.reshape(x, (4, 6), (2, 0, 1)), [((2, 3, 4), f32)], [0]),
    ("reshape_scalar", lambda x: ls.reshape(x, (1, 1)), [((), f32)], [0]),
    ("transpose", lambda x: ls.transpose(x, (2, 0, 1)), [((2, 3, 4), f32)], [0]),
    ("squeeze", lambda x: ls.squeeze(x, (1, 3)), [((2, 1, 3, 1), f32)], [0]),
    ("squeeze_front", lambda x: ls.squeeze(x, (0,)), [((1, 3), f32)], [0]),
    ("rev", lambda x: ls.rev(x, (0, 2)), [((2, 3, 4), f32)], [0]),
    (
        "pad",
        lambda x, v: ls.pad(x, v, ((1, 2, 1), (-1, 0, 0))),
        [((3, 4), f32), ((), f32)],
        [0, 1],
    ),
    ("pad_interior", lambda x, v: ls.pad(x, v, ((0, 0, 2),)), [((3,), f32), ((), f32)], [0, 1]),
    (
        "concatenate",
        lambda a, b, c: ls.concatenate([a, b, c], 1),
        [((2, 3), f32), ((2, 1), f32), ((2, 2), f32)],
        [0, 1, 2],
    ),
    (
        "concatenate_0",
        lambda a, b: ls.concatenate([a, b], 0),
        [((2, 3), f32), ((1, 3), f32)],
        [0, 1],
    ),
    ("convert", lambda x: ls.convert_element_type(x, i32), [((2, 3), f32)], [0]),
    ("bitcast_same", lambda x: ls.bitcast_convert_type(x, i32), [((2, 3), f32)], [0]),
    ("bitcast_narrow", lambda x: ls.bitcast_convert_type(x, u8), [((2, 3), f32)], [0]),
    ("bitcast_wide", lambda x: ls.bitcast_convert_type(x, f32), [((2, 4), u8)], [0]),
    (
        "select",
        lambda p, x, y: ls.select(p, x, y),
        [((2, 3), np.dtype(bool)), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "select_scalar_pred",
        lambda p, x, y: ls.select(p, x, y),
        [((), np.dtype(bool)), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "select_n_int",
        lambda w, a, b, c: ls.select_n(w, a, b, c),
        [((2, 3), i32), ((2, 3), f32), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2, 3],
    ),
    (
        "select_n_scalars",
        lambda w, a, b: ls.select_n(w, a, b),
        [((), np.dtype(bool)), ((), f32), ((), f32)],
        [0, 1, 2],
    ),
    (
        "clamp",
        lambda lo, x, hi: ls.clamp(lo, x, hi),
        [((), f32), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "clamp_scalar",
        lambda lo, x, hi: ls.clamp(lo, x, hi),
        [((), f32), ((), f32), ((), f32)],
        [0, 1, 2],
    ),
    ("copy", lambda x: ls.copy_p.bind(x), [((2, 3), f32)], [0]),
    ("stop_gradient", ls.stop_gradient, [((2, 3), f32)], [0]),
    ("slice", lambda x: lsl.slice(x, (1, 0), (3, 5), (1, 2)), [((4, 5), f32)], [0]),
    ("slice_nostride", lambda x: lsl.slice(x, (1, 2), (3, 4)), [((4, 5), f32)], [0]),
    (
        "dynamic_slice",
        lambda x, i: lsl.dynamic_slice(x, (i, -2), (2, 2)),
        [((4, 5), f32), ((), i32)],
        [0],
    ),
    (
        "dynamic_slice_clamped",
        lambda x: lsl.dynamic_slice(x, (3, 1), (2, 3)),
        [((4, 5), f32)],
        [0],
    ),
    (
        "dynamic_update_slice",
        lambda x, u, i: lsl.dynamic_update_slice(x, u, (i, 1)),
        [((4, 5), f32), ((2, 3), f32), ((), i32)],
        [0, 1],
    ),
    (
        "dynamic_update_slice_1d",
        lambda x, u: lsl.dynamic_update_slice(x, u, (2,)),
        [((5,), f32), ((2,), f32)],
        [0, 1],
    ),
]

PARAMS = [
    pytest.param(fun, specs, axes, id=f"{name}-{axes}")
    for name, fun, specs, batchable in CASES
    for axes in _axes_cases(specs, batchable)
]


@pytest.mark.parametrize("fun,specs,in_axes", PARAMS)
def test_vmap_matches_stacked(fun, specs, in_axes):
    rng = np.random.default_rng(0)
    args = [_batched(rng, spec, ax) for spec, ax in zip(specs, in_axes)]
    _check_vmap(fun, args, in_axes)


@pytest.mark.parametrize("out_axes", [1, -1])
def test_vmap_out_axes(out_axes):
    rng = np.random.default_rng(1)
    x = _batched(rng, ((2, 3, 4), f32), 1)
    _check_vmap(lambda x: ls.transpose(x, (2, 0, 1)), [x], (1,), out_axes)


def test_nested_vmap():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(2, 3, 4, 5)).astype(f32)
    fun = vmap(vmap(lambda x: ls.reshape(ls.transpose(x, (1, 0)), (15,)), 1), 0)
    want = np.stack([np.stack([x[i, :, j].T.reshape(15) for j in range(4)]) for i in range(2)])
    np.testing.assert_array_equal(np.asarray(fun(x)), want)


@pytest.mark.parametrize(
    "fun,specs,batchable", [pytest.param(f, s, b, id=n) for n, f, s, b in CASES]
)
def test_no_unrolling(fun, specs, batchable):
    rng = np.random.default_rng(3)
    in_axes = tuple(0 if i in batchable else None for i in range(len(specs)))

    def make_args(n):
        return [_batched(rng, spec, ax, n) for spec, ax in zip(specs, in_axes)]

    counts = [len(make_jaxpr(vmap(fun, in_axes))(*make_args(n)).jaxpr.eqns) for n in (2, 7)]
    assert counts[0] == counts[1], counts


def test_unbatched_stays_unbatched():
    # An unbatched padding value is used as is: one pad, no broadcast or select.
    rng = np.random.default_rng(4)
    x, v = rng.uniform(size=(B, 3)).astype(f32), np.float32(0.5)
    jaxpr = make_jaxpr(vmap(lambda x, v: ls.pad(x, v, ((1, 1, 0),)), (0, None)))(x, v).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["pad"]


@pytest.mark.parametrize("which", ["dynamic_slice", "dynamic_update_slice"])
def test_batched_start_indices_not_implemented(which):
    x = np.zeros((B, 4), f32)
    idx = np.arange(B, dtype=np.int32)
    if which == "dynamic_slice":
        fun = lambda x, i: lsl.dynamic_slice(x, (i,), (2,))
    else:
        fun = lambda x, i: lsl.dynamic_update_slice(x, np.ones(2, f32), (i,))
    with pytest.raises(NotImplementedError, match="batched start indices"):
        vmap(fun, (0, 0))(x, idx)
