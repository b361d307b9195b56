"""Rule pieces shared by the primitive families: dtype checks, elementwise broadcasting, weak types.

A family module (`lax/<family>.py`) defines each primitive in one block: the `Primitive`, its
public wrapper, `def_impl` (NumPy), `def_abstract_eval` (built from the pieces here), and
`def_weak_type_rule`; later transformations register their rules in the same block.

The elementwise shape rule follows lax, not NumPy: operands must have equal ranks and each
dimension must agree or be 1; rank-0 operands broadcast freely (`mul c 3.0:f32[]`). Dtypes must
be equal after canonicalization: lax never promotes (jnp does, before calling lax).
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray, never_weak, weak_if_all_weak  # noqa: F401


# Dtype classes an operand may belong to, named for error messages.
def is_float(d):
    return dtypes.issubdtype(d, np.floating)


def is_float_or_complex(d):
    return dtypes.issubdtype(d, np.inexact)


def is_int(d):
    return dtypes.issubdtype(d, np.integer)


def is_int_or_bool(d):
    return dtypes.issubdtype(d, np.integer) or d == np.bool_


def is_signed(d):
    return dtypes.issubdtype(d, np.signedinteger) or dtypes.issubdtype(d, np.inexact)


def is_numeric(d):
    return d != np.bool_


def is_complex(d):
    return dtypes.issubdtype(d, np.complexfloating)


def is_any(d):
    return True


_DTYPE_CLASS_NAMES = {
    is_float: "floating-point",
    is_float_or_complex: "floating-point or complex",
    is_int: "integer",
    is_int_or_bool: "integer or boolean",
    is_signed: "signed",
    is_numeric: "numeric",
    is_complex: "complex",
    is_any: "any",
}


def check_dtype(name: str, aval: ShapedArray, accepts, operand: str = "operand") -> None:
    if not accepts(aval.dtype):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} for its {operand}; it needs a "
            f"{_DTYPE_CLASS_NAMES[accepts]} dtype"
        )


def check_same_dtypes(name: str, *avals: ShapedArray) -> None:
    if len({aval.dtype for aval in avals}) > 1:
        got = ", ".join(aval.dtype.name for aval in avals)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {got}. "
            f"(Tip: jnp.{name} is a similar function that does automatic type promotion on "
            "inputs)."
        )


def broadcast_shapes(name: str, *avals: ShapedArray) -> tuple:
    """The shape of an elementwise result (lax's rule: equal ranks, dims equal or 1, scalars
    broadcast)."""
    shapes = [aval.shape for aval in avals if aval.shape]
    if not shapes:
        return ()
    if len({len(shape) for shape in shapes}) != 1:
        got = ", ".join(map(str, shapes))
        raise TypeError(f"{name}: arrays must have same number of dimensions, got {got}.")
    result = []
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            got = ", ".join(map(str, shapes))
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {got}.")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def elementwise_abstract_eval(name: str, accepts, result_dtype=None):
    """The abstract evaluation of an elementwise primitive whose operands share one dtype of the
    class `accepts`; the result has that dtype, or `result_dtype` (e.g. bool for comparisons)."""

    def abstract_eval(*avals, **params):
        for aval in avals:
            check_dtype(name, aval, accepts)
        check_same_dtypes(name, *avals)
        shape = broadcast_shapes(name, *avals)
        dtype = avals[0].dtype if result_dtype is None else result_dtype
        weak = all(aval.weak_type for aval in avals)
        return ShapedArray(shape, dtype, weak)

    return abstract_eval


def keep_dtype(numpy_fn):
    """Wraps a NumPy/SciPy function that may compute in a wider dtype (float16 and bfloat16 in
    float32, say) so that its result has the dtype of its first operand, as the primitive's
    abstract evaluation promises."""

    def impl(x, *args, **kwargs):
        out = numpy_fn(x, *args, **kwargs)
        return out if out.dtype == x.dtype else out.astype(x.dtype)

    return impl


def normalize_axes(name: str, axes, ndim: int) -> tuple:
    """Checks axes given to a primitive: non-negative, in range, no repeats."""
    axes = tuple(int(a) for a in axes)
    for axis in axes:
        if not 0 <= axis < ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} contain duplicates")
    return axes
