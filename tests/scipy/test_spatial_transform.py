"""jax.scipy.spatial.transform: `Rotation`'s conversions (quaternions, matrices, rotation
vectors, modified Rodrigues parameters, all 24 Euler conventions), composition, inverse,
application to vectors, magnitude and mean equal SciPy's `Rotation`'s, for single rotations and
stacks; `Slerp` equals SciPy's inside the key times and follows JAX outside them. Both are
NamedTuples (pytrees) that pass through jit and vmap, their conversions differentiate as finite
differences say, and bad arguments raise JAX's errors."""

import itertools

import numpy as np
import pytest
import scipy.spatial.transform as sst
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy.spatial.transform import Rotation, Slerp
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
QUATS = RNG.normal(size=(6, 4))
SCIPY = sst.Rotation.from_quat(QUATS)
VECTORS = RNG.normal(size=(6, 3))
EULER_SEQS = [
    "".join(axes)
    for axes in itertools.product("xyz", repeat=3)
    if axes[0] != axes[1] and axes[1] != axes[2]
]


def test_from_quat_normalizes_and_keeps_single_or_stacked(enable_x64):
    single, stacked = Rotation.from_quat(QUATS[0]), Rotation.from_quat(QUATS)
    assert single.single and not stacked.single and len(stacked) == 6
    assert_close(stacked.as_quat(), SCIPY.as_quat(canonical=False), 1e-12, dtype=np.float64)
    assert_close(single.quat, QUATS[0] / np.linalg.norm(QUATS[0]), 1e-12)


@pytest.mark.parametrize("scalar_first", [False, True])
def test_as_quat_canonical(enable_x64, scalar_first):
    quats = np.concatenate([QUATS, [[0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0]]])
    got = Rotation.from_quat(quats).as_quat(canonical=True, scalar_first=scalar_first)
    want = sst.Rotation.from_quat(quats).as_quat(canonical=True, scalar_first=scalar_first)
    assert_close(got, want, 1e-12)


@pytest.mark.parametrize("name", ["as_matrix", "as_rotvec", "as_mrp", "magnitude", "inv"], ids=str)
def test_conversions_match_scipy(enable_x64, name):
    def convert(rotation):
        result = getattr(rotation, name)()
        return result.as_matrix() if name == "inv" else result

    want = convert(SCIPY)
    assert_close(convert(Rotation.from_quat(QUATS)), want, 1e-12)
    assert_close(convert(Rotation.from_quat(QUATS[2])), want[2], 1e-12)


def test_rotvec_in_degrees_and_near_zero(enable_x64):
    rotvecs = np.concatenate([VECTORS, [[1e-5, 0, 0], [0, 0, 0]]])
    assert_close(
        Rotation.from_rotvec(rotvecs).as_quat(), sst.Rotation.from_rotvec(rotvecs).as_quat(), 1e-12
    )
    got = Rotation.from_rotvec(rotvecs, degrees=True).as_rotvec(degrees=True)
    assert_close(got, sst.Rotation.from_rotvec(rotvecs, degrees=True).as_rotvec(True), 1e-9)


def test_from_matrix_and_from_mrp_match_scipy(enable_x64):
    matrices = SCIPY.as_matrix()
    got = Rotation.from_matrix(matrices).as_quat(canonical=True)
    assert_close(got, sst.Rotation.from_matrix(matrices).as_quat(canonical=True), 1e-12)
    mrp = SCIPY.as_mrp()
    assert_close(Rotation.from_mrp(mrp).as_matrix(), matrices, 1e-12)


@pytest.mark.parametrize("seq", EULER_SEQS + [s.upper() for s in EULER_SEQS])
def test_euler_round_trips_match_scipy(enable_x64, seq):
    assert_close(Rotation.from_quat(QUATS).as_euler(seq), SCIPY.as_euler(seq), 1e-10)
    angles = RNG.uniform(-1.5, 1.5, size=(4, 3))
    got = Rotation.from_euler(seq, angles).as_matrix()
    assert_close(got, sst.Rotation.from_euler(seq, angles).as_matrix(), 1e-12)


