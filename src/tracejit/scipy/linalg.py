"""`tracejit.scipy.linalg` (`jax.scipy.linalg`): the names built so far."""

from tracejit._src.scipy.linalg import (  # noqa: F401
    cho_factor,
    cho_solve,
    cholesky,
    det,
    eigh_tridiagonal,
    hessenberg,
    inv,
    lu,
    lu_factor,
    lu_solve,
    rsf2csf,
    schur,
    solve,
    solve_triangular,
)
