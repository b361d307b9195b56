"""Records JAX 0.10.2's values of `jax.scipy.stats` at the edges, for `test_stats.py`.

The tests never import JAX; where SciPy is no reference (outside the support, invalid
parameters, NaN and infinite input: JAX answers NaN, -inf or a formula's value where SciPy
may raise or answer otherwise) and for dtypes and weak types, they compare with the values
this script saved from real JAX into `tests/scipy/data/jax_stats.json`. To regenerate them, in a
virtualenv with `jax==0.10.2` (CPU), from the repository's root:

    python tools/jax_reference.py tests/scipy/make_jax_reference_stats.py

Every function of every distribution in the inventory (`tests/data/jax_api_0_10_2.json`) is
called on a grid: its first argument's edge values (`EDGES`, by kind) against `PARAMETERS`,
each parameter a list of values of one length (so that the grid is edges x columns), in
float32 and (x64) float64. The tests load this file for its tables without running `main`.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "jax_stats.json"
INVENTORY = HERE.parent / "data" / "jax_api_0_10_2.json"

EDGES = {
    "x": [-np.inf, -2.5, -1.0, 0.0, 0.3, 1.0, 2.0, 3.5, 7.0, np.inf, np.nan],
    "k": [-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 2.5, 12.0, np.inf, np.nan],
    "q": [-0.1, 0.0, 1e-3, 0.3, 0.5, 0.9, 1.0, 1.1, np.nan],
    "mu": [0.0, 0.5, 5.0, 50.0, 500.0, -1.0, np.nan],
}
LOC_SCALE = {"loc": [0.0, 1.5, -1.0, 0.0], "scale": [1.0, 2.0, 0.5, -1.0]}
# distribution -> its parameters after the first argument, in order, each with 4 values.
PARAMETERS = {
    "norm": LOC_SCALE,
    "cauchy": LOC_SCALE,
    "laplace": LOC_SCALE,
    "logistic": LOC_SCALE,
    "expon": LOC_SCALE,
    "uniform": LOC_SCALE,
    "gumbel_l": LOC_SCALE,
    "gumbel_r": LOC_SCALE,
    "t": {"df": [1.0, 3.5, 30.0, -1.0], "loc": [0.0, 1.0, 0.0, 0.0], "scale": [1.0, 2.0, 1.0, 1.0]},
    "pareto": {
        "b": [1.0, 2.5, 0.5, -1.0],
        "loc": [0.0, 1.0, 0.0, 0.0],
        "scale": [1.0, 2.0, 1.0, 1.0],
    },
    "wrapcauchy": {"c": [0.3, 0.9, 0.0, 1.5]},
    "vonmises": {"kappa": [0.5, 2.0, 10.0, -1.0]},
    "gennorm": {"beta": [1.0, 2.0, 0.5, -1.0]},
    "beta": {"a": [2.0, 0.5, 1.0, -1.0], "b": [3.0, 0.5, 2.0, 1.0]},
    "gamma": {"a": [1.0, 2.5, 0.5, -1.0]},
    "chi2": {"df": [1.0, 3.0, 10.0, -1.0]},
    "truncnorm": {"a": [-1.0, 0.5, -3.0, 1.0], "b": [2.0, 3.0, -1.0, 0.5]},
    "bernoulli": {"p": [0.3, 0.0, 1.0, 1.5]},
    "binom": {"n": [5.0, 0.0, 10.0, 3.0], "p": [0.3, 0.5, 0.0, 1.5]},
    "betabinom": {
        "n": [5.0, 0.0, 10.0, -1.0],
        "a": [2.0, 0.5, 1.0, 1.0],
        "b": [3.0, 1.0, 0.5, 1.0],
    },
    "geom": {"p": [0.3, 1.0, 0.01, 1.5]},
    "nbinom": {"n": [3.0, 1.0, 0.5, -1.0], "p": [0.4, 1.0, 0.1, 1.5]},
    "poisson": {"mu": [2.5, 0.0, 10.0, -1.0]},
}
DISCRETE = {"bernoulli", "binom", "betabinom", "geom", "nbinom", "poisson"}
# Functions with their own signature, tested against SciPy instead.
OWN_SIGNATURE = {"dirichlet", "multinomial", "multivariate_normal"}


JAX_MODULES = ("jax.scipy.stats",)  # (imported for main by tools/jax_reference.py)


def first_argument_kind(dist: str, fun: str) -> str:
    if dist == "poisson" and fun == "entropy":
        return "mu"
    if fun in ("ppf", "isf"):
        return "q"
    return "k" if dist in DISCRETE else "x"


def functions() -> list[tuple[str, str]]:
    """(distribution, function) for every function of the grid's distributions in JAX."""
    modules = json.loads(INVENTORY.read_text())["modules"]
    return [
        (dist, fun)
        for dist in sorted(PARAMETERS)
        for fun in sorted(modules[f"jax.scipy.stats.{dist}"])
    ]


def grid_arguments(dist: str, fun: str, dtype) -> list[np.ndarray]:
    """The first argument's edges as a column against the parameters' values as rows."""
    first = np.asarray(EDGES[first_argument_kind(dist, fun)], dtype)[:, None]
    if first_argument_kind(dist, fun) == "mu":
        return [first, np.zeros((1, 1), dtype)]
    return [first] + [np.asarray(v, dtype)[None, :] for v in PARAMETERS[dist].values()]


def scalar_arguments(dist: str, fun: str) -> list:
    """Python scalars (a point in the support, the first parameter values): weak types."""
    first = {"x": 0.3, "k": 1, "q": 0.3, "mu": 2.5}[first_argument_kind(dist, fun)]
    if first_argument_kind(dist, fun) == "mu":
        return [first]
    return [first] + [v[0] for v in PARAMETERS[dist].values()]


def _record(jax, stats, x64: bool) -> dict:
    jax.config.update("jax_enable_x64", x64)
    dtype = np.float64 if x64 else np.float32
    out = {}
    for dist, fun in functions():
        f = getattr(getattr(stats, dist), fun)
        grid = f(*grid_arguments(dist, fun, dtype))
        scalar = f(*scalar_arguments(dist, fun))
        out[f"{dist}.{fun}"] = {
            "values": np.asarray(grid, np.float64).tolist(),
            "dtype": str(grid.dtype),
            "scalar_dtype": str(scalar.dtype),
            "scalar_weak_type": bool(scalar.aval.weak_type),
        }
    return out


def main(jax):
    stats = jax.scipy.stats

    assert jax.__version__ == "0.10.2", jax.__version__
    record = {"float32": _record(jax, stats, False), "float64": _record(jax, stats, True)}
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