def test_euler_fewer_axes_degrees_and_scalars(enable_x64):
    got = Rotation.from_euler("xz", np.array([10.0, 20.0]), degrees=True).as_quat()
    assert_close(got, sst.Rotation.from_euler("xz", [10.0, 20.0], degrees=True).as_quat(), 1e-12)
    single = Rotation.from_euler("y", 0.3)
    assert single.single
    assert_close(single.as_quat(), sst.Rotation.from_euler("y", 0.3).as_quat(), 1e-12)
    got = Rotation.from_quat(QUATS).as_euler("ZYX", degrees=True)
    assert_close(got, SCIPY.as_euler("ZYX", degrees=True), 1e-9)


def test_composition_single_and_stacked(enable_x64):
    stacked, single = Rotation.from_quat(QUATS), Rotation.from_quat(QUATS[0])
    assert_close((stacked * single).as_matrix(), (SCIPY * SCIPY[0]).as_matrix(), 1e-12)
    assert_close((single * stacked).as_matrix(), (SCIPY[0] * SCIPY).as_matrix(), 1e-12)
    assert (single * single).single


@pytest.mark.parametrize("inverse", [False, True])
def test_apply(enable_x64, inverse):
    stacked, single = Rotation.from_quat(QUATS), Rotation.from_quat(QUATS[1])
    assert_close(stacked.apply(VECTORS, inverse), SCIPY.apply(VECTORS, inverse), 1e-12)
    assert_close(stacked.apply(VECTORS[0], inverse), SCIPY.apply(VECTORS[0], inverse), 1e-12)
    assert_close(single.apply(VECTORS, inverse), SCIPY[1].apply(VECTORS, inverse), 1e-12)
    assert single.apply(VECTORS[0]).shape == (3,)


def test_mean_matches_scipy(enable_x64):
    weights = RNG.uniform(0.5, 2.0, size=6)
    got = Rotation.from_quat(QUATS).mean(weights)
    assert got.single
    assert_close(got.as_matrix(), SCIPY.mean(weights).as_matrix(), 1e-10)
    assert_close(Rotation.from_quat(QUATS).mean().as_matrix(), SCIPY.mean().as_matrix(), 1e-10)


def test_identity_indexing_and_concatenate(enable_x64):
    assert_close(Rotation.identity().as_matrix(), np.eye(3), 0.0)
    assert Rotation.identity(dtype=np.float32).quat.dtype == np.float32
    stacked = Rotation.from_quat(QUATS)
    assert_close(stacked[1:3].quat, stacked.quat[1:3], 0.0)
    assert stacked[2].single
    assert_close(stacked[np.array([3, 0])].quat, stacked.quat[np.array([3, 0])], 0.0)
    joined = Rotation.concatenate([stacked, stacked[0], stacked[1:3]])
    assert len(joined) == 9
    assert_close(joined.quat[6], stacked.quat[0], 0.0)


def test_default_dtype_is_float32():
    rotation = Rotation.from_euler("xyz", np.array([1, 2, 3]))
    assert rotation.quat.dtype == np.float32
    assert rotation.as_matrix().dtype == np.float32


def test_pytree_jit_and_vmap(enable_x64):
    stacked = Rotation.from_quat(QUATS)
    leaves, tree = tracejit.tree_util.tree_flatten(stacked)
    assert len(leaves) == 1 and isinstance(tree.unflatten(leaves), Rotation)
    got = tracejit.jit(lambda r, v: r.apply(v))(stacked, VECTORS)
    assert_close(got, SCIPY.apply(VECTORS), 1e-12)
    check_vmap(lambda q: Rotation.from_quat(q).as_euler("zyz"), (QUATS,), (0,), jit=True)
    check_vmap(lambda m: Rotation.from_matrix(m).as_rotvec(), (SCIPY.as_matrix(),), (0,))


