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
from tracejit._src.scipy.linalg_functions import (  # noqa: F401
    expm,
    expm_frechet,
    funm,
    solve_sylvester,
    sqrtm,
)
from tracejit._src.scipy.linalg_matrices import (  # noqa: F401
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from tracejit._src.scipy.linalg_spectral import (  # noqa: F401
    eigh,
    polar,
    qr,
    qr_multiply,
    svd,
)
