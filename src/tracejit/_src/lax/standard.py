"""Rule pieces shared by the primitive families: dtype checks, elementwise broadcasting, weak types.

A family module (`lax/<family>.py`) defines each primitive in one block: the `Primitive`, its
public wrapper, `def_impl` (NumPy), `def_abstract_eval` (built from the pieces here), and
`def_weak_type_rule`; later transformations register their rules in the same block.

The elementwise shape rule follows lax, not NumPy: operands must have equal ranks and each
dimension must agree or be 1; rank-0 operands broadcast freely (`mul c 3.0:f32[]`). Dtypes must
be equal after canonicalization: lax never promotes (jnp does, before calling lax).
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import ShapedArray, Tracer, never_weak, shape_of, weak_if_all_weak  # noqa: F401
from tracejit._src.interpreters.batching import move_batch_dim


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


def is_int_or_float(d):
    return is_int(d) or is_float(d)


def is_not_complex(d):
    return not is_complex(d)


def is_any(d):
    return True


_DTYPE_CLASS_NAMES = {
    is_float: "a floating-point",
    is_float_or_complex: "a floating-point or complex",
    is_int: "an integer",
    is_int_or_bool: "an integer or boolean",
    is_int_or_float: "an integer or floating-point",
    is_not_complex: "a non-complex",
    is_signed: "a signed",
    is_numeric: "a numeric",
    is_complex: "a complex",
    is_any: "any",
}


def check_dtype(name: str, aval: ShapedArray, accepts, operand: str = "operand") -> None:
    if not accepts(aval.dtype):
        raise TypeError(
            f"{name} does not accept dtype {aval.dtype.name} for its {operand}; it needs "
            f"{_DTYPE_CLASS_NAMES[accepts]} dtype"
        )


# The jnp function that promotes where a lax primitive does not, named in dtype errors as JAX
# names it; primitives missing here get no tip.
_JNP_EQUIVALENT = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "pow": "power",
    "max": "maximum",
    "min": "minimum",
    "eq": "equal",
    "ne": "not_equal",
    "atan2": "arctan2",
    "shift_left": "left_shift",
    "nextafter": "nextafter",
    "select": "where",
}


def check_same_dtypes(name: str, *avals: ShapedArray) -> None:
    if len({aval.dtype for aval in avals}) > 1:
        got = ", ".join(aval.dtype.name for aval in avals)
        jnp_name = _JNP_EQUIVALENT.get(name)
        tip = (
            f" (Tip: jnp.{jnp_name} is a similar function that does automatic type promotion "
            "on inputs)."
            if jnp_name
            else ""
        )
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}.{tip}")


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


# NumPy >= 2 keeps its floating-point error state in a context variable: setting it directly
# costs about 0.2 us, where `np.errstate` costs about 1.5 us (as much as the operation itself).
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE_ALL = _make_extobj(all="ignore")
    _token = _extobj_contextvar.set(_IGNORE_ALL)
    try:
        _fast_quiet = np.geterr()["divide"] == "ignore"
    finally:
        _extobj_contextvar.reset(_token)
except (ImportError, AttributeError, TypeError):
    _fast_quiet = False


def quiet(fn):
    """`fn` with NumPy's floating-point warnings off: like XLA, `log(0.)` is `-inf` silently."""
    if not _fast_quiet:
        return np.errstate(all="ignore")(fn)
    set_state, reset_state = _extobj_contextvar.set, _extobj_contextvar.reset

    def quiet_fn(*args, **params):
        token = set_state(_IGNORE_ALL)
        try:
            return fn(*args, **params)
        finally:
            reset_state(token)

    quiet_fn.__wrapped__ = fn
    return quiet_fn


def static_ints(name: str, what: str, values) -> tuple:
    """A shape/axes argument as a tuple of Python ints (tracers raise their concretization
    error: shapes must be static)."""
    try:
        return tuple(map(operator.index, values))
    except TypeError:
        if isinstance(values, Tracer) or any(isinstance(v, Tracer) for v in values):
            raise
        raise TypeError(f"{name} {what} must be a sequence of integers, got {values!r}") from None


_INT_BOUNDS = {}  # integer dtype -> (min, max) as Python ints


def int_bounds(dtype: np.dtype) -> tuple:
    """(min, max) of an integer dtype, cached (iinfo objects are slow to make)."""
    bounds = _INT_BOUNDS.get(dtype)
    if bounds is None:
        info = dtypes.iinfo(dtype)
        bounds = _INT_BOUNDS[dtype] = (int(info.min), int(info.max))
    return bounds


# --- broadcasting in derivative rules -------------------------------------------------------
# lax broadcasts rank-0 and size-1 operands of elementwise primitives implicitly, so a tangent
# of one operand may need broadcasting to the result's shape (JVP), and a cotangent of the
# result needs summing back down to an operand's shape (transpose).


def broadcast_to_shape(x, shape: tuple):
    """`x` (rank 0, or of equal rank with 1s where `shape` is larger) broadcast to `shape`."""
    from tracejit._src.lax.shapes import broadcast_in_dim

    x_shape = shape_of(x)
    if tuple(x_shape) == tuple(shape):
        return x
    dims = tuple(range(len(shape))) if x_shape else ()
    return broadcast_in_dim(x, shape, dims)


def unbroadcast(aval: ShapedArray, x):
    """`x`, of an elementwise result's shape, summed down to operand `aval`'s shape."""
    from tracejit._src.interpreters.ad import Zero
    from tracejit._src.lax.reductions import reduce_sum
    from tracejit._src.lax.shapes import reshape

    if type(x) is Zero:
        return Zero(aval)
    shape = shape_of(x)
    if tuple(shape) == aval.shape:
        return x
    if not aval.shape:
        return reduce_sum(x, tuple(range(len(shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, shape, strict=True)) if a != b)
    return reshape(reduce_sum(x, dims), aval.shape)


# --- batching rules -------------------------------------------------------------------------
# Pieces for `interpreters/batching.py` rules: `batch_rules[p](values, batch_dims, **params)`.


def vectorized_batch_rule(primitive):
    """For primitives that act on each element (or each slice of axes the params name
    nowhere): apply as is, the batch dimension stays where it is."""

    def rule(values, dims, **params):
        return primitive.bind(*values, **params), dims[0]

    return rule


def broadcasting_batch_rule(primitive):
    """For n-ary elementwise primitives: batch dimensions first, unbatched operands given a
    size-1 leading axis (rank-0 ones left alone), so lax's own broadcasting lines them up."""
    from tracejit._src.lax.shapes import broadcast_in_dim, reshape

    def rule(values, dims, **params):
        ranks = [len(shape_of(v)) - (d is not None) for v, d in zip(values, dims, strict=True)]
        out_rank = max(ranks)
        operands = []
        for value, dim, rank in zip(values, dims, ranks, strict=True):
            if dim is None:
                if rank:
                    shape = tuple(shape_of(value))
                    value = broadcast_in_dim(value, (1, *shape), tuple(range(1, rank + 1)))
            else:
                value = move_batch_dim(value, dim, 0)
                if rank < out_rank:  # a batched scalar among arrays: (B,) -> (B, 1, ..., 1)
                    size = shape_of(value)[0]
                    value = reshape(value, (size,) + (1,) * out_rank)
            operands.append(value)
        return primitive.bind(*operands, **params), 0

    return rule
