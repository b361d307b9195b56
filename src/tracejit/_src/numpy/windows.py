"""Window functions: bartlett, blackman, hamming, hanning, kaiser.

Each is a closed form over `iota` in the default float type, of static length `M` (a
`ConcretizationTypeError` for a traced `M`, as in JAX); windows of length 0 and 1 are ones.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import creation, promotion, ufuncs
from tracejit._src.scipy.special_bessel import numpy_i0


def _positions(name: str, M):
    """(n, M): the positions 0..M-1 in the default float type, or (None, M) when M <= 1."""
    if isinstance(M, Tracer):
        raise concretization_error(M, ConcretizationTypeError, f"the M argument of jnp.{name}")
    M = int(M)
    if M <= 1:
        return None, M
    return lax_shapes.iota(dtypes.default_float_dtype(), M), M


def _ones(M: int):
    if M < 0:  # JAX's error, from the broadcast that builds the ones
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got ({M},)."
        )
    return creation.ones((M,), dtypes.default_float_dtype())


def _cosine(n, M: int, multiple: int):
    """cos(multiple * pi * n / (M - 1))."""
    return ufuncs.cos(ufuncs.divide(ufuncs.multiply(multiple * np.pi, n), M - 1))


def bartlett(M):
    """The triangular window of length `M`."""
    n, M = _positions("bartlett", M)
    if n is None:
        return _ones(M)
    distance = ufuncs.abs(ufuncs.add(ufuncs.multiply(2, n), 1 - M))
    return ufuncs.subtract(1, ufuncs.divide(distance, M - 1))


def blackman(M):
    """The Blackman window of length `M`: 0.42 - 0.5 cos(2πn/(M-1)) + 0.08 cos(4πn/(M-1))."""
    n, M = _positions("blackman", M)
    if n is None:
        return _ones(M)
    first = ufuncs.subtract(0.42, ufuncs.multiply(0.5, _cosine(n, M, 2)))
    return ufuncs.add(first, ufuncs.multiply(0.08, _cosine(n, M, 4)))


def hamming(M):
    """The Hamming window of length `M`: 0.54 - 0.46 cos(2πn/(M-1))."""
    n, M = _positions("hamming", M)
    if n is None:
        return _ones(M)
    return ufuncs.subtract(0.54, ufuncs.multiply(0.46, _cosine(n, M, 2)))


def hanning(M):
    """The Hann window of length `M`: 0.5 (1 - cos(2πn/(M-1)))."""
    n, M = _positions("hanning", M)
    if n is None:
        return _ones(M)
    return ufuncs.multiply(0.5, ufuncs.subtract(1, _cosine(n, M, 2)))


def kaiser(M, beta):
    """The Kaiser window of length `M` and shape `beta`: I0(beta sqrt(1 - (2n/(M-1) - 1)^2))
    / I0(beta), with I0 the modified Bessel function (`jnp.i0`)."""
    n, M = _positions("kaiser", M)
    if n is None:
        return _ones(M)
    (beta,) = promotion.promote_args_inexact("kaiser", beta)
    alpha = (M - 1) / 2.0
    ratio = ufuncs.divide(ufuncs.subtract(n, alpha), alpha)
    argument = ufuncs.multiply(beta, ufuncs.sqrt(ufuncs.subtract(1, ufuncs.square(ratio))))
    return ufuncs.divide(numpy_i0(argument), numpy_i0(beta))
