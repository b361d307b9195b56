"""Records JAX 0.10.2's results of scipy.sparse.linalg, scipy.spatial.transform.Slerp,
scipy.interpolate and scipy.cluster.vq on the cases below, for
`test_jax_recorded.py`: where JAX's results are its own rather than SciPy's
(the Krylov solvers' iterates after a given number of iterations or restarts and their default
`maxiter`, Slerp outside the key times), and the dtypes and weak types of the results.

The tests never import JAX; they load this file for `CASES` without running `main`. To
regenerate `tests/scipy/data/jax_sparse_spatial.json`, in a virtualenv with `jax==0.10.2`
(CPU), from the repository's root:

    python tools/jax_reference.py tests/scipy/make_jax_reference_sparse_spatial.py

A case is `fun(jax_like)` where `jax_like` is `jax` or `tracejit` (with `.numpy` and the
`.scipy` submodules imported); `X64_CASES` run with `jax_enable_x64`.
"""

from __future__ import annotations

import functools
import pathlib
import sys

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "jax_sparse_spatial.json"

_RNG = np.random.default_rng(1)
_A = _RNG.normal(size=(4, 4))
SYMMETRIC = _A + _A.T
RHS = _RNG.normal(size=4)
SPD = SYMMETRIC @ SYMMETRIC.T + np.eye(4)
KEY_TIMES = np.array([0.0, 1.0, 2.0], np.float32)
KEY_EULER = np.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]], np.float32)


def _halve(v):
    return v / 2


def _solve(j, name, A, **options):
    return getattr(j.scipy.sparse.linalg, name)(A, RHS, **options)[0]


def _slerp(j, times):
    rotations = j.scipy.spatial.transform.Rotation.from_euler("zxy", KEY_EULER, degrees=True)
    slerp = j.scipy.spatial.transform.Slerp.init(KEY_TIMES, rotations)
    return slerp(np.asarray(times, np.float32)).as_quat()


def _interpolate(j, method, fill_value):
    grid = (np.linspace(0, 1, 4), np.linspace(0, 2, 5))
    interpolator = j.scipy.interpolate.RegularGridInterpolator(
        grid, np.arange(20).reshape(4, 5), method=method, fill_value=fill_value
    )
    return interpolator(np.array([[0.5, 3.0], [0.2, 0.3], [1 / 6, 0.25], [-1.0, 0.5]]))


CASES = {
    "cg_float32": lambda j: _solve(j, "cg", SPD.astype(np.float32)),
    "slerp_inside_and_outside": lambda j: _slerp(j, [-1.0, -0.5, 0.0, 0.5, 1.5, 2.0, 2.5, 3.0]),
    "slerp_scalar_time": lambda j: _slerp(j, 0.25),
    **{
        f"interpolate_{method}_{fill}": functools.partial(
            _interpolate, method=method, fill_value=value
        )
        for method in ("linear", "nearest")
        for fill, value in (("nan", np.nan), ("none", None), ("int", -1))
    },
    "vq_int": lambda j: j.scipy.cluster.vq.vq(
        np.array([[1, 2], [3, 4]]), np.array([[0, 0], [3, 3]])
    ),
}

X64_CASES = {
    **{
        f"gmres_{method}_restart{restart}_maxiter{maxiter}": functools.partial(
            _solve,
            name="gmres",
            A=SYMMETRIC,
            restart=restart,
            maxiter=maxiter,
            solve_method=method,
            tol=1e-14,
        )
        for method in ("batched", "incremental")
        for restart, maxiter in ((1, None), (1, 41), (2, 3), (2, None))
    },
    **{
        f"{name}_maxiter{maxiter}": functools.partial(
            _solve, name=name, A=SYMMETRIC, maxiter=maxiter, tol=1e-14
        )
        for name in ("cg", "bicgstab")
        for maxiter in (1, 2, 3)
    },
    **{
        f"gmres_{method}_preconditioned": functools.partial(
            _solve,
            name="gmres",
            A=SYMMETRIC,
            x0=np.ones(4),
            M=_halve,
            tol=1e-3,
            restart=2,
            solve_method=method,
        )
        for method in ("batched", "incremental")
    },
    "cg_preconditioned": functools.partial(
        _solve, name="cg", A=SPD, x0=np.ones(4), M=_halve, tol=1e-3
    ),
}

JAX_MODULES = (
    "jax.scipy.cluster.vq",
    "jax.scipy.interpolate",
    "jax.scipy.sparse.linalg",
    "jax.scipy.spatial.transform",
)  # (imported for main by tools/jax_reference.py)


def main(jax):
    sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))  # (tests/)
    from recorded_values import record

    record(jax, CASES, X64_CASES, DATA)
