"""`tracejit.scipy.linalg` (`jax.scipy.linalg`): the names built so far."""

from tracejit._src.scipy.linalg import (  # noqa: F401
    cho_factor,
    cho_solve,
    cholesky,
    solve_triangular,
)
from tracejit._src.scipy.linalg_spectral import (  # noqa: F401
    eigh,
    polar,
    qr,
    qr_multiply,
    svd,
)
