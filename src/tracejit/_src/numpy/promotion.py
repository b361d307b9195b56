"""How `jnp` functions turn their arguments into operands of one dtype and rank for lax.

lax primitives never promote: their operands must already share a dtype and (for elementwise
ops) a rank. `jnp` gets there the way JAX stages it:

1. *Operands*: Arrays and tracers pass as they are; NumPy arrays and scalars become Arrays
   of their canonical dtype (strongly typed); Python scalars are kept aside, being weakly typed;
   anything else (lists, strings) is a TypeError naming the function and the position.
2. *Dtypes*: the join in JAX's lattice (`dtypes.result_type`, weak types included). An operand
   whose (dtype, weak type) differs from the join gets `convert_element_type[new_dtype=...
   weak_type=...]`; a Python scalar becomes a weakly typed scalar Array of the joined dtype,
   which staging inlines as a Literal (`2.0:f32[]`). A Python int first has to fit the default
   integer type (an OverflowError otherwise), then wraps into narrower ones (`int8 * 1000`
   multiplies by -24), as in JAX.
3. *Ranks*: when operands of different non-zero ranks meet, each lower-rank one gets
   `broadcast_in_dim` to a shape padded with leading 1s (`f32[3] -> f32[1,3]`); rank-0 operands
   are left alone, since lax broadcasts scalars itself.

The elementwise functions built by `ufuncs.py` have their own fast path for the common eager
cases (two Arrays of one dtype; an Array and a Python scalar) that skips all of the above; what
it needs from here is the cache of converted Python scalars (`scalar_cache`).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from tracejit._src import dtypes, transfer_guard, xla_bridge
from tracejit._src.array import Array, make_array
from tracejit._src.config import config
from tracejit._src.core import Tracer
from tracejit._src.lax import conversions as lax_conversions
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax.arrays import broadcast_shapes

_convert_impl = lax_conversions.convert_element_type_p.impl

# Python scalar types: int, float and complex values are weakly typed, bool values are not.
PYTHON_SCALARS = frozenset((bool, int, float, complex))
WEAK_PYTHON_SCALARS = frozenset((int, float, complex))

# Dtypes an array may have (the lattice ones, plus float0 for tangents of integers).
VALID_DTYPES = frozenset(dtypes.LATTICE_DTYPES) | {dtypes.float0}

_BOOL = np.dtype(bool)


def invalid_dtype_error(value, dtype) -> TypeError:
    return TypeError(
        f"Value {value!r} with dtype {dtype} is not a valid JAX array type. Only arrays of "
        "numeric types are supported by JAX."
    )


def numpy_to_array(x) -> Array:
    """An Array holding a copy of the NumPy array or scalar `x`, in its canonical dtype."""
    dtype = dtypes.canonicalize_dtype(x.dtype)
    if dtype not in VALID_DTYPES:
        raise invalid_dtype_error(x, x.dtype)
    if transfer_guard.guarded[0]:
        transfer_guard.eager_host_to_device(np.asarray(x, dtype))
    return make_array(np.array(x, dtype=dtype), False)


def is_arraylike(x) -> bool:
    return (
        type(x) is Array
        or type(x) in PYTHON_SCALARS
        or isinstance(x, (Tracer, Array, np.ndarray, np.generic))
    )


def to_operand(name: str, x, position: int = 0):
    """`x` as an operand: an Array, a tracer, or a Python scalar (converted later, once the
    dtype it must take is known)."""
    x_type = type(x)
    if x_type is Array or x_type in PYTHON_SCALARS or isinstance(x, (Tracer, Array)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return numpy_to_array(x)
    raise TypeError(
        f"{name} requires ndarray or scalar arguments, got {x_type} at position {position}."
    )


def to_operands(name: str, args) -> list:
    return [to_operand(name, x, i) for i, x in enumerate(args)]


# --------------------------------------------------------------------------------------------
# Python scalars as weakly typed scalar Arrays of a given dtype.

# (dtype, Python type) -> {value: Array}. Shared by every function; Arrays are immutable, so one
# `2.0:f32[]` serves all. Zeros are not cached (0.0 == -0.0 as dict keys), and a cache that
# grows past _CACHE_LIMIT is emptied.
_scalar_caches: dict = {}
_CACHE_LIMIT = 512


def scalar_cache(dtype: np.dtype, scalar_type: type) -> dict:
    key = (dtype, scalar_type, config.enable_x64)
    cache = _scalar_caches.get(key)
    if cache is None:
        cache = _scalar_caches[key] = {}
    return cache


def _clear_scalar_caches(option_name: str) -> None:
    _scalar_caches.clear()


config.on_update(_clear_scalar_caches)


def scalar_value(x, dtype: np.dtype, named_dtype: bool = False):
    """The NumPy scalar of `dtype` that the Python scalar `x` becomes, as JAX converts it.
    With `named_dtype` (`jnp.array(x, dtype)`), an int outside the default int type that fits
    `dtype` converts too, as in JAX (`jnp.array(2**32 - 1, jnp.uint32)`)."""
    if type(x) is int:
        default = dtypes.default_int_dtype()
        try:
            value = default.type(x)
        except OverflowError:
            if (
                named_dtype
                and dtype.kind in "iu"
                and np.iinfo(dtype).min <= x <= np.iinfo(dtype).max
            ):
                return dtype.type(x)
            raise OverflowError(f"Python int {x} too large to convert to {default.name}") from None
        if dtype == default:
            return value
        with np.errstate(over="ignore"):
            return value.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype.kind != "c" and type(x) is complex:
            raise TypeError(f"cannot convert the complex value {x!r} to {dtype.name}")
        return dtype.type(x)


def cached_scalar(cache: dict, x, dtype: np.dtype) -> Array:
    """A scalar Array for the Python scalar `x` converted to `dtype`, remembered in `cache`.
    It holds a read-only 0-d ndarray: NumPy's ufuncs take those faster than NumPy scalars."""
    value = np.array(scalar_value(x, dtype))
    value.flags.writeable = False
    array = make_array(value, type(x) is not bool)
    if x:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[x] = array
    return array


