"""`jax.scipy.sparse.linalg`: the Krylov solvers `cg`, `bicgstab` and `gmres`.

Each solver runs on one flat vector: the right-hand side `b` (any pytree) is raveled, and the
operator `A` and preconditioner `M` are wrapped to map flat vectors to flat vectors, so the
iterations are plain vector algebra in `while_loop`s. The solve is wrapped in
`custom_linear_solve`, so derivatives come from the equation A x = b (differentiating the
solution needs only more solves, with A's transpose in reverse mode), not from differentiating
the iterations. The same solver serves as the transpose solve: it receives the transposed
operator. `cg` declares the operator symmetric when `b` is real (a real positive-definite
operator is).

Stopping: cg and bicgstab stop when ||r|| <= max(tol ||b||, atol); gmres, preconditioned on
the left, when ||M r|| <= ||M b|| min(1, max(tol ||b||, atol) / ||b||). `info` is always None.
"""

import functools

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array
from tracejit._src.flatten_util import ravel_pytree
from tracejit._src.lax.control_flow.loops import fori_loop, while_loop
from tracejit._src.lax.control_flow.solves import custom_linear_solve
from tracejit._src.numpy import creation, ufuncs
from tracejit._src.numpy.linalg_spectral import lstsq
from tracejit._src.numpy.products import matmul, vdot
from tracejit._src.scipy.linalg import solve_triangular
from tracejit._src.tree_util import tree_leaves, tree_map, tree_structure


def _matvec_of(operator):
    """The function x -> A x for a linear operator given as a function, a square matrix or an
    object with `@`."""
    if callable(operator):
        return operator
    if isinstance(operator, np.ndarray | Array):
        if operator.ndim != 2 or operator.shape[0] != operator.shape[1]:
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {operator.shape}"
            )
        return functools.partial(matmul, operator)
    if hasattr(operator, "__matmul__"):
        return operator.__matmul__
    raise TypeError(f"linear operator must be either a function or ndarray: {operator}")


def _identity(x):
    return x


def _real_vdot(x, y):
    return ufuncs.real(vdot(x, y))


def _norm(x):
    return ufuncs.sqrt(_real_vdot(x, x))


def _flat_solver(solve_flat, x0, tol, atol, maxiter, M):
    """The `solve(matvec, b)` for `custom_linear_solve`: `solve_flat` on b, x0 and the
    operators, all raveled."""

    def solve(matvec, b):
        b_flat, unravel = ravel_pytree(b)
        x0_flat = ravel_pytree(x0)[0].astype(b_flat.dtype)

        def flat(operator):
            return lambda v: ravel_pytree(operator(unravel(v)))[0].astype(b_flat.dtype)

        x = solve_flat(flat(matvec), b_flat, x0_flat, tol, atol, maxiter, flat(M))
        return unravel(x)

    return solve


