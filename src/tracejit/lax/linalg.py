"""`tracejit.lax.linalg` (`jax.lax.linalg`): the linear-algebra primitives built so far."""

from tracejit._src.lax.linalg import (  # noqa: F401
    cholesky,
    cholesky_p,
    lu,
    lu_p,
    triangular_solve,
    triangular_solve_p,
)
from tracejit._src.lax.linalg_nonsymmetric import (  # noqa: F401
    EigImplementation,
    eig,
    eig_p,
    hessenberg,
    hessenberg_p,
    lu_pivots_to_permutation,
    lu_pivots_to_permutation_p,
    schur,
    schur_p,
    tridiagonal,
    tridiagonal_p,
    tridiagonal_solve,
    tridiagonal_solve_p,
)
from tracejit._src.lax.linalg_products import (  # noqa: F401
    cholesky_update,
    cholesky_update_p,
    ormqr,
    ormqr_p,
    symmetric_product,
    symmetric_product_p,
)
from tracejit._src.lax.linalg_spectral import (  # noqa: F401
    EighImplementation,
    SvdAlgorithm,
    eigh,
    eigh_p,
    householder_product,
    householder_product_p,
    qr,
    qr_p,
    svd,
    svd_p,
)
