"""`tracejit.scipy.spatial` (`jax.scipy.spatial`): its `transform` submodule."""

from tracejit.scipy.spatial import transform  # noqa: F401
