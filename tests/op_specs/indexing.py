"""gather and the scatters, on one pattern: rows of a (5, 3) operand picked by distinct indices
(scatters with repeated indices are in tests/lax/test_gather.py)."""

import numpy as np
from helpers import ALL, FLOATS, OpSpec, c64, i32, shaped

from tracejit import lax

GATHER_DIMS = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)
SCATTER_DIMS = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def _gather_operands(rng, shapes, dtype):
    (x,) = shaped()(rng, shapes[:1], dtype)
    return x, rng.permutation(5)[:2, None].astype(np.int32)


def _scatter_operands(rng, shapes, dtype):
    x, updates = shaped(0.5, 2.0)(rng, shapes, dtype)
    return x, rng.permutation(5)[:2, None].astype(np.int32), updates


def _scatter_reference(combine):
    def ref(x, indices, updates):
        out = x.copy()
        combine(out, indices[:, 0], updates)
        return out

    return ref


def _overwrite(out, rows, updates):
    out[rows] = updates


def scatter(name, fun, combine, dtypes, grad_argnums=(0, 2), unique_indices=False, **fields):
    return OpSpec(
        name,
        lambda x, indices, updates: fun(
            x, indices, updates, SCATTER_DIMS, unique_indices=unique_indices
        ),
        _scatter_reference(combine),
        dtypes,
        _scatter_operands,
        (((5, 3), (2, 3)),),
        grad_argnums=grad_argnums,
        **fields,
    )


SCATTERED = [*FLOATS, i32, c64]

INDEXING = [
    OpSpec(
        "gather",
        lambda x, indices: lax.gather(x, indices, GATHER_DIMS, (1, 3)),
        lambda x, indices: x[indices[:, 0]],
        ALL,
        _gather_operands,
        (((5, 3),),),
        grad_argnums=(0,),
        linear=True,
    ),
    scatter("scatter", lax.scatter, _overwrite, ALL, linear=True),
    scatter("scatter-add", lax.scatter_add, np.add.at, SCATTERED, linear=True),
    # Derivatives in the updates need unique_indices, as in JAX.
    scatter("scatter-mul", lax.scatter_mul, np.multiply.at, SCATTERED, unique_indices=True),
    scatter("scatter-min", lax.scatter_min, np.minimum.at, [*FLOATS, i32]),
    scatter("scatter-max", lax.scatter_max, np.maximum.at, [*FLOATS, i32]),
    scatter("scatter-sub", lax.scatter_sub, np.subtract.at, SCATTERED, linear=True),
]
