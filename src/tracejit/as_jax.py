"""`tracejit.as_jax`: serve `import jax` from tracejit (`install_as_jax()`), or run a program
that way: `python -m tracejit.as_jax script.py [args ...]` (or `-m module [args ...]`)."""

import sys

from tracejit._src.as_jax import JAX_VERSION, install_as_jax, main

__all__ = ["JAX_VERSION", "install_as_jax"]

if __name__ == "__main__":
    main(sys.argv[1:])
