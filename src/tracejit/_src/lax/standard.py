"""Rule pieces shared by the primitive families: dtype checks, the elementwise shape rule, weak
types, and small factories of derivative and lowering rules.

A family module (`lax/<family>.py`) defines each primitive in one block: the `Primitive`, its
public wrapper, `def_impl` (NumPy), `def_abstract_eval` (built from the pieces here), and
`def_weak_type_rule`; later transformations register their rules in the same block.

The elementwise shape rule follows lax, not NumPy: operands must have equal ranks and each
dimension must agree or be 1; rank-0 operands broadcast freely (`mul c 3.0:f32[]`). Dtypes must
be equal after canonicalization: lax never promotes (jnp does, before calling lax).
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array, make_array
from tracejit._src.core import ShapedArray, Tracer, get_aval, never_weak, shape_of, weak_if_all_weak  # noqa: F401
from tracejit._src.interpreters.ad import Zero


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
    return d != np.bool_ and d != dtypes.key_fry


def is_complex(d):
    return dtypes.issubdtype(d, np.complexfloating)


def is_int_or_float(d):
    return is_int(d) or is_float(d)


def is_not_complex(d):
    return not is_complex(d) and d != dtypes.key_fry


def is_any(d):
    return True


def dtype_name(dtype) -> str:
    """A dtype as error messages name it: `float32`, `key<fry>`."""
    return "key<fry>" if dtype == dtypes.key_fry else dtype.name


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
            f"{name} does not accept dtype {dtype_name(aval.dtype)} for its {operand}; it needs "
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
        got = ", ".join(dtype_name(aval.dtype) for aval in avals)
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


def scipy_special():
    """scipy.special, imported on first use: it costs more than the rest of `import tracejit`."""
    import scipy.special

    return scipy.special


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


real_ufuncs: dict = {}
"""Primitive -> (ufunc, quiet), for impls that compute real operands of one dtype with the NumPy
ufunc `ufunc` (inside `quiet` or not) and other dtypes their own way (complex products, typed
keys): see `eager_ufunc`."""


def eager_ufunc(primitive):
    """(ufunc, quiet) when `primitive`'s impl, on real operands of one dtype whose shapes are
    equal or of rank 0, is the NumPy ufunc `ufunc` (`quiet`: with NumPy's floating-point
    warnings off), else None. The C accelerator's eager kernels run such a ufunc's loop
    directly (`numpy/ufuncs.py`); the impl says so by being `ufunc` or `quiet(ufunc)`, or by an
    entry in `real_ufuncs`."""
    impl = primitive.impl
    if isinstance(impl, np.ufunc):
        return impl, False
    if isinstance(getattr(impl, "__wrapped__", None), np.ufunc):
        return impl.__wrapped__, True
    return real_ufuncs.get(primitive)


def is_array(x) -> bool:
    """An Array (on the host or on devices) or tracer, which a no-op wrapper may return
    unchanged (a NumPy input is bound, so that the result is an Array)."""
    return isinstance(x, (Array, Tracer))


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


# --- batching rules -------------------------------------------------------------------------
# Pieces for `interpreters/batching.py` rules: `batch_rules[p](values, batch_dims, **params)`.


def vectorized_batch_rule(primitive):
    """For primitives that act on each element (or each slice of axes the params name
    nowhere): apply as is, the batch dimension stays where it is."""

    def rule(values, dims, **params):
        return primitive.bind(*values, **params), dims[0]

    return rule


# --- derivative and lowering rules ----------------------------------------------------------
# Derivative rules call the primitives' wrappers, so that they can themselves be
# differentiated (to any order), staged or evaluated.


def constant_like(x, value):
    """`value` as a weakly typed rank-0 constant of x's dtype (a literal in jaxprs; lax
    broadcasts it): as a Python number in a rule, it leaves the weak type of what it meets, so
    the derivative at a Python float is weak eagerly as when traced (and as in JAX)."""
    return make_array(np.array(value, get_aval(x).dtype), True)


def jvp_using_result(primitive, tangent_of):
    """The JVP rule of a unary primitive whose derivative reads its own result, computed once:
    `tangent_of(t, ans, x, **params)` (exp's derivative is exp itself)."""

    def rule(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        (t,) = tangents
        if type(t) is Zero:
            return ans, Zero.from_primal_value(ans)
        return ans, tangent_of(t, ans, *primals, **params)

    return rule


def lower_unary(op_name):
    """The lowering rule emitting the one StableHLO (or CHLO) operation `op_name`."""
    return lambda ctx, x, **params: ctx.op(op_name, [x])


def lower_binary(op_name: str):
    """The lowering rule of a binary primitive that is one StableHLO operation on operands
    broadcast to the result's shape."""

    def rule(ctx, x, y):
        return ctx.op(op_name, ctx.broadcast_operands(x, y))

    return rule


# --- parameters JAX takes that one CPU device leaves nothing to do with -----------------------


def check_no_sharding(name: str, sharding) -> None:
    """A sharding parameter (`out_sharding=`, `sharding=`): on one device the only layout is the
    unsharded one, so None is all that tracejit can honour."""
    if sharding is not None:
        raise NotImplementedError(
            f"lax.{name}: sharding arguments other than None need several devices, which "
            f"tracejit does not support yet; got {sharding!r}"
        )


class AccuracyMode(enum.Enum):
    """An accuracy asked of a unary function's implementation (`accuracy=`)."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances asked of a unary function's implementation (`accuracy=`): at most two of
    atol, rtol and ulps."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


def check_default_accuracy(name: str, accuracy) -> None:
    """`accuracy=` asks XLA for an implementation meeting a tolerance; tracejit compiles each
    function one way, so it accepts only None and AccuracyMode.DEFAULT (XLA's default
    implementation)."""
    if accuracy is not None and accuracy is not AccuracyMode.DEFAULT:
        raise NotImplementedError(
            f"lax.{name}: accuracy={accuracy!r} is not supported; only the default "
            "implementation (accuracy=None or AccuracyMode.DEFAULT) is"
        )
