"""`tracejit.scipy.ndimage`: `map_coordinates` (orders 0 and 1), as JAX has it."""

from tracejit._src.scipy.ndimage import map_coordinates  # noqa: F401
