"""`tracejit.scipy.linalg`'s special matrices, as SciPy builds them.

Those made from arrays (`toeplitz`, `hankel`, `circulant`, `companion`, `leslie`, `fiedler`, ...)
gather their entries with a constant index pattern, batched over the leading axes of their
operands; those of a size only (`hilbert`, `pascal`, `dft`, `hadamard`, ...) are NumPy constants,
exact where SciPy's are (binomials from Python integers), in JAX's dtypes.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import creation, manipulation, promotion, ufuncs
from tracejit._src.numpy.promotion import promote_dtypes, promote_dtypes_inexact, to_operands


def _float(x):
    """A NumPy constant as an array of the default float (or complex) type."""
    kind = dtypes.default_complex_dtype() if np.iscomplexobj(x) else dtypes.default_float_dtype()
    return creation.asarray(x, dtype=kind)


def _gather_pattern(values, pattern):
    """values[..., pattern]: a matrix of entries of the last axis of `values`."""
    return values[..., np.asarray(pattern)]


# --- matrices of arrays -----------------------------------------------------------------------


def block_diag(*arrs):
    """The matrices (scalars and vectors as 1-row matrices) on the diagonal of one matrix."""
    for position, a in enumerate(arrs):
        if np.ndim(a) > 2:
            raise ValueError(
                "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
                f"{a} at argument {position}."
            )
    if not arrs:
        return creation.zeros((1, 0), dtypes.default_float_dtype())
    arrs = promote_dtypes(*to_operands("block_diag", arrs))
    blocks = [manipulation.atleast_2d(a) for a in arrs]
    width = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        after = width - before - b.shape[1]
        zeros = lambda w, b=b: creation.zeros((b.shape[0], w), b.dtype)
        rows.append(manipulation.concatenate([zeros(before), b, zeros(after)], axis=1))
        before += b.shape[1]
    return manipulation.concatenate(rows, axis=0)


def circulant(c):
    """The circulant matrix of first column `c` (last axis; leading axes batch)."""
    (c,) = to_operands("circulant", (c,))
    n = c.shape[-1]
    rows, cols = np.indices((n, n))
    return _gather_pattern(c, (rows - cols) % n)


def companion(a):
    """The companion matrix of the polynomial `a` (highest power first): first row
    -a[1:] / a[0], ones below the diagonal."""
    (a,) = promote_dtypes_inexact(*to_operands("companion", (a,)))
    if a.ndim < 1 or a.shape[-1] < 2:
        raise ValueError(
            f"The length of `a` along the last axis must be at least 2; got shape {a.shape}."
        )
    n = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = manipulation.broadcast_to(np.eye(n - 1, n, dtype=a.dtype), (*a.shape[:-1], n - 1, n))
    return manipulation.concatenate([first[..., None, :], below], axis=-2)


def toeplitz(c, r=None):
    """The Toeplitz matrix of first column `c` and first row `r` (default conj(c); r[0] is
    replaced by c[0])."""
    (c,) = to_operands("toeplitz", (c,))
    r = ufuncs.conj(c) if r is None else to_operands("toeplitz", (r,))[0]
    c, r = promote_dtypes(c, r)
    batch = promotion.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = manipulation.broadcast_to(c, (*batch, c.shape[-1]))
    r = manipulation.broadcast_to(r, (*batch, r.shape[-1]))
    m, n = c.shape[-1], r.shape[-1]
    values = manipulation.concatenate([r[..., :0:-1], c], axis=-1)  # r[n-1], ..., r[1], c
    rows, cols = np.indices((m, n))
    return _gather_pattern(values, n - 1 + rows - cols)


def hankel(c, r=None):
    """The Hankel matrix of first column `c` and last row `r` (default zeros; r[0] is
    replaced by c[-1])."""
    (c,) = to_operands("hankel", (c,))
    r = creation.zeros_like(c) if r is None else to_operands("hankel", (r,))[0]
    c, r = promote_dtypes(c, r)
    batch = promotion.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = manipulation.broadcast_to(c, (*batch, c.shape[-1]))
    r = manipulation.broadcast_to(r, (*batch, r.shape[-1]))
    m, n = c.shape[-1], r.shape[-1]
    values = manipulation.concatenate([c, r[..., 1:]], axis=-1)
    rows, cols = np.indices((m, n))
    return _gather_pattern(values, rows + cols)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v = convolve(a, v, mode) for vectors v of length `n`."""
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    (a,) = to_operands("convolution_matrix", (a,))
    n = operator.index(n)
    if n <= 0 or a.ndim < 1 or a.shape[-1] == 0:
        raise ValueError(f"convolution_matrix needs n > 0 and a non-empty a, got n={n}, "
                         f"a.shape={a.shape}")  # fmt: skip
    m = a.shape[-1]
    short, long = min(m, n), max(m, n)
    first, count = {"full": (0, m + n - 1), "same": ((short - 1) // 2, long),
                    "valid": (short - 1, long - short + 1)}[mode]  # fmt: skip
    rows, cols = np.indices((count, n))
    lag = rows + first - cols  # A[i, j] = a[i - j] where 0 <= i - j < m
    padded = manipulation.concatenate([a, creation.zeros((*a.shape[:-1], 1), a.dtype)], -1)
    return _gather_pattern(padded, np.where((lag >= 0) & (lag < m), lag, m))


def fiedler(a):
    """The symmetric matrix |a_i - a_j|."""
    (a,) = to_operands("fiedler", (a,))
    return ufuncs.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial `a` (highest power first): pentadiagonal,
    with the same eigenvalues as `companion(a)`."""
    (a,) = promote_dtypes_inexact(*to_operands("fiedler_companion", (a,)))
    size = a.shape[-1]
    if size < 3:
        entries = -a[..., 1:] / a[..., :1]  # (none, or the one entry of a 1 x 1 matrix)
        return manipulation.reshape(entries, (*a.shape[:-1], size - 1, size - 1))
    a = a / a[..., :1]
    n = size - 1
    out = creation.zeros((*a.shape[:-1], n, n), a.dtype)
    odd_rows = np.arange(3, n, 2)
    out = out.at[..., odd_rows, odd_rows - 2].set(1)
    even_rows = np.arange(2, n, 2)
    out = out.at[..., even_rows, even_rows - 1].set(-a[..., 3::2][..., : len(even_rows)])
    out = out.at[..., np.arange(0, n - 2, 2), np.arange(2, n, 2)].set(1)
    supers = np.arange(0, n - 1, 2)
    out = out.at[..., supers, supers + 1].set(-a[..., 2::2][..., : len(supers)])
    out = out.at[..., 0, 0].set(-a[..., 1])
    return out.at[..., 1, 0].set(1)


def leslie(f, s):
    """The Leslie matrix: fecundities `f` in the first row, survival rates `s` below the
    diagonal."""
    f, s = promote_dtypes(*to_operands("leslie", (f, s)))
    if f.ndim < 1 or f.shape[-1] < 2:
        raise ValueError(
            f"The length of f along the last axis must be at least 2; got shape {f.shape}."
        )
    if s.ndim < 1 or s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be one "
            f"less than the length of f; got f shape {f.shape} and s shape {s.shape}."
        )
    n = f.shape[-1]
    batch = promotion.broadcast_shapes(f.shape[:-1], s.shape[:-1])
    f = manipulation.broadcast_to(f, (*batch, n))
    s = manipulation.broadcast_to(s, (*batch, n - 1))
    below = s[..., :, None] * np.eye(n - 1, n, dtype=bool)
    return manipulation.concatenate([f[..., None, :], below.astype(f.dtype)], axis=-2)


# --- matrices of a size -----------------------------------------------------------------------


def dft(n, scale=None, *, dtype=None):
    """The n-point discrete Fourier transform matrix exp(-2πi jk / n), divided by √n
    (`scale` 'sqrtn') or n ('n')."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    n = operator.index(n)
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    m = m / {None: 1, "sqrtn": math.sqrt(n), "n": n}[scale]
    return creation.asarray(m, dtype=dtypes.default_complex_dtype() if dtype is None else dtype)


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix of ±1 (Sylvester's construction), n a power of 2."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return creation.asarray(h, dtype=dtype)


def helmert(n, full=False):
    """The Helmert matrix: orthogonal, first row 1/√n, row k contrasting the first k entries
    with the next; without `full`, that first row dropped."""
    n = operator.index(n)
    k = np.arange(n)
    h = np.tril(np.ones((n, n)), -1) - np.diag(k)
    norms = k * (k + 1.0)
    h[0], norms[0] = 1, n
    h = h / np.sqrt(norms)[:, None]
    return _float(h if full else h[1:])


def hilbert(n):
    """The Hilbert matrix 1 / (i + j + 1)."""
    i, j = np.indices((operator.index(n),) * 2)
    return _float(1.0 / (i + j + 1))


def invhilbert(n):
    """The inverse of `hilbert(n)`, from its closed form in binomials."""
    n = operator.index(n)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            value = (-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
            value *= math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2
            out[i, j] = out[j, i] = float(value)
    return _float(out)


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_lower(n, signs: bool):
    """The lower-triangular Pascal matrix C(i, j) (its inverse with `signs`), in float64."""
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = float((-1) ** (i - j) * math.comb(i, j) if signs else math.comb(i, j))
    return out


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"Expected kind to be one of: {list(_PASCAL_KINDS)}; got {kind}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix C(i + j, i) ('symmetric'), or its Cholesky factor C(i, j) ('lower')
    or that transposed ('upper'); float32 as JAX's."""
    kind, n = _check_kind(kind), operator.index(n)
    lower = _pascal_lower(n, signs=False)
    out = {"symmetric": lower @ lower.T, "lower": lower, "upper": lower.T}[kind]
    return creation.asarray(out, dtype=np.float32)


def invpascal(n, kind=None):
    """The inverse of `pascal(n, kind)`."""
    kind, n = _check_kind(kind), operator.index(n)
    inverse = _pascal_lower(n, signs=True)
    out = {"symmetric": inverse.T @ inverse, "lower": inverse, "upper": inverse.T}[kind]
    return _float(out)
