"""jax.scipy.interpolate.RegularGridInterpolator: linear and nearest interpolation equal
SciPy's inside the grid, outside it (fill_value, or extrapolation with None), with trailing
value axes and every query form SciPy takes; it is a pytree that passes through jit and vmap,
its gradient with respect to the values and the query points matches finite differences, and
bad arguments raise JAX's errors."""

import numpy as np
import pytest
import scipy.interpolate as si
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy.interpolate import RegularGridInterpolator
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
GRID = (np.sort(RNG.uniform(0, 1, 5)), np.sort(RNG.uniform(-2, 2, 4)), np.linspace(0, 3, 3))
VALUES = RNG.normal(size=(5, 4, 3))
INSIDE = np.stack([RNG.uniform(g[0], g[-1], 7) for g in GRID], axis=-1)
MIXED = np.concatenate([INSIDE, [[-0.5, 0.0, 1.0], [0.5, 9.0, 1.0], [0.5, 0.0, 3.0]]])


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_matches_scipy_inside_and_outside(enable_x64, method):
    got = RegularGridInterpolator(GRID, VALUES, method=method)(MIXED)
    want = si.RegularGridInterpolator(GRID, VALUES, method=method, bounds_error=False)(MIXED)
    assert_close(got, want, 1e-12, dtype=np.float64)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_fill_value_none_extrapolates_as_scipy(enable_x64, method):
    options = {"method": method, "bounds_error": False, "fill_value": None}
    got = RegularGridInterpolator(GRID, VALUES, **options)(MIXED)
    assert_close(got, si.RegularGridInterpolator(GRID, VALUES, **options)(MIXED), 1e-12)


def test_fill_value_and_call_time_method(enable_x64):
    interpolator = RegularGridInterpolator(GRID, VALUES, fill_value=-7.0)
    reference = si.RegularGridInterpolator(GRID, VALUES, bounds_error=False, fill_value=-7.0)
    assert_close(interpolator(MIXED), reference(MIXED), 1e-12)
    assert_close(interpolator(MIXED, "nearest"), reference(MIXED, "nearest"), 1e-12)


def test_nearest_ties_go_to_the_lower_node():
    interpolator = RegularGridInterpolator((np.array([0.0, 1.0, 2.0]),), np.array([10.0, 20, 30]))
    assert_close(interpolator(np.array([0.5, 1.5, 1.50001]), "nearest"), [10.0, 20, 30], 0.0)


def test_query_forms_and_trailing_axes(enable_x64):
    values = RNG.normal(size=(5, 4, 2, 3))
    interpolator = RegularGridInterpolator(GRID[:2], values)
    reference = si.RegularGridInterpolator(GRID[:2], values)
    points = INSIDE[:, :2].reshape(7, 1, 2)
    assert_close(interpolator(points), reference(points), 1e-12)
    assert interpolator(points).shape == (7, 1, 2, 3)
    coordinates = (INSIDE[:, 0], INSIDE[0, 1])
    assert_close(interpolator(coordinates), reference(coordinates), 1e-12)
    assert_close(interpolator(INSIDE[0, :2]), reference(INSIDE[0, :2]), 1e-12)


def test_dtypes():
    interpolator = RegularGridInterpolator(GRID[:1], np.arange(5))
    assert interpolator.values.dtype == np.float32
    assert interpolator(np.array([0.5])).dtype == np.float32
    values = (VALUES + 1j * VALUES).astype(np.complex64)
    interpolator = RegularGridInterpolator(GRID, values)
    want = si.RegularGridInterpolator(GRID, values, bounds_error=False)(INSIDE)
    assert_close(interpolator(INSIDE), want, 1e-5, dtype=np.complex64)


def test_pytree_through_jit_and_vmap():
    interpolator = RegularGridInterpolator(GRID, VALUES.astype(np.float32))
    leaves, tree = tracejit.tree_util.tree_flatten(interpolator)
    assert len(leaves) == 5
    assert tree.unflatten(leaves).method == "linear"
    points = INSIDE.astype(np.float32)
    assert_close(tracejit.jit(lambda f, x: f(x))(interpolator, points), interpolator(points), 1e-6)
    stacked = np.stack([VALUES, 2 * VALUES]).astype(np.float32)
    check_vmap(
        lambda v: RegularGridInterpolator(GRID, v)(points), (stacked,), (0,), tol=1e-5, jit=True
    )


def test_grads_against_finite_differences():
    def interpolate(values, points):
        return RegularGridInterpolator(GRID, values)(points)

    check_grads(interpolate, (VALUES, INSIDE), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: RegularGridInterpolator(GRID, VALUES, method="cubic"), ValueError, "'cubic'"),
        (lambda: RegularGridInterpolator(GRID, VALUES)(INSIDE, "spline"), ValueError, "spline"),
        (
            lambda: RegularGridInterpolator(GRID, VALUES, bounds_error=True),
            NotImplementedError,
            "bounds_error",
        ),
        (lambda: RegularGridInterpolator(GRID, VALUES[0]), ValueError, "3 point arrays"),
        (
            lambda: RegularGridInterpolator(GRID, VALUES)(np.ones((2, 2))),
            ValueError,
            "dimension 2, but this RegularGridInterpolator has dimension 3",
        ),
        (lambda: RegularGridInterpolator(GRID, VALUES, fill_value=1j), ValueError, "fill_value"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
