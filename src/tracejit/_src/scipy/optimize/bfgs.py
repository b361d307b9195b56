"""BFGS (Nocedal and Wright, Algorithm 6.1) and `minimize`, as in JAX.

The state of the loop carries the inverse Hessian estimate H_k; each step goes along
-H_k g_k by the line search, then updates H with the secant pair (s_k, y_k):
H' = (I - rho s y^T) H (I - rho y s^T) + rho s s^T with rho = 1 / (y^T s), skipped when rho is
not finite. `status` is 0 converged (gradient norm below gtol), 1 out of iterations,
2 + the line search's status when it failed.
"""

from typing import NamedTuple

import numpy as np

from tracejit._src.api import value_and_grad
from tracejit._src.array import Array
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.numpy.creation import eye
from tracejit._src.numpy.einsum import einsum
from tracejit._src.numpy.linalg_spectral import norm as vector_norm
from tracejit._src.numpy.products import dot
from tracejit._src.numpy.promotion import to_operand
from tracejit._src.numpy.ufuncs import isfinite, logical_not, reciprocal, where
from tracejit._src.scipy.optimize.line_search import line_search


class OptimizeResults(NamedTuple):
    """The result of `minimize`: the minimizer `x` and `fun` and its gradient `jac` there,
    whether it `success`fully converged and why not (`status`), the inverse Hessian estimate
    `hess_inv`, and the counts of evaluations (`nfev`, `njev`) and iterations (`nit`)."""

    x: Array
    success: Array
    status: Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: Array
    njev: Array
    nit: Array


class _BFGSResults(NamedTuple):
    converged: Array
    failed: Array
    k: Array
    nfev: Array
    ngev: Array
    nhev: Array
    x_k: Array
    f_k: Array
    g_k: Array
    H_k: Array
    old_old_fval: Array
    status: Array
    line_search_status: Array


def _dot(a, b):
    return dot(a, b, precision="highest")


def _bfgs_step(fun, state, norm, gtol, line_search_maxiter):
    p_k = -_dot(state.H_k, state.g_k)
    found = line_search(
        fun,
        state.x_k,
        p_k,
        old_fval=state.f_k,
        old_old_fval=state.old_old_fval,
        gfk=state.g_k,
        maxiter=line_search_maxiter,
    )
    state = state._replace(
        nfev=state.nfev + found.nfev,
        ngev=state.ngev + found.ngev,
        failed=found.failed,
        line_search_status=found.status,
    )
    s_k = found.a_k * p_k
    y_k = found.g_k - state.g_k
    rho_k = reciprocal(_dot(y_k, s_k))
    w = eye(s_k.shape[0], dtype=rho_k.dtype) - rho_k * s_k[:, None] * y_k[None, :]
    updated = einsum("ij,jk,lk", w, state.H_k, w, precision="highest")
    updated = updated + rho_k * s_k[:, None] * s_k[None, :]
    return state._replace(
        converged=vector_norm(found.g_k, ord=norm) < gtol,
        k=state.k + 1,
        x_k=state.x_k + s_k,
        f_k=found.f_k,
        g_k=found.g_k,
        H_k=where(isfinite(rho_k), updated, state.H_k),
        old_old_fval=state.f_k,
    )


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """BFGS from `x0` (1-D) for at most `maxiter` steps (default 200 per dimension), until
    the `norm` of the gradient is below `gtol`."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=vector_norm(g_0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        nhev=0,
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=eye(x0.shape[0], dtype=x0.dtype),
        old_old_fval=f_0 + vector_norm(g_0) / 2,
        status=0,
        line_search_status=0,
    )
    state = while_loop(
        lambda state: (
            logical_not(state.converged) & logical_not(state.failed) & (state.k < maxiter)
        ),
        lambda state: _bfgs_step(fun, state, norm, gtol, line_search_maxiter),
        state,
    )
    status = where(
        state.converged,
        0,
        where(state.k == maxiter, 1, where(state.failed, 2 + state.line_search_status, -1)),
    )
    return state._replace(status=status)


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """The minimum of `fun(x, *args)` over the 1-D `x`, from `x0`; only `method='BFGS'` (any
    case), with `options` maxiter, norm, gtol, line_search_maxiter. `tol` is ignored, as in
    JAX."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    results = minimize_bfgs(lambda x: fun(x, *args), to_operand("minimize", x0), **options)
    return OptimizeResults(
        x=results.x_k,
        success=results.converged & logical_not(results.failed),
        status=results.status,
        fun=results.f_k,
        jac=results.g_k,
        hess_inv=results.H_k,
        nfev=results.nfev,
        njev=results.ngev,
        nit=results.k,
    )
