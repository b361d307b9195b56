"""`tracejit.dlpack` (`jax.dlpack`): arrays shared with other libraries through DLPack."""

from tracejit._src.numpy.io import from_dlpack, is_supported_dtype  # noqa: F401
