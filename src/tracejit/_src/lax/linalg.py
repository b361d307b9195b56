"""Linear-algebra primitives (`lax.linalg`): `cholesky` and `triangular_solve` so far.

Both act on the last two axes of their operands and batch over the leading ones. Eagerly,
`cholesky` is NumPy's LAPACK and `triangular_solve` a substitution vectorized over the batch
and the right-hand sides; compiled, `cholesky` is the same LAPACK called back from XLA (XLA's
own `stablehlo.cholesky` measured 7x slower at n = 256, `docs/linalg.md`) and
`triangular_solve` is `stablehlo.triangular_solve`, which XLA expands. As in JAX, a matrix
that is not positive definite gives a Cholesky factor of NaNs, and a singular triangular
system gives infinities and NaNs, not an exception.
"""

from __future__ import annotations

import warnings

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_rules
from tracejit._src.lax import binary, dot, elementwise, gather, shapes
from tracejit._src.lowering.lower import lowering_rules, unsupported_operation


def matrix_transpose(x):
    rank = len(x.shape) if hasattr(x, "shape") else np.ndim(x)
    return shapes.transpose(x, (*range(rank - 2), rank - 1, rank - 2))


def conj_if_complex(x):
    """The complex conjugate; real values unchanged (lax.conj makes them complex)."""
    return elementwise.conj(x) if dtypes.is_complex(get_aval(x).dtype) else x


def adjoint(x):
    return conj_if_complex(matrix_transpose(x))


def matmul(a, b):
    """Matrix products over the last two axes, batched over the leading (equal) ones."""
    batch = tuple(range(len(a.shape) - 2))
    rank = len(a.shape)
    return dot.dot_general(a, b, (((rank - 1,), (rank - 2,)), (batch, batch)))


def triangle_mask(shape, dtype, lower: bool, diagonal: float):
    """A constant of `shape`: ones on the `lower` (else upper) triangle below (above) the
    diagonal, `diagonal` on it, zeros elsewhere."""
    n = shape[-1]
    ones = np.tril(np.ones((n, n)), -1) if lower else np.triu(np.ones((n, n)), 1)
    return np.broadcast_to((ones + diagonal * np.eye(n)).astype(dtype), shape)


def check_matrices(name: str, *avals: ShapedArray) -> None:
    for aval in avals:
        if len(aval.shape) < 2:
            raise ValueError(f"{name}: operands must have rank at least 2, got {aval.str_short()}")
        if not dtypes.is_inexact(aval.dtype):
            raise TypeError(
                f"{name}: operands must be floating point or complex, got {aval.str_short()}"
            )


_HALF_PRECISION = frozenset(map(np.dtype, (dtypes.float16, dtypes.bfloat16)))


def refuse_half_precision(name: str, *operands) -> None:
    """LAPACK has no half-precision routines and JAX computes the decompositions with it: it
    refuses float16 and bfloat16 operands with NotImplementedError when it runs or lowers one
    (tracing works). So do the impls and lowerings here that run LAPACK (the error's class is
    a NotImplementedError that `jit` does not answer by evaluating with NumPy)."""
    for x in operands:
        if np.dtype(x.dtype) in _HALF_PRECISION:
            raise unsupported_operation(
                f"Unsupported dtype {np.dtype(x.dtype).name}. {name} is computed by LAPACK, "
                "which has no half-precision routines: convert to float32 first."
            )


def host_lowering(impl):
    """The lowering of a primitive whose eager `impl` runs on the host (LAPACK, SciPy): XLA
    calls it back. Half-precision operands are refused when compiling, as JAX does."""

    def rule(ctx, *operands, **params):
        primitive = ctx.eqn.primitive
        refuse_half_precision(primitive.name, *ctx.avals_in)

        def call(*values):
            out = impl(*values, **params)
            return list(out) if primitive.multiple_results else [out]

        results = ctx.host_callback(call, list(operands), primitive.name, has_side_effect=False)
        return results if primitive.multiple_results else results[0]

    return rule


# --- cholesky -------------------------------------------------------------------------------
cholesky_p = Primitive("cholesky")


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor L of each Hermitian positive-definite matrix, L Lᴴ = x; NaNs
    where x is not positive definite. `symmetrize_input` averages x with xᴴ first (else only
    x's lower triangle is read)."""
    if symmetrize_input:
        _cholesky_abstract_eval(get_aval(x))  # (its errors name cholesky, not the sum below)
        x = binary.mul(binary.add(x, adjoint(x)), np.array(0.5, get_aval(x).dtype))
    return cholesky_p.bind(x)


@cholesky_p.def_impl
def _cholesky_impl(x):
    refuse_half_precision("cholesky", x)
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        out = np.empty_like(x)
        flat_in, flat_out = x.reshape(-1, *x.shape[-2:]), out.reshape(-1, *x.shape[-2:])
        for i, matrix in enumerate(flat_in):
            try:
                flat_out[i] = np.linalg.cholesky(matrix)
            except np.linalg.LinAlgError:
                flat_out[i] = np.nan
        return out


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(x):
    check_matrices("cholesky", x)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"cholesky: the matrices must be square, got {x.str_short()}")
    return x.update(weak_type=False)


