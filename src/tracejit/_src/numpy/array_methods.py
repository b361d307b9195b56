"""Operators, methods and properties of `Array` and of every `Tracer`, attached at import.

Arrays and tracers answer the same operators the same way, so a function behaves alike when
run eagerly and when traced: `x + y` is `jnp.add(x, y)`, `x / y` is `jnp.true_divide`, `x // y`
`jnp.floor_divide`, `x % y` `jnp.remainder` (Python's sign convention), `x ** 2`
`jnp.power` (a Python int exponent stages `integer_pow`), `x @ y` `jnp.matmul`, and so on.
An operand of a type that jnp does not take (a list, a string, an unknown object) makes the
operator return NotImplemented, so that Python tries the other operand's reflected method and
otherwise raises its usual TypeError.

Methods mirror NumPy's (`x.sum(axis=0)`, `x.reshape(2, -1)`, `x.astype(jnp.int32)`, `x.T`),
`x[idx]` does basic indexing and `x.at[idx].set(y)` indexed updates (see `indexing.py`).
"""

from __future__ import annotations

import importlib

import numpy as np

from tracejit._src import dtypes
from tracejit._src.array import Array
from tracejit._src.core import Tracer
from tracejit._src.lax import conversions
from tracejit._src.numpy import (
    advanced_indexing,
    arithmetic,
    creation,
    indexing,
    lib,
    manipulation,
    placement,
    products,
    reductions,
    sorting,
    ufuncs,
)
from tracejit._src.numpy.promotion import PYTHON_SCALARS

# Operand types an operator accepts; anything else gets NotImplemented.
_ACCEPTED = (Array, Tracer, np.ndarray, np.generic)


def _accepted(x) -> bool:
    return type(x) is Array or type(x) in PYTHON_SCALARS or isinstance(x, _ACCEPTED)


def _binary_operator(fun, name: str):
    """`self <op> other` and `other <op> self` for the jnp function `fun`."""

    def forward(self, other):
        if type(other) is Array or type(other) in PYTHON_SCALARS or isinstance(other, _ACCEPTED):
            return fun(self, other)
        return NotImplemented

    def reflected(self, other):
        if type(other) in PYTHON_SCALARS or isinstance(other, _ACCEPTED):
            return fun(other, self)
        return NotImplemented

    forward.__name__ = forward.__qualname__ = f"__{name}__"
    reflected.__name__ = reflected.__qualname__ = f"__r{name}__"
    return forward, reflected


def _fast_binary_operator(fun, name: str):
    """Like `_binary_operator`, but `self <op> other` is the jnp function's operator variant
    (`fun.operator`), which has the function's fast path built in."""
    forward, reflected = _binary_operator(fun, name)
    fast_forward = getattr(fun, "operator", forward)
    return fast_forward, reflected


def _comparison(fun, name: str):
    if hasattr(fun, "operator"):
        return fun.operator

    def compare(self, other):
        if _accepted(other):
            return fun(self, other)
        return NotImplemented

    compare.__name__ = compare.__qualname__ = f"__{name}__"
    return compare


def _divmod(self, other):
    if not _accepted(other):
        return NotImplemented
    return arithmetic.divmod(self, other)


def _rdivmod(self, other):
    if not _accepted(other):
        return NotImplemented
    return arithmetic.divmod(other, self)


# --------------------------------------------------------------------------------------------
# Methods


def _astype(self, dtype, copy=False, device=None):
    return creation.astype(self, dtype, copy=copy, device=device)


def _reshape(self, *args, order="C", **kwargs):
    """`jnp.reshape(self, shape)`; the shape may be given as separate ints."""
    if "shape" in kwargs:
        if args:
            raise TypeError("reshape() got multiple values for argument 'shape'")
        shape = kwargs.pop("shape")
    elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        shape = args[0]
    else:
        shape = args
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    return manipulation.reshape(self, shape, order=order)


