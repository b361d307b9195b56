"""Property (c): bad input (wrong dtypes, non-arrays, bad axes, bad shapes, mismatched shapes)
leaves the public API only as an exception JAX could raise there (`checks.ALLOWED`), eagerly
and under `jit`; anything else (AttributeError, KeyError, AssertionError, ...) fails and
prints the call. A call that succeeds is fine: this property is about how calls fail."""

import traceback

import numpy as np
import pytest
from fuzz import strategies as fst
from fuzz import table
from fuzz.checks import check_allowed_exception
from fuzz.table import AXIS_FUNCTIONS, BINARY, REDUCTIONS, SHAPE_CALLS, UNARY
from hypothesis import given
from hypothesis import strategies as st

import tracejit
import tracejit.numpy as jnp

SMALL_SHAPES = fst.shapes(max_rank=2, max_side=3)
# Shapes that are bad without being huge (huge ones are in crash_prone.py).
BAD_SMALL_SHAPES = st.sampled_from(
    [(2.5,), (-1, -1), (-3,), "ab", (None,), ((2,),), 1.5, {2: 3}, (2, -1), [3.0], (True,)]
)
BAD_DTYPES = st.sampled_from(
    [
        "abc",
        object,
        "S3",
        np.int64,
        "float64",
        "complex128",
        "V4",
        np.dtype("datetime64[s]"),
        3,
        "int4",
    ]
)


def _fails_only_allowed(fun, args, call, kwargs=None):
    try:
        with np.errstate(all="ignore"):
            fun(*args, **(kwargs or {}))
    except Exception as error:  # noqa: BLE001  (any exception is judged)
        check_allowed_exception(error, call)


def _argument(data, label):
    """An array of any dtype, or a value that is no array at all."""
    return data.draw(
        st.one_of(fst.arrays(shape=data.draw(SMALL_SHAPES)), fst.BAD_VALUES), label=label
    )


@pytest.mark.parametrize("op", UNARY, ids=repr)
@given(data=st.data())
def test_unary_bad_operand(op, data):
    x = _argument(data, "x")
    _fails_only_allowed(op.fn, (x,), f"{op.name}({x!r})")
    if isinstance(x, np.ndarray):
        _fails_only_allowed(tracejit.jit(op.fn), (x,), f"jit({op.name})({x!r})")


@pytest.mark.parametrize("op", BINARY, ids=repr)
@given(data=st.data())
def test_binary_bad_operands(op, data):
    x, y = _argument(data, "x"), _argument(data, "y")
    _fails_only_allowed(op.fn, (x, y), f"{op.name}({x!r}, {y!r})")
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        _fails_only_allowed(tracejit.jit(op.fn), (x, y), f"jit({op.name})({x!r}, {y!r})")


@pytest.mark.parametrize("op", REDUCTIONS + AXIS_FUNCTIONS, ids=repr)
@given(data=st.data())
def test_reduction_bad_axis(op, data):
    x = data.draw(fst.arrays(shape=data.draw(SMALL_SHAPES)), label="x")
    axis = data.draw(st.one_of(fst.any_axis(x.ndim), fst.BAD_AXES), label="axis")
    call = f"{op.name}({x!r}, axis={axis!r})"
    _fails_only_allowed(op.fn, (x,), call, {"axis": axis})
    _fails_only_allowed(tracejit.jit(lambda v: op.fn(v, axis=axis)), (x,), f"jit({call})")


# getitem calls its operand's method (v[idx]): a bad operand would fail in Python before
# tracejit sees it; bad indices are drawn below instead.
@pytest.mark.parametrize("name", sorted(set(SHAPE_CALLS) - {"getitem"}))
@given(data=st.data())
def test_shape_call_bad_operand(name, data):
    x = data.draw(fst.arrays(shape=data.draw(SMALL_SHAPES)), label="x")
    try:
        call = SHAPE_CALLS[name](data.draw, x)
    except Exception:  # noqa: BLE001  (the builder's own NumPy checks)
        return
    bad = data.draw(fst.BAD_VALUES, label="bad")
    try:
        call(jnp, bad)
    except Exception as error:  # noqa: BLE001
        if traceback.extract_tb(error.__traceback__)[-1].filename == table.__file__:
            return  # the call's own lambda (v.ndim, v.dtype) failed before tracejit saw `bad`
        check_allowed_exception(error, f"{name}({bad!r})")


CREATION = {
    "zeros": lambda shape, dtype: jnp.zeros(shape, dtype),
    "ones": lambda shape, dtype: jnp.ones(shape, dtype),
    "empty": lambda shape, dtype: jnp.empty(shape, dtype),
    "full": lambda shape, dtype: jnp.full(shape, 2, dtype),
    "eye": lambda shape, dtype: jnp.eye(shape, dtype=dtype),
    "identity": lambda shape, dtype: jnp.identity(shape, dtype),
    "tri": lambda shape, dtype: jnp.tri(shape, dtype=dtype),
    "arange": lambda shape, dtype: jnp.arange(shape, dtype=dtype),
    "linspace": lambda shape, dtype: jnp.linspace(0, 1, shape, dtype=dtype),
    "zeros_like": lambda shape, dtype: jnp.zeros_like(np.zeros(3), dtype, shape=shape),
    "full_like": lambda shape, dtype: jnp.full_like(np.zeros(3), 1, dtype, shape=shape),
    "broadcast_to": lambda shape, dtype: jnp.broadcast_to(np.zeros((), dtype), shape),
    "reshape": lambda shape, dtype: jnp.reshape(np.zeros(6, dtype), shape),
    "lax.iota": lambda shape, dtype: tracejit.lax.iota(dtype, shape),
    "lax.broadcast": lambda shape, dtype: tracejit.lax.broadcast(np.zeros((), dtype), shape),
}


@pytest.mark.parametrize("name", sorted(CREATION))
@given(
    shape=st.one_of(SMALL_SHAPES, st.integers(-3, 4), BAD_SMALL_SHAPES),
    dtype=st.one_of(fst.dtypes(), BAD_DTYPES),
)
def test_creation_bad_shape_or_dtype(name, shape, dtype):
    _fails_only_allowed(CREATION[name], (shape, dtype), f"{name}({shape!r}, {dtype!r})")


BAD_INDICES = st.one_of(
    fst.BAD_VALUES,
    st.sampled_from(
        [
            1.5,
            np.float32(1),
            np.array([0.5]),
            10**20,
            -(10**20),
            np.array(2**40),
            (0, 0, 0, 0),
            (Ellipsis, Ellipsis),
            np.zeros((2, 2, 2), bool),
            [0, None],
            slice(0, 1, 0),
            slice("a"),
            np.array([1], np.uint64),
            np.array(True),
        ]
    ),
)


@given(data=st.data())
def test_bad_index(data):
    x = jnp.asarray(data.draw(fst.arrays(shape=data.draw(SMALL_SHAPES)), label="x"))
    index = data.draw(st.one_of(BAD_INDICES, fst.indices(x.shape)), label="index")
    call = f"{x.dtype}{list(x.shape)}[{index!r}]"
    _fails_only_allowed(lambda: x[index], (), call)
    _fails_only_allowed(lambda: x.at[index].set(1), (), f"{call}.at.set(1)")
    _fails_only_allowed(tracejit.jit(lambda v: v[index]), (x,), f"jit({call})")