def _cholesky_jvp(primals, tangents):
    """dL = L φ(L⁻¹ dA L⁻ᴴ), φ taking the lower triangle with the diagonal halved."""
    (x,), (dx,) = primals, tangents
    factor = cholesky_p.bind(x)
    if type(dx) is Zero:
        return factor, Zero.from_primal_value(factor)
    right = triangular_solve(factor, dx, left_side=False, lower=True, transpose_a=True,
                             conjugate_a=True)  # fmt: skip
    inner = triangular_solve(factor, right, left_side=True, lower=True)
    aval = get_aval(inner)
    phi = binary.mul(inner, triangle_mask(aval.shape, aval.dtype, lower=True, diagonal=0.5))
    return factor, matmul(factor, phi)


ad.jvp_rules[cholesky_p] = _cholesky_jvp
batch_rules[cholesky_p] = lambda values, dims: (
    cholesky_p.bind(batch_at_front(values[0], dims[0], 0)),
    0,
)
lowering_rules[cholesky_p] = host_lowering(_cholesky_impl)


# --- triangular_solve -----------------------------------------------------------------------
triangular_solve_p = Primitive("triangular_solve")


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):  # fmt: skip
    """x with op(a) x = b (`left_side`) or x op(a) = b, a triangular (its `lower` or upper
    triangle is read, its diagonal taken as ones with `unit_diagonal`); op(a) is a, aᵀ
    (`transpose_a`), conj(a) or aᴴ (with `conjugate_a`)."""
    if conjugate_a and not transpose_a:  # (the primitive conjugates only with the transpose)
        a, conjugate_a = conj_if_complex(a), False
    return triangular_solve_p.bind(
        a, b, left_side=bool(left_side), lower=bool(lower), transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal),
    )  # fmt: skip


