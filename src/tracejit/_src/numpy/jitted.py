"""`jnp_jit`: the `jit` that JAX wraps many `jnp` functions in (`jnp.flip` stages as
`jit[name=_flip ...]`), so that their jaxprs print as JAX's. Eagerly such a function runs its
primitives on NumPy, as every `jnp` function does (see `library_jit`)."""

from __future__ import annotations

from tracejit._src.jit import library_jit


def jnp_jit(fun=None, /, **options):
    return library_jit(fun, compiles_eagerly=False, **options)
