"""Fuzz cases that could crash the interpreter (XLA aborting on a huge allocation, a bad
conversion in the runtime, integer traps): not collected by the main run, but run as a batch
in a subprocess by `test_crash_prone.py`, so that a crash is one failed test there.

Properties: `jit` equals eager exactly, with JAX's semantics at the edges (integer division by
zero gives -1 (all bits set) and the remainder the dividend; INT_MIN // -1 wraps; shifts by the
bit width or more give 0, or the sign for arithmetic right shifts); huge or exotic requests
fail with an allowed exception.
"""

import ml_dtypes
import numpy as np
import pytest
from fuzz import strategies as fst
from fuzz.checks import check_allowed_exception
from hypothesis import given
from hypothesis import strategies as st

import tracejit
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.tree_util import tree_leaves

INTEGER_DIVISIONS = {
    "floor_divide": jnp.floor_divide,
    "remainder": jnp.remainder,
    "fmod": jnp.fmod,
    "divmod": jnp.divmod,
    "lax.div": lax.div,
    "lax.rem": lax.rem,
}
SHIFTS = {
    "left_shift": jnp.left_shift,
    "right_shift": jnp.right_shift,
    "lax.shift_left": lax.shift_left,
    "lax.shift_right_logical": lax.shift_right_logical,
    "lax.shift_right_arithmetic": lax.shift_right_arithmetic,
}


def _assert_same(eager, staged, call):
    for e, s in zip(tree_leaves(eager), tree_leaves(staged), strict=True):
        s, e = np.asarray(s), np.asarray(e)
        assert s.dtype == e.dtype, call
        if e.dtype.kind not in "biu":  # NumPy sees no NaN in bfloat16 and the float8s
            s, e = s.astype(np.float32), e.astype(np.float32)
        np.testing.assert_array_equal(s, e, err_msg=call)


def _int_pair(data):
    dtype = data.draw(fst.dtypes(fst.INTS))
    shape = data.draw(fst.shapes(max_rank=1))
    x = data.draw(fst.arrays(dtype=dtype, shape=shape), label="x")
    return x, data.draw(fst.arrays(dtype=dtype, shape=shape), label="y")


@pytest.mark.parametrize("name", sorted(INTEGER_DIVISIONS))
@given(data=st.data())
def test_jit_integer_division_equals_eager(name, data):
    x, y = _int_pair(data)
    fun = INTEGER_DIVISIONS[name]
    call = f"{name}({x!r}, {y!r})"
    _assert_same(fun(x, y), tracejit.jit(fun)(x, y), call)


@pytest.mark.parametrize("name", sorted(SHIFTS))
@given(data=st.data())
def test_jit_shift_equals_eager(name, data):
    x, _ = _int_pair(data)
    shift = data.draw(st.lists(st.integers(-3, 40), min_size=x.size, max_size=x.size))
    y = np.array(shift).astype(x.dtype).reshape(x.shape)
    fun = SHIFTS[name]
    _assert_same(fun(x, y), tracejit.jit(fun)(x, y), f"{name}({x!r}, {y!r})")


@given(
    x=st.lists(
        st.sampled_from([np.nan, np.inf, -np.inf, 3e9, -3e9, 300.0, -1.5, 0.5]),
        min_size=1,
        max_size=4,
    ).map(lambda v: np.array(v, np.float32)),
    dtype=fst.dtypes([fst.BOOL, *fst.INTS, *fst.FLOATS]),
)
def test_jit_float_conversion_equals_eager(x, dtype):
    """NaN, infinities and out-of-range floats converted to integers (XLA saturates)."""
    fun = lambda v: lax.convert_element_type(v, dtype)
    _assert_same(fun(x), tracejit.jit(fun)(x), f"convert_element_type({x!r}, {dtype})")


HUGE = [(2**40,), (2**31, 2**31), (2**62,), (2**20, 2**20, 2**20), (2**63 - 1,)]


@given(
    shape=st.sampled_from(HUGE),
    how=st.sampled_from(["zeros", "full", "broadcast", "iota"]),
    jit=st.booleans(),
)
def test_huge_shapes_fail_with_an_allowed_error(shape, how, jit):
    make = {
        "zeros": lambda: jnp.zeros(shape, np.float32),
        "full": lambda: jnp.full(shape, 1, np.int8),
        "broadcast": lambda: jnp.sum(jnp.broadcast_to(np.float32(1), shape)),
        "iota": lambda: lax.iota(np.int32, int(np.prod(shape, dtype=object))),
    }[how]
    try:
        (tracejit.jit(make) if jit else make)()
    except Exception as error:  # noqa: BLE001
        check_allowed_exception(error, f"{'jit ' if jit else ''}{how}{shape}")


EXOTIC = [
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.int4,
    ml_dtypes.uint4,
    np.float16,
    ml_dtypes.bfloat16,
    np.int16,
    np.uint16,
]


@given(
    dtype=st.sampled_from(EXOTIC),
    fun_name=st.sampled_from(["add", "multiply", "sum", "maximum", "negative", "sort"]),
    values=st.lists(st.integers(-3, 3), min_size=0, max_size=4),
)
def test_exotic_dtypes_under_jit_equal_eager_or_fail_cleanly(dtype, fun_name, values):
    x = np.array(values).astype(dtype)
    fun = getattr(jnp, fun_name)
    args = (x, x) if fun_name in ("add", "multiply", "maximum") else (x,)
    call = f"{fun_name}({x!r})"
    try:
        eager = fun(*args)
    except Exception as error:  # noqa: BLE001
        check_allowed_exception(error, call)
        return
    np.testing.assert_array_equal(np.asarray(tracejit.jit(fun)(*args)), np.asarray(eager), call)
