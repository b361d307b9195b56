"""tracejit: composable transformations of Python+NumPy programs, after JAX.

import tracejit as jax
import tracejit.numpy as jnp

jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) * 3.0))(jnp.ones(8))
"""

from tracejit import (
    debug,
    dtypes,
    errors,
    experimental,
    lax,
    nn,
    numpy,
    random,
    test_util,
    tree,
    tree_util,
)
from tracejit._src.api import (
    block_until_ready,
    device_get,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from tracejit._src.api_util import ShapeDtypeStruct
from tracejit._src.array import Array
from tracejit._src.callback import pure_callback
from tracejit._src.checkpoint import checkpoint, remat
from tracejit._src.config import config
from tracejit._src.custom_derivatives import custom_jvp, custom_vjp
from tracejit._src.dispatch import default_backend, device_put, devices
from tracejit._src.jit import disable_jit, jit

local_devices = devices


def device_count() -> int:
    return len(devices())


from tracejit._src.interpreters import eval as _eval  # noqa: F401  (installs the eager trace)

__version__ = "0.1.0"

__all__ = [
    "Array",
    "ShapeDtypeStruct",
    "block_until_ready",
    "checkpoint",
    "config",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "dtypes",
    "errors",
    "experimental",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "local_devices",
    "make_jaxpr",
    "nn",
    "numpy",
    "pure_callback",
    "random",
    "remat",
    "test_util",
    "tree",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
]
