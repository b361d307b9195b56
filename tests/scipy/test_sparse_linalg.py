"""jax.scipy.sparse.linalg: cg, bicgstab and gmres solve SPD and nonsymmetric systems as SciPy's
solvers do (to the tolerance asked), with the operator as a matrix, a function or a pytree
map, with a preconditioner and a starting guess; they return `(x, None)`, differentiate through
A x = b (checked against float64 finite differences and the closed form), and run under jit and
vmap (against a loop). Bad operators and starting guesses raise JAX's errors."""

import numpy as np
import pytest
import scipy.sparse.linalg as ssl
from helpers import assert_close, assert_tree_equal, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.scipy.sparse.linalg import bicgstab, cg, gmres
from tracejit.test_util import check_grads

N = 6
RNG = np.random.default_rng(0)
_Q = RNG.normal(size=(N, N))
SPD = _Q @ _Q.T + N * np.eye(N)
NONSYMMETRIC = RNG.normal(size=(N, N)) + N * np.eye(N)
B = RNG.normal(size=N)

GMRES_METHODS = [
    pytest.param(lambda *a, **k: gmres(*a, solve_method="batched", **k), id="gmres-batched"),
    pytest.param(lambda *a, **k: gmres(*a, solve_method="incremental", **k), id="gmres-inc"),
]
GENERAL_SOLVERS = [pytest.param(bicgstab, id="bicgstab"), *GMRES_METHODS]
ALL_SOLVERS = [pytest.param(cg, id="cg"), *GENERAL_SOLVERS]


def _matrix_for(solver):
    return SPD if solver is cg else NONSYMMETRIC


def test_cg_matches_scipy(enable_x64):
    x, info = cg(SPD, B, tol=1e-10)
    assert info is None
    want, scipy_info = ssl.cg(SPD, B, rtol=1e-12, atol=0.0)
    assert scipy_info == 0
    assert_close(x, want, 1e-8, dtype=np.float64)


def test_bicgstab_matches_scipy(enable_x64):
    x, info = bicgstab(NONSYMMETRIC, B, tol=1e-10)
    assert info is None
    assert_close(x, ssl.bicgstab(NONSYMMETRIC, B, rtol=1e-12, atol=0.0)[0], 1e-8)


@pytest.mark.parametrize("solve_method", ["batched", "incremental"])
@pytest.mark.parametrize("restart", [2, 20])
def test_gmres_matches_scipy(enable_x64, solve_method, restart):
    x, info = gmres(NONSYMMETRIC, B, tol=1e-10, restart=restart, solve_method=solve_method)
    assert info is None
    want = ssl.gmres(NONSYMMETRIC, B, rtol=1e-12, atol=0.0, restart=restart)[0]
    assert_close(x, want, 1e-8, dtype=np.float64)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_float32_residual_within_tolerance(solver):
    A = _matrix_for(solver).astype(np.float32)
    b = B.astype(np.float32)
    x, _ = solver(A, b, tol=1e-5)
    assert x.dtype == np.float32
    assert np.linalg.norm(A @ np.asarray(x) - b) <= 2e-5 * np.linalg.norm(b)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_function_operator_preconditioner_and_x0(enable_x64, solver):
    A = _matrix_for(solver)
    jacobi = 1.0 / np.diag(A)
    x, _ = solver(lambda v: A @ v, B, x0=np.ones(N), M=lambda v: jacobi * v, tol=1e-10)
    assert_close(x, np.linalg.solve(A, B), 1e-8)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_preconditioner_as_matrix(enable_x64, solver):
    A = _matrix_for(solver)
    x, _ = solver(A, B, M=np.diag(1.0 / np.diag(A)), tol=1e-10)
    assert_close(x, np.linalg.solve(A, B), 1e-8)


def _block_operator(x):
    """A symmetric positive definite operator on {"u": (2,), "v": (3,)}."""
    u, v = x["u"], x["v"]
    return {"u": 4.0 * u + v[:2], "v": 5.0 * v + jnp.concatenate([u, jnp.zeros(1)])}


