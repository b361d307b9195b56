"""Global switches, read the way JAX reads them: `config.update("jax_enable_x64", True)`.

Each option has a default that an environment variable may override at import time
(`JAX_ENABLE_X64=1`), and is read on hot paths as a plain attribute (`config.enable_x64`), so
reading a flag costs one attribute lookup. An option is a flag or, where its default is an int,
a number (`TRACEJIT_COMPILE_CACHE_SIZE=64`), or one of a few named choices
(`jax_numpy_rank_promotion`: "allow", "warn" or "raise").

The options JAX exposes as `jax.enable_x64` & co. are `State`s here too: `State.value` reads the
option, and calling it gives a context manager (also a decorator) that sets the option for a
block and restores it after: `with tracejit.numpy_rank_promotion("raise"): ...`. JAX keeps such
values per thread; tracejit's options are process-wide, so a block sets them for every thread.
"""

import contextlib
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


_TRANSFER_GUARD_LEVELS = (None, "allow", "log", "disallow", "log_explicit", "disallow_explicit")


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
        # jnp broadcasting of operands of different ranks: "allow", "warn" or "raise"
        # (`_src/numpy/promotion.py`).
        "jax_numpy_rank_promotion": ("numpy_rank_promotion", "JAX_NUMPY_RANK_PROMOTION", "allow"),
        # jnp's implicit promotion: "standard" (JAX's lattice) or "strict" (none between strong
        # dtypes; weakly typed scalars only where the result keeps the strong dtype).
        "jax_numpy_dtype_promotion": (
            "numpy_dtype_promotion",
            "JAX_NUMPY_DTYPE_PROMOTION",
            "standard",
        ),
        # Raw uint32 keys given to tracejit.random: "allow", "warn" or "error" (typed keys only).
        "jax_legacy_prng_key": ("legacy_prng_key", "JAX_LEGACY_PRNG_KEY", "allow"),
        # The PRNG of new keys: Threefry-2x32 is the one built.
        "jax_default_prng_impl": ("default_prng_impl", "JAX_DEFAULT_PRNG_IMPL", "threefry2x32"),
        # Every staged jaxpr is type-checked (`check_jaxpr`) as it is built.
        "jax_enable_checks": ("enable_checks", "JAX_ENABLE_CHECKS", False),
        # `jit` raises instead of tracing a function (a test that nothing is retraced).
        "jax_no_tracing": ("no_tracing", "JAX_NO_TRACING", False),
        # A NaN (or inf) in an operation's result raises FloatingPointError naming the
        # operation (`interpreters/eval.py`; jitted functions are rerun op by op to find it).
        "jax_debug_nans": ("debug_nans", "JAX_DEBUG_NANS", False),
        "jax_debug_infs": ("debug_infs", "JAX_DEBUG_INFS", False),
        # A tracer still held, when its jit or vmap trace ends, by anything but the running
        # functions (a global, an object's attribute) raises (`core.check_leaks`).
        "jax_check_tracer_leaks": ("check_tracer_leaks", "JAX_CHECK_TRACER_LEAKS", False),
        # The device new arrays go to: with one device per process, None or that device.
        "jax_default_device": ("default_device", "JAX_DEFAULT_DEVICE", None),
        # The default `precision` of matmuls on 32-bit inputs; XLA's CPU backend computes every
        # precision at full float32, as it does in JAX, so the value is only kept and checked.
        "jax_default_matmul_precision": (
            "default_matmul_precision",
            "JAX_DEFAULT_MATMUL_PRECISION",
            None,
        ),
        # The persistent compile cache's size in bytes, least recently used entries evicted
        # beyond it (`compile_cache.py`); -1: unbounded, JAX's default. Ours is bounded.
        "jax_compilation_cache_max_size": (
            "compilation_cache_max_size",
            "JAX_COMPILATION_CACHE_MAX_SIZE",
            4 * 2**30,
        ),
        # The persistent compile cache's folder (`compile_cache.py`); None: TRACEJIT_CACHE_DIR's
        # `executables`, else the user's cache folder's (tracejit caches by default, JAX not).
        "jax_compilation_cache_dir": (
            "compilation_cache_dir",
            "JAX_COMPILATION_CACHE_DIR",
            None,
        ),
        # Transfer guards (`transfer_guard.py`): None (the general level, else "allow"), "allow",
        # "log", "disallow", "log_explicit" or "disallow_explicit".
        "jax_transfer_guard": ("transfer_guard", "JAX_TRANSFER_GUARD", None),
        "jax_transfer_guard_host_to_device": (
            "transfer_guard_host_to_device",
            "JAX_TRANSFER_GUARD_HOST_TO_DEVICE",
            None,
        ),
        "jax_transfer_guard_device_to_device": (
            "transfer_guard_device_to_device",
            "JAX_TRANSFER_GUARD_DEVICE_TO_DEVICE",
            None,
        ),
        "jax_transfer_guard_device_to_host": (
            "transfer_guard_device_to_host",
            "JAX_TRANSFER_GUARD_DEVICE_TO_HOST",
            None,
        ),
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

    # The values an option of named choices accepts (None: unset, where that is allowed).
    _choices: ClassVar[dict] = {
        "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
        "jax_numpy_dtype_promotion": ("standard", "strict"),
        "jax_legacy_prng_key": ("allow", "warn", "error"),
        "jax_default_prng_impl": ("threefry2x32",),
        **{
            f"jax_transfer_guard{direction}": _TRANSFER_GUARD_LEVELS
            for direction in ("", "_host_to_device", "_device_to_device", "_device_to_host")
        },
        "jax_default_matmul_precision": (
            None,
            "default",
            "high",
            "highest",
            "bfloat16",
            "tensorfloat32",
            "float32",
            "ANY_F8_ANY_F8_F32",
            "ANY_F8_ANY_F8_F32_FAST_ACCUM",
            "ANY_F8_ANY_F8_ANY",
            "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
            "F16_F16_F16",
            "F16_F16_F32",
            "BF16_BF16_BF16",
            "BF16_BF16_F32",
            "BF16_BF16_F32_X3",
            "BF16_BF16_F32_X6",
            "BF16_BF16_F32_X9",
            "TF32_TF32_F32",
            "TF32_TF32_F32_X3",
            "F32_F32_F32",
            "F64_F64_F64",
        ),
    }

    # Options that change what tracing a function produces: jit keys its traces on their
    # values (`trace_context`), as JAX keys them on its trace context. (`jax_no_tracing` is
    # among them so that switching it on makes every call trace, and raise, as in JAX.)
    _tracing_options: ClassVar[tuple] = (
        "jax_enable_x64",
        "jax_threefry_partitionable",
        "jax_numpy_rank_promotion",
        "jax_numpy_dtype_promotion",
        "jax_legacy_prng_key",
        "jax_no_tracing",
    )

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
        setattr(self, attribute, self._parse(name, default, value))
        if name in self._tracing_options:
            self._set_trace_context()
        for listener in self._listeners:
            listener(name)

    def _parse(self, name: str, default, value):
        choices = self._choices.get(name)
        if choices is not None:
            if value not in choices:
                allowed = [c for c in choices if c is not None]
                prefix = "None or in" if None in choices else "in"
                raise ValueError(
                    f"new enum value must be {prefix} {allowed}, got {value} of type {type(value)}."
                )
            return value
        return value if default is None else type(default)(value)

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


