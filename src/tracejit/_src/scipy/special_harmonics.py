"""The spherical harmonics `sph_harm_y` as JAX computes them: every normalized associated
Legendre function P_l^m(cos theta) up to degree and order `n_max` by the three-term
recurrences, from which each element picks its own (n, |m|), times e^{i|m|phi}, conjugated
with the sign (-1)^m for negative orders.

The table of Legendre functions has a static size, so `n_max` must be known when tracing
(read from a concrete `n` otherwise). Degrees and orders beyond `n_max` are clipped to it, and
the k-th element reads the k-th colatitude (the last for k past the end), as in JAX: a scalar
theta serves all of n. The normalization makes the harmonics orthonormal on the sphere.
"""

from __future__ import annotations

import numpy as np

from tracejit._src.core import Tracer
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import binary as lax_binary
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.creation import arange, asarray, zeros
from tracejit._src.numpy.lib import roll
from tracejit._src.numpy.lib_math import isscalar
from tracejit._src.numpy.manipulation import broadcast_to
from tracejit._src.numpy.reductions import cumprod


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    r"""Spherical harmonics :math:`Y_n^m(\theta, \phi) = N_n^m P_n^m(\cos\theta) e^{im\phi}` of
    integer degrees `n` (a 1-D array) and orders `m`, colatitudes `theta` and longitudes
    `phi`; `n_max` (static) is the largest degree, max(n) by default."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    if isscalar(theta):
        theta = asarray([theta])
    return _sph_harm(n, m, theta, phi, _static_n_max(n, n_max))


def _static_n_max(n, n_max) -> int:
    if n_max is None:
        n_max = n.to_concrete_value() if isinstance(n, Tracer) else n
        if n_max is not None:
            n_max = np.max(np.asarray(n_max))
    if isinstance(n_max, Tracer):
        n_max = n_max.to_concrete_value()
    if n_max is None:
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: The `n_max` "
            "argument of `jnp.scipy.special.sph_harm` must be statically specified to use "
            "`sph_harm` within JAX transformations."
        )
    return int(n_max)


def _sph_harm(n, m, theta, phi, n_max):
    legendre = _normalized_legendre(n_max, jnp_ufuncs.cos(theta))
    abs_m = jnp_ufuncs.abs(m)
    value = legendre.at[abs_m, n, arange(len(n))].get(mode="clip")
    angle = abs_m * phi
    harmonics = lax_binary.complex(value * jnp_ufuncs.cos(angle), value * jnp_ufuncs.sin(angle))
    conjugated = (-1.0) ** abs_m * jnp_ufuncs.conjugate(harmonics)
    return jnp_ufuncs.where(m < 0, conjugated, harmonics)


def _recurrence_coefficients(l_max: int, dtype):
    """d0[i, m, l] and d1[i, m, l] of P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m, nonzero only at
    l - m = i (the diagonal that step i fills) and zero where the recurrence does not apply."""
    m, l = np.meshgrid(np.arange(l_max + 1.0), np.arange(l_max + 1.0), indexing="ij")
    l2, m2, l1 = l * l, m * m, (l - 1) * (l - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d0 = np.sqrt((4 * l2 - 1) / (l2 - m2))
        d1 = np.sqrt(((2 * l + 1) * (l1 - m2)) / ((2 * l - 3) * (l2 - m2)))
    d0, d1 = np.where(l - m >= 1, d0, 0), np.where(l - m >= 2, d1, 0)
    step = np.arange(l_max + 1)[:, None, None]
    on_diagonal = (l - m)[None] == step
    return (np.where(on_diagonal, d0, 0).astype(dtype), np.where(on_diagonal, d1, 0).astype(dtype))


def _normalized_legendre(l_max: int, x):
    """P[m, l, k]: the normalized associated Legendre function of order m and degree l at
    x[k], for m, l <= l_max (zero for m > l)."""
    dtype = x.dtype
    p = zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=dtype)
    initial = np.asarray(0.5, dtype) / np.sqrt(np.asarray(np.pi, dtype))  # rounded as JAX's
    a = np.arange(1, l_max + 1, dtype=dtype)
    f_a = cumprod(-1 * jnp_ufuncs.sqrt(1.0 + 0.5 / asarray(a)))
    f_b = jnp_ufuncs.sqrt(2.0 * asarray(np.arange(l_max, dtype=dtype)) + 3.0)
    p = p.at[0, 0].set(initial)
    sine = jnp_ufuncs.sqrt(1.0 - x * x)
    y = cumprod(broadcast_to(sine, (l_max, x.shape[0])), axis=0)
    diagonal = np.arange(1, l_max + 1)
    p = p.at[diagonal, diagonal].set(initial * f_a[:, None] * y)
    below = np.arange(l_max)
    p = p.at[below, below + 1].set(f_b[:, None] * x * p[below, below])
    d0, d1 = _recurrence_coefficients(l_max, dtype)
    for i in range(2, l_max + 1):
        p = p + d0[i][..., None] * (roll(p, 1, axis=1) * x) - d1[i][..., None] * roll(p, 2, axis=1)
    return p
