"""vmap of the shape, conversion, selection and slicing primitives: over each argument axis,
several arguments at once and with some arguments unbatched, the result equals stacking
per-example results; the vectorized jaxpr does not grow with the batch size."""

import numpy as np
import pytest
from helpers import check_vmap, f32, i32, u8

import tracejit  # noqa: F401  (installs the eager trace)
from tracejit import lax
from tracejit._src.api import make_jaxpr
from tracejit._src.vmap import vmap

B = 3  # batch size


def _sample(rng, shape, dtype):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 3 if dtype == i32 else 250, shape).astype(dtype)
    return rng.uniform(-3, 3, shape).astype(dtype)


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


# (id, function, per-example argument specs, positions that may be batched)
CASES = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), [((3,), f32)], [0]),
    ("broadcast_size1", lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)), [((1, 4), f32)], [0]),
    ("broadcast_perm", lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (2, 0)), [((3, 4), f32)], [0]),
    ("broadcast_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [((), f32)], [0]),
    ("reshape", lambda x: lax.reshape(x, (6, 4)), [((2, 3, 4), f32)], [0]),
    ("reshape_dims", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), [((2, 3, 4), f32)], [0]),
    ("reshape_scalar", lambda x: lax.reshape(x, (1, 1)), [((), f32)], [0]),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), [((2, 3, 4), f32)], [0]),
    ("squeeze", lambda x: lax.squeeze(x, (1, 3)), [((2, 1, 3, 1), f32)], [0]),
    ("squeeze_front", lambda x: lax.squeeze(x, (0,)), [((1, 3), f32)], [0]),
    ("rev", lambda x: lax.rev(x, (0, 2)), [((2, 3, 4), f32)], [0]),
    (
        "pad",
        lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))),
        [((3, 4), f32), ((), f32)],
        [0, 1],
    ),
    ("pad_interior", lambda x, v: lax.pad(x, v, ((0, 0, 2),)), [((3,), f32), ((), f32)], [0, 1]),
    (
        "concatenate",
        lambda a, b, c: lax.concatenate([a, b, c], 1),
        [((2, 3), f32), ((2, 1), f32), ((2, 2), f32)],
        [0, 1, 2],
    ),
    (
        "concatenate_0",
        lambda a, b: lax.concatenate([a, b], 0),
        [((2, 3), f32), ((1, 3), f32)],
        [0, 1],
    ),
    ("convert", lambda x: lax.convert_element_type(x, i32), [((2, 3), f32)], [0]),
    ("bitcast_same", lambda x: lax.bitcast_convert_type(x, i32), [((2, 3), f32)], [0]),
    ("bitcast_narrow", lambda x: lax.bitcast_convert_type(x, u8), [((2, 3), f32)], [0]),
    ("bitcast_wide", lambda x: lax.bitcast_convert_type(x, f32), [((2, 4), u8)], [0]),
    (
        "select",
        lambda p, x, y: lax.select(p, x, y),
        [((2, 3), np.dtype(bool)), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "select_scalar_pred",
        lambda p, x, y: lax.select(p, x, y),
        [((), np.dtype(bool)), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "select_n_int",
        lambda w, a, b, c: lax.select_n(w, a, b, c),
        [((2, 3), i32), ((2, 3), f32), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2, 3],
    ),
    (
        "select_n_scalars",
        lambda w, a, b: lax.select_n(w, a, b),
        [((), np.dtype(bool)), ((), f32), ((), f32)],
        [0, 1, 2],
    ),
    (
        "clamp",
        lambda lo, x, hi: lax.clamp(lo, x, hi),
        [((), f32), ((2, 3), f32), ((2, 3), f32)],
        [0, 1, 2],
    ),
    (
        "clamp_scalar",
        lambda lo, x, hi: lax.clamp(lo, x, hi),
        [((), f32), ((), f32), ((), f32)],
        [0, 1, 2],
    ),
    ("copy", lambda x: lax.copy_p.bind(x), [((2, 3), f32)], [0]),
    ("stop_gradient", lax.stop_gradient, [((2, 3), f32)], [0]),
    ("slice", lambda x: lax.slice(x, (1, 0), (3, 5), (1, 2)), [((4, 5), f32)], [0]),
    ("slice_nostride", lambda x: lax.slice(x, (1, 2), (3, 4)), [((4, 5), f32)], [0]),
    (
        "dynamic_slice",
        lambda x, i: lax.dynamic_slice(x, (i, -2), (2, 2)),
        [((4, 5), f32), ((), i32)],
        [0, 1],
    ),
    (
        "dynamic_slice_two_indices",
        lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
        [((4, 5), f32), ((), i32), ((), i32)],
        [0, 1, 2],
    ),
    (
        "dynamic_slice_clamped",
        lambda x: lax.dynamic_slice(x, (3, 1), (2, 3)),
        [((4, 5), f32)],
        [0],
    ),
    (
        "dynamic_update_slice",
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
        [((4, 5), f32), ((2, 3), f32), ((), i32)],
        [0, 1, 2],
    ),
    (
        "dynamic_update_slice_two_indices",
        lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        [((4, 5), np.dtype(bool)), ((2, 3), np.dtype(bool)), ((), i32), ((), i32)],
        [0, 1, 2, 3],
    ),
    (
        "dynamic_update_slice_1d",
        lambda x, u: lax.dynamic_update_slice(x, u, (2,)),
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
    check_vmap(fun, args, in_axes, tol=0)


@pytest.mark.parametrize("out_axes", [1, -1])
def test_vmap_out_axes(out_axes):
    rng = np.random.default_rng(1)
    x = _batched(rng, ((2, 3, 4), f32), 1)
    check_vmap(lambda x: lax.transpose(x, (2, 0, 1)), [x], (1,), out_axes, tol=0)


def test_nested_vmap():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(2, 3, 4, 5)).astype(f32)
    fun = vmap(vmap(lambda x: lax.reshape(lax.transpose(x, (1, 0)), (15,)), 1), 0)
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
    jaxpr = make_jaxpr(vmap(lambda x, v: lax.pad(x, v, ((1, 1, 0),)), (0, None)))(x, v).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["pad"]


# Batched start indices: negative ones wrap around, out-of-range ones clamp, per member.
STARTS = np.array([0, 3, -1, 7, -9, 2], np.int32)


def _dynamic(which):
    if which == "dynamic_slice":
        return lambda x, u, i, j: lax.dynamic_slice(x, (i, j), (2, 3))
    return lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j))


