"""The persistent compile cache's settings, as `jax.experimental.compilation_cache.
compilation_cache`: `set_cache_dir(path)` and `reset_cache()`."""

from tracejit._src.compile_cache import reset_cache, set_cache_dir

__all__ = ["reset_cache", "set_cache_dir"]
