"""The everyday jnp helpers of `lib`, `lib_math` and `lib_vectorize` against NumPy, eagerly,
staged and jitted; dtypes, weak types and errors as JAX 0.10.2 has them; gradients and vmap
against a loop for the differentiable ones."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
import tracejit.numpy as jnp
from tracejit._src.test_util import check_grads

RNG = np.random.default_rng(0)
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M = RNG.standard_normal((3, 4)).astype(np.float32)
SQ = RNG.standard_normal((4, 4)).astype(np.float32)
V = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
I = np.array([3, 1, 4, 1, 5], np.int32)
BOOL = np.array([True, False, False, True])
E = np.zeros((0,), np.float32)
NANS = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
XP = np.array([0.0, 1.0, 3.0, 4.0], np.float32)
FP = np.array([1.0, -1.0, 2.0, 5.0], np.float32)
PTS = np.linspace(-1, 5, 13).astype(np.float32)


def _complex(re, im):
    out = np.empty(re.shape, np.complex64)
    out.real, out.imag = re, im
    return out


def _tuple_roll(x):
    return jnp.roll(x, (1, -2), (0, -1))


# (name, jnp function of the Arrays, NumPy function of the NumPy arrays, arrays)
CASES = [
    ("roll flat", lambda x: jnp.roll(x, 5), lambda x: np.roll(x, 5), [X]),
    ("roll axis", lambda x: jnp.roll(x, -1, axis=1), lambda x: np.roll(x, -1, axis=1), [X]),
    ("roll big", lambda x: jnp.roll(x, 11, axis=-1), lambda x: np.roll(x, 11, axis=-1), [X]),
    ("roll tuple", _tuple_roll, lambda x: np.roll(x, (1, -2), (0, -1)), [X]),
    ("roll bcast", lambda x: jnp.roll(x, 1, (0, 1)), lambda x: np.roll(x, 1, (0, 1)), [M]),
    ("roll int", lambda x: jnp.roll(x, 2), lambda x: np.roll(x, 2), [I]),
    ("roll bool", lambda x: jnp.roll(x, 1), lambda x: np.roll(x, 1), [BOOL]),
    ("roll empty", lambda x: jnp.roll(x, 1), lambda x: np.roll(x, 1), [E]),
    ("diff", jnp.diff, np.diff, [X]),
    ("diff n2 axis0", lambda x: jnp.diff(x, 2, 0), lambda x: np.diff(x, 2, 0), [M]),
    ("diff int", jnp.diff, np.diff, [I]),
    ("diff bool", jnp.diff, np.diff, [BOOL]),
    ("diff n0", lambda x: jnp.diff(x, 0), lambda x: np.diff(x, 0), [V]),
    ("diff big n", lambda x: jnp.diff(x, 6), lambda x: np.diff(x, 6), [V]),
    (
        "diff prepend append",
        lambda x: jnp.diff(x, axis=0, prepend=0.0, append=x[:1]),
        lambda x: np.diff(x, axis=0, prepend=0.0, append=x[:1]),
        [M],
    ),
    ("ediff1d", jnp.ediff1d, np.ediff1d, [M]),
    (
        "ediff1d ends",
        lambda x: jnp.ediff1d(x, to_end=np.array([7, 8]), to_begin=-1),
        lambda x: np.ediff1d(x, to_end=[7, 8], to_begin=-1),
        [I],
    ),
    ("ediff1d empty", jnp.ediff1d, np.ediff1d, [E]),
    ("tril", jnp.tril, np.tril, [M]),
    ("tril k", lambda x: jnp.tril(x, -1), lambda x: np.tril(x, -1), [X]),
    ("triu k", lambda x: jnp.triu(x, 2), lambda x: np.triu(x, 2), [M]),
    ("triu int", jnp.triu, np.triu, [I.reshape(1, 5)]),
    ("tril bool", jnp.tril, np.tril, [BOOL.reshape(2, 2)]),
    ("diag vec", jnp.diag, np.diag, [V]),
    ("diag vec k", lambda v: jnp.diag(v, 2), lambda v: np.diag(v, 2), [V]),
    ("diag vec -k", lambda v: jnp.diag(v, -1), lambda v: np.diag(v, -1), [I]),
    ("diag mat", jnp.diag, np.diag, [M]),
    ("diag mat k", lambda m: jnp.diag(m, 1), lambda m: np.diag(m, 1), [M]),
    ("diag mat -k", lambda m: jnp.diag(m, -2), lambda m: np.diag(m, -2), [M]),
    ("diag mat far", lambda m: jnp.diag(m, 7), lambda m: np.diag(m, 7), [M]),
    ("diag empty", jnp.diag, np.diag, [E]),
    ("diag empty k", lambda v: jnp.diag(v, 2), lambda v: np.diag(v, 2), [E]),
    ("diagonal", jnp.diagonal, np.diagonal, [X]),
    (
        "diagonal axes",
        lambda x: jnp.diagonal(x, 1, -1, 0),
        lambda x: np.diagonal(x, 1, -1, 0),
        [X],
    ),
    (
        "diagonal neg offset",
        lambda x: jnp.diagonal(x, -1, 1, 2),
        lambda x: np.diagonal(x, -1, 1, 2),
        [X],
    ),
    ("diagonal method", lambda x: x.diagonal(1), lambda x: x.diagonal(1), [M]),
    ("diagonal bool", jnp.diagonal, np.diagonal, [BOOL.reshape(2, 2)]),
    ("diagflat", jnp.diagflat, np.diagflat, [M[:2, :2]]),
    ("diagflat k", lambda v: jnp.diagflat(v, -2), lambda v: np.diagflat(v, -2), [I]),
    ("trace", jnp.trace, np.trace, [M]),
    ("trace offset", lambda x: jnp.trace(x, -1), lambda x: np.trace(x, -1), [SQ]),
    ("trace axes", lambda x: jnp.trace(x, 0, 2, 1), lambda x: np.trace(x, 0, 2, 1), [X]),
    ("trace method", lambda x: x.trace(1), lambda x: x.trace(1), [M]),
    (
        "trace dtype",
        lambda x: jnp.trace(x, dtype=jnp.float32),
        lambda x: np.trace(x, dtype=np.float32),
        [I.reshape(1, 5)],
    ),
    (
        "fill_diagonal",
        lambda x: jnp.fill_diagonal(x, np.array([7.0, 8.0]), inplace=False),
        lambda x: _np_fill_diagonal(x, [7.0, 8.0]),
        [M],
    ),
    (
        "fill_diagonal tall",
        lambda x: jnp.fill_diagonal(x, 3, inplace=False),
        lambda x: _np_fill_diagonal(x, 3),
        [M.T.copy()],
    ),
    (
        "fill_diagonal 3d",
        lambda x: jnp.fill_diagonal(x, -1, inplace=False),
        lambda x: _np_fill_diagonal(x, -1),
        [np.ones((3, 3, 3), np.int32)],
    ),
    (
        "meshgrid",
        lambda x, y: jnp.meshgrid(x, y),
        lambda x, y: np.meshgrid(x, y),
        [V, I],
    ),
    (
        "meshgrid ij sparse",
        lambda x, y, z: jnp.meshgrid(x, y, z, indexing="ij", sparse=True),
        lambda x, y, z: np.meshgrid(x, y, z, indexing="ij", sparse=True),
        [V, I, V[:2]],
    ),
    (
        "meshgrid xy 3",
        lambda x, y, z: jnp.meshgrid(x, y, z),
        lambda x, y, z: np.meshgrid(x, y, z),
        [V, I, V[:2]],
    ),
    ("meshgrid one", lambda x: jnp.meshgrid(x), lambda x: np.meshgrid(x), [V]),
    ("logaddexp", jnp.logaddexp, np.logaddexp, [V, V[::-1].copy()]),
    ("logaddexp bcast", jnp.logaddexp, np.logaddexp, [M, V]),
    ("logaddexp2", jnp.logaddexp2, np.logaddexp2, [V, V[::-1].copy()]),
    ("logaddexp infs", jnp.logaddexp, np.logaddexp, [NANS, NANS[::-1].copy()]),
    ("logaddexp2 infs", jnp.logaddexp2, np.logaddexp2, [NANS, NANS]),
    ("nan_to_num", jnp.nan_to_num, np.nan_to_num, [NANS]),
    (
        "nan_to_num values",
        lambda x: jnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
        lambda x: np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
        [NANS],
    ),
    ("nan_to_num int", jnp.nan_to_num, np.nan_to_num, [I]),
    (
        "nan_to_num complex",
        jnp.nan_to_num,
        np.nan_to_num,
        [_complex(NANS, NANS[::-1])],
    ),
    (
        "select",
        lambda x: jnp.select([x < 0, x > 2], [x * 10, x], -5.0),
        lambda x: np.select([x < 0, x > 2], [x * 10, x], -5.0),
        [M],
    ),
    (
        "select overlap",
        lambda x: jnp.select([x > 0, x > 1], [1, 2]),
        lambda x: np.select([x > 0, x > 1], [1, 2]),
        [V],
    ),
    (
        "piecewise",
        lambda x: jnp.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t**2]),
        lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t**2]),
        [M],
    ),
    (
        "piecewise default",
        lambda x: jnp.piecewise(x, [x < 0], [lambda t: t * 3, 7.0]),
        lambda x: np.piecewise(x, [x < 0], [lambda t: t * 3, 7.0]),
        [V],
    ),
    (
        "piecewise int args",
        lambda x: jnp.piecewise(x, [x > 2, x > 3], [lambda t, k: t * k, 0], 2),
        lambda x: np.piecewise(x, [x > 2, x > 3], [lambda t, k: t * k, 0], 2),
        [I],
    ),
    ("kron", jnp.kron, np.kron, [M, SQ[:2, :3]]),
    ("kron ranks", jnp.kron, np.kron, [V, X]),
    ("kron int", jnp.kron, np.kron, [I, I[:2]]),
    ("cross 3", jnp.cross, np.cross, [M[:, :3], SQ[:3, 1:]]),
    ("cross 2", jnp.cross, np.cross, [M[:, :2], SQ[:3, 2:]]),
    ("cross 2-3", jnp.cross, np.cross, [M[:, :2], SQ[:3, 1:]]),
    ("cross int", jnp.cross, np.cross, [I[:3], I[2:]]),
    (
        "cross axes",
        lambda a, b: jnp.cross(a, b, axisa=0, axisb=0, axisc=0),
        lambda a, b: np.cross(a, b, axisa=0, axisb=0, axisc=0),
        [M[:3], SQ[1:, :4]],
    ),
    (
        "cross axis",
        lambda a, b: jnp.cross(a, b, axis=0),
        lambda a, b: np.cross(a, b, axis=0),
        [M[:3], SQ[1:, :4]],
    ),
    ("polyval", jnp.polyval, np.polyval, [V, M]),
    ("polyval int", jnp.polyval, np.polyval, [I[:3], I]),
    ("polyval empty", jnp.polyval, np.polyval, [E, V]),
    ("interp", jnp.interp, np.interp, [PTS, XP, FP]),
    (
        "interp left right",
        lambda x, xp, fp: jnp.interp(x, xp, fp, left=-7.0, right=9.0),
        lambda x, xp, fp: np.interp(x, xp, fp, left=-7.0, right=9.0),
        [PTS, XP, FP],
    ),
    (
        "interp period",
        lambda x, xp, fp: jnp.interp(x, xp, fp, period=3.5),
        lambda x, xp, fp: np.interp(x, xp, fp, period=3.5),
        [PTS, XP[::-1].copy(), FP],
    ),
    ("interp 2d x", jnp.interp, np.interp, [PTS[:12].reshape(3, 4), XP, FP]),
    ("interp int", jnp.interp, np.interp, [I, I[::2].cumsum(), I[::2]]),
    ("interp repeated xp", jnp.interp, np.interp, [PTS, np.array([0.0, 1, 1, 2]), FP]),
    ("interp one point", jnp.interp, np.interp, [PTS, XP[:1], FP[:1]]),
    ("convolve", jnp.convolve, np.convolve, [V, FP[:3]]),
    ("convolve int", jnp.convolve, np.convolve, [I, I[:2]]),
    ("correlate", jnp.correlate, np.correlate, [V, FP[:3]]),
    (
        "correlate complex",
        lambda a, v: jnp.correlate(a, v, "full"),
        lambda a, v: np.correlate(a, v, "full"),
        [(V + 1j).astype(np.complex64), (FP[:2] - 2j * FP[1:3]).astype(np.complex64)],
    ),
]
for _mode in ("full", "same", "valid"):
    for _a, _v in ((V, XP[:3]), (XP[:2], PTS[:5]), (PTS[:6], XP)):
        for _name, _j, _n in (
            ("convolve", jnp.convolve, np.convolve),
            ("correlate", jnp.correlate, np.correlate),
        ):
            CASES.append(
                (
                    f"{_name} {_mode} {len(_a)}x{len(_v)}",
                    lambda a, v, j=_j, m=_mode: j(a, v, m),
                    lambda a, v, n=_n, m=_mode: n(a, v, m),
                    [_a, _v],
                )
            )


def _np_fill_diagonal(x, val):
    x = x.copy()
    np.fill_diagonal(x, val)
    return x


def _leaves(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("name, fun, ref, arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fun, ref, arrays):
    args = [jnp.asarray(a) for a in arrays]
    out = check_traced_matches_eager(fun, *args, rtol=1e-5, atol=1e-5)
    jitted = tracejit.jit(fun)(*args)
    expected = ref(*[np.asarray(a) for a in arrays])
    for o, j, e in zip(_leaves(out), _leaves(jitted), _leaves(expected), strict=True):
        e = np.asarray(e)
        assert o.shape == e.shape, (o.shape, e.shape)
        if e.dtype.kind in "biu" and o.dtype.kind in "biu":
            assert o.dtype.kind == e.dtype.kind or e.dtype == np.bool_, (o.dtype, e.dtype)
        np.testing.assert_allclose(np.asarray(o), e, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(np.asarray(j), np.asarray(o), rtol=2e-5, atol=2e-5)
        assert j.dtype == o.dtype and j.weak_type == o.weak_type


# (name, thunk, dtype, weak_type), as JAX 0.10.2 gives them
DTYPES = [
    ("diff bool", lambda: jnp.diff(jnp.array([True, False, False])), np.bool_, False),
    ("diff int8", lambda: jnp.diff(jnp.array([1, 2, 4], jnp.int8), prepend=0), np.int8, False),
    ("trace int8", lambda: jnp.trace(jnp.ones((3, 3), jnp.int8)), np.int32, False),
    ("trace bool", lambda: jnp.trace(jnp.ones((3, 3), bool)), np.int32, False),
    ("trace uint8", lambda: jnp.trace(jnp.ones((3, 3), jnp.uint8)), np.uint32, False),
    ("roll weak", lambda: jnp.roll(jnp.array(3.0), 1), np.float32, True),
    ("logspace", lambda: jnp.logspace(0, 2, 3), np.float32, False),
    ("logspace int", lambda: jnp.logspace(0, 2, 3, dtype=int), np.int32, False),
    ("geomspace int", lambda: jnp.geomspace(1, 1000, 4, dtype=int), np.int32, False),
    ("logaddexp ints", lambda: jnp.logaddexp(1, 2), np.float32, True),
    ("logaddexp i32", lambda: jnp.logaddexp(jnp.int32(1), jnp.int32(2)), np.float32, False),
    ("logaddexp weak", lambda: jnp.logaddexp(1.0, 2.0), np.float32, True),
    ("nan_to_num weak", lambda: jnp.nan_to_num(1.0), np.float32, False),
    ("nan_to_num bool", lambda: jnp.nan_to_num(jnp.array([True])), np.bool_, False),
    (
        "select weak default",
        lambda: jnp.select([jnp.array([True, False])], [jnp.array([1, 2])], 5.0),
        np.float32,
        True,
    ),
    (
        "piecewise int",
        lambda: jnp.piecewise(jnp.array([1, 2, 3]), [jnp.array([1, 0, 1])], [lambda x: x * 1.5]),
        np.int32,
        False,
    ),
    ("kron weak", lambda: jnp.kron(2.0, 3.0), np.float32, True),
    ("polyval weak x", lambda: jnp.polyval(jnp.array([1.0, 2]), 3), np.float32, False),
    ("polyval int", lambda: jnp.polyval(jnp.array([1, 2]), jnp.array([1, 2])), np.int32, False),
    ("polyval weak", lambda: jnp.polyval(jnp.array([1, 2]), 2.5), np.float32, False),
    ("convolve weak", lambda: jnp.convolve(jnp.ravel(2.5), jnp.ravel(2.0)), np.float32, True),
    (
        "interp ints",
        lambda: jnp.interp(jnp.array([1]), jnp.array([0, 3]), jnp.array([0, 3])),
        np.float32,
        False,
    ),
    (
        "interp weak",
        lambda: jnp.interp(1.5, jnp.array([0.0, 3]), jnp.array([0.0, 3])),
        np.float32,
        False,
    ),
    (
        "interp complex",
        lambda: jnp.interp(1.5, jnp.array([0.0, 3]), jnp.array([0, 3 + 1j])),
        np.complex64,
        False,
    ),
    (
        "convolve int",
        lambda: jnp.convolve(jnp.array([1, 2]), jnp.array([1, 1])),
        np.float32,
        False,
    ),
    (
        "convolve bool",
        lambda: jnp.convolve(jnp.array([True]), jnp.array([True])),
        np.float32,
        False,
    ),
]


@pytest.mark.parametrize("name, thunk, dtype, weak", DTYPES, ids=[c[0] for c in DTYPES])
def test_dtypes_as_jax(name, thunk, dtype, weak):
    out = thunk()
    assert out.dtype == dtype and out.weak_type == weak, (out.dtype, out.weak_type)


def test_values_as_jax():
    np.testing.assert_allclose(jnp.logspace(0, 2, 3, dtype=int), [1, 10, 100])
    np.testing.assert_array_equal(jnp.geomspace(1, 1000, 4, dtype=int), [1, 10, 100, 1000])
    np.testing.assert_allclose(jnp.geomspace(1, 1000, 4), [1, 10, 100, 1000], rtol=1e-5)
    np.testing.assert_allclose(jnp.geomspace(-1, -1000, 4), [-1, -10, -100, -1000], rtol=1e-5)
    assert np.isnan(np.asarray(jnp.geomspace(0, 1000, 4))).all()
    np.testing.assert_allclose(
        jnp.geomspace(2.0, 32.0, 4, endpoint=False),
        np.geomspace(2.0, 32.0, 4, endpoint=False),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        jnp.logspace(1, 3, 5, base=2.0, endpoint=False),
        np.logspace(1, 3, 5, base=2.0, endpoint=False),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        jnp.geomspace(np.array([1.0, 2.0]), np.array([8.0, 32.0]), 4, axis=1),
        np.geomspace(np.array([1.0, 2.0]), np.array([8.0, 32.0]), 4, axis=1),
        rtol=1e-5,
    )
    np.testing.assert_array_equal(
        jnp.piecewise(jnp.array([1, 2, 3]), [jnp.array([1, 0, 1])], [lambda x: x * 1.5, 7.5]),
        [1, 7, 4],
    )
    np.testing.assert_array_equal(
        jnp.interp(jnp.array([-1.0, 5]), jnp.array([0.0, 3, 1]), jnp.array([0.0, 3, 5]), period=0),
        [np.nan, np.nan],
    )
    np.testing.assert_allclose(jnp.tri(3, 4, -1, dtype=int), np.tri(3, 4, -1, dtype=int))


def test_roll_traced_shift():
    x = jnp.asarray(X)
    for shift in (-7, -1, 0, 2, 5, 30):
        out = tracejit.jit(lambda x, s: jnp.roll(x, s, axis=-1))(x, shift)
        np.testing.assert_array_equal(out, np.roll(X, shift, axis=-1))
        flat = tracejit.jit(jnp.roll)(x, shift)
        np.testing.assert_array_equal(flat, np.roll(X, shift))
    shifts = tracejit.jit(lambda x, s: jnp.roll(x, s, (0, 2)))(x, jnp.array([1, -3]))
    np.testing.assert_array_equal(shifts, np.roll(X, (1, -3), (0, 2)))


# (name, thunk, error type, message fragment), as JAX 0.10.2 raises them
ERRORS = [
    ("diff negative n", lambda: jnp.diff(jnp.ones(3), n=-1), ValueError, "non-negative"),
    ("diff 0d", lambda: jnp.diff(jnp.array(1.0)), ValueError, "at least one dimensional"),
    ("ediff1d list", lambda: jnp.ediff1d([1, 2]), TypeError, "ediff1d requires ndarray"),
    ("tril 1d", lambda: jnp.tril(jnp.arange(3)), ValueError, "at least 2D"),
    ("diag 3d", lambda: jnp.diag(jnp.ones((2, 2, 2))), ValueError, "1d or 2d"),
    ("diagonal 1d", lambda: jnp.diagonal(jnp.ones(3)), ValueError, "two dimensions"),
    ("diagonal axis", lambda: jnp.diagonal(jnp.ones((2, 2)), 0, 0, 2), ValueError, "bounds"),
    (
        "fill inplace",
        lambda: jnp.fill_diagonal(jnp.ones((2, 2)), 1.0),
        NotImplementedError,
        "inplace=False",
    ),
    (
        "fill wrap",
        lambda: jnp.fill_diagonal(jnp.ones((5, 2)), 1.0, wrap=True, inplace=False),
        NotImplementedError,
        "wrap",
    ),
    (
        "fill 3d",
        lambda: jnp.fill_diagonal(jnp.ones((2, 2, 3)), 1.0, inplace=False),
        ValueError,
        "equal length",
    ),
    ("fill 1d", lambda: jnp.fill_diagonal(jnp.ones(2), 1.0, inplace=False), ValueError, "2-d"),
    ("meshgrid 2d", lambda: jnp.meshgrid(jnp.ones((2, 2))), ValueError, "must be 1D"),
    ("meshgrid indexing", lambda: jnp.meshgrid(jnp.ones(2), indexing="x"), ValueError, "'ij'"),
    (
        "select lengths",
        lambda: jnp.select([jnp.array([True])], [1, 2]),
        ValueError,
        "length equal",
    ),
    ("select empty", lambda: jnp.select([], []), ValueError, "non-empty"),
    (
        "piecewise count",
        lambda: jnp.piecewise(jnp.ones(2), [jnp.array([True, False])], [1, 2, 3]),
        ValueError,
        "either 1 or 2 functions",
    ),
    (
        "interp complex x",
        lambda: jnp.interp(jnp.array([1j]), jnp.arange(3), jnp.arange(3)),
        ValueError,
        "complex x",
    ),
    ("cross 4", lambda: jnp.cross(jnp.ones(4), jnp.ones(4)), ValueError, "either 2 or 3"),
    ("cross bool", lambda: jnp.cross(jnp.ones(3, bool), jnp.ones(3, bool)), TypeError, "bool"),
    ("polyval list", lambda: jnp.polyval([1.0, 2.0], 3.0), TypeError, "polyval requires"),
    (
        "interp 2d xp",
        lambda: jnp.interp(jnp.ones(2), jnp.ones((1, 2)), jnp.ones(2)),
        ValueError,
        "one-dimensional",
    ),
    (
        "convolve empty",
        lambda: jnp.convolve(jnp.ones(0), jnp.ones(1)),
        ValueError,
        "cannot be empty",
    ),
    (
        "convolve 2d",
        lambda: jnp.convolve(jnp.ones((2, 2)), jnp.ones(1)),
        ValueError,
        "1-dimensional",
    ),
    (
        "convolve mode",
        lambda: jnp.convolve(jnp.ones(2), jnp.ones(1), "middle"),
        ValueError,
        "mode",
    ),
]


@pytest.mark.parametrize("name, thunk, error, match", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_as_jax(name, thunk, error, match):
    with pytest.raises(error, match=match):
        thunk()


# --------------------------------------------------------------------------------------------
# derivatives and vmap

GRADS = [
    ("roll", lambda x: jnp.roll(x, 2, 1), [M]),
    ("roll flat", lambda x: jnp.roll(x, -3), [M]),
    ("diff", lambda x: jnp.diff(x, 2, prepend=1.0), [M]),
    ("ediff1d", lambda x: jnp.ediff1d(x, to_begin=1.0), [M]),
    ("tril", lambda x: jnp.tril(x, 1), [M]),
    ("triu", jnp.triu, [M]),
    ("diag vec", lambda v: jnp.diag(v, -1), [V]),
    ("diag mat", lambda m: jnp.diag(m, 1), [M]),
    ("diagonal", lambda x: jnp.diagonal(x, 1, 2, 0), [X / 10]),
    ("diagflat", jnp.diagflat, [M[:2]]),
    ("trace", lambda x: jnp.trace(x, -1), [M]),
    ("fill_diagonal", lambda x, v: jnp.fill_diagonal(x, v, inplace=False), [M, V[:3]]),
    ("logaddexp", jnp.logaddexp, [M, V]),
    ("logaddexp2", jnp.logaddexp2, [M, V]),
    ("nan_to_num", jnp.nan_to_num, [M]),
    ("select", lambda x, y: jnp.select([x < 0, y > 0], [x * y, y], 2.0), [M, V]),
    ("piecewise", lambda x: jnp.piecewise(x, [x < 0], [jnp.sin, jnp.cos]), [M]),
    ("kron", jnp.kron, [M[:2], SQ[:2, :2]]),
    ("cross", jnp.cross, [M[:, :3], SQ[1:, :3]]),
    ("polyval", jnp.polyval, [V, M]),
    ("interp", jnp.interp, [PTS + 0.05, XP, FP]),
    ("convolve", lambda a, v: jnp.convolve(a, v, "same"), [V, FP[:3]]),
    ("correlate", lambda a, v: jnp.correlate(a, v, "full"), [V, FP[:3]]),
    (
        "vectorize",
        jnp.vectorize(lambda a, b: jnp.sum(a * jnp.sin(b)), signature="(n),(n)->()"),
        [M, V],
    ),
]


@pytest.mark.parametrize("name, fun, arrays", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, fun, arrays):
    check_grads(fun, tuple(arrays), order=2, rtol=1e-3, atol=1e-3)


def test_logaddexp_grads_at_infinities_as_jax():
    grad = tracejit.grad(jnp.logaddexp, (0, 1))
    np.testing.assert_array_equal(grad(np.float32(np.inf), np.float32(np.inf)), [1.0, 1.0])
    np.testing.assert_allclose(grad(np.float32(np.inf), np.float32(1.0)), [1.0, np.e], rtol=1e-6)
    np.testing.assert_array_equal(grad(np.float32(-np.inf), np.float32(2.0)), [0.0, 1.0])
    assert np.isnan(grad(np.float32(-np.inf), np.float32(-np.inf))).all()
    grad2 = tracejit.grad(jnp.logaddexp2, (0, 1))
    np.testing.assert_array_equal(grad2(np.float32(-np.inf), np.float32(1.0)), [0.0, 1.0])
    big = tracejit.grad(jnp.logaddexp)(np.float32(1000.0), np.float32(0.0))
    assert np.isfinite(big) and big == 1.0


VMAPS = [
    ("roll", lambda x: jnp.roll(x, 1, 0), M),
    ("diff", jnp.diff, M),
    ("diagonal", lambda x: jnp.diagonal(x, 1), X),
    ("tril", jnp.tril, X),
    ("diag", jnp.diag, M),
    ("trace", jnp.trace, X),
    ("interp", lambda x: jnp.interp(x, XP, FP), M),
    ("convolve", lambda a: jnp.convolve(a, FP[:3]), M),
    ("polyval", lambda p: jnp.polyval(p, V), M),
    ("cross", lambda a: jnp.cross(a, V[:3]), M[:, :3]),
]


@pytest.mark.parametrize("name, fun, x", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap_against_loop(name, fun, x):
    out = tracejit.vmap(fun)(jnp.asarray(x))
    loop = np.stack([np.asarray(fun(jnp.asarray(row))) for row in x])
    np.testing.assert_allclose(out, loop, rtol=1e-6, atol=1e-6)


def test_roll_traced_shift_under_vmap():
    shifts = jnp.array([0, 1, -2])
    out = tracejit.vmap(lambda x, s: jnp.roll(x, s))(jnp.asarray(M), shifts)
    np.testing.assert_array_equal(
        out, np.stack([np.roll(M[i], s) for i, s in enumerate([0, 1, -2])])
    )


# --------------------------------------------------------------------------------------------
# vectorize


def test_vectorize_scalars_broadcast():
    f = jnp.vectorize(lambda a, b: jnp.where(a > b, a - b, b * 2))
    a, b = M, V
    np.testing.assert_allclose(f(a, b), np.where(a > b, a - b, b * 2), rtol=1e-6)
    np.testing.assert_allclose(tracejit.jit(f)(a, b), np.where(a > b, a - b, b * 2), rtol=1e-6)


def test_vectorize_signature():
    dot = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(X, V), X @ V, rtol=1e-6)
    outer = jnp.vectorize(lambda a, b: a[:, None] * b[None], signature="(n),(m)->(n,m)")
    np.testing.assert_allclose(outer(M, V[:2]), M[:, :, None] * V[:2], rtol=1e-6)
    two = jnp.vectorize(lambda a: (jnp.min(a), jnp.max(a)), signature="(n)->(),()")
    lo, hi = two(X)
    np.testing.assert_allclose(lo, X.min(-1))
    np.testing.assert_allclose(hi, X.max(-1))


def test_vectorize_excluded():
    f = jnp.vectorize(lambda x, p, *, scale: jnp.polyval(p, x) * scale, excluded={1, "scale"})
    out = f(M, jnp.asarray(V[:3]), scale=2.0)
    np.testing.assert_allclose(out, np.polyval(V[:3], M) * 2, rtol=1e-5)


def test_vectorize_errors():
    dot = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        dot(M, V[:3])
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda a: a, signature="(n)->")
    with pytest.raises(ValueError, match="core dimensions"):
        jnp.vectorize(lambda a: a, signature="(n)->()")(M)


def test_edge_values_as_jax():
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(jnp.roll(x, 1.5), np.roll(np.arange(6.0).reshape(2, 3), 1))
    # complex logaddexp: log(exp(1 + 1j) + exp(1)), factored out of the larger real part
    out = jnp.logaddexp(jnp.array([1 + 1j, -2 + 0.5j], jnp.complex64), jnp.array([1.0, 3.0]))
    expected = np.log(np.exp([1 + 1j, -2 + 0.5j]) + np.exp([1.0, 3.0]))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.dtype == np.complex64
    out2 = jnp.logaddexp2(jnp.array([1 + 1j], jnp.complex64), jnp.array([2.0]))
    np.testing.assert_allclose(out2, np.log2(2 ** np.array([1 + 1j]) + 4.0), rtol=1e-6)
    # an array of conditions is a list of its rows (JAX, unlike NumPy, does not wrap it)
    conds = jnp.array([[True, False, True], [False, True, False]])
    pw = jnp.piecewise(jnp.array([1.0, 2, 3]), conds, [lambda t: -t, lambda t: t * 10])
    np.testing.assert_array_equal(pw, [-1.0, 20.0, -3.0])
    empty = jnp.vectorize(lambda a: a * 2)(jnp.ones((2, 0)))
    assert empty.shape == (2, 0) and empty.dtype == np.float32
    outer = jnp.vectorize(lambda a: jnp.stack([a, a]), signature="()->(k)")(jnp.ones((0, 3)))
    assert outer.shape == (0, 3, 2)
    np.testing.assert_array_equal(jnp.diagonal(jnp.ones((0, 3))), np.ones((0,)))
    assert jnp.trace(jnp.ones((0, 0))) == 0.0
    np.testing.assert_array_equal(jnp.diagflat(jnp.ones((0,)), 2), np.zeros((2, 2)))
    np.testing.assert_array_equal(jnp.diag(jnp.array([1, 2]), k=5), np.diag([1, 2], k=5))
    np.testing.assert_array_equal(
        jnp.fill_diagonal(jnp.zeros((3, 3), jnp.int32), 2.7, inplace=False), np.eye(3) * 2
    )
    np.testing.assert_array_equal(
        jnp.fill_diagonal(jnp.zeros((3, 3)), jnp.ones((2, 2)), inplace=False), np.eye(3)
    )
    mesh = jnp.meshgrid(jnp.arange(2), jnp.arange(3), sparse=True)
    assert [m.shape for m in mesh] == [(1, 2), (3, 1)] and jnp.meshgrid() == []
    np.testing.assert_allclose(
        jnp.logspace(jnp.array([0.0, 1]), 2, 3), np.logspace([0.0, 1], 2, 3), rtol=1e-6
    )
    # a repeated last breakpoint: JAX gives the first of the tied values (NumPy the last)
    np.testing.assert_allclose(
        jnp.interp(jnp.array([2.0, 2.0]), jnp.array([0.0, 2, 2]), jnp.array([0.0, 1, 5])), [1, 1]
    )
    assert np.isnan(np.asarray(jnp.interp(jnp.array([np.nan]), jnp.array([0.0, 2]), FP[:2])))
    x, xp, fp = jnp.array([-1.0, 0.5, 5]), jnp.array([0.0, 1, 3]), jnp.array([0.0, 2, 3])
    both = jnp.interp(x, xp, fp, left="extrapolate", right="extrapolate")
    np.testing.assert_allclose(both, [-2.0, 1.0, 4.0])
    np.testing.assert_allclose(jnp.interp(x, xp, fp, left="extrapolate", right=7.0), [-2, 1, 7])
    with pytest.raises(ValueError, match="only valid string value of `left`"):
        jnp.interp(x, xp, fp, left="foo")


def test_logaddexp_complex_grads():
    check_grads(
        lambda a, b: jnp.logaddexp(a, b),
        (np.array([1 + 1j, -2 + 0.5j]), np.array([1.0 - 0.2j, 3.0 + 0j])),
        order=1,
        rtol=1e-3,
        atol=1e-3,
    )


def test_golden_jaxprs():
    """A diagonal matrix is one pad, rolls slices or a dynamic_slice of the doubled array: no
    scatters. (Diagonals gather, as JAX's do: `test_jitted_jaxprs.py`.)"""
    assert str(tracejit.make_jaxpr(lambda v: jnp.diag(v, 1))(jnp.ones(2))) == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[9] = pad[padding_config=((1, 3, 3),)] a 0.0:f32[]\n"
        "    c:f32[3,3] = reshape[dimensions=None new_sizes=(3, 3) sharding=None] b\n"
        "  in (c,) }"
    )
    assert str(tracejit.make_jaxpr(lambda x: jnp.roll(x, 2))(jnp.ones(5))) == (
        "{ lambda ; a:f32[5]. let\n"  # (JAX 0.10.2's printout)
        "    b:f32[5] = jit[\n"
        "      name=_roll_static\n"
        "      jaxpr={ lambda ; a:f32[5]. let\n"
        "          c:f32[2] = slice[limit_indices=(5,) start_indices=(3,) strides=(1,)] a\n"
        "          d:f32[3] = slice[limit_indices=(3,) start_indices=(0,) strides=(1,)] a\n"
        "          b:f32[5] = concatenate[dimension=0] c d\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    traced = str(tracejit.make_jaxpr(lambda x, s: jnp.roll(x, s))(jnp.ones(5), 2))
    assert "rem c 5:i32[]" in traced and "dynamic_slice[slice_sizes=(5,)] i h" in traced


def test_diff_of_order_zero_is_the_input_whatever_its_rank():
    # Found by tests/fuzz: NumPy and JAX return a 0-d input unchanged for n=0 (tracejit raised).
    assert jnp.diff(np.array(False), n=0) == np.array(False)
    np.testing.assert_array_equal(jnp.diff(np.arange(3), n=0, axis=5), np.arange(3))
    with pytest.raises(ValueError, match="at least one dimensional"):
        jnp.diff(np.array(1.0))


def test_ediff1d_of_empty_booleans_refuses_them_as_of_any_booleans():
    # Found by tests/fuzz: an empty boolean array returned [] where JAX raises TypeError.
    with pytest.raises(TypeError, match="bool"):
        jnp.ediff1d(np.array([], bool))
    assert jnp.ediff1d(np.array([], np.int8)).dtype == np.int8
