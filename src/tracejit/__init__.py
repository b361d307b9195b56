"""tracejit: composable transformations of Python+NumPy programs, after JAX.

    import tracejit as jax
    import tracejit.numpy as jnp

    jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) * 3.0))(jnp.ones(8))
"""

from tracejit._src.config import config
from tracejit._src.interpreters import eval as _eval  # noqa: F401  (installs the eager trace)
from tracejit._src.array import Array
from tracejit._src.api import ShapeDtypeStruct, block_until_ready, device_get, make_jaxpr
from tracejit import errors, lax, numpy, tree, tree_util  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Array",
    "ShapeDtypeStruct",
    "block_until_ready",
    "config",
    "device_get",
    "errors",
    "lax",
    "make_jaxpr",
    "numpy",
    "tree",
    "tree_util",
]