class NoDefault:
    """The value of a `State` called with none: the option's usual context value, if any."""


no_default = NoDefault()


class State:
    """A config option as JAX's `jax.<option>`: `.value` reads it; calling it with a new value
    gives a context manager that sets the option inside its block (and a decorator that sets it
    around each call). Flags switch on when called with no value, as `jax.enable_x64()` does."""

    def __init__(self, name: str, context_default=no_default):
        self.name = name
        self.__name__ = name.removeprefix("jax_")
        self.__doc__ = f"Context manager for `{name}` config option."
        self._context_default = context_default

    @property
    def value(self):
        return config.read(self.name)

    def __bool__(self):
        raise TypeError(
            "bool() not supported for instances of type 'State' (did you mean to use "
            "'State.value' instead?)"
        )

    def __call__(self, new_val=no_default):
        if new_val is no_default:
            if self._context_default is no_default:
                raise TypeError(
                    f"Context manager for {self.__name__} config option requires an argument "
                    "representing the new value for the config option."
                )
            new_val = self._context_default
        _, _, default = Config._options[self.name]
        return StateContextManager(self.name, config._parse(self.name, default, new_val))


class StateContextManager(contextlib.ContextDecorator):
    """Sets an option on entry, restores its previous value on exit."""

    def __init__(self, name: str, value):
        self.name = name
        self.value = value
        self._previous = []

    def __enter__(self):
        self._previous.append(config.read(self.name))
        config.update(self.name, self.value)

    def __exit__(self, *exc_info):
        config.update(self.name, self._previous.pop())


def _flag(name: str) -> State:
    return State(name, context_default=True)


enable_x64 = _flag("jax_enable_x64")
enable_checks = _flag("jax_enable_checks")
log_compiles = _flag("jax_log_compiles")
explain_cache_misses = _flag("jax_explain_cache_misses")
threefry_partitionable = _flag("jax_threefry_partitionable")
debug_key_reuse = _flag("jax_debug_key_reuse")
no_tracing = _flag("jax_no_tracing")
debug_nans = _flag("jax_debug_nans")
debug_infs = _flag("jax_debug_infs")
check_tracer_leaks = _flag("jax_check_tracer_leaks")


@contextlib.contextmanager
def checking_leaks():
    """`jax_check_tracer_leaks` switched on inside the block."""
    with check_tracer_leaks(True):
        yield


numpy_rank_promotion = State("jax_numpy_rank_promotion")
numpy_dtype_promotion = State("jax_numpy_dtype_promotion")
legacy_prng_key = State("jax_legacy_prng_key")
default_prng_impl = State("jax_default_prng_impl")
default_device = State("jax_default_device")
default_matmul_precision = State("jax_default_matmul_precision")


class UserConfig:
    """A value of the user's own that jitted functions are traced for, made by
    `make_user_context`: changing it (globally, or inside `with context(value):`) makes them
    trace and compile again, as a change of `jax_enable_x64` does."""

    def __init__(self, default_value):
        self._name = f"user_context_{len(_user_contexts)}"
        _user_contexts.append(self)
        Config._options[self._name] = (self._name, None, None)
        config._tracing_options = (*config._tracing_options, self._name)
        config.update(self._name, default_value)

    @property
    def value(self):
        return config.read(self._name)

    def get_global(self):
        return self.value

    def set_global(self, new_value) -> None:
        config.update(self._name, new_value)

    def __call__(self, new_value):
        return StateContextManager(self._name, new_value)


_user_contexts: list = []


def make_user_context(default_value=None) -> UserConfig:
    """A new context that jit's caches are keyed on: `ctx = make_user_context()`, then
    `with ctx(1): f(x)` and `with ctx(2): f(x)` trace `f` separately. Values must be hashable."""
    return UserConfig(default_value)
