"""gather, scatter_add and scatter: values against a per-window NumPy reference in each mode
(eagerly, staged and compiled), derivatives (numerical checks, and the transposes being each
other), vmap against a loop over batch members, and errors."""

import itertools

import numpy as np
import pytest
from helpers import check_traced_matches_eager, vmap_reference

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit._src.test_util import check_grads

GDN, SDN, Mode = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers, lax.GatherScatterMode
rng = np.random.default_rng(0)


# --- references: one window at a time -------------------------------------------------------
def _window_start(operand_shape, vector, start_index_map, sizes, mode):
    """The window's start in each operand dimension, or None for a dropped/filled window."""
    start = [0] * len(operand_shape)
    for k, d in enumerate(start_index_map):
        high = operand_shape[d] - sizes[d]
        if mode is Mode.FILL_OR_DROP and not 0 <= vector[k] <= high:
            return None
        start[d] = min(max(int(vector[k]), 0), high)
    return start


def _windows(operand_shape, indices, dims, sizes, mode):
    """Per batch position: (position, operand slices of its window, or None)."""
    _, start_map, op_batching, idx_batching = dims
    for position in np.ndindex(*indices.shape[:-1]):
        start = _window_start(operand_shape, indices[position], start_map, sizes, mode)
        if start is None:
            yield position, None
            continue
        for d, j in zip(op_batching, idx_batching):
            start[d] = position[j]
        yield position, tuple(slice(s, s + n) for s, n in zip(start, sizes))


def ref_gather(operand, indices, dn, slice_sizes, mode, fill=np.nan):
    dims = (dn.collapsed_slice_dims, dn.start_index_map, dn.operand_batching_dims,
            dn.start_indices_batching_dims)  # fmt: skip
    skipped = dn.collapsed_slice_dims + dn.operand_batching_dims
    out = []
    for _, window in _windows(operand.shape, indices, dims, slice_sizes, mode):
        shape = tuple(n for d, n in enumerate(slice_sizes) if d not in skipped)
        if window is None:
            out.append(np.full(shape, fill, operand.dtype))
        else:
            out.append(operand[window].reshape(shape))
    out = np.stack(out).reshape(indices.shape[:-1] + out[0].shape)
    batch_rank = indices.ndim - 1
    rank = out.ndim
    batch_positions = [r for r in range(rank) if r not in dn.offset_dims]
    perm = [0] * rank
    for k, r in enumerate(batch_positions):
        perm[r] = k
    for k, r in enumerate(dn.offset_dims):
        perm[r] = batch_rank + k
    return out.transpose(perm)


COMBINE = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
           "set": lambda old, new: new}  # fmt: skip


def ref_scatter(operand, indices, updates, dn, mode, combine):
    dims = (dn.inserted_window_dims, dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
            dn.scatter_indices_batching_dims)  # fmt: skip
    skipped = dn.inserted_window_dims + dn.operand_batching_dims
    window_sizes = iter(updates.shape[d] for d in dn.update_window_dims)
    sizes = [1 if d in skipped else next(window_sizes) for d in range(operand.ndim)]
    batch_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    updates = updates.transpose(batch_dims + list(dn.update_window_dims))
    out = operand.copy()
    for position, window in _windows(operand.shape, indices, dims, sizes, mode):
        if window is not None:
            update = updates[position].reshape(out[window].shape)
            out[window] = COMBINE[combine](out[window], update)
    return out


# --- cases: (operand shape, index batch shape, dimension numbers, slice sizes) --------------
GATHERS = [
    # rows of a matrix, as x[idx]
    ((5, 6), (3,), GDN((1,), (0,), (0,)), (1, 6)),
    # 2-D windows at a 2-D grid of index vectors
    ((5, 6), (2, 2), GDN((2, 3), (), (0, 1)), (2, 3)),
    # window dims before the batch dims, and a reversed start index map
    ((5, 6, 7), (2,), GDN((0, 1, 3), (), (2, 0)), (2, 3, 4)),
    # operand batching dims: member i reads operand slice i
    ((3, 5, 6), (3, 4), GDN((2,), (1,), (1,), (0,), (0,)), (1, 1, 4)),
    ((4, 2, 5), (3, 2), GDN((2,), (0,), (2,), (1,), (1,)), (1, 1, 3)),
    # no index components at all: the same window for every position
    ((4, 3), (2,), GDN((1, 2), (), ()), (4, 3)),
]
MODES = [Mode.CLIP, Mode.FILL_OR_DROP, Mode.PROMISE_IN_BOUNDS]


