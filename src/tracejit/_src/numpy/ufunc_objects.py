"""`jnp.ufunc`: NumPy's universal-function objects, and the fourteen jnp functions that are ones.

`jnp.add`, `jnp.multiply`, `jnp.maximum`, ... are `ufunc` instances with `nin`, `nout`,
`identity` and the methods `reduce`, `accumulate`, `at`, `outer` and `reduceat`. A method uses
jnp's own operation where one exists (`add.reduce` is `sum`, `add.accumulate` is `cumsum`,
`add.at` is `x.at[i].add`), and otherwise calls the ufunc in a loop (`fori_loop`, `scan`), as
JAX's `_reduce_via_scan` and friends do; `outer` is two nested `vmap`s. `frompyfunc` makes a
ufunc of any function of scalars: calling it calls the function vectorized, and its methods are
the looping ones.

Calling `jnp.add(x, y)` must cost what calling the elementwise function costs (eager op speed
matters). A generic `__call__(self, *args, out=None, where=None)` adds a Python frame and
argument packing (about 0.1 us on a 1.3 us eager add), so a ufunc made from one of the fast
elementwise functions of `ufuncs.py` (which take and refuse `out=`/`where=` themselves) is an
instance of a subclass of its own whose `__call__` is that function.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator

import numpy as np

from tracejit._src import api, dtypes, vmap
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.lax.control_flow import loops
from tracejit._src.lax.control_flow.scan import scan
from tracejit._src.numpy import (
    advanced_indexing,
    lib_math,
    lib_vectorize,
    manipulation,
    promotion,
    reductions,
    ufuncs,
)
from tracejit._src.numpy.promotion import asarray_operand

_BOOL = np.dtype(bool)

_AT_INPLACE_WARNING = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""


def _check_arraylike(name: str, *args):
    for i, x in enumerate(args):
        promotion.to_operand(name, x, i)


def _require(self, method: str):
    if self.nin != 2:
        raise ValueError(f"{method} only supported for binary ufuncs")
    if self.nout != 1:
        raise ValueError(f"{method} only supported for functions returning a single value")


class ufunc:
    """A function applied elementwise to broadcast arrays, with NumPy's ufunc methods.

    `func` takes `nin` arrays and returns `nout`; `identity` is the value `reduce` starts
    from (None: none). `call`, `reduce`, `accumulate`, `at` and `reduceat` override the
    generic implementations (vectorized calls and loops of calls)."""

    def __init__(
        self,
        func,
        /,
        nin,
        nout,
        *,
        name=None,
        nargs=None,
        identity=None,
        call=None,
        reduce=None,
        accumulate=None,
        at=None,
        reduceat=None,
    ):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        # Read-only, so that a ufunc stays valid as a static (hashed) jit argument.
        self.__identity_key = (
            func,
            self.__name__,
            identity,
            operator.index(nin),
            operator.index(nout),
            operator.index(nargs or nin),
        )
        self.__methods = {
            "call": call,
            "reduce": reduce,
            "accumulate": accumulate,
            "at": at,
            "reduceat": reduceat,
        }

    _func = property(lambda self: self.__identity_key[0])
    identity = property(lambda self: self.__identity_key[2])
    nin = property(lambda self: self.__identity_key[3])
    nout = property(lambda self: self.__identity_key[4])
    nargs = property(lambda self: self.__identity_key[5])

    def __hash__(self):
        return hash(self.__identity_key)

    def __eq__(self, other):
        return isinstance(other, ufunc) and self.__identity_key == other.__identity_key

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        _check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self.__methods["call"] or self._call_vectorized
        return call(*args)

    def _call_vectorized(self, *args):
        return lib_vectorize.vectorize(self._func)(*args)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Reduces `a` along `axis` by repeated calls (`add.reduce` is `sum`), starting from
        `initial` or the identity; with `where`, only the selected elements."""
        _check_arraylike(f"{self.__name__}.reduce", a)
        _require(self, "reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            _check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            _check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an identity, so to "
                    "use a where mask one has to specify 'initial'."
                )
            where_dtype = asarray_operand(f"{self.__name__}.reduce", where).dtype
            if where_dtype != _BOOL:
                raise ValueError(f"where argument must have dtype=bool; got dtype={where_dtype}")
        reduce = self.__methods["reduce"] or self._reduce_via_loop
        return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _result_dtype(self, *operands):
        """The dtype the ufunc gives for scalars of the operands' dtypes."""
        ones = [promotion.convert_element_type(1, x.dtype, x.weak_type) for x in operands]
        return api.make_jaxpr(self._func)(*ones).out_avals[0].dtype

    def _reduce_via_loop(self, arr, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        arr = asarray_operand(f"{self.__name__}.reduce", arr)
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if where is not None:
            where = manipulation.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = manipulation.ravel(arr)
            where = None if where is None else manipulation.ravel(where)
            axis = 0
        else:
            axis = manipulation.normalize_axis(axis, arr.ndim)
            kept = (1,) if keepdims else ()
            final_shape = (*arr.shape[:axis], *kept, *arr.shape[axis + 1 :])
        arr = manipulation.moveaxis(arr, axis, 0)
        where = None if where is None else manipulation.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(
                    f"zero-size array to reduction operation {self.__name__} which has no identity"
                )
            return _full(final_shape, initial, dtype)

        def body(i, value):
            combined = self(value, arr[i].astype(dtype))
            return combined if where is None else ufuncs.where(where[i], combined, value)

        start, first = (1, arr[0]) if initial is None else (0, initial)
        first = asarray_operand(f"{self.__name__}.reduce", first).astype(dtype)
        result = loops.fori_loop(
            start, arr.shape[0], body, manipulation.broadcast_to(first, arr.shape[1:])
        )
        return manipulation.reshape(result, final_shape) if keepdims else result

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reductions of `a` along `axis` (`add.accumulate` is `cumsum`)."""
        _require(self, "accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        accumulate = self.__methods["accumulate"] or self._accumulate_via_scan
        return accumulate(a, axis=axis, dtype=dtype)

    def _accumulate_via_scan(self, arr, axis=0, dtype=None):
        arr = asarray_operand(f"{self.__name__}.accumulate", arr)
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = manipulation.normalize_axis(axis, arr.ndim)
        if arr.size == 0:
            return _full(arr.shape, 0, dtype)
        arr = manipulation.moveaxis(arr, axis, 0)
        first = arr[0].astype(dtype)

        def step(carry, _):
            i, x = carry
            combined = self(x.astype(dtype), arr[i].astype(dtype))
            y = ufuncs.where(ufuncs.equal(i, 0), first, combined)
            return (i + 1, y), y

        _, result = scan(step, (0, first), None, length=arr.shape[0])
        return manipulation.moveaxis(result, 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of `a` with the ufunc applied at `indices` (with `b` for binary ufuncs);
        repeated indices apply it repeatedly. Needs `inplace=False`: Arrays are immutable."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_WARNING)
        at = self.__methods["at"] or self._at_via_scan
        return at(a, indices) if b is None else at(a, indices, b)

    def _at_via_scan(self, a, indices, *args):
        _check_arraylike(f"{self.__name__}.at", a, *args)
        operands = [asarray_operand(f"{self.__name__}.at", x) for x in (a, *args)]
        dtype = self._result_dtype(*operands)
        a, *args = [x.astype(dtype) for x in operands]
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = promotion.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = int(np.prod(shape))
        if args:
            arg = args[0]
            arg = manipulation.broadcast_to(arg, (*shape, *arg.shape[len(shape) :]))
            args = [manipulation.reshape(arg, (count, *arg.shape[len(shape) :]))]
        flat = [
            i if isinstance(i, slice) else manipulation.ravel(manipulation.broadcast_to(i, shape))
            for i in indices
        ]

        def step(carry, _):
            i, a = carry
            idx = tuple(ind if isinstance(ind, slice) else ind[i] for ind in flat)
            a = a.at[idx].set(self(a.at[idx].get(), *(arg[i] for arg in args)))
            return (i + 1, a), None

        (_, result), _ = scan(step, (0, a), None, length=count)
        return result

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the slices `a[indices[i]:indices[i + 1]]` along `axis` (the last one
        to the end); where an index is not below the next, just `a[indices[i]]`."""
        _require(self, "reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        reduceat = self.__methods["reduceat"] or self._reduceat_via_loop
        return reduceat(a, indices, axis=axis, dtype=dtype)

    def _reduceat_via_loop(self, a, indices, axis=0, dtype=None):
        _check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a = asarray_operand(f"{self.__name__}.reduceat", a)
        indices = asarray_operand(f"{self.__name__}.reduceat", indices, 1)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
        if indices.ndim != 1:
            raise ValueError(
                f"reduceat: indices must be one-dimensional, got indices.shape={indices.shape}"
            )
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = manipulation.normalize_axis(axis, a.ndim)
        out = advanced_indexing.take(a, indices, axis=axis)
        bounds = manipulation.concatenate([indices, np.array([a.shape[axis]], indices.dtype)])
        other_axes = tuple(d for d in range(out.ndim) if d != axis)
        bounds = lax_shapes.expand_dims(bounds, other_axes)
        start = lax_slicing.slice_in_dim(bounds, 0, bounds.shape[axis] - 1, axis=axis)
        end = lax_slicing.slice_in_dim(bounds, 1, bounds.shape[axis], axis=axis)

        def body(i, out):
            inside = ufuncs.logical_and(ufuncs.greater(i, start), ufuncs.less(i, end))
            row = advanced_indexing.take(a, lax_shapes.expand_dims(i, (0,)), axis=axis)
            return ufuncs.where(inside, self(out, row), out)

        return loops.fori_loop(0, a.shape[axis], body, out)

    def outer(self, A, B, /):
        """The ufunc of every pair (A[i...], B[j...]): shape `A.shape + B.shape`."""
        _require(self, "outer")
        _check_arraylike(f"{self.__name__}.outer", A, B)
        a = manipulation.ravel(asarray_operand(f"{self.__name__}.outer", A))
        b = manipulation.ravel(asarray_operand(f"{self.__name__}.outer", B, 1))
        result = vmap.vmap(vmap.vmap(self, (None, 0)), (0, None))(a, b)
        return manipulation.reshape(result, (*np.shape(A), *np.shape(B)))


def _full(shape, value, dtype):
    scalar = promotion.convert_element_type(value, np.dtype(dtype))
    return lax_shapes.broadcast_in_dim(scalar, tuple(shape), ()) if shape else scalar


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `ufunc` of `func`, a function of `nin` scalars returning `nout` values: calling it
    applies `func` elementwise (vectorized), and its methods loop over calls."""
    return ufunc(func, nin, nout, identity=identity)


_CALL_SIGNATURE = inspect.signature(ufunc.__call__)
_CALL_SIGNATURE = _CALL_SIGNATURE.replace(parameters=list(_CALL_SIGNATURE.parameters.values())[1:])


def _elementwise_ufunc(fun, nin: int, **methods) -> ufunc:
    """The ufunc of one of `ufuncs.py`'s fast functions, called as the function itself. Its
    signature is the one `ufunc.__call__` documents: `fun` takes the same arguments, with its
    operands spelled positionally."""
    namespace = {
        "__call__": staticmethod(fun),
        "__module__": __name__,
        "__signature__": _CALL_SIGNATURE,
    }
    return type("ufunc", (ufunc,), namespace)(fun, nin, 1, **methods)


# --------------------------------------------------------------------------------------------
# The reductions and indexed updates of jnp's ufuncs


def _reduction(
    name,
    lax_reduce,
    combine,
    fill,
    preprocess,
    a,
    axis=None,
    dtype=None,
    keepdims=False,
    initial=None,
    where=None,
):
    """JAX's `_reduction` for the ufunc reductions jnp has no function for: `lax_reduce` over
    `axis` in `dtype` (default: the operand's), elements masked out by `where` replaced by
    `fill` (the identity, or the extreme value for max/min), then `initial` combined in."""
    x = preprocess(asarray_operand(name, a))
    axes = reductions._reduction_axes(axis, x.ndim)
    has_identity = not np.isinf(fill)  # max and min, which mask with infinities, have none
    if not has_identity and initial is None and builtins.any(x.shape[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    result_dtype = x.dtype if dtype is None else dtypes.check_user_dtype(dtype, name)
    x = promotion.convert_element_type(x, result_dtype, False)
    if where is not None:
        x = ufuncs.where(where, x, _fill_value(x.dtype, fill))
    result = lax_reduce(x, axes)
    if initial is not None:
        initial = promotion.convert_element_type(asarray_operand(name, initial), x.dtype, False)
        if initial.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {initial.shape}")
        result = combine(initial, result)
    if keepdims:
        result = reductions._keepdims(result, x.shape, axes)
    return result


def _fill_value(dtype, fill):
    """`fill` as a scalar of `dtype`, as JAX's `_reduction_init_val` makes it: -1 is all ones,
    infinities become the extremes of dtypes without them, and a bool is `fill > 0`."""
    if np.isinf(fill):
        if dtype == _BOOL:
            return promotion.convert_element_type(bool(fill > 0), dtype)
        if dtypes.is_int(dtype):
            info = dtypes.iinfo(dtype)
            fill = int(info.min if fill < 0 else info.max)
    return promotion.convert_element_type(np.array(fill).astype(dtype).item(), dtype)


def _integers_only(x):
    if not (x.dtype == _BOOL or dtypes.is_int(x.dtype)):
        raise ValueError(f"integer argument required; got dtype={x.dtype}")
    return x


def _as_bool(x):
    if dtypes.is_complex(x.dtype):
        x = ufuncs.real(x)
    return promotion.convert_element_type(x, _BOOL, False)


def _same(x):
    return x


def _reducer(name, lax_reduce, combine, fill, preprocess):
    """`reduce(a, axis, dtype, keepdims, initial, where)` by `_reduction`."""
    return functools.partial(_reduction, name, lax_reduce, combine, fill, preprocess)


_r = lax_reductions
_reduce_max = _reducer("max", _r.reduce_max, ufuncs.maximum, -np.inf, _same)
_reduce_min = _reducer("min", _r.reduce_min, ufuncs.minimum, np.inf, _same)
_reduce_bitwise_and = _reducer(
    "reduce_bitwise_and", _r.reduce_and, ufuncs.bitwise_and, -1, _integers_only
)
_reduce_bitwise_or = _reducer(
    "reduce_bitwise_or", _r.reduce_or, ufuncs.bitwise_or, 0, _integers_only
)
_reduce_bitwise_xor = _reducer(
    "reduce_bitwise_xor", _r.reduce_xor, ufuncs.bitwise_xor, 0, _integers_only
)
_reduce_logical_and = _reducer(
    "reduce_logical_and", _r.reduce_and, ufuncs.bitwise_and, True, _as_bool
)
_reduce_logical_or = _reducer("reduce_logical_or", _r.reduce_or, ufuncs.bitwise_or, False, _as_bool)
_reduce_logical_xor = _reducer(
    "reduce_logical_xor", _r.reduce_xor, ufuncs.bitwise_xor, False, _as_bool
)


def _logsumexp(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    """log(sum(exp(a))), shifted by the (finite) maximum so that nothing overflows."""
    if dtype is not None:
        dtypes.check_user_dtype(dtype, "jnp.logaddexp.reduce")  # checked, then unused (JAX)
    (x,) = promotion.promote_dtypes_inexact(asarray_operand("logsumexp", a))
    axes = reductions._reduction_axes(axis, x.ndim)
    amax = reductions.max(
        ufuncs.real(x), axis=axes, keepdims=keepdims, where=where, initial=-np.inf
    )
    finite = lax_elementwise.is_finite(amax)
    amax = lax_shapes.stop_gradient(ufuncs.where(finite, amax, ufuncs.zero_like_scalar(amax)))
    amax_kept = amax if keepdims else lax_shapes.expand_dims(amax, axes)
    shifted = ufuncs.exp(ufuncs.subtract(x, amax_kept.astype(x.dtype)))
    total = reductions.sum(shifted, axis=axes, keepdims=keepdims, where=where)
    result = ufuncs.add(ufuncs.log(total), amax.astype(total.dtype))
    return result if initial is None else lib_math.logaddexp(initial, result)


def _logsumexp2(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    """log2(sum(2 ** a)), through `_logsumexp` on `a * ln 2`."""
    if dtype is not None:
        dtypes.check_user_dtype(dtype, "jnp.logaddexp2.reduce")
    ln2 = float(np.log(2))
    a = ufuncs.multiply(asarray_operand("logsumexp2", a), ln2)
    initial = None if initial is None else ufuncs.multiply(initial, ln2)
    total = _logsumexp(a, axis=axis, keepdims=keepdims, where=where, initial=initial)
    return ufuncs.divide(total, ln2)


def _add_at(a, indices, b):
    a = asarray_operand("add.at", a)
    if a.dtype == _BOOL:  # scatter-add has no bool version: or-ing is adding in int32
        b = promotion.convert_element_type(asarray_operand("add.at", b, 2), _BOOL)
        return a.astype(np.int32).at[indices].add(b.astype(np.int32)).astype(_BOOL)
    return a.at[indices].add(b)


def _multiply_at(a, indices, b):
    a = asarray_operand("multiply.at", a)
    if a.dtype == _BOOL:
        b = promotion.convert_element_type(asarray_operand("multiply.at", b, 2), _BOOL)
        return a.astype(np.int32).at[indices].multiply(b.astype(np.int32)).astype(_BOOL)
    return a.at[indices].multiply(b)


def _subtract_at(a, indices, b):
    return asarray_operand("subtract.at", a).at[indices].subtract(b)


# --------------------------------------------------------------------------------------------
# jnp's ufuncs

add = _elementwise_ufunc(
    ufuncs.add, 2, identity=0, reduce=reductions.sum, accumulate=reductions.cumsum, at=_add_at
)
subtract = _elementwise_ufunc(ufuncs.subtract, 2, at=_subtract_at)
multiply = _elementwise_ufunc(
    ufuncs.multiply,
    2,
    identity=1,
    reduce=reductions.prod,
    accumulate=reductions.cumprod,
    at=_multiply_at,
)
maximum = _elementwise_ufunc(ufuncs.maximum, 2, reduce=_reduce_max)
minimum = _elementwise_ufunc(ufuncs.minimum, 2, reduce=_reduce_min)
bitwise_and = _elementwise_ufunc(ufuncs.bitwise_and, 2, identity=-1, reduce=_reduce_bitwise_and)
bitwise_or = _elementwise_ufunc(ufuncs.bitwise_or, 2, identity=0, reduce=_reduce_bitwise_or)
bitwise_xor = _elementwise_ufunc(ufuncs.bitwise_xor, 2, identity=0, reduce=_reduce_bitwise_xor)
negative = _elementwise_ufunc(ufuncs.negative, 1)
logical_and = ufunc(
    ufuncs.logical_and, 2, 1, identity=True, call=ufuncs.logical_and, reduce=_reduce_logical_and
)
logical_or = ufunc(
    ufuncs.logical_or, 2, 1, identity=False, call=ufuncs.logical_or, reduce=_reduce_logical_or
)
logical_xor = ufunc(
    ufuncs.logical_xor, 2, 1, identity=False, call=ufuncs.logical_xor, reduce=_reduce_logical_xor
)
logaddexp = ufunc(
    lib_math.logaddexp, 2, 1, identity=-np.inf, call=lib_math.logaddexp, reduce=_logsumexp
)
logaddexp2 = ufunc(
    lib_math.logaddexp2, 2, 1, identity=-np.inf, call=lib_math.logaddexp2, reduce=_logsumexp2
)
