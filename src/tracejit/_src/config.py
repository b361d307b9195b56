"""Global switches, read the way JAX reads them: `config.update("jax_enable_x64", True)`.

Each option has a default that an environment variable may override at import time
(`JAX_ENABLE_X64=1`), and is read on hot paths as a plain attribute (`config.enable_x64`), so
reading a flag costs one attribute lookup. An option is a flag or, where its default is an int,
a number (`TRACEJIT_COMPILE_CACHE_SIZE=64`).
"""

import os
from typing import ClassVar

_TRUE = ("1", "true", "yes", "on", "t", "y")


def _env_value(name: str, default):
    """The environment's value of an option, of the type of its default."""
    value = os.environ.get(name)
    if value is None:
        return default
    if type(default) is bool:
        return value.strip().lower() in _TRUE
    return type(default)(value)


def _physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system: no limit of ours
        return 2**63 - 1


class Config:
    """The option table. `update` checks the name so that a typo fails instead of doing nothing."""

    # option name (as JAX spells it; `tracejit_...` where JAX has no such option)
    # -> (attribute, environment variable, default)
    _options: ClassVar[dict] = {
        "jax_enable_x64": ("enable_x64", "JAX_ENABLE_X64", False),
        "jax_log_compiles": ("log_compiles", "JAX_LOG_COMPILES", False),
        "jax_explain_cache_misses": ("explain_cache_misses", "JAX_EXPLAIN_CACHE_MISSES", False),
        "jax_disable_jit": ("disable_jit", "JAX_DISABLE_JIT", False),
        "jax_enable_compilation_cache": (
            "enable_compilation_cache",
            "JAX_ENABLE_COMPILATION_CACHE",
            True,
        ),
        # How random bits number their counters (`_src/prng.py`); JAX 0.10.2's default.
        "jax_threefry_partitionable": (
            "threefry_partitionable",
            "JAX_THREEFRY_PARTITIONABLE",
            True,
        ),
        # Eager raw keys consumed twice raise KeyReuseError (`_src/random/key_reuse.py`).
        "jax_debug_key_reuse": ("debug_key_reuse", "JAX_DEBUG_KEY_REUSE", False),
        # How many compiled programs each in-memory compile cache keeps (dispatch.LRUCache).
        "tracejit_compile_cache_size": (
            "compile_cache_size",
            "TRACEJIT_COMPILE_CACHE_SIZE",
            256,
        ),
        # Eager operations refuse results larger than this (default: the machine's memory),
        # as XLA refuses them with RESOURCE_EXHAUSTED, instead of hanging on them.
        "tracejit_max_array_bytes": (
            "max_array_bytes",
            "TRACEJIT_MAX_ARRAY_BYTES",
            _physical_memory_bytes(),
        ),
    }

    # Options that change what tracing a function produces: jit keys its traces on their
    # values (`trace_context`), as JAX keys them on its trace context.
    _tracing_options: ClassVar[tuple] = ("jax_enable_x64", "jax_threefry_partitionable")

    def __init__(self):
        self._listeners = []
        for attribute, env_name, default in self._options.values():
            setattr(self, attribute, _env_value(env_name, default))
        self._set_trace_context()

    def _set_trace_context(self):
        self.trace_context = tuple(self.read(name) for name in self._tracing_options)

    def update(self, name: str, value) -> None:
        if name not in self._options:
            raise AttributeError(f"Unrecognized config option: {name}")
        attribute, _, default = self._options[name]
        setattr(self, attribute, type(default)(value))
        if name in self._tracing_options:
            self._set_trace_context()
        for listener in self._listeners:
            listener(name)

    def read(self, name: str):
        if name not in self._options:
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, self._options[name][0])

    def __getattr__(self, name: str):
        # JAX spells reads as `config.jax_enable_x64`; attributes of the option table answer.
        options = type(self)._options
        if name in options:
            return getattr(self, options[name][0])
        raise AttributeError(name)

    def on_update(self, listener) -> None:
        """Caches keyed on an option (canonical dtypes) register here to be cleared."""
        self._listeners.append(listener)


config = Config()
