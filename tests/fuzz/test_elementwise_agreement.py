"""Properties (a) and (b) for the elementwise and reduction tables: eager results equal
NumPy's (values, shapes, and dtypes where JAX's rule is simple), and `jit` equals eager."""

import numpy as np
import pytest
from fuzz import strategies as fst
from fuzz.checks import assert_close, expected_dtype, reference_input
from fuzz.table import AXIS_FUNCTIONS, BINARY, LAX_REDUCTIONS, REDUCTIONS, UNARY
from hypothesis import given
from hypothesis import strategies as st

import tracejit


def _dtypes_of(op):
    return [d for d in fst.ALL_DTYPES if d.kind in op.kinds]


def _without_complex_zeros(op, x):
    if op.complex_zeros_differ and x.dtype.kind == "c":
        return np.where(x == 0, np.ones_like(x), x + 0)  # + 0 turns -0 into +0
    return x


def _reference(op, *args, **kw):
    promote = op.result == "float" or any(a.dtype.kind in "f" for a in args)
    inputs = [reference_input(a, promote) for a in args]
    with np.errstate(all="ignore"):
        return op.ref(*inputs, **kw)


def _check_eager_and_jit(op, fn, reference, args, dtype, call):
    with np.errstate(all="ignore"):
        eager = fn(*args)
    assert_close(eager, reference, dtype, call, expected_dtype(op.result, dtype))
    staged = tracejit.jit(fn)(*args)
    assert_close(staged, eager, dtype, f"jit({call})", np.asarray(eager).dtype)


@pytest.mark.parametrize("op", UNARY, ids=repr)
@given(data=st.data())
def test_unary_matches_numpy(op, data):
    x = _without_complex_zeros(op, data.draw(fst.arrays(kinds=_dtypes_of(op)), label="x"))
    call = f"{op.name}({x.dtype}{list(x.shape)})"
    _check_eager_and_jit(op, op.fn, _reference(op, x), (x,), x.dtype, call)


def _second_shape(shape, draw):
    """A shape that broadcasts with `shape`: trailing dims kept, some of them 1."""
    keep = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - keep :])


def _second_operand(op, x, data):
    lax_op = op.name.startswith("lax.")
    shape = x.shape if lax_op else _second_shape(x.shape, data.draw)
    y = data.draw(fst.arrays(dtype=x.dtype, shape=shape), label="y")
    if op.nonzero_second:
        y = np.where(y == 0, np.ones_like(y), y)
    if "shift" in op.name:  # NumPy's shifts by the bit width or more are undefined
        y = (y.astype(np.int64) % (8 * x.dtype.itemsize)).astype(x.dtype)
    return y


@pytest.mark.parametrize("op", BINARY, ids=repr)
@given(data=st.data())
def test_binary_matches_numpy(op, data):
    x = _without_complex_zeros(op, data.draw(fst.arrays(kinds=_dtypes_of(op)), label="x"))
    y = _without_complex_zeros(op, _second_operand(op, x, data))
    call = f"{op.name}({x.dtype}{list(x.shape)}, {list(y.shape)})"
    _check_eager_and_jit(op, op.fn, _reference(op, x, y), (x, y), x.dtype, call)


@pytest.mark.parametrize("op", REDUCTIONS, ids=repr)
@given(data=st.data(), keepdims=st.booleans())
def test_reduction_matches_numpy(op, data, keepdims):
    x = data.draw(fst.arrays(kinds=_dtypes_of(op)), label="x")
    axis = data.draw(fst.any_axis(x.ndim).filter(lambda a: fst.axis_is_valid(a, x.ndim)))
    call = f"{op.name}({x.dtype}{list(x.shape)}, axis={axis}, keepdims={keepdims})"
    try:
        want = _reference(op, x, axis=axis, keepdims=keepdims)
    except ValueError:  # an empty max/min: JAX raises ValueError too
        with pytest.raises(ValueError):
            op.fn(x, axis=axis, keepdims=keepdims)
        return
    fn = lambda v: op.fn(v, axis=axis, keepdims=keepdims)
    _check_eager_and_jit(op, fn, want, (x,), x.dtype, call)


@pytest.mark.parametrize("op", AXIS_FUNCTIONS, ids=repr)
@given(data=st.data())
def test_axis_function_matches_numpy(op, data):
    x = data.draw(fst.arrays(kinds=_dtypes_of(op)), label="x")
    axis = data.draw(st.one_of(st.none(), fst.valid_axes(x.ndim)), label="axis")
    call = f"{op.name}({x.dtype}{list(x.shape)}, axis={axis})"
    empty_slices = x.size == 0 if axis is None else x.shape[axis] == 0
    if op.name.endswith("median") and empty_slices:  # NumPy: NaN; JAX refuses, as its gather
        with pytest.raises((TypeError, IndexError)):
            op.fn(x, axis=axis)
        return
    try:
        want = _reference(op, x, axis=axis)
    except ValueError:  # argmax of nothing
        with pytest.raises(ValueError):
            op.fn(x, axis=axis)
        return
    _check_eager_and_jit(op, lambda v: op.fn(v, axis=axis), want, (x,), x.dtype, call)


@pytest.mark.parametrize("op", LAX_REDUCTIONS, ids=repr)
@given(data=st.data())
def test_lax_reduction_matches_numpy(op, data):
    x = data.draw(fst.arrays(kinds=_dtypes_of(op)), label="x")
    axes = tuple(
        sorted(set(data.draw(st.lists(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim))))
    )
    call = f"{op.name}({x.dtype}{list(x.shape)}, axes={axes})"
    try:
        want = _reference(op, x, axis=axes)
    except ValueError:  # max/min over nothing: lax gives the identity (-inf, the lowest int)
        return
    _check_eager_and_jit(op, lambda v: op.fn(v, axes), want, (x,), x.dtype, call)
