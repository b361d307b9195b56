"""`tracejit.lax.linalg` (`jax.lax.linalg`): the linear-algebra primitives built so far."""

from tracejit._src.lax.linalg import (  # noqa: F401
    cholesky,
    cholesky_p,
    lu,
    lu_p,
    triangular_solve,
    triangular_solve_p,
)
from tracejit._src.lax.linalg_spectral import (  # noqa: F401
    eigh,
    eigh_p,
    householder_product,
    householder_product_p,
    qr,
    qr_p,
    svd,
    svd_p,
)
