"""`tracejit.scipy.cluster.vq` (`jax.scipy.cluster.vq`): vector quantization, `vq`."""

from tracejit._src.scipy.cluster import vq  # noqa: F401
