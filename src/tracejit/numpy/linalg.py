"""`tracejit.numpy.linalg` (`jnp.linalg`): NumPy's linear algebra names."""

from tracejit._src.numpy.linalg import (  # noqa: F401
    cholesky,
    cross,
    diagonal,
    inv,
    matmul,
    matrix_power,
    matrix_transpose,
    multi_dot,
    outer,
    solve,
    tensordot,
    trace,
    vecdot,
)
from tracejit._src.numpy.linalg_determinants import (  # noqa: F401
    det,
    eig,
    eigvals,
    slogdet,
    tensorinv,
    tensorsolve,
)
from tracejit._src.numpy.linalg_spectral import (  # noqa: F401
    cond,
    eigh,
    eigvalsh,
    lstsq,
    matrix_norm,
    matrix_rank,
    norm,
    pinv,
    qr,
    svd,
    svdvals,
    vector_norm,
)