def _effective_matrix(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """op(a) with the unread triangle zeroed (NumPy), and whether it is lower triangular."""
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        m = m.copy()
        idx = np.arange(a.shape[-1])
        m[..., idx, idx] = 1
    if conjugate_a:
        m = np.conj(m)
    if transpose_a:
        m, lower = np.swapaxes(m, -1, -2), not lower
    return m, lower


def _forward_substitution(m, b):
    """x with m x = b for lower-triangular m, row by row, vectorized over the batch and the
    right-hand sides (IEEE arithmetic: a zero pivot gives infinities, as XLA's does)."""
    x = np.zeros(np.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    with np.errstate(all="ignore"):
        for i in range(m.shape[-1]):
            partial = (m[..., i, :i, None] * x[..., :i, :]).sum(-2)  # (einsum: no bfloat16)
            x[..., i, :] = (b[..., i, :] - partial) / m[..., i, i, None]
    return x


def _substitution_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """The solve by substitution in NumPy, for what LAPACK does not take: half-precision
    floats, and singular matrices (LAPACK stops; here a zero pivot gives XLA's infinities)."""
    m, m_lower = _effective_matrix(a, lower, transpose_a, conjugate_a, unit_diagonal)
    if not left_side:  # x m = b  <=>  mᵀ xᵀ = bᵀ
        m, m_lower, b = np.swapaxes(m, -1, -2), not m_lower, np.swapaxes(b, -1, -2)
    if not m_lower:  # reversing rows and columns makes an upper-triangular system lower
        x = _forward_substitution(m[..., ::-1, ::-1], b[..., ::-1, :])[..., ::-1, :]
    else:
        x = _forward_substitution(m, b)
    return x if left_side else np.swapaxes(x, -1, -2)


_LAPACK_DTYPES = frozenset(map(np.dtype, ("float32", "float64", "complex64", "complex128")))


@triangular_solve_p.def_impl
def _triangular_solve_impl(a, b, **params):
    """LAPACK's trtrs (SciPy's) matrix by matrix; a right-side solve x op(a) = b is the
    left-side op(a)ᵀ xᵀ = bᵀ. Compiled programs call this too (see the lowering)."""
    import scipy.linalg

    if a.dtype not in _LAPACK_DTYPES or a.size == 0 or b.size == 0:
        return _substitution_solve(a, b, **params)
    left = params["left_side"]
    trans = (2 if params["conjugate_a"] else 1) if params["transpose_a"] else 0
    m, rhs = a, b
    if not left:
        rhs = np.swapaxes(b, -1, -2)
        if trans == 2:  # op(a)ᵀ = conj(a): LAPACK has no conjugate without transpose
            m, trans = np.conj(a), 0
        else:
            trans = 1 - trans
    trtrs = scipy.linalg.get_lapack_funcs("trtrs", (m,))
    n, k = m.shape[-1], rhs.shape[-1]
    flat_m, flat_rhs = m.reshape(-1, n, n), rhs.reshape(-1, n, k)
    lower = params["lower"]
    if trans != 2:  # LAPACK reads Fortran order: a C-order matrix is its transpose there
        flat_m, lower, trans = np.swapaxes(flat_m, -1, -2), not lower, 1 - trans
    x = np.empty_like(flat_rhs)
    for i in range(len(flat_m)):
        x[i], info = trtrs(flat_m[i], flat_rhs[i], lower=lower, trans=trans,
                           unitdiag=params["unit_diagonal"])  # fmt: skip
        if info > 0:  # a zero pivot: LAPACK stops where XLA gives infinities
            return _substitution_solve(a, b, **params)
    x = x.reshape(rhs.shape)
    return x if left else np.swapaxes(x, -1, -2)


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(a, b, *, left_side, **params):
    check_matrices("triangular_solve", a, b)
    if a.dtype != b.dtype:
        raise TypeError(
            f"triangular_solve: a and b must have the same dtype, got {a.str_short()} and "
            f"{b.str_short()}"
        )
    n = a.shape[-1]
    solved = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-2] != n or solved != n or a.shape[:-2] != b.shape[:-2]:
        raise TypeError(
            f"triangular_solve: a must be square with its size matching b's "
            f"{'rows' if left_side else 'columns'} and the same batch dimensions, got "
            f"a {a.str_short()} and b {b.str_short()} (left_side={left_side})"
        )
    return b.update(weak_type=False)


def _op(a, transpose_a, conjugate_a):
    a = conj_if_complex(a) if conjugate_a else a
    return matrix_transpose(a) if transpose_a else a


def _triangular_solve_jvp(primals, tangents, **params):
    """Linear in b; in a: dx = -op(a)⁻¹ op(da) x (left) or -x op(da) op(a)⁻¹ (right), da
    restricted to the triangle that is read."""
    (a, b), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs = db
    if type(da) is not Zero:
        aval = get_aval(a)
        read = 0.0 if params["unit_diagonal"] else 1.0
        da = binary.mul(da, triangle_mask(aval.shape, aval.dtype, params["lower"], diagonal=read))
        op_da = _op(da, params["transpose_a"], params["conjugate_a"])
        change = matmul(op_da, x) if params["left_side"] else matmul(x, op_da)
        rhs = elementwise.neg(change) if type(db) is Zero else binary.sub(db, change)
    if type(rhs) is Zero:
        return x, Zero.from_primal_value(x)
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, **params):
    """b̄ = op(a)⁻ᵀ x̄ (left) or x̄ op(a)⁻ᵀ: the same solve with `transpose_a` flipped."""
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve(a, ct, **flipped)]


ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.mark_linear(triangular_solve_p)
transpose_rules[triangular_solve_p] = _triangular_solve_transpose


def _triangular_solve_batch(values, dims, **params):
    a, b = values
    size = next(x.shape[d] for x, d in zip(values, dims, strict=True) if d is not None)
    a = batch_at_front(a, dims[0], size)
    b = batch_at_front(b, dims[1], size)
    return triangular_solve_p.bind(a, b, **params), 0


batch_rules[triangular_solve_p] = _triangular_solve_batch


def _triangular_solve_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal):  # fmt: skip
    # (`conjugate_a` comes only with `transpose_a`: the wrapper conjugates a itself otherwise)
    transpose = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    return ctx.op(
        "stablehlo.triangular_solve",
        [a, b],
        {
            "left_side": str(left_side).lower(),
            "lower": str(lower).lower(),
            "unit_diagonal": str(unit_diagonal).lower(),
            "transpose_a": f"#stablehlo<transpose {transpose}>",
        },
    )


def _triangular_solve_lowering_by_size(ctx, a, b, **params):
    """XLA's expansion for small matrices, LAPACK called back from XLA from n = 32 on (n = 64,
    one right-hand side, float32: XLA 71 µs, the callback 19 µs, SciPy itself 11 µs; n = 16:
    XLA 8 µs, the callback 20 µs; docs/linalg.md)."""
    if ctx.avals_in[0].shape[-1] < 32:
        return _triangular_solve_lowering(ctx, a, b, **params)
    return ctx.host_callback(
        lambda a, b: [_triangular_solve_impl(a, b, **params)], [a, b], "triangular_solve",
        has_side_effect=False,
    )[0]  # fmt: skip


