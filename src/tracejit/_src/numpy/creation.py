"""Array creation: `array`, `asarray`, `zeros`/`ones`/`full` (and `_like`), `arange`, `linspace`,
`eye`, `identity`.

Values known in Python (NumPy arrays, Python scalars, nested lists) become Arrays directly,
without staging anything: `jnp.asarray(np.ones(3))` inside a traced function is a constant. What
JAX computes with lax is staged the same way here: `zeros`/`ones`/`full` broadcast a scalar
(`broadcast_in_dim 0.0:f32[]`), `arange` and `eye` are built from `iota`, `linspace` from
`iota` and arithmetic, and a list holding tracers is assembled with `concatenate`.

Dtypes follow JAX: Python floats give float32 (float64 only with x64), NumPy's float64 arrays
are canonicalized to float32, `jnp.array(1.0)` is weakly typed while `jnp.array([1.0])` is not,
and explicit 64-bit dtypes are truncated with a warning when x64 is off.
"""

from __future__ import annotations

import operator

import numpy as np

from tracejit._src import dtypes, transfer_guard, vmap
from tracejit._src.array import Array, make_array
from tracejit._src.config import config
from tracejit._src.core import Tracer, concretization_error
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import sharding_constraints
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.promotion import (
    PYTHON_SCALARS,
    VALID_DTYPES,
    canonicalize_shape,
    check_placement,
    shape_ints,
)

_canonicalize = dtypes.canonicalize_dtype


def _user_dtype(dtype, name: str):
    return dtypes.check_user_dtype(dtype, name)


# --------------------------------------------------------------------------------------------
# array / asarray

# NumPy dtype -> the dtype an Array of it gets (for the current x64 mode; emptied when it
# changes). One dict lookup on asarray's fast path.
_canonical_array_dtypes: dict = {}


def _canonical_array_dtype(a) -> np.dtype:
    canonical = _canonicalize(a.dtype)
    if canonical not in VALID_DTYPES:
        raise promotion.invalid_dtype_error(a, a.dtype)
    _canonical_array_dtypes[a.dtype] = canonical
    return canonical


config.on_update(lambda name: _canonical_array_dtypes.clear())


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """`a` as an Array (or tracer), without copying what is already one."""
    if device is not None or out_sharding is not None:
        check_placement("asarray", device=device, out_sharding=out_sharding)
    a_type = type(a)
    if dtype is None:
        if a_type is Array:
            return a
        if a_type is np.ndarray:
            canonical = _canonical_array_dtypes.get(a.dtype)
            if canonical is None:
                canonical = _canonical_array_dtype(a)
            if transfer_guard.guarded[0]:
                transfer_guard.eager_host_to_device(np.empty(a.shape, canonical))
            if canonical is a.dtype:
                return make_array(np.array(a), False)
            return make_array(np.array(a, dtype=canonical), False)
        if isinstance(a, Tracer):
            return a
    return _array(a, dtype, "asarray", copy=False)


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None, out_sharding=None):
    """A new Array holding `object` (an array, a scalar or a nested sequence)."""
    if device is not None or out_sharding is not None:
        check_placement("array", device=device, out_sharding=out_sharding)
    if order is not None and order not in ("K", "C", "A"):
        raise NotImplementedError("Only implemented for order='K'")
    out = _array(object, dtype, "array", copy=bool(copy))
    ndmin = operator.index(ndmin)
    if out.ndim < ndmin:
        lead = ndmin - out.ndim
        out = lax_shapes.broadcast_in_dim(out, (1,) * lead + out.shape, tuple(range(lead, ndmin)))
    return out


