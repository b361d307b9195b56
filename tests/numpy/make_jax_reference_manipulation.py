"""Records what JAX 0.10.2 gives for the array-editing, index-trick, padding and einsum cases
below, as reference data for `tests/numpy/test_jax_reference_manipulation.py`.

The tests never import JAX; they compare tracejit's results (values, shapes, dtypes, weak
types, or the exception's class) with the ones this script saved from real JAX into
`tests/numpy/data/jax_reference_manipulation.json`. To regenerate them, in a virtualenv with
`jax==0.10.2` (CPU) and NumPy, from the repository's root:

    python tools/jax_reference.py tests/numpy/make_jax_reference_manipulation.py

Each case is a function of a `jnp` module (jax.numpy or tracejit.numpy), so that this file is
also the tests' table of cases: they load it without running `main`.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "jax_reference_manipulation.json"

X23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
X234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
I5 = np.array([3, 1, 4, 1, 5], dtype=np.int32)
F6 = np.array([3.0, 1.0, np.nan, 5.0, 4.0, 1.0], dtype=np.float32)


def _odd(row, pad_width, axis, kwargs):
    """A callable pad mode: the padding counts down from kwargs['start']."""
    before, after = pad_width
    row = row.at[:before].set(kwargs.get("start", 0))
    return row.at[row.shape[0] - after :].set(-1)


_PAD_MODES = [
    "constant",
    "edge",
    "wrap",
    "reflect",
    "symmetric",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
    "empty",
]


def _padded(x, widths, mode):
    return lambda jnp: jnp.pad(jnp.asarray(x), widths, mode)


# name -> fun(jnp): the expression whose result (or exception) JAX's must match.
CASES = {
    # --- joining, splitting, reshaping
    "append_scalars": lambda jnp: jnp.append(1.0, 2),
    "append_axis": lambda jnp: jnp.append(jnp.ones((2, 2)), jnp.zeros((1, 2), "int32"), axis=0),
    "append_rank_error": lambda jnp: jnp.append(jnp.ones((2, 2)), jnp.ones(2), axis=0),
    "block_2d": lambda jnp: jnp.block([[1.0, 2], [3, 4]]),
    "block_mixed": lambda jnp: jnp.block([jnp.ones(2, "int32"), 3]),
    "block_matrices": lambda jnp: jnp.block(
        [[jnp.ones((2, 2)), jnp.zeros((2, 1))], [jnp.full((1, 3), 5.0)]]
    ),
    "block_3_levels": lambda jnp: jnp.block([[[1, 2]], [[3, 4]]]),
    "block_tuple_error": lambda jnp: jnp.block((1, 2)),
    "block_empty_error": lambda jnp: jnp.block([]),
    "block_depth_error": lambda jnp: jnp.block([[1], 2]),
    "resize_grow": lambda jnp: jnp.resize(jnp.arange(3), (2, 4)),
    "resize_cut": lambda jnp: jnp.resize(jnp.asarray(X23), 4),
    "resize_scalar": lambda jnp: jnp.resize(2.0, 3),
    "resize_empty": lambda jnp: jnp.resize(jnp.zeros(0, "int32"), (2, 2)),
    "resize_negative_error": lambda jnp: jnp.resize(jnp.arange(3), -1),
    "rollaxis": lambda jnp: jnp.rollaxis(jnp.asarray(X234), 2),
    "rollaxis_start": lambda jnp: jnp.rollaxis(jnp.asarray(X234), 0, 3),
    "rollaxis_negative": lambda jnp: jnp.rollaxis(jnp.asarray(X234), 2, -2),
    "rollaxis_error": lambda jnp: jnp.rollaxis(jnp.asarray(X234), 2, 5),
    "rot90": lambda jnp: jnp.rot90(jnp.asarray(X23)),
    "rot90_k2": lambda jnp: jnp.rot90(jnp.asarray(X23), 2),
    "rot90_k3": lambda jnp: jnp.rot90(jnp.asarray(X23), 3),
    "rot90_k_negative": lambda jnp: jnp.rot90(jnp.asarray(X23), -1),
    "rot90_axes": lambda jnp: jnp.rot90(jnp.asarray(X234), 1, (2, 0)),
    "rot90_1d_error": lambda jnp: jnp.rot90(jnp.ones(3)),
    "rot90_same_axes_error": lambda jnp: jnp.rot90(jnp.asarray(X23), axes=(0, 0)),
    "unstack": lambda jnp: jnp.unstack(jnp.asarray(X23)),
    "unstack_axis": lambda jnp: jnp.unstack(jnp.asarray(X23), axis=1),
    "unstack_0d_error": lambda jnp: jnp.unstack(jnp.array(1.0)),
    "permute_dims": lambda jnp: jnp.permute_dims(jnp.asarray(X234), (2, 0, 1)),
    "permute_dims_error": lambda jnp: jnp.permute_dims(jnp.asarray(X23), (1,)),
    "hsplit": lambda jnp: jnp.hsplit(jnp.asarray(X234), 3),
    "hsplit_1d": lambda jnp: jnp.hsplit(jnp.arange(6), [2, 5]),
    "hsplit_0d_error": lambda jnp: jnp.hsplit(jnp.array(1.0), 1),
    "vsplit": lambda jnp: jnp.vsplit(jnp.asarray(X234), 2),
    "vsplit_unequal_error": lambda jnp: jnp.vsplit(jnp.asarray(X234), 3),
    "dsplit": lambda jnp: jnp.dsplit(jnp.asarray(X234), [1, 3]),
    "dsplit_2d_error": lambda jnp: jnp.dsplit(jnp.asarray(X23), 2),
    # --- conversions and copies
    "astype_none": lambda jnp: jnp.astype(jnp.arange(3), None),
    "astype_weak": lambda jnp: jnp.astype(2.0, jnp.float32),
    "astype_float16": lambda jnp: jnp.astype(jnp.arange(3), jnp.float16),
    "astype_complex_bool": lambda jnp: jnp.astype(jnp.array([1j, 0j, 2.0]), bool),
    "astype_copy": lambda jnp: jnp.astype(jnp.arange(3), "int8", copy=True),
    "astype_method_none": lambda jnp: jnp.arange(3).astype(None),
    "copy_weak": lambda jnp: jnp.copy(2.0),
    "copy_array": lambda jnp: jnp.copy(jnp.arange(3)),
    "copy_list_error": lambda jnp: jnp.copy([1, 2]),
    # --- from buffers, strings, functions
    "frombuffer": lambda jnp: jnp.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8),
    "frombuffer_float": lambda jnp: jnp.frombuffer(np.arange(3.0).tobytes()),
    "frombuffer_offset": lambda jnp: jnp.frombuffer(b"\x01\x02\x03\x04", "uint8", 2, 1),
    "fromstring": lambda jnp: jnp.fromstring("1 2 3", sep=" "),
    "fromstring_int": lambda jnp: jnp.fromstring("1,2", dtype=int, sep=","),
    "fromfunction": lambda jnp: jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
    "fromfunction_int": lambda jnp: jnp.fromfunction(lambda i: i, (3,), dtype=int),
    "fromfile_error": lambda jnp: jnp.fromfile("x"),
    "fromiter_error": lambda jnp: jnp.fromiter(iter([1, 2]), float),
    # --- delete and insert
    "delete_int": lambda jnp: jnp.delete(jnp.arange(5), 1),
    "delete_negative": lambda jnp: jnp.delete(jnp.arange(5), -1),
    "delete_axis": lambda jnp: jnp.delete(jnp.asarray(X23), 1, axis=1),
    "delete_flattened": lambda jnp: jnp.delete(jnp.asarray(X23), 4),
    "delete_slice": lambda jnp: jnp.delete(jnp.arange(5.0), slice(1, 4, 2)),
    "delete_array": lambda jnp: jnp.delete(jnp.arange(5), np.array([1, 1, 3])),
    "delete_mask": lambda jnp: jnp.delete(jnp.arange(5), np.array([1, 0, 1, 0, 0], bool)),
    "delete_unique": lambda jnp: jnp.delete(
        jnp.arange(6), jnp.array([4, -6]), assume_unique_indices=True
    ),
    "delete_out_of_range_error": lambda jnp: jnp.delete(jnp.arange(5), 7),
    "delete_list_error": lambda jnp: jnp.delete(jnp.arange(5), [1, 2]),
    "delete_float_error": lambda jnp: jnp.delete(jnp.arange(5), np.array([1.5])),
    "delete_mask_shape_error": lambda jnp: jnp.delete(jnp.arange(5), np.array([True])),
    "insert_scalar": lambda jnp: jnp.insert(jnp.arange(5), 1, 9),
    "insert_array": lambda jnp: jnp.insert(jnp.arange(5.0), jnp.array([3, 1]), jnp.array([9, 8])),
    "insert_axis": lambda jnp: jnp.insert(jnp.asarray(X23), 1, jnp.array([7, 8]), axis=1),
    "insert_axis_index_array": lambda jnp: jnp.insert(jnp.asarray(X23), jnp.array([1]), 0, axis=0),
    "insert_slice": lambda jnp: jnp.insert(jnp.arange(5), slice(0, 2), 9),
    "insert_past_end": lambda jnp: jnp.insert(jnp.arange(5), 9, 9),
    "insert_negative": lambda jnp: jnp.insert(jnp.arange(5), -1, 9),
    "insert_weak": lambda jnp: jnp.insert(1.0, 0, 2),
    "insert_empty_index": lambda jnp: jnp.insert(jnp.arange(3), np.array([]), 9),
    "insert_float_error": lambda jnp: jnp.insert(jnp.arange(5), 1.5, 9),
    "insert_2d_index_error": lambda jnp: jnp.insert(jnp.arange(5), np.array([[1]]), 9),
    "insert_list_error": lambda jnp: jnp.insert(jnp.arange(5), [1], 9),
    # --- place, put, put_along_axis
    "place": lambda jnp: jnp.place(
        jnp.arange(5), jnp.arange(5) > 2, jnp.array([7, 8]), inplace=False
    ),
    "place_cycled": lambda jnp: jnp.place(
        jnp.asarray(X23), jnp.asarray(X23) % 2 == 0, jnp.array([-1.0, -2.0]), inplace=False
    ),
    "place_inplace_error": lambda jnp: jnp.place(jnp.arange(5), jnp.arange(5) > 2, 9),
    "place_empty_values_error": lambda jnp: jnp.place(
        jnp.arange(5), jnp.arange(5) > 2, jnp.array([]), inplace=False
    ),
    "place_size_error": lambda jnp: jnp.place(jnp.arange(5), jnp.arange(4) > 2, 1, inplace=False),
    "put": lambda jnp: jnp.put(
        jnp.arange(5), jnp.array([1, 7, -2]), jnp.array([8, 9, 6]), inplace=False
    ),
    "put_clip": lambda jnp: jnp.put(
        jnp.arange(5), jnp.array([1, 7, -9]), jnp.array([8, 9, 6]), mode="clip", inplace=False
    ),
    "put_wrap": lambda jnp: jnp.put(
        jnp.arange(5), jnp.array([1, -7]), jnp.array([8, 9]), mode="wrap", inplace=False
    ),
    "put_2d": lambda jnp: jnp.put(jnp.asarray(X23), jnp.array([0, 4]), -1.0, inplace=False),
    "put_cycled": lambda jnp: jnp.put(
        jnp.arange(5), jnp.array([1, 2, 3]), jnp.array([8, 9]), inplace=False
    ),
    "put_inplace_error": lambda jnp: jnp.put(jnp.arange(5), 1, 9),
    "put_raise_error": lambda jnp: jnp.put(jnp.arange(5), 1, 9, mode="raise", inplace=False),
    "put_mode_error": lambda jnp: jnp.put(jnp.arange(5), 1, 9, mode="foo", inplace=False),
    "put_along_axis": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X23), jnp.array([[0], [2]]), 9.0, 1, inplace=False
    ),
    "put_along_axis_none": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X23), jnp.array([0, 5]), jnp.array([7.0, 8.0]), None, inplace=False
    ),
    "put_along_axis_0": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X234), jnp.zeros((1, 3, 4), "int32"), -1.0, 0, inplace=False
    ),
    "put_along_axis_inplace_error": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X23), jnp.array([[0], [2]]), 9.0, 1
    ),
    "put_along_axis_ndim_error": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X23), jnp.array([0, 2]), 9.0, 1, inplace=False
    ),
    "put_along_axis_values_error": lambda jnp: jnp.put_along_axis(
        jnp.asarray(X23), jnp.array([[0], [2]]), jnp.array([1.0, 2, 3]), 1, inplace=False
    ),
    # --- choose, compress, extract
    "choose": lambda jnp: jnp.choose(
        jnp.array([0, 1, 2, 1]), [jnp.arange(4), 10 + jnp.arange(4), 20 + jnp.arange(4)]
    ),
    "choose_wrap": lambda jnp: jnp.choose(
        jnp.array([0, 3, -1]), [jnp.arange(3), jnp.ones(3)], mode="wrap"
    ),
    "choose_clip": lambda jnp: jnp.choose(
        jnp.array([0, 3, -1]), [jnp.arange(3), jnp.ones(3)], mode="clip"
    ),
    "choose_scalars": lambda jnp: jnp.choose(jnp.array([0, 1]), [1.0, 2]),
    "choose_broadcast": lambda jnp: jnp.choose(jnp.array([[0], [1]]), [jnp.arange(3), 7]),
    "choose_range_error": lambda jnp: jnp.choose(jnp.array([0, 3]), [jnp.arange(2), jnp.ones(2)]),
    "choose_float_error": lambda jnp: jnp.choose(jnp.array([0.0, 1]), [1.0, 2]),
    "choose_mode_error": lambda jnp: jnp.choose(jnp.array([0, 1]), [1.0, 2], mode="x"),
    "compress_axis": lambda jnp: jnp.compress(
        jnp.array([True, False, True]), jnp.asarray(X23).T, axis=0
    ),
    "compress_flat": lambda jnp: jnp.compress(jnp.array([1, 0, 2]), jnp.asarray(X23)),
    "compress_short": lambda jnp: jnp.compress(jnp.array([True]), jnp.arange(3.0)),
    "compress_long_false": lambda jnp: jnp.compress(
        jnp.array([True, False, True, False]), jnp.arange(3)
    ),
    "compress_size": lambda jnp: jnp.compress(
        jnp.array([True, False, True]), jnp.arange(3.0), size=3, fill_value=-1
    ),
    "compress_size_axis": lambda jnp: jnp.compress(
        jnp.array([False, True, True]), jnp.asarray(X23), axis=1, size=1
    ),
    "compress_long_error": lambda jnp: jnp.compress(
        jnp.array([True, False, True, True]), jnp.arange(3)
    ),
    "compress_size_error": lambda jnp: jnp.compress(
        jnp.array([True, False, True]), jnp.arange(3.0), size=4
    ),
    "compress_2d_error": lambda jnp: jnp.compress(jnp.array([[True]]), jnp.arange(3.0)),
    "extract": lambda jnp: jnp.extract(jnp.asarray(X23) > 2, jnp.asarray(X23)),
    "extract_size": lambda jnp: jnp.extract(
        jnp.asarray(X23) > 2, jnp.asarray(X23), size=5, fill_value=9
    ),
    # --- functions along axes, Vandermonde, partial sorts
    "apply_along_axis": lambda jnp: jnp.apply_along_axis(jnp.sum, 1, jnp.asarray(X234)),
    "apply_along_axis_outer": lambda jnp: jnp.apply_along_axis(
        lambda v: jnp.outer(v, v), 2, jnp.asarray(X234)
    ),
    "apply_along_axis_args": lambda jnp: jnp.apply_along_axis(
        lambda v, p, scale: jnp.sum(v**p) * scale, 0, jnp.asarray(X23), 2, scale=0.5
    ),
    "apply_over_axes": lambda jnp: jnp.apply_over_axes(jnp.sum, jnp.asarray(X234), [0, 2]),
    "apply_over_axes_error": lambda jnp: jnp.apply_over_axes(
        lambda a, ax: a[0, 0], jnp.asarray(X234), [0]
    ),
    "vander": lambda jnp: jnp.vander(jnp.array([1, 2, 3])),
    "vander_increasing": lambda jnp: jnp.vander(jnp.array([1.0, 2.0]), 3, True),
    "vander_error": lambda jnp: jnp.vander(jnp.array(1.0)),
    "vander_negative_error": lambda jnp: jnp.vander(jnp.array([1.0]), -1),
    "partition": lambda jnp: jnp.partition(jnp.asarray(I5), 2),
    "partition_nan": lambda jnp: jnp.partition(jnp.asarray(F6), 2),
    "partition_zeros": lambda jnp: jnp.partition(jnp.array([0.0, -0.0, 0.0, -0.0]), 1),
    "partition_uint8": lambda jnp: jnp.partition(jnp.array([3, 0, 2, 255, 1], "uint8"), 1),
    "partition_last": lambda jnp: jnp.partition(jnp.asarray(I5), -1),
    "partition_axis0": lambda jnp: jnp.partition(jnp.asarray(X234)[:, ::-1], 1, axis=1),
    "partition_kth_error": lambda jnp: jnp.partition(jnp.asarray(I5), 5),
    "partition_bool_error": lambda jnp: jnp.partition(jnp.array([True, False]), 0),
    "partition_complex_error": lambda jnp: jnp.partition(jnp.array([1j]), 0),
    "argpartition": lambda jnp: jnp.argpartition(jnp.asarray(I5), 2),
    "argpartition_nan": lambda jnp: jnp.argpartition(jnp.asarray(F6), 2),
    "argpartition_zeros": lambda jnp: jnp.argpartition(jnp.array([0.0, -0.0, 0.0, -0.0]), 1),
    "argpartition_axis0": lambda jnp: jnp.argpartition(jnp.asarray(X234)[::-1], 0, axis=0),
    # --- grids and concatenation objects
    "mgrid": lambda jnp: jnp.mgrid[0:3, 0:2],
    "mgrid_1d": lambda jnp: jnp.mgrid[0:1:5j],
    "mgrid_mixed": lambda jnp: jnp.mgrid[0:3, 0:1:3j],
    "mgrid_float": lambda jnp: jnp.mgrid[0.5:3],
    "mgrid_empty": lambda jnp: jnp.mgrid[()],
    "ogrid": lambda jnp: jnp.ogrid[0:3, 1:4:2],
    "ogrid_1d": lambda jnp: jnp.ogrid[-1:1:3j],
    "r_": lambda jnp: jnp.r_[-1:5:1, 0, 0, jnp.array([1, 2, 3])],
    "r_weak": lambda jnp: jnp.r_[1.0, 2],
    "r_linspace": lambda jnp: jnp.r_[-1:1:6j, 0],
    "r_directive": lambda jnp: jnp.r_["0,2", [1, 2, 3], [4, 5, 6]],
    "r_directive_trans": lambda jnp: jnp.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
    "r_directive_negative": lambda jnp: jnp.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
    "r_directive_3d": lambda jnp: jnp.r_["1,3,1", [[1, 2]], [[3, 4]]],  # NumPy: (1, 2, 2)
    "r_row": lambda jnp: jnp.r_["r", [1, 2, 3], [4, 5, 6]],
    "r_column": lambda jnp: jnp.r_["c", [1, 2, 3], [4, 5, 6]],
    "r_directive_error": lambda jnp: jnp.r_["x", 1],
    "r_late_directive_error": lambda jnp: jnp.r_[1, "0"],
    "c_": lambda jnp: jnp.c_[jnp.ones(2), jnp.zeros(2)],
    "c_matrices": lambda jnp: jnp.c_[jnp.asarray(X23), jnp.asarray(X23)],
    "c_directive": lambda jnp: jnp.c_["0,2,-1", [1, 2, 3], [4, 5, 6]],
    "c_scalars_error": lambda jnp: jnp.c_[-1:5:1, 0],
    "c_row": lambda jnp: jnp.c_["r", [1, 2, 3], [4, 5, 6]],
    # --- index arrays
    "indices": lambda jnp: jnp.indices((2, 3)),
    "indices_sparse": lambda jnp: jnp.indices((2, 3), sparse=True),
    "indices_empty": lambda jnp: jnp.indices(()),
    "indices_dtype": lambda jnp: jnp.indices((2,), dtype=jnp.float32),
    "ix_": lambda jnp: jnp.ix_(jnp.array([0, 1]), jnp.array([2, 3, 4])),
    "ix_empty": lambda jnp: jnp.ix_(jnp.array([])),
    "ix_bool_error": lambda jnp: jnp.ix_(jnp.array([True])),
    "ix_2d_error": lambda jnp: jnp.ix_(jnp.ones((2, 2), "int32")),
    "diag_indices": lambda jnp: jnp.diag_indices(3),
    "diag_indices_3d": lambda jnp: jnp.diag_indices(2, 3),
    "diag_indices_error": lambda jnp: jnp.diag_indices(-1),
    "diag_indices_from": lambda jnp: jnp.diag_indices_from(jnp.ones((2, 2, 2))),
    "diag_indices_from_error": lambda jnp: jnp.diag_indices_from(jnp.ones((2, 3))),
    "diag_indices_from_1d_error": lambda jnp: jnp.diag_indices_from(jnp.ones(2)),
    "tril_indices": lambda jnp: jnp.tril_indices(3),
    "tril_indices_k": lambda jnp: jnp.tril_indices(3, -1, 4),
    "triu_indices": lambda jnp: jnp.triu_indices(3, 1, 4),
    "triu_indices_k_negative": lambda jnp: jnp.triu_indices(3, -1),
    "triu_indices_past": lambda jnp: jnp.triu_indices(2, 5),
    "tril_indices_from": lambda jnp: jnp.tril_indices_from(jnp.ones((2, 3)), -1),
    "triu_indices_from": lambda jnp: jnp.triu_indices_from(jnp.ones((3, 2))),
    "triu_indices_from_error": lambda jnp: jnp.triu_indices_from(jnp.ones(3)),
    "mask_indices": lambda jnp: jnp.mask_indices(3, jnp.triu),
    "mask_indices_size": lambda jnp: jnp.mask_indices(3, jnp.tril, -1, size=5),
    "ravel_multi_index": lambda jnp: jnp.ravel_multi_index(
        (jnp.array([0, 1]), jnp.array([2, 0])), (2, 3)
    ),
    "ravel_multi_index_F_wrap": lambda jnp: jnp.ravel_multi_index(
        (jnp.array([0, 1]), jnp.array([3, -1])), (2, 3), mode="wrap", order="F"
    ),
    "ravel_multi_index_clip": lambda jnp: jnp.ravel_multi_index(
        (jnp.array([0, 5]), jnp.array([3, -1])), (2, 3), mode="clip"
    ),
    "ravel_multi_index_scalars": lambda jnp: jnp.ravel_multi_index((1, 2), (2, 3)),
    "ravel_multi_index_int8": lambda jnp: jnp.ravel_multi_index(
        (jnp.array([0, 1], "int8"), jnp.array([2, 0], "int8")), (2, 3)
    ),
    "ravel_multi_index_dtype": lambda jnp: jnp.ravel_multi_index((1, 2), (2, 3), dtype="int16"),
    "ravel_multi_index_range_error": lambda jnp: jnp.ravel_multi_index(
        (jnp.array([0, 1]), jnp.array([3, 0])), (2, 3)
    ),
    "ravel_multi_index_float_error": lambda jnp: jnp.ravel_multi_index((jnp.array([0.0]),), (2,)),
    "ravel_multi_index_mode_error": lambda jnp: jnp.ravel_multi_index((1,), (2,), mode="x"),
    "ravel_multi_index_order_error": lambda jnp: jnp.ravel_multi_index((1,), (2,), order="K"),
    "ravel_multi_index_small_dtype_error": lambda jnp: jnp.ravel_multi_index(
        (1,), (300,), dtype="int8"
    ),
    "unravel_index": lambda jnp: jnp.unravel_index(jnp.array([5, 7, -1, -6, -7]), (2, 3)),
    "unravel_index_scalar": lambda jnp: jnp.unravel_index(5, (2, 3)),
    "unravel_index_int_shape": lambda jnp: jnp.unravel_index(jnp.array([2, 9]), 4),
    "unravel_index_float": lambda jnp: jnp.unravel_index(jnp.array([5.0]), (2, 3)),
    "unravel_index_uint8": lambda jnp: jnp.unravel_index(jnp.array([5, 200], "uint8"), (2, 3)),
    "unravel_index_shape_error": lambda jnp: jnp.unravel_index(1, ((2, 3),)),
    # --- pad
    **{f"pad_{mode}": _padded(X23, ((1, 2), (3, 1)), mode) for mode in _PAD_MODES},
    **{f"pad_{mode}_int": _padded(I5, (2, 3), mode) for mode in _PAD_MODES[1:]},
    "pad_long_reflect": lambda jnp: jnp.pad(jnp.arange(3.0), (7, 8), "reflect"),
    "pad_long_symmetric": lambda jnp: jnp.pad(jnp.arange(3.0), (7, 8), "symmetric"),
    "pad_long_wrap": lambda jnp: jnp.pad(jnp.arange(3.0), (7, 8), "wrap"),
    "pad_reflect_odd": lambda jnp: jnp.pad(jnp.asarray(I5), (6, 7), "reflect", reflect_type="odd"),
    "pad_symmetric_odd": lambda jnp: jnp.pad(jnp.asarray(X23), 4, "symmetric", reflect_type="odd"),
    "pad_reflect_length_1": lambda jnp: jnp.pad(jnp.array([2.0]), 3, "reflect"),
    "pad_constant_values": lambda jnp: jnp.pad(
        jnp.asarray(X23), 1, constant_values=((1, 2), (3, 4))
    ),
    "pad_constant_pair": lambda jnp: jnp.pad(jnp.asarray(X23), (1, 2), constant_values=(5, 6)),
    "pad_constant_weak": lambda jnp: jnp.pad(jnp.array([1.0, 2.0]) * 1.0, 1, constant_values=7),
    "pad_constant_bool": lambda jnp: jnp.pad(jnp.array([True]), 1, constant_values=False),
    "pad_constant_int_value_float": lambda jnp: jnp.pad(jnp.asarray(I5), 1, constant_values=2.7),
    "pad_scalar": lambda jnp: jnp.pad(jnp.array(1.0), 2, "edge"),
    "pad_stat_length": lambda jnp: jnp.pad(jnp.asarray(I5), 2, "mean", stat_length=2),
    "pad_stat_length_pairs": lambda jnp: jnp.pad(
        jnp.asarray(X23), ((1, 1), (2, 2)), "maximum", stat_length=((1, 2), (1, 9))
    ),
    "pad_end_values": lambda jnp: jnp.pad(
        jnp.asarray(X23), (2, 3), "linear_ramp", end_values=(5, -3)
    ),
    "pad_linear_ramp_int": lambda jnp: jnp.pad(jnp.asarray(I5), 3, "linear_ramp", end_values=10),
    "pad_callable": lambda jnp: jnp.pad(jnp.asarray(X23), 2, _odd, start=-5),
    "pad_negative_error": lambda jnp: jnp.pad(jnp.asarray(X23), -1),
    "pad_mode_error": lambda jnp: jnp.pad(jnp.asarray(X23), 1, "edges"),
    "pad_kwarg_error": lambda jnp: jnp.pad(jnp.asarray(X23), 1, "edge", constant_values=1),
    "pad_float_width_error": lambda jnp: jnp.pad(jnp.asarray(X23), 1.5),
    "pad_width_shape_error": lambda jnp: jnp.pad(jnp.asarray(X23), ((1, 2, 3),)),
    "pad_empty_axis_error": lambda jnp: jnp.pad(jnp.zeros((0, 2)), 1, "wrap"),
    "pad_stat_length_zero_error": lambda jnp: jnp.pad(jnp.asarray(X23), 1, "mean", stat_length=0),
    "pad_constant_values_shape_error": lambda jnp: jnp.pad(
        jnp.asarray(X23), 1, constant_values=jnp.array([1.0, 2, 3])
    ),
    # --- einsum
    "einsum_int8": lambda jnp: jnp.einsum(
        "ij,jk", jnp.ones((2, 3), "int8"), jnp.ones((3, 4), "int8")
    ),
    "einsum_preferred": lambda jnp: jnp.einsum(
        "ij,jk", jnp.ones((2, 3), "int8"), jnp.ones((3, 4), "int8"), preferred_element_type="int32"
    ),
    "einsum_mixed": lambda jnp: jnp.einsum("i,i->i", jnp.arange(3), jnp.ones(3)),
    "einsum_weak": lambda jnp: jnp.einsum("i,->i", jnp.array([1, 2]), 2.0),
    "einsum_bool": lambda jnp: jnp.einsum(
        "ij,jk", jnp.ones((2, 3), bool), jnp.eye(3, 4, dtype=bool)
    ),
    "einsum_bool_trace": lambda jnp: jnp.einsum("ii->", jnp.eye(2, dtype=bool)),
    "einsum_trace_int": lambda jnp: jnp.einsum("ii", jnp.arange(9).reshape(3, 3)),
    "einsum_sublists": lambda jnp: jnp.einsum(
        jnp.asarray(X23), [0, 1], jnp.asarray(X23), [2, 1], [0, 2]
    ),
    "einsum_path": lambda jnp: jnp.einsum_path(
        "ij,jk,kl", jnp.ones((2, 3)), jnp.ones((3, 100)), jnp.ones((100, 5)), optimize="optimal"
    )[0],
    "einsum_path_greedy": lambda jnp: jnp.einsum_path(
        "ab,bc,cd,de",
        jnp.ones((2, 30)),
        jnp.ones((30, 4)),
        jnp.ones((4, 50)),
        jnp.ones((50, 2)),
        optimize="greedy",
    )[0],
    "einsum_path_false": lambda jnp: jnp.einsum_path(
        "ij,jk,kl", jnp.ones((2, 3)), jnp.ones((3, 100)), jnp.ones((100, 5)), optimize=False
    )[0],
    "einsum_out_error": lambda jnp: jnp.einsum("i->i", jnp.ones(2), out=jnp.ones(2)),
    "einsum_three_at_once_error": lambda jnp: jnp.einsum(
        "i,i,i", jnp.ones(2), jnp.ones(2), jnp.ones(2), optimize=[(0, 1, 2)]
    ),
    "einsum_subscripts_error": lambda jnp: jnp.einsum("ij,jk", jnp.ones(2), jnp.ones((2, 2))),
    # --- where, nonzero, argwhere, flatnonzero with size
    "where_one_argument": lambda jnp: jnp.where(jnp.array([1, 0, 2]), size=4, fill_value=-1),
    "nonzero_float_fill": lambda jnp: jnp.nonzero(jnp.array([1.0, 0, 2]), size=4, fill_value=0.5),
    "argwhere_fills": lambda jnp: jnp.argwhere(
        jnp.array([[1, 0], [0, 2]]), size=3, fill_value=(7, 8)
    ),
    "argwhere_scalar": lambda jnp: jnp.argwhere(jnp.array(1.0)),
    "argwhere_scalar_zero": lambda jnp: jnp.argwhere(jnp.array(0.0)),
    "flatnonzero_size": lambda jnp: jnp.flatnonzero(jnp.array([[1, 0], [0, 2]]), size=1),
    "nonzero_0d_error": lambda jnp: jnp.nonzero(jnp.array(1.0)),
    "where_size_three_error": lambda jnp: jnp.where(jnp.array([True]), 1, 2, size=1),
}


def describe(value):
    """A JSON-able record of a result: arrays with their dtype and weak type, sequences of
    them, or the repr of anything else."""
    if isinstance(value, (tuple, list)) and all(hasattr(v, "dtype") for v in value):
        return {"sequence": type(value).__name__, "items": [describe(v) for v in value]}
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        array = np.asarray(value)
        return {
            "dtype": str(array.dtype),
            "weak_type": bool(getattr(value, "weak_type", False)),
            "shape": list(array.shape),
            "values": array.astype(np.float64).tolist(),
        }
    return {"repr": repr(value)}


def outcome(fun, jnp):
    """`describe` of `fun(jnp)`, or the class name of the exception it raises."""
    try:
        return describe(fun(jnp))
    except Exception as error:  # noqa: BLE001 (the class is the recorded result)
        return {"error": type(error).__name__}


def main(jax):
    import warnings

    jnp = jax.numpy
    assert jax.__version__ == "0.10.2", jax.__version__
    warnings.simplefilter("ignore")
    out = {name: outcome(fun, jnp) for name, fun in CASES.items()}
    DATA.parent.mkdir(exist_ok=True)
    lines = [f"{json.dumps(name)}: {json.dumps(out[name])}" for name in sorted(out)]
    DATA.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one case per line
    print(f"wrote {len(out)} cases to {DATA}")