def _transpose(self, *axes):
    """`jnp.transpose(self, axes)`; the axes may be given as separate ints."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return manipulation.transpose(self)
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    return manipulation.transpose(self, axes)


def _flatten(self, order="C"):
    """A 1-D copy of the array."""
    return manipulation.reshape(self, (self.size,), order=order)


def _squeeze(self, axis=None):
    return manipulation.squeeze(self, axis)


def _clip(self, min=None, max=None):
    return ufuncs.clip(self, min, max)


def _round(self, decimals=0, out=None):
    return ufuncs.round(self, decimals, out)


def _dunder_round(self, ndigits=None):
    return ufuncs.round(self, 0 if ndigits is None else ndigits)


def _dot(self, b, *, precision=None, preferred_element_type=None):
    return products.dot(self, b, precision=precision, preferred_element_type=preferred_element_type)


def _copy(self):
    return creation.array(self, copy=True)


def _getitem(self, index):
    return indexing.getitem(self, index)


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    return indexing.iterate(self)


def _at(self):
    return indexing._IndexUpdateHelper(self)


def _repeat(self, repeats, axis=None, *, total_repeat_length=None):
    return lib.repeat(self, repeats, axis, total_repeat_length=total_repeat_length)


def _swapaxes(self, axis1, axis2):
    return manipulation.swapaxes(self, axis1, axis2)


def _method(fun):
    """`fun(self, *args, **kwargs)` as a method."""

    def method(self, *args, **kwargs):
        return fun(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fun.__name__
    method.__doc__ = fun.__doc__
    return method


_reduction_methods = {
    name: _method(getattr(reductions, name))
    for name in (
        "sum",
        "prod",
        "max",
        "min",
        "mean",
        "var",
        "std",
        "all",
        "any",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "ptp",
    )
}


def _operators() -> dict:
    """The arithmetic, bitwise, comparison and unary operator methods."""
    attrs = {}
    for name, fun, make in (
        ("add", ufuncs.add, _fast_binary_operator),
        ("sub", ufuncs.subtract, _fast_binary_operator),
        ("mul", ufuncs.multiply, _fast_binary_operator),
        ("truediv", ufuncs.true_divide, _fast_binary_operator),
        ("floordiv", arithmetic.floor_divide, _binary_operator),
        ("mod", arithmetic.remainder, _binary_operator),
        ("pow", arithmetic.power, _fast_binary_operator),
        ("matmul", products.matmul, _binary_operator),
        ("and", ufuncs.bitwise_and, _binary_operator),
        ("or", ufuncs.bitwise_or, _binary_operator),
        ("xor", ufuncs.bitwise_xor, _binary_operator),
        ("lshift", ufuncs.left_shift, _binary_operator),
        ("rshift", ufuncs.right_shift, _binary_operator),
    ):
        attrs[f"__{name}__"], attrs[f"__r{name}__"] = make(fun, name)
    for name, fun in (
        ("eq", ufuncs.equal),
        ("ne", ufuncs.not_equal),
        ("lt", ufuncs.less),
        ("le", ufuncs.less_equal),
        ("gt", ufuncs.greater),
        ("ge", ufuncs.greater_equal),
    ):
        attrs[f"__{name}__"] = _comparison(fun, name)
    attrs.update(
        {
            "__divmod__": _divmod,
            "__rdivmod__": _rdivmod,
            "__neg__": ufuncs.negative,
            "__pos__": ufuncs.positive,
            "__abs__": ufuncs.absolute,
            "__invert__": ufuncs.invert,
            "__round__": _dunder_round,
        }
    )
    return attrs


def _methods() -> dict:
    """The named methods and properties, indexing and iteration."""
    return {
        "__getitem__": _getitem,
        "__iter__": _iter,
        "astype": _astype,
        "reshape": _reshape,
        "transpose": _transpose,
        "T": property(lambda self: manipulation.transpose(self)),
        "mT": property(lambda self: manipulation.matrix_transpose(self)),
        "ravel": _method(manipulation.ravel),
        "flatten": _flatten,
        "squeeze": _squeeze,
        "swapaxes": _swapaxes,
        "repeat": _repeat,
        "dot": _dot,
        "clip": _clip,
        "round": _round,
        "conj": _method(ufuncs.conjugate),
        "conjugate": _method(ufuncs.conjugate),
        "real": property(ufuncs.real),
        "imag": property(ufuncs.imag),
        "copy": _copy,
        "at": property(_at),
        "diagonal": _method(lib.diagonal),
        "trace": _method(lib.trace),
        **_reduction_methods,
        "sort": _method(sorting.sort),
        "argsort": _method(sorting.argsort),
        "nonzero": _method(sorting.nonzero),
        "searchsorted": _method(sorting.searchsorted),
        "argpartition": _method(lib.argpartition),
        "take": _method(advanced_indexing.take),
        "choose": _method(placement.choose),
        "compress": _compress,
    }


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    """`x.compress(condition)` is `jnp.compress(condition, x)` (the condition comes first)."""
    return placement.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _view(self, dtype=None, type=None):
    """The same bits as `dtype`; as in NumPy, a dtype of another width rescales the last axis
    (booleans are viewed through uint8)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    new = dtypes.check_user_dtype(dtype, "view")
    x = self.astype(np.uint8) if self.dtype == np.bool_ else self
    target = np.dtype(np.uint8) if new == np.bool_ else new
    old_size, new_size = x.dtype.itemsize, target.itemsize
    if old_size != new_size and not x.ndim:
        raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
    if old_size != new_size and (x.shape[-1] * old_size) % new_size:
        raise ValueError(
            "When changing to a larger dtype, its size must be a divisor of the total size in "
            "bytes of the last axis of the array."
        )
    if new_size > old_size:
        ratio = new_size // old_size
        x = manipulation.reshape(x, (*x.shape[:-1], x.shape[-1] // ratio, ratio))
    out = conversions.bitcast_convert_type(x, target)
    if new_size < old_size:
        out = manipulation.reshape(out, (*x.shape[:-1], x.shape[-1] * (old_size // new_size)))
    return out.astype(np.bool_) if new == np.bool_ else out


def _tobytes(self, order="C"):
    return np.asarray(self).tobytes(order=order)


def _contains(self, value):
    """`value in x`: whether some element equals it (JAX searches one-dimensional arrays)."""
    if self.ndim != 1:
        raise ValueError(
            f"Array.__contains__: search array must be one-dimensional, got arr.shape={self.shape}."
        )
    return bool(reductions.any(ufuncs.equal(self, value)))


def _array_namespace(self, *, api_version=None):
    """The array API namespace of Arrays: `tracejit.numpy` (the array API of JAX 0.10.2)."""
    if api_version not in (None, "2024.12"):
        raise ValueError(f"{api_version=!r} is not available; available versions are: ['2024.12']")
    return importlib.import_module("tracejit.numpy")


def _no_flat(self):
    raise NotImplementedError(
        "JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead."
    )


def _array_api_methods() -> dict:
    """What Arrays and tracers answer besides NumPy's methods, as jax.Array does."""
    return {
        "view": _view,
        "tobytes": _tobytes,
        "__contains__": _contains,
        "__array_namespace__": _array_namespace,
        "flat": property(_no_flat),
    }


def attach() -> None:
    """Sets the operators and methods on Array and Tracer (idempotent)."""
    for name, value in {**_operators(), **_methods(), **_array_api_methods()}.items():
        setattr(Array, name, value)
        setattr(Tracer, name, value)
    Array.clone = _copy  # (not tracers', as in JAX)
    # Tracers are unhashable like Arrays: defining __eq__ would otherwise reset __hash__.
    Array.__hash__ = _unhashable_array
    Tracer.__hash__ = _unhashable_tracer


def _unhashable_array(self):
    raise TypeError("unhashable type: 'Array'")


def _unhashable_tracer(self):
    raise TypeError(f"unhashable type: {type(self).__name__}")


attach()