def _block_matrix():
    columns = []
    for i in range(5):
        e = np.eye(5)[i]
        out = _block_operator({"u": e[:2], "v": e[2:]})
        columns.append(np.concatenate([out["u"], out["v"]]))
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_pytree_operator(enable_x64, solver):
    b = {"u": np.array([1.0, -2.0]), "v": np.array([0.5, 3.0, -1.0])}
    x, _ = solver(_block_operator, b, tol=1e-10)
    flat = np.linalg.solve(_block_matrix(), np.concatenate([b["u"], b["v"]]))
    assert_tree_equal(x, {"u": flat[:2], "v": flat[2:]}, 1e-8)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_grads_against_finite_differences(solver):
    A0 = _matrix_for(solver)

    def solve(A, b):
        # symmetrized for cg, whose derivative assumes a symmetric operator
        A = (A + A.T) / 2 if solver is cg else A
        return solver(A, b, tol=1e-12)[0]

    check_grads(solve, (A0, B), order=1, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_reverse_mode_closed_form(enable_x64, solver):
    A = _matrix_for(solver)
    grad_A, grad_b = tracejit.grad(lambda A, b: solver(A, b, tol=1e-12)[0].sum(), (0, 1))(A, B)
    want_b = np.linalg.solve(A.T, np.ones(N))
    assert_close(grad_b, want_b, 1e-8)
    assert_close(grad_A, -np.outer(want_b, np.linalg.solve(A, B)), 1e-8)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_jit_matches_eager(solver):
    A = _matrix_for(solver).astype(np.float32)
    b = B.astype(np.float32)
    got = tracejit.jit(lambda A, b: solver(A, b)[0])(A, b)
    assert_close(got, solver(A, b)[0], 1e-5, dtype=np.float32)


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_vmap_matches_loop(solver):
    A = _matrix_for(solver).astype(np.float32)
    bs = RNG.normal(size=(3, N)).astype(np.float32)
    check_vmap(lambda b: solver(A, b)[0], (bs,), (0,), tol=1e-4, jit=True)


@pytest.mark.parametrize("solver", GENERAL_SOLVERS)
def test_complex_system(enable_x64, solver):
    A = NONSYMMETRIC + 1j * RNG.normal(size=(N, N))
    b = B + 1j * B[::-1]
    assert_close(solver(A, b, tol=1e-10)[0], np.linalg.solve(A, b), 1e-8, dtype=np.complex128)


def test_cg_complex_hermitian(enable_x64):
    H = _Q + 1j * RNG.normal(size=(N, N))
    A = H @ H.conj().T + N * np.eye(N)
    b = B + 1j
    assert_close(cg(A, b, tol=1e-10)[0], np.linalg.solve(A, b), 1e-8, dtype=np.complex128)


def test_maxiter_limits_the_iterations(enable_x64):
    one_step = cg(SPD, B, maxiter=1)[0]
    r0 = B
    alpha = (r0 @ r0) / (r0 @ SPD @ r0)
    assert_close(one_step, alpha * r0, 1e-12)


def test_zero_right_hand_side_gives_zero(enable_x64):
    for solver in (cg, bicgstab, gmres):
        assert_close(solver(SPD, np.zeros(N))[0], np.zeros(N), 0.0)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: cg(np.ones(3), np.ones(3)), ValueError, "square matrix, but has shape: (3,)"),
        (lambda: cg(3.0, np.ones(3)), TypeError, "either a function or ndarray"),
        (lambda: cg(np.eye(3), np.ones(3), x0=np.ones(4)), ValueError, "matching shapes"),
        (lambda: cg(np.eye(3), np.ones(3), x0=(np.ones(3),)), ValueError, "tree structure"),
        (lambda: gmres(np.eye(3), np.ones(3), solve_method="x"), ValueError, "invalid solve"),
    ],
)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