def weak_scalar(x, dtype: np.dtype) -> Array:
    """The Python scalar `x` as a scalar Array of `dtype` (weak unless `x` is a bool)."""
    cache = scalar_cache(dtype, type(x))
    array = cache.get(x)
    if array is None:
        array = cached_scalar(cache, x, dtype)
    return array


# --------------------------------------------------------------------------------------------
# Dtype promotion


def convert_element_type(x, dtype, weak_type: bool = False):
    """`x` (an operand) as `dtype` with the given weak type: `convert_element_type` unless it
    already is (JAX's internal `_convert_element_type`)."""
    x_type = type(x)
    if x_type in PYTHON_SCALARS:
        if x_type is bool or not weak_type:
            out = make_array(np.array(scalar_value(x, dtype)), weak_type)
        else:
            out = weak_scalar(x, dtype)
        if transfer_guard.guarded[0]:
            transfer_guard.eager_host_to_device(x)
        return out
    if x.dtype == dtype and x.weak_type == weak_type:
        return x
    if x_type is Array:
        # A concrete value is converted right away, not staged: JAX folds these too.
        return make_array(_convert_impl(x._value, new_dtype=dtype, weak_type=weak_type), weak_type)
    return lax_conversions.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type)


def result_dtype(*operands) -> tuple:
    """(dtype, weak_type) of the join of the operands' types."""
    return dtypes.result_type(*operands, return_weak_type_flag=True)


def promote_dtypes(*operands) -> list:
    """Operands converted to their common dtype (`jnp`'s `promote_dtypes`)."""
    if len(operands) == 1:
        x = operands[0]
        if type(x) in PYTHON_SCALARS:
            return [convert_element_type(x, *result_dtype(x))]
        return [x]
    dtype, weak = result_dtype(*operands)
    return [convert_element_type(x, dtype, weak) for x in operands]


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_I32 = np.dtype(np.int32)


def to_inexact_dtype(dtype: np.dtype) -> np.dtype:
    """The floating-point dtype integer and bool values are computed in, as JAX picks it:
    float64 for 64-bit integers (which exist only with x64), float32 for the others."""
    if dtypes.is_inexact(dtype):
        return dtype
    return _F64 if dtype.itemsize == 8 else _F32


def promote_dtypes_inexact(*operands) -> list:
    """Like promote_dtypes, but integer and bool results become the default float type."""
    dtype, weak = result_dtype(*operands)
    dtype = to_inexact_dtype(dtype)
    return [convert_element_type(x, dtype, weak) for x in operands]