lowering_rules[triangular_solve_p] = _triangular_solve_lowering_by_size


# --- lu -------------------------------------------------------------------------------------
lu_p = Primitive("lu", multiple_results=True)


def lu(x):
    """The LU decomposition with partial pivoting of each square matrix: (lu, pivots,
    permutation), `lu` holding L (unit diagonal, below it) and U (on and above it), row i
    swapped with row `pivots[i]` in turn, `permutation` the rows' resulting order, so that
    x[..., permutation, :] = L U."""
    return tuple(lu_p.bind(x))


def _lu_of_matrix(matrix):
    """(lu, pivots) of one matrix by LAPACK's getrf (SciPy); a singular one factors too."""
    import scipy.linalg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        return scipy.linalg.lu_factor(matrix, check_finite=False)


@lu_p.def_impl
def _lu_impl(x):
    refuse_half_precision("lu", x)
    n = x.shape[-1]
    factors = np.empty_like(x)
    pivots = np.empty(x.shape[:-1], np.int32)
    flat_x, flat_f = x.reshape(-1, n, n), factors.reshape(-1, n, n)
    flat_p = pivots.reshape(-1, n)
    for i, matrix in enumerate(flat_x):
        flat_f[i], flat_p[i] = _lu_of_matrix(matrix)
    permutation = np.broadcast_to(np.arange(n, dtype=np.int32), pivots.shape).copy()
    flat_perm = permutation.reshape(-1, n)
    for row in range(n):  # the swaps, in order, applied to the identity permutation
        target = flat_p[:, row]
        here, there = flat_perm[:, row].copy(), flat_perm[np.arange(len(target)), target]
        flat_perm[:, row], flat_perm[np.arange(len(target)), target] = there, here
    return [factors, pivots, permutation]


@lu_p.def_abstract_eval
def _lu_abstract_eval(x):
    check_matrices("lu", x)
    if x.shape[-1] != x.shape[-2]:
        raise NotImplementedError(
            f"lu of non-square matrices is not built yet, got {x.str_short()}"
        )
    indices = ShapedArray(x.shape[:-1], np.dtype(np.int32))
    return [x.update(weak_type=False), indices, indices]


def _lu_jvp(primals, tangents):
    """With P x = L U: L⁻¹ (P dx) U⁻¹ = L⁻¹ dL + dU U⁻¹, the first strictly lower and the
    second upper triangular, so dL = L tril(X, -1) and dU = triu(X) U."""
    (x,), (dx,) = primals, tangents
    factors, pivots, permutation = lu_p.bind(x)
    zeros = [Zero.from_primal_value(pivots), Zero.from_primal_value(permutation)]
    if type(dx) is Zero:
        return [factors, pivots, permutation], [Zero.from_primal_value(factors), *zeros]
    aval = get_aval(factors)
    strictly_lower = triangle_mask(aval.shape, aval.dtype, True, 0.0)
    upper_mask = triangle_mask(aval.shape, aval.dtype, False, 1.0)
    identity = np.broadcast_to(np.eye(aval.shape[-1], dtype=aval.dtype), aval.shape)
    lower_unit = binary.add(binary.mul(factors, strictly_lower), identity)
    upper = binary.mul(factors, upper_mask)
    permuted = permute_rows(dx, permutation)
    left = triangular_solve(lower_unit, permuted, left_side=True, lower=True, unit_diagonal=True)
    inner = triangular_solve(upper, left, left_side=False, lower=False)
    d_lower = matmul(lower_unit, binary.mul(inner, strictly_lower))
    d_upper = matmul(binary.mul(inner, upper_mask), upper)
    return [factors, pivots, permutation], [binary.add(d_lower, d_upper), *zeros]


def permute_rows(x, rows):
    """x[..., rows, :]: the rows of each matrix in the order `rows` (batched like x) gives."""
    rank = len(get_aval(x).shape)
    batch = tuple(range(rank - 2))
    dnums = gather.GatherDimensionNumbers(
        offset_dims=(rank - 1,),
        collapsed_slice_dims=(rank - 2,),
        start_index_map=(rank - 2,),
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
    )
    indices = shapes.reshape(rows, (*get_aval(rows).shape, 1))
    slice_sizes = (*(1 for _ in batch), 1, get_aval(x).shape[-1])
    return gather.gather(
        x, indices, dnums, slice_sizes, mode=gather.GatherScatterMode.PROMISE_IN_BOUNDS
    )


ad.jvp_rules[lu_p] = _lu_jvp
batch_rules[lu_p] = lambda values, dims: (
    lu_p.bind(batch_at_front(values[0], dims[0], 0)),
    [0, 0, 0],
)
lowering_rules[lu_p] = host_lowering(_lu_impl)
