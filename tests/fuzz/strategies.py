"""Hypothesis strategies for the fuzz suite: shapes, dtypes, arrays, axes, indices, bad values.

Values are drawn small (dimensions up to 4, at most 3 axes) so that each example costs a few
milliseconds; zero-size dimensions and rank 0 are drawn on purpose, because that is where
shape rules break.
"""

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

BOOL = np.dtype(np.bool_)
INTS = [np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.uint32)]
FLOATS = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)]
COMPLEX = [np.dtype(np.complex64)]
ALL_DTYPES = [BOOL, *INTS, *FLOATS, *COMPLEX]

# Relative/absolute tolerance per dtype when comparing with NumPy: the low-precision floats
# are computed by NumPy in float32 and rounded once, XLA may round intermediate steps.
TOLERANCE = {
    np.dtype(np.float16): 1e-2,
    np.dtype(ml_dtypes.bfloat16): 5e-2,
    np.dtype(np.float32): 1e-5,
    np.dtype(np.complex64): 1e-5,
}


def tolerance(dtype) -> float:
    return TOLERANCE.get(np.dtype(dtype), 0)


def shapes(min_rank=0, max_rank=3, min_side=0, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank).map(
        tuple
    )


def dtypes(kinds=ALL_DTYPES):
    return st.sampled_from(kinds)


def _values(dtype: np.dtype, size: int, draw):
    """Values of `dtype` that stay finite and mostly in the functions' domains; integers span
    the dtype's range so that wrap-around is exercised, floats include 0, ±0.5 and ±3."""
    if dtype == BOOL:
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(info.min, -5), min(info.max, 5))
        edge = st.sampled_from([info.min, info.max])
        ints = st.one_of(small, small, small, edge)
        return np.array(draw(st.lists(ints, min_size=size, max_size=size)), dtype)
    floats = st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 0.25, 2.5])
    real = np.array(draw(st.lists(floats, min_size=size, max_size=size)), np.float32)
    if dtype.kind == "c":
        imag = np.array(draw(st.lists(floats, min_size=size, max_size=size)), np.float32)
        return (real + 1j * imag).astype(dtype)
    return real.astype(dtype)


@st.composite
def arrays(draw, dtype=None, shape=None, kinds=ALL_DTYPES):
    """A NumPy array of a drawn (or given) dtype and shape."""
    dtype = np.dtype(dtype) if dtype is not None else draw(dtypes(kinds))
    shape = shape if shape is not None else draw(shapes())
    size = int(np.prod(shape, dtype=np.int64))
    return _values(dtype, size, draw).reshape(shape)


def valid_axes(ndim: int):
    """An axis that exists, positive or negative."""
    if ndim == 0:
        return st.nothing()
    return st.integers(-ndim, ndim - 1)


def any_axis(ndim: int):
    """An axis or tuple of axes: valid, negative, out of range, duplicated, or None."""
    one = st.integers(-ndim - 2, ndim + 1)
    return st.one_of(st.none(), one, st.lists(one, max_size=3).map(tuple))


def axis_is_valid(axis, ndim: int) -> bool:
    if axis is None:
        return True
    axes = axis if isinstance(axis, tuple) else (axis,)
    normalized = [a % ndim if -ndim <= a < ndim else None for a in axes]
    return None not in normalized and len(set(normalized)) == len(normalized)


@st.composite
def indices(draw, shape):
    """A NumPy index expression for an array of `shape`: ints (some out of range), slices with
    steps (negative too), None, Ellipsis, integer arrays and boolean masks."""
    items = []
    dims = list(shape)
    has_ellipsis = False
    for _ in range(draw(st.integers(0, len(shape) + 1))):
        size = dims[0] if dims else 0
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "intarray", "mask"]))
        if kind == "int" and dims:
            items.append(draw(st.integers(-size - 1, size)))
            dims.pop(0)
        elif kind == "slice" and dims:
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
            items.append(slice(draw(bound), draw(bound), draw(step)))
            dims.pop(0)
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not has_ellipsis:
            has_ellipsis = True
            items.append(Ellipsis)
        elif kind == "intarray" and dims:
            n = draw(st.integers(0, 3))
            items.append(
                np.array(
                    draw(st.lists(st.integers(-size, max(size - 1, 0)), min_size=n, max_size=n)),
                    np.int32,
                )
            )
            dims.pop(0)
        elif kind == "mask" and dims:
            items.append(
                np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), bool).reshape(
                    size
                )
            )
            dims.pop(0)
    return items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)


class _Opaque:
    """An object that is no array, no scalar and no sequence."""

    def __repr__(self):
        return "<opaque object>"


BAD_VALUES = st.sampled_from(
    ["abc", None, _Opaque(), [[1, 2], [3]], [1, "a"], {"a": 1}, object, 1 + 2j, b"xy"]
)
BAD_SHAPES = st.sampled_from(
    [(2.5,), (-1, -1), (-3,), (2**62, 2**62), (2**40,), "ab", (None,), ((2,),), 1.5, {2: 3}]
)
BAD_AXES = st.sampled_from([1.5, "0", (0, 1.0), [None], 10**30, -(10**30), object()])