def _dynamic_args(rng, size=None):
    """Operands for `size` members, with random start indices (default: STARTS' members, with
    STARTS and its negation as the start indices)."""
    n = len(STARTS) if size is None else size
    x = rng.uniform(size=(n, 4, 5)).astype(f32)
    u = rng.uniform(size=(n, 2, 3)).astype(f32)
    i, j = rng.integers(-6, 7, (2, n)).astype(np.int32)
    return (x, u, STARTS, -STARTS) if size is None else (x, u, i, j)


@pytest.mark.parametrize("which", ["dynamic_slice", "dynamic_update_slice"])
@pytest.mark.parametrize("in_axes", [(0, 0, 0, 0), (None, None, 0, None), (0, None, None, 0)])
def test_batched_start_indices_match_a_loop(which, in_axes):
    x, u, i, j = _dynamic_args(np.random.default_rng(5))
    args = [a if ax == 0 else a[1] for a, ax in zip((x, u, i, j), in_axes)]
    check_vmap(_dynamic(which), args, in_axes, tol=0)
    # under jit, as one compiled program
    from tracejit import jit

    got = np.asarray(jit(vmap(_dynamic(which), in_axes))(*args))
    np.testing.assert_array_equal(got, np.asarray(vmap(_dynamic(which), in_axes)(*args)))


@pytest.mark.parametrize("which", ["dynamic_slice", "dynamic_update_slice"])
def test_batched_start_indices_are_one_gather_or_scatter(which):
    """The jaxpr does not grow with the batch size: no loop, no unrolling."""
    rng = np.random.default_rng(6)

    from tracejit import grad

    def eqns(fun, size):
        args = _dynamic_args(rng, size)
        return [e.primitive.name for e in make_jaxpr(vmap(fun))(*args).jaxpr.eqns]

    small, large = eqns(_dynamic(which), 2), eqns(_dynamic(which), 64)
    assert small == large
    assert small.count("gather" if which == "dynamic_slice" else "scatter") == 1
    # per-example gradients: a gather's transpose is a scatter, a scatter's a gather
    per_example_grad = grad(lambda x, u, i, j: (_dynamic(which)(x, u, i, j) ** 2).sum(), (0, 1))
    small, large = eqns(per_example_grad, 2), eqns(per_example_grad, 64)
    assert small == large
    assert ({"gather", "scatter"} if which == "dynamic_update_slice" else {"scatter"}) <= set(small)


def test_vmap_of_vmap_with_batched_start_indices():
    rng = np.random.default_rng(7)
    x = rng.uniform(size=(3, 2, 6)).astype(f32)
    i = rng.integers(-7, 7, (3, 2)).astype(np.int32)
    f = vmap(vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))))
    want = np.stack(
        [
            np.stack([lax.dynamic_slice(x[a, b], (i[a, b],), (2,)) for b in range(2)])
            for a in range(3)
        ]
    )
    np.testing.assert_array_equal(np.asarray(f(x, i)), want)
    g = vmap(vmap(lambda x, i: lax.dynamic_update_slice(x, x[:2] * 2, (i,))), (0, None))
    want = np.stack(
        [np.stack([lax.dynamic_update_slice(x[a, b], x[a, b, :2] * 2, (i[0, b],)) for b in range(2)])
         for a in range(3)]
    )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(g(x, i[0])), want)


@pytest.mark.parametrize("which", ["dynamic_slice", "dynamic_update_slice"])
def test_gradients_with_batched_start_indices(which):
    """Per-example gradients (vmap of grad, eagerly and under jit) equal a loop of grads, and
    the gradient of a summed vmap equals the sum of the per-example gradients."""
    from tracejit import grad, jit

    x, u, i, j = _dynamic_args(np.random.default_rng(8))
    w = np.linspace(-1, 1, 20, dtype=f32).reshape(4, 5)

    def loss(x, u, i, j):
        out = _dynamic(which)(x, u, i, j)
        return (out * (w[:2, :3] if out.shape == (2, 3) else w)).sum() + (out**2).sum()

    per_example = vmap(grad(loss, argnums=(0, 1)))
    want = [grad(loss, argnums=(0, 1))(*(a[k] for a in (x, u, i, j))) for k in range(len(i))]
    for got in (per_example(x, u, i, j), jit(per_example)(x, u, i, j)):
        for n in range(2):
            np.testing.assert_allclose(
                np.asarray(got[n]), np.stack([np.asarray(g[n]) for g in want]), rtol=1e-6
            )
    summed = grad(lambda x, u: vmap(loss)(x, u, i, j).sum(), argnums=(0, 1))(x, u)
    for n in range(2):
        np.testing.assert_allclose(np.asarray(summed[n]), np.asarray(got[n]), rtol=1e-6)