def _isolve(solve_flat, A, b, x0, tol, atol, maxiter, M, symmetric_if_real):
    matvec = _matvec_of(A)
    M = _identity if M is None else _matvec_of(M)
    b = tree_map(creation.asarray, b)
    if x0 is None:
        x0 = tree_map(creation.zeros_like, b)
    x0 = tree_map(creation.asarray, x0)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            f"x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    x0_shapes = [leaf.shape for leaf in tree_leaves(x0)]
    b_shapes = [leaf.shape for leaf in tree_leaves(b)]
    if x0_shapes != b_shapes:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {x0_shapes} vs {b_shapes}")
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))
    symmetric = symmetric_if_real and not any(
        dtypes.issubdtype(leaf.dtype, np.complexfloating) for leaf in tree_leaves(b)
    )
    solve = _flat_solver(solve_flat, x0, tol, atol, maxiter, M)
    x = custom_linear_solve(matvec, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def _squared_tolerance(b, tol, atol):
    return ufuncs.maximum(tol**2 * _real_vdot(b, b), atol**2)


def _cg_flat(A, b, x0, tol, atol, maxiter, M):
    tolerance2 = _squared_tolerance(b, tol, atol)
    r0 = b - A(x0)
    z0 = M(r0)

    def cond(state):
        _, r, _, _, k = state
        return (_real_vdot(r, r) > tolerance2) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / vdot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        z = M(r)
        gamma_next = vdot(r, z)
        p = z + (gamma_next / gamma) * p
        return x, r, gamma_next, p, k + 1

    state = (x0, r0, vdot(r0, z0), z0, np.int32(0))
    return while_loop(cond, body, state)[0]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """The conjugate gradient method for A x = b, A Hermitian positive definite (as SciPy's
    `cg`, with JAX's tolerance ||r|| <= max(tol ||b||, atol)). `A` and the preconditioner `M`
    (approximating A's inverse) are functions, square matrices or `@`-objects; `b` and `x0`
    are pytrees of arrays. Returns `(x, None)`; differentiable through the equation A x = b."""
    return _isolve(_cg_flat, A, b, x0, tol, atol, maxiter, M, symmetric_if_real=True)


def _bicgstab_flat(A, b, x0, tol, atol, maxiter, M):
    """Van der Vorst's BiCGSTAB, right-preconditioned; a breakdown (rho or omega zero) stops
    the iterations, with the iterate reached so far."""
    tolerance2 = _squared_tolerance(b, tol, atol)
    r0 = b - A(x0)
    one = creation.ones((), b.dtype)
    zeros = creation.zeros_like(b)

    def cond(state):
        _, r, _, _, _, _, _, k = state
        return (_real_vdot(r, r) > tolerance2) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, rho, alpha, omega, (p, v), k = state
        rho_next = vdot(rhat, r)
        p = r + (rho_next / rho) * (alpha / omega) * (p - omega * v)
        phat = M(p)
        v = A(phat)
        alpha = rho_next / vdot(rhat, v)
        s = r - alpha * v
        s_small = _real_vdot(s, s) <= tolerance2
        shat = M(s)
        t = A(shat)
        omega = vdot(t, s) / vdot(t, t)
        x = ufuncs.where(s_small, x + alpha * phat, x + alpha * phat + omega * shat)
        r = ufuncs.where(s_small, s, s - omega * t)
        broke_down = ~s_small & ((omega == 0) | (rho_next == 0))
        k = ufuncs.where(broke_down, np.int32(-1), k + 1)
        return x, r, rhat, rho_next, alpha, omega, (p, v), k

    state = (x0, r0, r0, one, one, one, (zeros, zeros), np.int32(0))
    return while_loop(cond, body, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """The biconjugate gradient stabilized method for A x = b, A any invertible operator (as
    SciPy's `bicgstab`, with JAX's tolerance ||r|| <= max(tol ||b||, atol)). Arguments as for
    `cg`. Returns `(x, None)`; differentiable through the equation A x = b."""
    return _isolve(_bicgstab_flat, A, b, x0, tol, atol, maxiter, M, symmetric_if_real=False)


def _safe_normalize(x, norm):
    """x / norm, or zeros where the norm is too small to divide by (a Krylov space that
    stopped growing)."""
    small = norm <= dtypes.finfo(x.dtype).tiny
    return ufuncs.where(small, creation.zeros_like(x), x / ufuncs.where(small, 1, norm))


def _arnoldi_step(A, M, basis, k):
    """The next Krylov vector M A basis[k], orthogonalized against the basis by classical
    Gram-Schmidt applied twice (rows of the basis not yet built are zeros, so they add
    nothing): (basis with row k + 1 set, the Hessenberg column of coefficients)."""
    w = M(A(basis[k]))
    h = creation.zeros(basis.shape[0], basis.dtype)
    for _ in range(2):
        coefficients = matmul(basis.conj(), w)
        w = w - matmul(coefficients, basis)
        h = h + coefficients
    norm = _norm(w)
    h = h.at[k + 1].set(norm.astype(h.dtype))
    return basis.at[k + 1].set(_safe_normalize(w, norm)), h


def _givens(a, b):
    """(c, s) of the rotation [[c, s], [-conj(s), c]] taking (a, b) to (r, 0), c real."""
    r = ufuncs.sqrt(ufuncs.abs(a) ** 2 + ufuncs.abs(b) ** 2)
    a_zero = ufuncs.abs(a) == 0
    phase = ufuncs.where(a_zero, 1, a / ufuncs.where(a_zero, 1, ufuncs.abs(a)))
    r_safe = ufuncs.where(r == 0, 1, r)
    c = ufuncs.where(a_zero, 0, ufuncs.abs(a) / r_safe)
    s = ufuncs.where(a_zero, 1, phase * b.conj() / r_safe)
    return c.astype(a.dtype), s.astype(a.dtype)


def _rotate(c, s, x, y):
    return c * x + s * y, -s.conj() * x + c * y


def _gmres_incremental(A, M, x, residual, residual_norm, restart, ptol):
    """One restart cycle, the least-squares problem kept triangular by Givens rotations, so
    |g[k + 1]| is the residual norm after k + 1 steps and the cycle stops once it is small."""
    dtype = residual.dtype
    basis = creation.zeros((restart + 1, residual.shape[0]), dtype)
    basis = basis.at[0].set(residual / residual_norm.astype(dtype))
    triangle = creation.eye(restart, dtype=dtype)
    rotations = creation.zeros((restart, 2), dtype).at[:, 0].set(1)
    g = creation.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))

    def cond(state):
        *_, g, k = state
        return (k < restart) & (ufuncs.abs(g[k]) > ptol)

    def body(state):
        basis, triangle, rotations, g, k = state
        basis, h = _arnoldi_step(A, M, basis, k)

        def rotate_previous(i, h):
            hi, hi1 = _rotate(rotations[i, 0], rotations[i, 1], h[i], h[i + 1])
            return h.at[i].set(hi).at[i + 1].set(hi1)

        h = fori_loop(0, k, rotate_previous, h)
        c, s = _givens(h[k], h[k + 1])
        hk, _ = _rotate(c, s, h[k], h[k + 1])
        gk, gk1 = _rotate(c, s, g[k], g[k + 1])
        triangle = triangle.at[:, k].set(h.at[k].set(hk).at[k + 1].set(0)[:restart])
        rotations = rotations.at[k, 0].set(c).at[k, 1].set(s)
        return basis, triangle, rotations, g.at[k].set(gk).at[k + 1].set(gk1), k + 1

    basis, triangle, _, g, k = while_loop(cond, body, (basis, triangle, rotations, g, np.int32(0)))
    used = creation.arange(restart) < k
    g_used = ufuncs.where(used, g[:restart], 0)
    y = solve_triangular(triangle, g_used)
    return x + matmul(y, basis[:restart])