def _indices(operand_shape, batch_shape, dn, in_bounds, sizes):
    """Index vectors, some out of bounds (negative, past the end) unless `in_bounds`;
    index batching dims run over the operand's batching dims' sizes."""
    shape = batch_shape + (len(dn.start_index_map),)
    if in_bounds:
        highs = [operand_shape[d] - sizes[d] for d in dn.start_index_map]
        return (rng.uniform(size=shape) * (np.array(highs) + 1)).astype(np.int32)
    return rng.integers(-3, max(operand_shape) + 2, shape).astype(np.int32)


def _operand(shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("operand_shape, batch_shape, dn, sizes", GATHERS, ids=str)
def test_gather_matches_reference(operand_shape, batch_shape, dn, sizes, mode):
    x = _operand(operand_shape)
    idx = _indices(operand_shape, batch_shape, dn, mode is Mode.PROMISE_IN_BOUNDS, sizes)
    f = lambda x, idx: lax.gather(x, idx, dn, sizes, mode=mode)
    want = ref_gather(x, idx, dn, sizes, mode)
    np.testing.assert_array_equal(np.asarray(check_traced_matches_eager(f, x, idx)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, idx)), want)


@pytest.mark.parametrize(
    "dtype, fill", [(np.int32, -(2**31)), (np.uint8, 255), (np.bool_, True), (np.float32, 0.5)]
)
def test_gather_fill_values(dtype, fill):
    x = (rng.normal(size=(5, 6)) > 0).astype(dtype)
    dn, sizes = GDN((1,), (0,), (0,)), (1, 6)
    idx = np.array([[1], [7], [-1], [4]], np.int32)
    fill_value = 0.5 if dtype is np.float32 else None
    f = lambda x, i: lax.gather(x, i, dn, sizes, mode="fill", fill_value=fill_value)
    want = ref_gather(x, idx, dn, sizes, Mode.FILL_OR_DROP, fill)
    np.testing.assert_array_equal(np.asarray(f(x, idx)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, idx)), want)


def _scatter_case(operand_shape, batch_shape, dn, sizes, in_bounds):
    """The scatter that mirrors a gather case, and its operands."""
    sdn = SDN(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
              dn.operand_batching_dims, dn.start_indices_batching_dims)  # fmt: skip
    idx = _indices(operand_shape, batch_shape, dn, in_bounds, sizes)
    updates_shape = ref_gather(np.zeros(operand_shape), idx, dn, sizes, Mode.CLIP).shape
    return sdn, idx, _operand(operand_shape), _operand(updates_shape)


@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("operand_shape, batch_shape, dn, sizes", GATHERS, ids=str)
def test_scatter_add_matches_reference(operand_shape, batch_shape, dn, sizes, mode):
    in_bounds = mode is Mode.PROMISE_IN_BOUNDS
    sdn, idx, x, u = _scatter_case(operand_shape, batch_shape, dn, sizes, in_bounds)
    f = lambda x, idx, u: lax.scatter_add(x, idx, u, sdn, mode=mode)
    want = ref_scatter(x, idx, u, sdn, mode, "add")
    got = check_traced_matches_eager(f, x, idx, u, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, idx, u)), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP], ids=str)
def test_scatter_matches_reference(mode):
    # distinct windows (no two updates to one element), some of them out of bounds
    x, u = _operand((6, 5)), _operand((3, 2, 5))
    sdn = SDN((1, 2), (), (0,))
    idx = np.array([[0], [2], [5]], np.int32)  # the last window does not fit (rows 5, 6)
    f = lambda x, idx, u: lax.scatter(x, idx, u, sdn, mode=mode, unique_indices=True)
    want = ref_scatter(x, idx, u, sdn, mode, "set")
    np.testing.assert_array_equal(np.asarray(check_traced_matches_eager(f, x, idx, u)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, idx, u)), want)


