"""`jax.scipy.cluster.vq.vq`: each observation's nearest code and its Euclidean distance.

All M x K differences are formed at once (an (M, K, N) array), which suits the small code
books vector quantization uses; ties go to the first code, as `argmin` breaks them.
"""

from tracejit._src.numpy.creation import asarray
from tracejit._src.numpy.promotion import promote_dtypes_inexact
from tracejit._src.numpy.reductions import argmin
from tracejit._src.numpy.reductions import min as jnp_min
from tracejit._src.numpy.reductions import sum as jnp_sum
from tracejit._src.numpy.ufuncs import abs, sqrt


def vq(obs, code_book, check_finite=True):
    """(code, dist): for each row of `obs` (M, N), the index of the nearest row of
    `code_book` (K, N) (default int), and the distance to it. One-dimensional arguments hold
    length-1 vectors. `check_finite` is accepted for SciPy's signature and unused, as in
    JAX."""
    obs, code_book = promote_dtypes_inexact(asarray(obs), asarray(code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    elif obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    if obs.shape[1] != code_book.shape[1]:
        raise TypeError(
            f"vq: observations of shape {obs.shape} and codes of shape {code_book.shape} "
            f"differ in their vectors' length"
        )
    distances = sqrt(jnp_sum(abs(obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
    return argmin(distances, axis=1), jnp_min(distances, axis=1)
