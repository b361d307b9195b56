"""`tracejit.Array`, the type user code checks values against (an abstract base class), and the
type annotations built on it (`tracejit.typing`).

`isinstance(x, tracejit.Array)` must hold for a concrete array and for a tracer standing for
one inside a transformation, so that a function runs the same way eagerly and under `jit`,
`grad` or `vmap` (JAX's `jax.Array` is such a base class too). The concrete `_src.array.Array`
stays a plain class: the package's own `isinstance(x, Array)` checks mean "a concrete value"
and stay fast.
"""

import abc
import typing

import numpy as np

from tracejit._src import array, core


class Array(abc.ABC):
    """An array: concrete (`jnp.ones(3)`) or traced (the argument of a jitted function)."""

    __slots__ = ()


Array.register(array.Array)
Array.register(core.Tracer)


# Type annotations (`tracejit.typing`), as JAX spells them.


@typing.runtime_checkable
class SupportsDType(typing.Protocol):
    """Anything with a `.dtype` (`jnp.float32` and other scalar types among them)."""

    @property
    def dtype(self, /) -> np.dtype: ...


# What jnp functions accept as an array: arrays, tracers, NumPy values and Python scalars.
ArrayLike = typing.Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007

# What names a dtype: 'float32', np.float32 or float, np.dtype('float32'), jnp.float32.
DTypeLike = typing.Union[str, type[typing.Any], np.dtype, SupportsDType]  # noqa: UP007
