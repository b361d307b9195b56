"""The `jnp.linalg` and indexing calls whose jaxprs `test_linalg_indexing_jaxprs.py` compares
with JAX's (recorded by `make_jax_reference_linalg_indexing_jaxprs.py`): `norm`, `svd`, `det`,
... as the `jit`s JAX stages them, and each common indexing form with JAX's primitive and
params (`slice`, one `dynamic_slice` for a traced integer, `gather` with indices normalized as
JAX normalizes them, `scatter` for `.at[]` updates). Written against a module `jax` passed in,
so that the recording script runs them on JAX and the test on tracejit; each case is a
function and its arguments."""

import numpy as np

M = (np.eye(3) * 3 + np.linspace(-0.9, 0.9, 9).reshape(3, 3)).astype(np.float32)
X = np.linspace(-0.9, 0.9, 20).astype(np.float32).reshape(4, 5)
IDX = np.array([2, 0, 1], np.int32)


def _linalg_cases(jax) -> dict:
    la = jax.numpy.linalg
    return {
        "norm": (la.norm, (M,)),
        "norm_fro": (lambda a: la.norm(a, "fro"), (M,)),
        "norm_1": (lambda a: la.norm(a, 1), (M,)),
        "norm_-1": (lambda a: la.norm(a, -1), (M,)),
        "norm_inf": (lambda a: la.norm(a, np.inf), (M,)),
        "norm_1_keepdims": (lambda a: la.norm(a, 1, keepdims=True), (M,)),
        "norm_2": (lambda a: la.norm(a, 2), (M,)),
        "norm_-2_keepdims": (lambda a: la.norm(a, -2, keepdims=True), (M,)),
        "norm_2_axes_swapped": (lambda a: la.norm(a, 2, axis=(1, 0)), (M,)),
        "norm_nuc": (lambda a: la.norm(a, "nuc"), (M,)),
        "norm_vector": (la.norm, (M[0],)),
        "norm_vector_0": (lambda v: la.norm(v, 0), (M[0],)),
        "norm_vector_1": (lambda v: la.norm(v, 1), (M[0],)),
        "norm_vector_inf": (lambda v: la.norm(v, np.inf), (M[0],)),
        "norm_vector_-inf": (lambda v: la.norm(v, -np.inf), (M[0],)),
        "norm_vector_3_keepdims": (lambda v: la.norm(v, 3, keepdims=True), (M[0],)),
        "norm_axis": (lambda a: la.norm(a, axis=1), (M,)),
        "norm_int": (la.norm, (M.astype(np.int32),)),
        "norm_complex": (la.norm, (M.astype(np.complex64),)),
        "vector_norm": (la.vector_norm, (M,)),
        "vector_norm_inf": (lambda a: la.vector_norm(a, ord=np.inf), (M,)),
        "matrix_norm": (la.matrix_norm, (M,)),
        "svd": (la.svd, (M,)),
        "svd_values": (lambda a: la.svd(a, compute_uv=False), (M,)),
        "eigh": (la.eigh, (M,)),
        "qr": (la.qr, (M,)),
        "det": (la.det, (M,)),
        "matrix_power_3": (lambda a: la.matrix_power(a, 3), (M,)),
        "matrix_power_4": (lambda a: la.matrix_power(a, 4), (M,)),
        "inv": (la.inv, (M,)),
        "solve": (lambda a: la.solve(a, a[0]), (M,)),
        "slogdet": (la.slogdet, (M,)),
        "cholesky": (lambda a: la.cholesky(a @ a.T), (M,)),
        "pinv": (la.pinv, (M,)),
        "lstsq": (lambda a: la.lstsq(a, a[0]), (M,)),
    }


def _indexing_cases(jax) -> dict:
    jnp = jax.numpy

    def traced_row(a):
        return jnp.argmax(a[:, 0])

    return {
        "int": (lambda a: a[1], (X,)),
        "negative_int": (lambda a: a[-1], (X,)),
        "slice": (lambda a: a[1:3], (X,)),
        "step": (lambda a: a[::2], (X,)),
        "negative_step": (lambda a: a[::-2], (X,)),
        "steps": (lambda a: a[1:4:2, ::3], (X,)),
        "int_slice": (lambda a: a[1, 1:3], (X,)),
        "none_ellipsis": (lambda a: a[None, ..., 1], (X,)),
        "traced_int": (lambda a: a[traced_row(a)], (X,)),
        "traced_int_slice": (lambda a: a[traced_row(a), 1:3], (X,)),
        "slice_traced_int": (lambda a: a[1:3, traced_row(a)], (X,)),
        "traced_int_none": (lambda a: a[traced_row(a), None], (X,)),
        "traced_int_int_out_of_range": (lambda a: a[traced_row(a), 7], (X,)),
        "index_array": (lambda a: a[IDX], (X,)),
        "index_array_columns": (lambda a: a[:, IDX], (X,)),
        "index_array_slice": (lambda a: a[IDX, 1:3], (X,)),
        "two_index_arrays": (lambda a: a[IDX, IDX], (X,)),
        "index_array_int": (lambda a: a[IDX, -1], (X,)),
        "jnp_index_array": (lambda a: a[jnp.array([0, 2])], (X,)),
        "get_static": (lambda a: a.at[0, 1].get(), (X,)),
        "set_static": (lambda a: a.at[0, 1].set(5.0), (X,)),
        "set_row": (lambda a: a.at[1].set(0.0), (X,)),
        "set_slice": (lambda a: a.at[1:3].set(0.0), (X,)),
        "add_index_array": (lambda a: a.at[IDX].add(1.0), (X,)),
        "set_index_array_step": (lambda a: a.at[IDX, ::2].set(1.0), (X,)),
        "multiply_traced_int": (lambda a: a.at[traced_row(a)].multiply(2.0), (X,)),
        "updates_chained": (
            lambda a: a.at[1].add(1.0).at[2].subtract(2.0).at[0, ::2].min(1.0).at[3].max(0.0),
            (X,),
        ),
        "set_traced_values": (lambda a: a.at[0].set(a[1]), (X,)),
        "apply": (lambda a: a.at[1].apply(jnp.sin), (X,)),
        "take": (lambda a: jnp.take(a, IDX, axis=0), (X,)),
        "take_flat": (lambda a: jnp.take(a, IDX), (X,)),
        "take_int_axis1": (lambda a: jnp.take(a.astype(np.int32), IDX, axis=1), (X,)),
        "take_clip": (lambda a: jnp.take(a, IDX, axis=0, mode="clip"), (X,)),
        "take_along_axis": (
            lambda a: jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1),
            (X,),
        ),
    }


def jaxpr_cases(jax) -> dict:
    linalg, indexing = _linalg_cases(jax), _indexing_cases(jax)
    assert not linalg.keys() & indexing.keys()
    return linalg | indexing