def test_grads_against_finite_differences():
    check_grads(lambda v: Rotation.from_rotvec(v).as_matrix(), (VECTORS[0],), order=1)
    check_grads(lambda q: Rotation.from_quat(q).as_rotvec(), (QUATS[0],), order=1)
    check_grads(lambda a: Rotation.from_euler("XYZ", a).apply(VECTORS), (VECTORS[1],), order=1)
    # inside the small-angle series
    check_grads(lambda v: Rotation.from_rotvec(v).as_quat(), (np.full(3, 1e-4),), order=1)


KEY_TIMES = np.array([0.0, 1.0, 3.0, 3.5])
KEYS = RNG.normal(size=(4, 4))


def test_slerp_matches_scipy_inside(enable_x64):
    times = np.linspace(0.0, 3.5, 15)
    slerp = Slerp.init(KEY_TIMES, Rotation.from_quat(KEYS))
    want = sst.Slerp(KEY_TIMES, sst.Rotation.from_quat(KEYS))(times)
    assert_close(slerp(times).as_matrix(), want.as_matrix(), 1e-10)
    assert slerp(1.5).single
    assert_close(slerp(times[6]).as_matrix(), want[6].as_matrix(), 1e-10)


def test_slerp_outside_the_key_times_as_jax(enable_x64):
    slerp = Slerp.init(KEY_TIMES, Rotation.from_quat(KEYS))
    keys = sst.Rotation.from_quat(KEYS)
    # before the first key time: the first interval, extended backwards
    first_step = (keys[0].inv() * keys[1]).as_rotvec()
    want = keys[0] * sst.Rotation.from_rotvec(-0.5 * first_step)
    assert_close(slerp(np.array([-0.5])).as_matrix()[0], want.as_matrix(), 1e-10)
    # after the last: the last interval again, its fraction counted from the last key time
    last_step = (keys[2].inv() * keys[3]).as_rotvec()
    want = keys[2] * sst.Rotation.from_rotvec((3.75 - 3.5) / 0.5 * last_step)
    assert_close(slerp(np.array([3.75])).as_matrix()[0], want.as_matrix(), 1e-10)


def test_slerp_jit(enable_x64):
    slerp = Slerp.init(KEY_TIMES, Rotation.from_quat(KEYS))
    times = np.array([0.2, 2.0, 3.3])
    got = tracejit.jit(lambda s, t: s(t).quat)(slerp, times)
    assert_close(got, slerp(times).quat, 1e-12)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: len(Rotation.from_quat(QUATS[0])), TypeError, "Single rotation has no len"),
        (lambda: Rotation.from_quat(QUATS[0])[0], TypeError, "not subscriptable"),
        (lambda: Rotation.from_quat(QUATS[0]).mean(), TypeError, "Single rotation"),
        (lambda: Rotation.from_euler("xYz", np.ones(3)), ValueError, "Expected axes"),
        (lambda: Rotation.from_euler("xxz", np.ones(3)), ValueError, "consecutive axes"),
        (lambda: Rotation.from_euler("xyzx", np.ones(4)), ValueError, "upto 3 characters"),
        (lambda: Rotation.from_euler("x", np.ones(2)), ValueError, "shape"),
        (lambda: Rotation.from_quat(QUATS).as_euler("xy"), ValueError, "Expected 3 axes"),
        (lambda: Rotation.from_matrix(np.ones((3, 2))), ValueError, "shape"),
        (lambda: Rotation.random(tracejit.random.key(0)), NotImplementedError, "random"),
        (lambda: Rotation.identity(3), NotImplementedError, "identity"),
        (lambda: Slerp.init(KEY_TIMES, Rotation.from_quat(KEYS[0])), ValueError, "at least 2"),
        (
            lambda: Slerp.init(KEY_TIMES[:3], Rotation.from_quat(KEYS)),
            ValueError,
            "4 rotations and 3 timestamps",
        ),
        (
            lambda: Slerp.init(KEY_TIMES[None], Rotation.from_quat(KEYS)),
            ValueError,
            "1 dimensional",
        ),
        (
            lambda: Slerp.init(KEY_TIMES, Rotation.from_quat(KEYS))(np.ones((2, 2))),
            ValueError,
            "at most 1-dimensional",
        ),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