def promote_dtypes_numeric(*operands) -> list:
    """Like promote_dtypes, but bool results become int32 (also with x64, as in JAX)."""
    dtype, weak = result_dtype(*operands)
    if dtype == _BOOL:
        dtype = _I32
    return [convert_element_type(x, dtype, weak) for x in operands]


# --------------------------------------------------------------------------------------------
# Shape promotion


def promote_shapes(name: str, *operands) -> list:
    """Operands of different non-zero ranks brought to the highest rank with leading 1s."""
    if len(operands) < 2:
        return list(operands)
    shapes = [np.shape(x) for x in operands]
    ranks = {len(s) for s in shapes if s}
    if len(ranks) < 2:
        return list(operands)
    broadcast_shapes(*shapes)  # raises for incompatible shapes
    if config.numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(name, shapes)
    rank = max(ranks)
    return [
        _pad_rank(x, shape, rank) if 0 < len(shape) < rank else x
        for x, shape in zip(operands, shapes, strict=True)
    ]


def _rank_promotion_warning_or_error(name: str, shapes: list) -> None:
    """`jax_numpy_rank_promotion` at "warn" or "raise": implicit rank promotion, a common
    source of silent broadcasting bugs, is reported as JAX reports it."""
    listed = " ".join(map(str, shapes))
    if config.numpy_rank_promotion == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {name} on shapes {listed}. Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
            "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
            stacklevel=4,
        )
        return
    raise ValueError(
        f"Operands could not be broadcast together for {name} on shapes {listed} and with the "
        "config option jax_numpy_rank_promotion='raise'. For more information, see "
        "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
    )


def _pad_rank(x, shape: tuple, rank: int):
    lead = rank - len(shape)
    return lax_shapes.broadcast_in_dim(x, (1,) * lead + tuple(shape), tuple(range(lead, rank)))


def promote_args(name: str, *args) -> list:
    """Operands for an elementwise lax op: common dtype, then common rank."""
    return promote_shapes(name, *promote_dtypes(*to_operands(name, args)))


def promote_args_inexact(name: str, *args) -> list:
    return promote_shapes(name, *promote_dtypes_inexact(*to_operands(name, args)))


def promote_args_numeric(name: str, *args) -> list:
    return promote_shapes(name, *promote_dtypes_numeric(*to_operands(name, args)))


# --------------------------------------------------------------------------------------------
# Single-operand helpers


def asarray_operand(name: str, x, position: int = 0):
    """One operand as an Array or tracer (Python scalars become weak scalar Arrays)."""
    x = to_operand(name, x, position)
    if type(x) in PYTHON_SCALARS:
        dtype, weak = dtypes.result_type(x, return_weak_type_flag=True)
        return convert_element_type(x, dtype, weak)
    return x


def shape_ints(shape) -> tuple:
    """A shape argument (an int or a sequence of ints) as a tuple of Python ints, with JAX's
    TypeError for anything else (floats, None, tracers)."""
    if not np.iterable(shape) or isinstance(shape, Tracer):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(shape)!r}."
        ) from None


def canonicalize_shape(shape, name: str = "shape") -> tuple:
    """`shape_ints` of a shape that must have no negative dimension. An array filled to
    `shape` (`zeros`, `full`, ...) refuses one as JAX's `broadcast_in_dim` does (TypeError);
    other shapes, named by `name`, with NumPy's ValueError."""
    result = shape_ints(shape)
    if any(d < 0 for d in result):
        if name == "shape":
            raise TypeError(
                f"broadcast_in_dim shape must have every element be nonnegative, got {result}."
            )
        raise ValueError(f"negative dimensions are not allowed, got {name} {result}")
    return result


def check_placement(name: str, device=None, out_sharding=None) -> None:
    """`device=`/`out_sharding=` as jnp takes them: tracejit has one device, where every array
    already is, so that device (or None) is all it can honour."""
    if out_sharding is not None:
        raise NotImplementedError(
            f"jnp.{name}: out_sharding other than None needs several devices, which tracejit "
            f"does not support yet; got {out_sharding!r}"
        )
    if device is not None and device not in xla_bridge.devices():
        raise NotImplementedError(
            f"jnp.{name}: device={device!r} is not this process's device; shardings and other "
            "devices are not supported yet"
        )
