"""scipy.ndimage.map_coordinates against SciPy (orders 0 and 1, every mode, 1-D to 3-D),
under jit and vmap, its gradient in the values and the coordinates, JAX's errors; and
scipy.integrate.trapezoid against SciPy (spacing as scalar, points or array), jit, grads."""

import numpy as np
import pytest
import scipy.integrate as si
import scipy.ndimage as nd
from helpers import assert_close, check_vmap

import tracejit
from tracejit.scipy import integrate, ndimage
from tracejit.test_util import check_grads

# tracejit's (JAX's) modes and SciPy's names for the same boundary rule.
MODES = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
         "mirror": "mirror", "reflect": "reflect"}  # fmt: skip


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_against_scipy(order, mode, shape):
    rng = np.random.default_rng(0)
    values = rng.normal(size=shape).astype(np.float32)
    coords = [rng.uniform(-3, s + 3, size=(4, 3)).astype(np.float32) for s in shape]
    got = ndimage.map_coordinates(values, coords, order, mode, cval=1.5)
    want = nd.map_coordinates(values, coords, order=order, mode=MODES[mode], cval=1.5)
    assert_close(got, want, 1e-5, dtype=np.float32)


def test_map_coordinates_jit_vmap_grads():
    rng = np.random.default_rng(1)
    values = rng.normal(size=(5, 6))
    coords = [rng.uniform(0.2, 3.8, 7), rng.uniform(0.2, 4.8, 7)]

    def interpolate(v, c0, c1):
        return ndimage.map_coordinates(v, [c0, c1], 1, mode="mirror")

    assert_close(tracejit.jit(interpolate)(values, *coords), interpolate(values, *coords), 1e-6)
    check_vmap(interpolate, (values.astype(np.float32), *coords), (None, 0, 0), tol=1e-6)
    check_grads(interpolate, (values, *coords), order=1)


def test_map_coordinates_errors():
    x = np.ones(3)
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        ndimage.map_coordinates(x, [x], 3)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        ndimage.map_coordinates(x, [x], 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="length input.ndim, but 2 != 1"):
        ndimage.map_coordinates(x, [x, x], 1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_trapezoid_against_scipy(axis, enable_x64):
    rng = np.random.default_rng(2)
    y = rng.normal(size=(4, 5, 3))
    n = y.shape[axis]
    points = np.sort(rng.uniform(0, 3, n))
    grid = np.sort(rng.uniform(0, 3, y.shape), axis=axis)
    assert_close(integrate.trapezoid(y, axis=axis), si.trapezoid(y, axis=axis), 1e-12)
    assert_close(
        integrate.trapezoid(y, dx=0.3, axis=axis), si.trapezoid(y, dx=0.3, axis=axis), 1e-12
    )
    assert_close(
        integrate.trapezoid(y, points, axis=axis), si.trapezoid(y, points, axis=axis), 1e-12
    )
    assert_close(integrate.trapezoid(y, grid, axis=axis), si.trapezoid(y, grid, axis=axis), 1e-12)


def test_trapezoid_spacing_array(enable_x64):
    y = np.random.default_rng(4).normal(size=(2, 5))
    spacing = np.array([0.1, 0.4, 0.2, 0.3])
    assert_close(integrate.trapezoid(y, dx=spacing), si.trapezoid(y, dx=spacing), 1e-12)
    equal = np.full(4, 0.25)  # constant along the axis: the one-reduction rule
    assert_close(integrate.trapezoid(y, dx=equal[:1]), si.trapezoid(y, dx=0.25), 1e-12)


def test_trapezoid_jit_grads_errors():
    rng = np.random.default_rng(3)
    y, x = rng.normal(size=(3, 6)), np.sort(rng.uniform(0, 2, 6))
    got = tracejit.jit(lambda y, x: integrate.trapezoid(y, x))(y, x)
    assert_close(got, integrate.trapezoid(y, x), 1e-6)
    check_grads(lambda y, x: integrate.trapezoid(y, x, axis=1), (y, x), order=2)
    with pytest.raises(ValueError, match="out of bounds"):
        integrate.trapezoid(x, axis=3)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        integrate.trapezoid([1.0, 2.0])