def test_defaults_follow_jax():
    """mode=None: a gather clamps (PROMISE_IN_BOUNDS), a scatter drops (FILL_OR_DROP)."""
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    idx = np.array([[4], [6], [8]], np.int32)
    dn = GDN((1,), (1,), (1,))
    np.testing.assert_array_equal(lax.gather(x, idx, dn, (2, 1)), [[4, 10], [5, 11], [5, 11]])
    got = lax.scatter_add(x, idx, np.ones((3, 2), np.float32), SDN((1,), (1,), (1,)))
    want = x.copy()
    want[:2, 4] += 1
    np.testing.assert_array_equal(got, want)
    assert [m.value for m in Mode] == [1, 2, 3]
    assert Mode.from_any("clip") is Mode.CLIP and Mode.from_any(None) is Mode.FILL_OR_DROP


COMBINING = {"mul": lax.scatter_mul, "min": lax.scatter_min, "max": lax.scatter_max}


@pytest.mark.parametrize("combine", list(COMBINING))
@pytest.mark.parametrize("mode", MODES, ids=str)
@pytest.mark.parametrize("operand_shape, batch_shape, dn, sizes", GATHERS, ids=str)
def test_combining_scatters_match_reference(operand_shape, batch_shape, dn, sizes, mode, combine):
    in_bounds = mode is Mode.PROMISE_IN_BOUNDS
    sdn, idx, x, u = _scatter_case(operand_shape, batch_shape, dn, sizes, in_bounds)
    f = lambda x, idx, u: COMBINING[combine](x, idx, u, sdn, mode=mode)
    want = ref_scatter(x, idx, u, sdn, mode, combine)  # overlapping windows combine in turn
    got = check_traced_matches_eager(f, x, idx, u, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, idx, u)), want, rtol=1e-5, atol=1e-6)


def test_combining_scatters_on_integers():
    x = np.array([5, -3, 7, 0], np.int32)
    idx, u = np.array([[0], [0], [2], [9]], np.int32), np.array([2, -4, 3, 1], np.int32)
    sdn = SDN((), (0,), (0,))
    for name, want in [("mul", [-40, -3, 21, 0]), ("min", [-4, -3, 3, 0]), ("max", [5, -3, 7, 0])]:
        f = lambda x, u, name=name: COMBINING[name](x, idx, u, sdn)
        np.testing.assert_array_equal(np.asarray(f(x, u)), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, u)), want)


# --- derivatives ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP], ids=str)
@pytest.mark.parametrize("operand_shape, batch_shape, dn, sizes", GATHERS[:5], ids=str)
def test_gather_and_scatter_add_grads(operand_shape, batch_shape, dn, sizes, mode):
    sdn, idx, x, u = _scatter_case(operand_shape, batch_shape, dn, sizes, False)
    x, u = x.astype(np.float64), u.astype(np.float64)
    check_grads(lambda x: lax.gather(x, idx, dn, sizes, mode=mode), (x,), order=2)
    check_grads(lambda x, u: lax.scatter_add(x, idx, u, sdn, mode=mode), (x, u), order=2)


def test_filled_windows_have_zero_tangents():
    x = np.arange(6.0, dtype=np.float32)
    f = lambda x: lax.gather(x, np.array([[1], [9]], np.int32), GDN((1,), (), (0,)), (2,),
                             mode="fill")  # fmt: skip
    out, tangent = jax.jvp(f, (x,), (np.ones(6, np.float32),))
    np.testing.assert_array_equal(out, [[1, 2], [np.nan, np.nan]])
    np.testing.assert_array_equal(tangent, [[1, 1], [0, 0]])


