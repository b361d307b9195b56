"""`tracejit.scipy.sparse.linalg` (`jax.scipy.sparse.linalg`): the Krylov solvers."""

from tracejit._src.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401