def _gmres_batched(A, M, x, residual, residual_norm, restart, ptol):
    """One restart cycle: the whole Krylov basis first, then the least-squares problem
    min ||residual_norm e1 - H y|| solved at once."""
    dtype = residual.dtype
    basis = creation.zeros((restart + 1, residual.shape[0]), dtype)
    basis = basis.at[0].set(residual / residual_norm.astype(dtype))
    hessenberg = creation.zeros((restart + 1, restart), dtype)

    def step(k, state):
        basis, hessenberg = state
        basis, h = _arnoldi_step(A, M, basis, k)
        return basis, hessenberg.at[:, k].set(h)

    basis, hessenberg = fori_loop(0, restart, step, (basis, hessenberg))
    e1 = creation.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
    y = lstsq(hessenberg, e1)[0]
    return x + matmul(y, basis[:restart])


_GMRES_CYCLES = {"incremental": _gmres_incremental, "batched": _gmres_batched}


def _gmres_flat(A, b, x0, tol, atol, maxiter, M, restart, cycle):
    b_norm = _norm(b)
    tolerance = ufuncs.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * ufuncs.minimum(1.0, tolerance / b_norm)

    def preconditioned_residual(x):
        residual = M(b - A(x))
        return residual, _norm(residual)

    def cond(state):
        _, _, residual_norm, k = state
        return (residual_norm > ptol) & (k < maxiter)

    def body(state):
        x, residual, residual_norm, k = state
        x = cycle(A, M, x, residual, residual_norm, restart, ptol)
        return x, *preconditioned_residual(x), k + 1

    return while_loop(cond, body, (x0, *preconditioned_residual(x0), np.int32(0)))[0]


def gmres(
    A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"
):
    """The restarted generalized minimal residual method for A x = b, A any invertible
    operator: each cycle minimizes the preconditioned residual ||M (b - A x)|| over a Krylov
    space of dimension `restart`, at most `maxiter` cycles. `solve_method` 'incremental'
    (Givens rotations: a cycle stops as soon as it converges) or 'batched' (the full space,
    then one least-squares solve). Other arguments as for `cg`. Returns `(x, None)`;
    differentiable through the equation A x = b."""
    if solve_method not in _GMRES_CYCLES:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )
    size = sum(np.size(leaf) for leaf in tree_leaves(b))
    solve_flat = functools.partial(
        _gmres_flat, restart=min(restart, size), cycle=_GMRES_CYCLES[solve_method]
    )
    return _isolve(solve_flat, A, b, x0, tol, atol, maxiter, M, symmetric_if_real=False)
