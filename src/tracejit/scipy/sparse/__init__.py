"""`tracejit.scipy.sparse` (`jax.scipy.sparse`): its `linalg` submodule."""

from tracejit.scipy.sparse import linalg  # noqa: F401
