"""`tracejit.distributed`, as `jax.distributed`: several processes running one program over
MPI (see `tracejit._src.distributed`)."""

from tracejit._src.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