def _array(a, dtype, name: str, copy: bool):
    dtype = _user_dtype(dtype, name)
    a_type = type(a)
    if a_type in PYTHON_SCALARS:
        if dtype is None:
            dtype, weak = dtypes.result_type(a, return_weak_type_flag=True)
            return promotion.convert_element_type(a, dtype, weak)
        return _transferred(make_array(promotion.scalar_value(a, dtype, named_dtype=True), False))
    if isinstance(a, (Tracer, Array)):
        if copy:
            a = _copy(a)
        return a if dtype is None else promotion.convert_element_type(a, dtype, False)
    if hasattr(a, "__jax_array__"):
        return _array(a.__jax_array__(), dtype, name, copy)
    if isinstance(a, (list, tuple)):
        return _transferred(_from_sequence(a, dtype, name))
    if isinstance(a, (np.ndarray, np.generic)):
        value = a
    elif hasattr(a, "__array__") or isinstance(a, (str, bytes)):
        value = np.asarray(a)
    else:
        raise TypeError(
            f"Unexpected input type for array: {type(a)}. Expected an array, a scalar or a "
            "(nested) list or tuple of them."
        )
    if value.dtype not in VALID_DTYPES and _canonicalize(value.dtype) not in VALID_DTYPES:
        raise promotion.invalid_dtype_error(a if value.ndim == 0 else value, value.dtype)
    target = _canonicalize(value.dtype) if dtype is None else dtype
    return _transferred(make_array(np.array(value, dtype=target), False))


def _transferred(out: Array) -> Array:
    """A host value made an Array: an implicit transfer to the device, under the guard."""
    if transfer_guard.guarded[0]:
        transfer_guard.eager_host_to_device(out._value)
    return out


def _copy(x):
    if type(x) is Array:
        return make_array(np.array(x._value), x.weak_type)
    return lax_shapes.copy_p.bind(x)


def _leaves(seq, out: list) -> list:
    for item in seq:
        if isinstance(item, (list, tuple)):
            _leaves(item, out)
        else:
            out.append(item)
    return out


def _from_sequence(seq, dtype, name: str):
    leaves = _leaves(seq, [])
    for leaf in leaves:
        if not promotion.is_arraylike(leaf) and not hasattr(leaf, "__array__"):
            raise TypeError(
                f"Unexpected input type for {name}: {type(leaf)}. Expected an array, a scalar "
                "or a (nested) list or tuple of them."
            )
    if dtype is None:
        if leaves:
            dtype = dtypes.result_type(*[_leaf_for_dtype(x) for x in leaves])
        else:
            dtype = dtypes.default_float_dtype()
    if dtype == dtypes.key_fry or any(isinstance(x, Tracer) for x in leaves):
        return _stack_nested(seq, dtype)  # (NumPy cannot see typed keys: they are no numbers)
    value = np.array(_numpy_nested(seq), dtype=dtype)
    return make_array(value, False)


def _leaf_for_dtype(x):
    if isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or type(x) in PYTHON_SCALARS:
        return x
    return np.asarray(x)


def _numpy_nested(seq):
    return [
        _numpy_nested(x)
        if isinstance(x, (list, tuple))
        else (np.asarray(x) if isinstance(x, Array) else x)
        for x in seq
    ]


def _stack_nested(seq, dtype):
    """A nested sequence holding tracers, assembled with concatenate as JAX stages it."""
    parts = []
    for item in seq:
        if isinstance(item, (list, tuple)):
            if any(isinstance(x, Tracer) for x in _leaves(item, [])):
                part = _stack_nested(item, dtype)
            else:  # known values: one constant, as JAX makes it
                part = _from_sequence(item, dtype, "array")
        else:
            part = promotion.convert_element_type(promotion.to_operand("array", item), dtype)
        parts.append(
            lax_shapes.broadcast_in_dim(part, (1,) + part.shape, tuple(range(1, part.ndim + 1)))
        )
    shapes = {p.shape for p in parts}
    if len(shapes) > 1:
        raise ValueError(
            f"setting an array element with a sequence: shapes {sorted(shapes)} differ"
        )
    return lax_shapes.concatenate(parts, 0)


# --------------------------------------------------------------------------------------------
# Filled arrays


