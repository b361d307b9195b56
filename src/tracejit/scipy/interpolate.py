"""`tracejit.scipy.interpolate` (`jax.scipy.interpolate`): `RegularGridInterpolator`."""

from tracejit._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401
