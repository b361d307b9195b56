"""Eager NumPy namesakes: a `jnp` composite computed by one NumPy call when nothing traces it.

JAX defines some `jnp` functions from several primitives (`trunc` is `where(x < 0, ceil(x),
floor(x))`), and eager mode runs each primitive as its own NumPy pass, each into a fresh
array: four passes and four allocations where `np.trunc` makes one. For a few of them NumPy
has a function that gives exactly the composite's values, NaNs, infinities and signed zeros
included, for the dtypes listed with it. `numpy_namesake(numpy_fn, dtypes)` makes such a
`jnp` function call `numpy_fn` instead, when

- no transformation is active (the current trace is the eval trace: under `jit`, `grad`,
  `vmap` or `make_jaxpr` the composite is traced as JAX stages it, Arrays closed over too),
- every positional argument is an Array (a jitted call's output too) of one of the listed
  dtypes, all of one dtype and none weakly typed (so that promotion leaves them as they are:
  two weak float16 operands promote to float32), and the keyword arguments are among those
  listed (they are passed to `numpy_fn` as given),
- `jax_debug_nans` and `jax_debug_infs` are off (their checks name the primitive that made the
  NaN, and run per primitive).

Otherwise, and whenever `numpy_fn` raises, the composite runs, with its own errors.

The result's dtype and weak type are those of the traced composite, found once for each
(keyword arguments, ranks, dtype) by tracing it (`eval_shape`, as the eval trace checks
a primitive's signature once); NumPy's result is cast to that dtype (`count_nonzero` gives
int64 in NumPy, int32 here). `tests/numpy/test_namesakes.py` checks each function, over the
dtypes it lists, on edge values and shapes, against `jit` of the same call and against the
composite evaluated eagerly (`namesakes_off()`).
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import numpy as np

from tracejit._src.api import eval_shape
from tracejit._src.array import Array, DeviceArray, make_array
from tracejit._src.config import config
from tracejit._src.core import current_trace
from tracejit._src.interpreters import eval as eval_interpreter
from tracejit._src.lax.standard import quiet

FLOATS = (np.float16, np.float32, np.float64)
_CONCRETE = (Array, DeviceArray)  # (a jitted call's outputs are DeviceArrays)

_result_tables: list[dict] = []
_enabled = [True]


def _forget_results(option_name: str) -> None:  # x64 mode changes result dtypes
    for table in _result_tables:
        table.clear()


config.on_update(_forget_results)


@contextmanager
def namesakes_off():
    """Runs every composite primitive by primitive: what the namesakes are checked against."""
    _enabled[0] = False
    try:
        yield
    finally:
        _enabled[0] = True


def numpy_namesake(numpy_fn, dtypes, *, keywords=()):
    """Decorates a `jnp` composite so that eager calls on Arrays of `dtypes` run `numpy_fn`."""
    accepted = frozenset(np.dtype(d) for d in dtypes)
    keywords = frozenset(keywords)
    compute = quiet(numpy_fn)

    def decorate(fun):
        results = {}  # (keyword arguments, ranks, dtype) -> (dtype, weak type)
        _result_tables.append(results)

        @functools.wraps(fun)
        def fun_or_namesake(*args, **kwargs):
            if (
                current_trace() is not eval_interpreter.eval_trace
                or config.debug_nans
                or config.debug_infs
                or not _enabled[0]
                or not keywords.issuperset(kwargs)
            ):
                return fun(*args, **kwargs)
            signature = [tuple(kwargs.items())]
            values = []
            dtype = None
            for x in args:
                if type(x) not in _CONCRETE or x.weak_type:
                    return fun(*args, **kwargs)
                value = x._value
                if dtype is None:
                    dtype = value.dtype
                    if dtype not in accepted:
                        return fun(*args, **kwargs)
                elif value.dtype != dtype:
                    return fun(*args, **kwargs)
                values.append(value)
                signature.append(value.ndim)
            signature.append(dtype)
            signature = tuple(signature)
            try:
                out_dtype, weak_type = results[signature]
            except KeyError:  # the composite's errors are raised here, as it would raise them
                struct = eval_shape(functools.partial(fun, **kwargs), *args)
                out_dtype, weak_type = results[signature] = struct.dtype, struct.weak_type
            except TypeError:  # an unhashable keyword argument (a list of axes)
                return fun(*args, **kwargs)
            try:
                out = compute(*values, **kwargs)
            except (ValueError, TypeError):  # the composite raises JAX's error, or does not
                return fun(*args, **kwargs)
            out = np.asarray(out)
            if out.dtype != out_dtype:
                out = out.astype(out_dtype)
            return make_array(out, weak_type)

        return fun_or_namesake

    return decorate
