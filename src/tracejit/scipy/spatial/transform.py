"""`tracejit.scipy.spatial.transform` (`jax.scipy.spatial.transform`): `Rotation`, `Slerp`."""

from tracejit._src.scipy.spatial_transform import Rotation, Slerp  # noqa: F401
