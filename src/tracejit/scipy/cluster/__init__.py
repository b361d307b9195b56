"""`tracejit.scipy.cluster` (`jax.scipy.cluster`): its `vq` submodule."""

from tracejit.scipy.cluster import vq  # noqa: F401