def _fill_value(fill_value, dtype, weak: bool):
    if type(fill_value) in PYTHON_SCALARS:
        if weak:
            return promotion.weak_scalar(fill_value, dtype)
        return make_array(promotion.scalar_value(fill_value, dtype, named_dtype=True), False)
    return promotion.convert_element_type(promotion.to_operand("full", fill_value), dtype, weak)


def _broadcast_fill(value, shape: tuple):
    if value.shape == shape:
        return value
    if not value.shape:
        return lax_shapes.broadcast_in_dim(value, shape, ())
    return manipulation.broadcast_to(value, shape)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with `fill_value` (weakly typed for a Python scalar fill and
    no dtype, as in JAX)."""
    if device is not None or out_sharding is not None:
        check_placement("full", device=device, out_sharding=out_sharding)
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "full")
    if dtype is None:
        operand = promotion.asarray_operand("full", fill_value)
        return _broadcast_fill(operand, shape)
    return _broadcast_fill(_fill_value(fill_value, dtype, False), shape)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with zeros (float32 unless `dtype` says otherwise)."""
    if device is not None or out_sharding is not None:
        check_placement("zeros", device=device, out_sharding=out_sharding)
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "zeros") or dtypes.default_float_dtype()
    return _broadcast_fill(_fill_value(0, dtype, False), shape)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with ones (float32 unless `dtype` says otherwise)."""
    if device is not None or out_sharding is not None:
        check_placement("ones", device=device, out_sharding=out_sharding)
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "ones") or dtypes.default_float_dtype()
    return _broadcast_fill(_fill_value(1, dtype, False), shape)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like `zeros`: arrays are immutable, so an uninitialized one would be of no use."""
    if device is not None or out_sharding is not None:
        check_placement("empty", device=device, out_sharding=out_sharding)
    return zeros(shape, dtype)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array like `a` (its shape and dtype, and its weak type unless `dtype` is given)
    filled with `fill_value`."""
    if device is not None or out_sharding is not None:
        check_placement("full_like", device=device, out_sharding=out_sharding)
    prototype_shape, prototype_dtype, weak = _like("full_like", a)
    user_dtype = _user_dtype(dtype, "full_like")
    target = prototype_dtype if user_dtype is None else user_dtype
    weak = weak and user_dtype is None
    if shape is not None:
        return _broadcast_fill(_fill_value(fill_value, target, weak), canonicalize_shape(shape))
    filled = _broadcast_fill(_fill_value(fill_value, target, weak), prototype_shape)
    return sharding_constraints.laid_out_like(filled, a)


def _like(name, a):
    """(shape, dtype, weak type) of the prototype of a `*_like` function: an array, or as in
    JAX anything else with a shape and a dtype (`ShapeDtypeStruct`), whose result is strong."""
    if not isinstance(a, (Array, Tracer, np.ndarray, np.generic)) and (
        hasattr(a, "shape") and hasattr(a, "dtype")
    ):
        return canonicalize_shape(a.shape), dtypes.canonicalize_dtype(a.dtype), False
    x = promotion.asarray_operand(name, a)
    return x.shape, x.dtype, x.weak_type


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype of `a`."""
    if device is not None or out_sharding is not None:
        check_placement("zeros_like", device=device, out_sharding=out_sharding)
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape and dtype of `a`."""
    if device is not None or out_sharding is not None:
        check_placement("ones_like", device=device, out_sharding=out_sharding)
    return full_like(a, 1, dtype, shape)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Like `zeros_like`."""
    if device is not None:
        check_placement("empty_like", device=device)
    return full_like(prototype, 0, dtype, shape)


# --------------------------------------------------------------------------------------------
# Ranges


