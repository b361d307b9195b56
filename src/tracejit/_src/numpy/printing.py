"""Print options: Arrays print through NumPy (`Array.__repr__` is `np.array2string` of the value),
so NumPy's options are theirs, and `jnp.printoptions` & co. are NumPy's, as in JAX.

`array_repr` and `array_str` are NumPy's functions themselves (JAX re-exports them too): they
read an Array through `__array__` and name it by its class, `Array([0., 1.], dtype=float32)`.
"""

from __future__ import annotations

import numpy as np

array_repr = np.array_repr
array_str = np.array_str


def get_printoptions():
    """NumPy's current print options (`numpy.get_printoptions`), which Arrays print by."""
    return np.get_printoptions()


def set_printoptions(*args, **kwargs):
    """Sets NumPy's print options (`numpy.set_printoptions`), which Arrays print by."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args, **kwargs):
    """A context manager setting NumPy's print options (`numpy.printoptions`) in its block."""
    return np.printoptions(*args, **kwargs)