def test_scatter_grads_with_unique_indices():
    x, u = _operand((6, 5)).astype(np.float64), _operand((2, 2, 5)).astype(np.float64)
    idx = np.array([[4], [1]], np.int32)
    sdn = SDN((1, 2), (), (0,))
    f = lambda x, u: lax.scatter(x, idx, u, sdn, mode="clip", unique_indices=True)
    check_grads(f, (x, u), order=2)
    ct = _operand((6, 5)).astype(np.float64)
    ct_x, ct_u = jax.vjp(f, x, u)[1](ct)
    want_x = ct.copy()
    want_x[[4, 5, 1, 2]] = 0  # what the updates overwrote
    np.testing.assert_array_equal(ct_x, want_x)
    np.testing.assert_array_equal(ct_u, np.stack([ct[4:6], ct[1:3]]))


@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter_grads_with_overlapping_windows_follow_the_winner(mode):
    """Rows 1-2 and 2-3 overlap at row 2: whichever window is written there gets its cotangent,
    the other none, and the operand none where either was written."""
    x, u = _operand((6, 5)).astype(np.float64), _operand((3, 2, 5)).astype(np.float64)
    idx = np.array([[1], [2], [5]], np.int32)  # the last window does not fit: clipped or dropped
    sdn = SDN((1, 2), (), (0,))
    f = lambda x, u: lax.scatter(x, idx, u, sdn, mode=mode)
    check_grads(f, (x, u), order=2)
    out = np.asarray(f(x, u))
    ct = _operand((6, 5)).astype(np.float64)
    ct_x, ct_u = jax.vjp(f, x, u)[1](ct)
    written = ~np.isclose(out, x)
    np.testing.assert_array_equal(ct_x, np.where(written, 0.0, ct))
    # every element of out that came from an update sends its cotangent to exactly that update
    np.testing.assert_allclose(np.sum(ct_u), np.sum(np.where(written, ct, 0.0)), rtol=1e-5)
    grads = jax.jit(jax.grad(lambda x, u: jnp.sum(f(x, u) * ct), (0, 1)))(x, u)
    np.testing.assert_allclose(grads[0], ct_x, rtol=1e-6)
    np.testing.assert_allclose(grads[1], ct_u, rtol=1e-6)


@pytest.mark.parametrize("mode", [Mode.CLIP, Mode.FILL_OR_DROP], ids=str)
def test_combining_scatter_grads(mode):
    x, u = _operand((6, 5)).astype(np.float64), _operand((3, 2, 5)).astype(np.float64)
    sdn = SDN((1, 2), (), (0,))
    overlapping = np.array([[0], [1], [5]], np.int32)  # rows 0-1 and 1-2 overlap; 5-6 is out
    distinct = np.array([[2], [0], [5]], np.int32)  # (clipped to rows 4-5)
    f = lambda x: lax.scatter_mul(x, overlapping, u, sdn, mode=mode)
    check_grads(f, (x,), order=2)  # linear in the operand, whatever the overlaps
    g = lambda x, u: lax.scatter_mul(x, distinct, u, sdn, mode=mode, unique_indices=True)
    check_grads(g, (x, u), order=2)
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        jax.grad(lambda u: lax.scatter_mul(x, distinct, u, sdn, mode=mode).sum())(u)
    for op in (lax.scatter_min, lax.scatter_max):  # no ties at random points
        check_grads(lambda x, u, op=op: op(x, overlapping, u, sdn, mode=mode), (x, u), order=1)


def test_extremum_ties_share_the_tangent():
    """As in JAX: the operand and the updates that tie for an element share its tangent."""
    y = np.arange(4.0, dtype=np.float32)
    idx, sdn = np.array([[1], [1]], np.int32), SDN((), (0,), (0,))
    f = lambda y, u: lax.scatter_max(y, idx, u, sdn).sum()
    gy, gu = jax.grad(f, (0, 1))(y, np.array([1.0, 1.0], np.float32))
    np.testing.assert_allclose(np.asarray(gy), [1, 1 / 3, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gu), [1 / 3, 1 / 3], rtol=1e-6)
    gy, gu = jax.grad(f, (0, 1))(y, np.array([5.0, 5.0], np.float32))
    np.testing.assert_allclose(np.asarray(gy), [1, 0, 1, 1])
    np.testing.assert_allclose(np.asarray(gu), [0.5, 0.5])


# --- vmap -----------------------------------------------------------------------------------