def _concrete_scalar(x, name: str, argname: str):
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise concretization_error(
                x, ConcretizationTypeError, f"the jnp.{name} argument '{argname}'"
            )
        value = np.asarray(value)
    elif isinstance(x, Array):
        value = np.asarray(x)
    else:
        value = x
    if np.ndim(value) != 0:
        raise ValueError(f"jax.numpy.{name}: arguments must be scalars; got {argname}={value}")
    return value


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop), by `step`: `iota` scaled and shifted."""
    if device is not None or out_sharding is not None:
        check_placement("arange", device=device, out_sharding=out_sharding)
    start = _concrete_scalar(start, "arange", "start" if stop is not None else "stop")
    if stop is not None:
        stop = _concrete_scalar(stop, "arange", "stop")
    if step is not None:
        step = _concrete_scalar(step, "arange", "step")
    given = [x for x in (start, stop, step) if x is not None]
    for x in given:
        if np.iscomplexobj(x):
            raise TypeError("arange does not support complex arguments")
    user_dtype = _user_dtype(dtype, "arange")
    dtype = user_dtype if user_dtype is not None else dtypes.result_type(*given)
    if stop is None and step is None:
        size = max(int(np.ceil(start)), 0)
        return lax_shapes.iota(dtype, size)
    if step is None:
        step_value = 1
    else:
        step_value = step
        if step_value == 0:
            raise ZeroDivisionError("arange: step must be nonzero")
    size = max(int(np.ceil((stop - start) / step_value)), 0)
    out = lax_shapes.iota(dtype, size)
    if step is not None:
        out = lax_binary.mul(_scalar_operand(step, dtype), out)
        return lax_binary.add(_scalar_operand(start, dtype), out)
    if start != 0:
        out = lax_binary.add(_scalar_operand(start, dtype), out)
    return out


def _scalar_operand(x, dtype):
    x = x.item() if isinstance(x, (np.ndarray, np.generic)) else x
    if type(x) in PYTHON_SCALARS:
        return promotion.weak_scalar(x, dtype) if type(x) is not bool else x
    return promotion.convert_element_type(x, dtype, True)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """`num` evenly spaced values from `start` to `stop` (included when `endpoint`)."""
    if device is not None:
        check_placement("linspace", device=device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return _linspace(start, stop, num, endpoint, retstep, dtype, axis)


@jnp_jit(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    user_dtype = _user_dtype(dtype, "linspace")
    start_op = promotion.to_operand("linspace", start, 0)
    stop_op = promotion.to_operand("linspace", stop, 1)
    result_dtype = user_dtype or promotion.to_inexact_dtype(dtypes.result_type(start_op, stop_op))
    computation = promotion.to_inexact_dtype(result_dtype)
    start_op = promotion.convert_element_type(start_op, computation)
    stop_op = promotion.convert_element_type(stop_op, computation)
    bounds = promotion.broadcast_shapes(start_op.shape, stop_op.shape)
    start_op = manipulation.broadcast_to(start_op, bounds)
    stop_op = manipulation.broadcast_to(stop_op, bounds)
    axis = _normalize_axis(axis, len(bounds) + 1)
    out_shape = bounds[:axis] + (num,) + bounds[axis:]
    step = None
    if num > 1:
        div = num - 1 if endpoint else num
        divisor = promotion.weak_scalar(float(div), computation)
        step = ufuncs.divide(ufuncs.subtract(stop_op, start_op), divisor)
        iota_shape = [1] * len(bounds)
        iota_shape.insert(axis, div)
        ramp = ufuncs.divide(
            lax_shapes.broadcasted_iota(computation, tuple(iota_shape), axis), divisor
        )
        first = manipulation.expand_dims_reshape(start_op, axis)
        from_start = ufuncs.multiply(first, ufuncs.subtract(1.0, ramp))
        last = manipulation.expand_dims_reshape(stop_op, axis)
        out = ufuncs.add(from_start, ufuncs.multiply(last, ramp))
        if endpoint:
            end = manipulation.expand_dims(stop_op, axis)
            out = lax_shapes.concatenate([out, end], axis)
    elif num == 1:
        out = manipulation.expand_dims_reshape(start_op, axis)
        step = None
    else:
        out = zeros(out_shape, computation)
    if dtypes.is_int(result_dtype) or result_dtype == np.dtype(bool):
        out = ufuncs.floor(out)
    out = promotion.convert_element_type(out, result_dtype)
    if retstep:
        if step is None:
            step = promotion.convert_element_type(float("nan"), computation)
        return out, step
    return out


def _normalize_axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    if device is not None:
        check_placement("eye", device=device)
    n, m = shape_ints((N, N if M is None else M))
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    k = operator.index(k)
    dtype = _user_dtype(dtype, "eye") or dtypes.default_float_dtype()
    int_dtype = dtypes.default_int_dtype()
    rows = lax_shapes.broadcasted_iota(int_dtype, (n, m), 0)
    cols = lax_shapes.broadcasted_iota(int_dtype, (n, m), 1)
    diagonal = lax_comparison.eq(lax_binary.add(rows, promotion.weak_scalar(k, int_dtype)), cols)
    return promotion.convert_element_type(diagonal, dtype)


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal; float32 unless `dtype` says otherwise (also in
    64-bit mode, as JAX 0.10.2)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    dtype = _user_dtype(dtype, "tri") or np.dtype(np.float32)
    int_dtype = dtypes.default_int_dtype()
    rows = lax_shapes.broadcasted_iota(int_dtype, (n, m), 0)
    cols = lax_shapes.broadcasted_iota(int_dtype, (n, m), 1)
    below = lax_comparison.ge(lax_binary.add(rows, promotion.weak_scalar(k, int_dtype)), cols)
    return promotion.convert_element_type(below, dtype)


# --------------------------------------------------------------------------------------------
# Conversions and copies


def astype(x, dtype, /, *, copy=False, device=None):
    """`x` converted to `dtype` (the default float type for None), never weakly typed. A
    complex array becomes boolean where it is nonzero, as in NumPy (a bare conversion would
    look at the real part only)."""
    x = promotion.asarray_operand("astype", x)
    if (
        x.dtype == dtypes.key_fry
        and isinstance(dtype, (np.dtype, dtypes.KeyTy))
        and dtype == dtypes.key_fry
    ):
        return _copy(x) if copy else x  # keys to their own dtype (optax's tree code does it)
    target = dtypes.default_float_dtype() if dtype is None else _user_dtype(dtype, "astype")
    if dtypes.is_complex(x.dtype) and target == np.dtype(bool):
        x = ufuncs.not_equal(x, promotion.convert_element_type(0, x.dtype, False))
    out = promotion.convert_element_type(x, target, False)
    return _copy(out) if copy else out


def copy(a, order=None):
    """A copy of `a` (its dtype and weak type kept)."""
    return array(promotion.to_operand("copy", a), copy=True, order=order)


# --------------------------------------------------------------------------------------------
# Arrays from buffers, strings and functions


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """The bytes of `buffer` read as a 1-D array of `dtype` (NumPy's `frombuffer`, then
    canonicalized)."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """The numbers written in `string`, separated by `sep` (NumPy's `fromstring`)."""
    return asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    """Raises, as JAX does: reading a file is a side effect a traced function must not have."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) "
        "instead, although care should be taken if np.fromfile is used within a jax "
        "transformations because of its potential side-effect of consuming the file object; "
        "for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def fromiter(*args, **kwargs):
    """Raises, as JAX does: consuming an iterator is a side effect a traced function must not
    have."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) "
        "instead, although care should be taken if np.fromiter is used within a jax "
        "transformations because of its potential side-effect of consuming the iterable "
        "object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function` called on the index grids of `shape`, as JAX does it: vmapped over one
    `arange` per axis, so `function` sees 0-d indices and may use any traceable code."""
    shape = canonicalize_shape(shape, "shape argument of jnp.fromfunction()")
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap.vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)
