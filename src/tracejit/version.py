"""tracejit's version (`jax.version`)."""

__version__ = "0.1.0"
__version_info__ = (0, 1, 0)
