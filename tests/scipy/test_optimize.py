"""scipy.optimize.minimize by BFGS: it finds known minima with SciPy's accuracy, its
OptimizeResults fields mean what SciPy's do (the inverse Hessian estimate of a quadratic is
close to its inverse Hessian), it runs under jit and vmap (against a loop), passes `args`, stops at
`maxiter` with status 1, and raises JAX's errors. (Iteration counts equal JAX's: see
`test_jax_recorded.py`.)"""

import numpy as np
import pytest
import scipy.optimize as so
from helpers import assert_close, assert_tree_equal, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.scipy.optimize import OptimizeResults, minimize

SCALES = np.array([1.0, 4.0, 9.0])


def quadratic(x, shift):
    return jnp.sum(SCALES * (x - shift) ** 2)


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_quadratic(enable_x64):
    shift = np.array([0.5, -1.0, 2.0])
    result = minimize(quadratic, np.zeros(3), (shift,), method="BFGS")
    assert isinstance(result, OptimizeResults)
    assert bool(result.success) and int(result.status) == 0
    assert_close(result.x, shift, 1e-5)  # |gradient| < gtol = 1e-5
    assert_close(result.jac, np.zeros(3), atol=1e-5)
    # (inexact line searches: an estimate, not the exact inverse)
    assert_close(result.hess_inv, np.diag(1 / (2 * SCALES)), 2e-2, atol=2e-3)
    assert int(result.nfev) == int(result.njev) >= int(result.nit) > 0


def test_rosenbrock_like_scipy(enable_x64):
    x0 = np.full(5, 0.5)
    result = minimize(rosen, x0, method="bfgs", options={"gtol": 1e-6})
    want = so.minimize(lambda x: float(rosen(x)), x0, method="BFGS", options={"gtol": 1e-6})
    assert bool(result.success)
    assert_close(result.x, want.x, 1e-5)
    assert_close(result.fun, 0.0, atol=1e-10)


def test_jit_equals_eager_and_vmap_equals_loop():
    shifts = np.array([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0], [-2.0, 0.0, 0.25]], np.float32)
    x0 = np.zeros(3, np.float32)

    def solve(shift):
        return minimize(quadratic, x0, (shift,), method="BFGS")

    assert_tree_equal(tracejit.jit(solve)(shifts[0]), solve(shifts[0]), 1e-5, atol=1e-6)
    check_vmap(solve, (shifts,), (0,), tol=1e-5, atol=1e-6)
    assert_close(tracejit.vmap(solve)(shifts).x, shifts, 1e-4, atol=1e-5)


def test_maxiter_stops_with_status_1():
    result = minimize(rosen, np.zeros(4, np.float32), method="BFGS", options={"maxiter": 2})
    assert (int(result.nit), int(result.status), bool(result.success)) == (2, 1, False)


def test_bad_arguments_raise_jax_errors():
    x0 = jnp.ones(2)
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(rosen, x0, method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(rosen, x0, [1], method="BFGS")
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        minimize(rosen, x0, method="BFGS", options={"foo": 1})
    with pytest.raises(TypeError, match="must return a boolean scalar"):
        minimize(lambda x: jnp.sum(x**2), jnp.ones((2, 2)), method="BFGS")
