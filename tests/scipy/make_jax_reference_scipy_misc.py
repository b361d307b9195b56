"""Records JAX 0.10.2's results of scipy.stats' rankdata/mode/sem, scipy.integrate,
scipy.signal, scipy.ndimage and scipy.optimize on the cases below, for
`test_jax_recorded.py`: values, dtypes and weak types where JAX's differ from NumPy's and
SciPy's (default float32 results, integer rounding, ModeResult's dtypes, BFGS's counts).

The tests never import JAX; they load this file for `CASES` without running `main`. To
regenerate `tests/scipy/data/jax_scipy_misc.json`, in a virtualenv with `jax==0.10.2` (CPU),
from the repository's root:

    python tools/jax_reference.py tests/scipy/make_jax_reference_scipy_misc.py

A case is `fun(jax_like)` where `jax_like` is `jax` or `tracejit` (with `.numpy` and
`.scipy` imported); `X64_CASES` run with `jax_enable_x64`.
"""

from __future__ import annotations

import functools
import pathlib
import sys

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "jax_scipy_misc.json"

TIES = np.array([[3, 1, 2, 2], [0, 5, 5, 5], [1, 1, 1, 0]])
_ROSEN_START = np.array([-1.2, 1.0, 0.5, 0.0])


def _rosen(jnp):
    return lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _quadratic(jnp):
    scales = jnp.array([1.0, 4.0, 9.0])
    return lambda x, shift: jnp.sum(scales * (x - shift) ** 2)


def _rankdata(j, method):
    return j.scipy.stats.rankdata(TIES, method)


def _minimize_fields(result):
    return {f: getattr(result, f) for f in result._fields if getattr(result, f) is not None}


CASES = {
    **{
        f"rankdata_{method}": functools.partial(_rankdata, method=method)
        for method in ("average", "min", "max", "dense", "ordinal")
    },
    "rankdata_axis1": lambda j: j.scipy.stats.rankdata(TIES, "average", axis=1),
    "rankdata_nan": lambda j: j.scipy.stats.rankdata(np.array([1.0, np.nan, 0.0])),
    "rankdata_scalar": lambda j: j.scipy.stats.rankdata(3.0),
    "mode_axis0": lambda j: tuple(j.scipy.stats.mode(TIES)),
    "mode_axis1_keepdims": lambda j: tuple(j.scipy.stats.mode(TIES, axis=1, keepdims=True)),
    "mode_none": lambda j: tuple(j.scipy.stats.mode(TIES.astype(np.float32), axis=None)),
    "mode_scalar": lambda j: tuple(j.scipy.stats.mode(np.int32(4))),
    "sem_int": lambda j: j.scipy.stats.sem(TIES),
    "sem_none_ddof0": lambda j: j.scipy.stats.sem(TIES.astype(np.float32), axis=None, ddof=0),
    "sem_omit": lambda j: j.scipy.stats.sem(
        np.array([[1.0, np.nan, 3.0], [2.0, 4.0, np.nan]]), axis=1, nan_policy="omit"
    ),
    "sem_omit_too_few": lambda j: j.scipy.stats.sem(
        np.array([np.nan, 2.0, np.nan]), nan_policy="omit"
    ),
    "trapezoid_int": lambda j: j.scipy.integrate.trapezoid(np.arange(5)),
    "trapezoid_weak": lambda j: j.scipy.integrate.trapezoid(j.numpy.asarray(2.0) * np.ones(3)),
    "convolve_int": lambda j: j.scipy.signal.convolve(np.arange(5), np.array([1, 2, 1])),
    "correlate2d_int": lambda j: j.scipy.signal.correlate2d(TIES, np.array([[1, 2], [0, 1]])),
    "detrend_int": lambda j: j.scipy.signal.detrend(TIES),
    "detrend_one_point_segments": lambda j: j.scipy.signal.detrend(
        TIES.astype(np.float32), axis=0, bp=[1, 2]
    ),
    "map_coordinates_int_linear": lambda j: j.scipy.ndimage.map_coordinates(
        np.arange(12).reshape(3, 4), [np.array([0.5, 1.25, -0.5]), np.array([1.5, 2.5, 0.0])], 1
    ),
    "map_coordinates_halves_nearest": lambda j: j.scipy.ndimage.map_coordinates(
        np.arange(6.0), [np.array([-0.5, 0.5, 1.5, 2.5, 4.5, 5.5])], 0, mode="nearest"
    ),
    "map_coordinates_cval": lambda j: j.scipy.ndimage.map_coordinates(
        np.arange(6, dtype=np.float32).reshape(2, 3),
        [np.array([-1.0, 0.5, 1.0]), np.array([0.0, 2.5, 3.0])],
        1,
        cval=-7.0,
    ),
    "minimize_quadratic": lambda j: _minimize_fields(
        j.scipy.optimize.minimize(
            _quadratic(j.numpy), np.zeros(3, np.float32), (np.float32(1.5),), method="BFGS"
        )
    ),
    "minimize_maxiter": lambda j: _minimize_fields(
        j.scipy.optimize.minimize(
            _rosen(j.numpy),
            _ROSEN_START.astype(np.float32),
            method="bfgs",
            options={"maxiter": 3},
        )
    ),
}
X64_CASES = {
    "minimize_rosen_x64": lambda j: _minimize_fields(
        j.scipy.optimize.minimize(_rosen(j.numpy), np.zeros(4), method="BFGS")
    ),
    "minimize_rosen_gtol_x64": lambda j: _minimize_fields(
        j.scipy.optimize.minimize(
            _rosen(j.numpy), np.zeros(4), method="BFGS", options={"gtol": 1e-3, "norm": 2}
        )
    ),
    # JAX's line search gives up here (status 3), and so must tracejit's, at the same step.
    "minimize_rosen_line_search_fails_x64": lambda j: _minimize_fields(
        j.scipy.optimize.minimize(_rosen(j.numpy), _ROSEN_START, method="BFGS")
    ),
}

JAX_MODULES = (
    "jax.scipy.integrate",
    "jax.scipy.ndimage",
    "jax.scipy.optimize",
    "jax.scipy.signal",
    "jax.scipy.stats",
)  # (imported for main by tools/jax_reference.py)


def main(jax):
    sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))  # (tests/)
    from recorded_values import record

    record(jax, CASES, X64_CASES, DATA)
