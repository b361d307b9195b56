"""Properties (a) and (b) for shape manipulation and indexing: the same call on NumPy and on
tracejit.numpy gives the same values and shapes (and dtype); under `jit` the same again; and
where NumPy refuses the call, tracejit raises an allowed exception (JAX's spec wins where they
differ: out-of-range integer-array indices are clamped, not an IndexError)."""

import ml_dtypes
import numpy as np
import pytest
from fuzz import strategies as fst
from fuzz.checks import assert_close, check_allowed_exception
from fuzz.table import SHAPE_CALLS
from hypothesis import given
from hypothesis import strategies as st

import tracejit
import tracejit.numpy as jnp
from tracejit._src.tree_util import tree_leaves

BF16 = np.dtype(ml_dtypes.bfloat16)
# Results whose shape depends on values: under jit they raise a concretization error.
VALUE_DEPENDENT_SHAPES = {"nonzero", "flatnonzero", "argwhere", "unique", "getitem"}
# Where JAX refuses what NumPy accepts (tril/triu of a 1-D array, kron of booleans, and lax,
# meshgrid of 0-d arrays, and lax, stricter about ranks and dtypes than NumPy): an allowed error
# will do.
# Where NumPy answers and JAX raises: quantiles of empty slices (NumPy's nan-forms give NaN,
# JAX's gathers refuse the empty slice), ...
JAX_REFUSES = {"tril", "triu", "kron", "meshgrid", "nanquantile", "nanpercentile"} | {
    n for n in SHAPE_CALLS if n.startswith("lax.")
}


def _compare(got, want, dtype, call, same_dtype=True):
    got_leaves, want_leaves = tree_leaves(got), tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), f"{call}: {len(got_leaves)} results"
    for g, w in zip(got_leaves, want_leaves, strict=True):
        w = np.asarray(w)
        # NumPy's 64-bit results are JAX's 32-bit ones; NumPy promotes bfloat16 with Python
        # scalars to float32 where JAX keeps bfloat16.
        numpy_like = w.dtype.kind in "buifc" and w.dtype.itemsize < 8 and dtype != BF16
        want_dtype = w.dtype if same_dtype and numpy_like else None
        assert_close(g, w, dtype, call, want_dtype)


@pytest.mark.parametrize("name", sorted(SHAPE_CALLS))
@given(data=st.data())
def test_call_matches_numpy(name, data):
    x = data.draw(fst.arrays(), label="x")
    call = data.draw(st.builds(lambda: SHAPE_CALLS[name](data.draw, x)), label="call")
    text = f"{name}({x.dtype}{list(x.shape)}) [see the draws]"
    try:
        with np.errstate(all="ignore"):
            want = call(np, x)
    except (ValueError, IndexError, TypeError, OverflowError) as numpy_error:
        try:
            got = call(jnp, x)
        except Exception as error:  # noqa: BLE001  (any exception is judged)
            check_allowed_exception(error, text)
            return
        # JAX clamps out-of-range integer-array indices, and casts Python ints out of a
        # dtype's range (clip(uint8, -1, 0)) where NumPy refuses.
        jax_accepts = isinstance(numpy_error, OverflowError) or (
            name == "getitem" and isinstance(numpy_error, IndexError)
        )
        if not jax_accepts:
            raise AssertionError(f"{text}: NumPy raised {numpy_error!r}, tracejit returned {got}")
        return
    try:
        got = call(jnp, x)
    except Exception as error:
        if name not in JAX_REFUSES:
            raise
        check_allowed_exception(error, text)
        return
    _compare(
        got,
        want,
        x.dtype,
        text,
        same_dtype=name not in ("argsort", "trace", "size", "ndim", "shape"),
    )
    try:
        staged = tracejit.jit(lambda v: call(jnp, v))(x)
    except Exception as error:
        if name not in VALUE_DEPENDENT_SHAPES:
            raise
        check_allowed_exception(error, f"jit({text})")
        return
    _compare(staged, got, x.dtype, f"jit({text})")