def _batch(a, ax, size=3):
    """`size` variants of `a` stacked at `ax` (None: `a` itself)."""
    if ax is None:
        return a
    variants = [a if k == 0 else np.roll(a, k) for k in range(size)]
    return np.stack(variants, axis=ax)


AXES = [ax for ax in itertools.product((None, 0, -1), repeat=3) if ax != (None, None, None)]


@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("operand_shape, batch_shape, dn, sizes", GATHERS[1:5], ids=str)
def test_vmap_matches_avmap_reference(operand_shape, batch_shape, dn, sizes, axes):
    sdn, idx, x, u = _scatter_case(operand_shape, batch_shape, dn, sizes, False)
    x_ax, idx_ax, u_ax = axes
    args = [_batch(x, x_ax), _batch(idx, idx_ax), _batch(u, u_ax)]
    funs = [
        (lambda x, i, u: lax.gather(x, i, dn, sizes, mode="fill"), (x_ax, idx_ax)),
        (lambda x, i, u: lax.gather(x, i, dn, sizes, mode="clip"), (x_ax, idx_ax)),
        (lambda x, i, u: lax.scatter_add(x, i, u, sdn, mode="clip"), axes),
        (lambda x, i, u: lax.scatter_add(x, i, u, sdn), axes),
        (lambda x, i, u: lax.scatter_mul(x, i, u, sdn, mode="clip"), axes),
        (lambda x, i, u: lax.scatter_min(x, i, u, sdn), axes),
        (lambda x, i, u: lax.scatter_max(x, i, u, sdn), axes),
    ]
    for f, used in funs:
        if all(ax is None for ax in used):
            continue
        in_axes = (*used, None) if len(used) == 2 else used
        want = vmap_reference(f, args, in_axes)
        got = jax.vmap(f, in_axes)(*args)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


# --- errors ---------------------------------------------------------------------------------
def test_errors():
    x, idx = np.zeros((4, 5), np.float32), np.zeros((3, 1), np.int32)
    with pytest.raises(TypeError, match="index vector"):
        lax.gather(x, idx, GDN((1,), (0,), (0, 1)), (1, 5))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (1, 6))
    with pytest.raises(TypeError, match="integer dtype"):
        lax.gather(x, idx.astype(np.float32), GDN((1,), (0,), (0,)), (1, 5))
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        lax.gather(x, idx, ((1,), (0,), (0,)), (1, 5))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.gather(x, idx, GDN((1,), (0,), (0,)), (1, 5), mode="wrap")
    with pytest.raises(TypeError, match="updates"):
        lax.scatter_add(x, idx, np.zeros((3, 6), np.float32), SDN((1,), (0,), (0,)))
    with pytest.raises(TypeError, match="dtype"):
        lax.scatter_add(x, idx, np.zeros((3, 5), np.int32), SDN((1,), (0,), (0,)))


@pytest.mark.parametrize("jit", [False, True])
def test_gathers_and_scatters_vmapped_over_an_empty_batch(jit):
    """The batch becomes operand and indices batching dimensions of size 0: their windows of
    one fit (optax's Hungarian algorithm vmapped over no problems)."""
    scatter = jax.vmap(lambda x, i: x.at[i].set(1.0).at[i].add(2.0))
    gather = jax.vmap(lambda x, i: x[i])
    scatter, gather = (jax.jit(scatter), jax.jit(gather)) if jit else (scatter, gather)
    out = scatter(jnp.zeros((0, 3)), jnp.zeros((0,), np.int32))
    assert out.shape == (0, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(
        scatter(jnp.zeros((2, 3)), jnp.array([0, 2])), [[3, 0, 0], [0, 0, 3]]
    )
    assert gather(jnp.zeros((0, 2, 3)), jnp.zeros((0,), np.int32)).shape == (0, 3)
    assert gather(jnp.zeros((0, 3)), jnp.zeros((0,), np.int32)).shape == (0,)
    rows = gather(jnp.arange(12.0).reshape(2, 2, 3), jnp.array([1, 0]))
    np.testing.assert_array_equal(rows, [[3, 4, 5], [6, 7, 8]])
