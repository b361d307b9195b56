"""`tracejit.scipy.optimize`: `minimize` (BFGS) and its `OptimizeResults`, as JAX has them."""

from tracejit._src.scipy.optimize.bfgs import OptimizeResults, minimize  # noqa: F401
