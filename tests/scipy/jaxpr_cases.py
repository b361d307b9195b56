"""The `jax.scipy` calls whose jaxprs `test_jaxprs.py` compares with JAX's (recorded by
`make_jax_reference_jaxprs.py`): `special.logsumexp` (inline, its shift an `is_finite` and
`select_n` of the reduced maximum) and the `linalg` solvers JAX stages as `jit`s of their own.
Written against a module `jax` passed in; each case is a function and its arguments."""

import numpy as np

X = np.linspace(-0.9, 0.9, 6).astype(np.float32).reshape(2, 3)
M = (np.eye(3) * 3 + np.linspace(-0.9, 0.9, 9).reshape(3, 3)).astype(np.float32)


def jaxpr_cases(jax) -> dict:
    special, linalg = jax.scipy.special, jax.scipy.linalg
    return {
        "logsumexp": (special.logsumexp, (X,)),
        "logsumexp_axis": (lambda a: special.logsumexp(a, axis=1), (X,)),
        "logsumexp_b_keepdims": (
            lambda a: special.logsumexp(a, axis=1, b=a, keepdims=True),
            (X,),
        ),
        "logsumexp_where_sign": (
            lambda a: special.logsumexp(a, axis=1, where=a > 0, return_sign=True),
            (X,),
        ),
        "logsumexp_b_where": (lambda a: special.logsumexp(a, axis=1, b=a, where=a > 0), (X,)),
        "solve_triangular": (lambda a: linalg.solve_triangular(a, a[0]), (M,)),
        "solve_triangular_lower_trans": (
            lambda a: linalg.solve_triangular(a, a, trans=1, lower=True),
            (M,),
        ),
        "cho_solve": (lambda a: linalg.cho_solve((a, True), a[0]), (M,)),
        "cho_solve_upper": (lambda a: linalg.cho_solve((a, False), a), (M,)),
        "lu_factor": (linalg.lu_factor, (M,)),
        "lu_solve": (lambda a: linalg.lu_solve(linalg.lu_factor(a), a[0]), (M,)),
        "lu_solve_matrix": (lambda a: linalg.lu_solve(linalg.lu_factor(a), a), (M,)),
        "lu_solve_trans": (lambda a: linalg.lu_solve(linalg.lu_factor(a), a[0], trans=1), (M,)),
    }
