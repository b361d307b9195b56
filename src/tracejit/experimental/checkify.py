"""`tracejit.experimental.checkify`, as `jax.experimental.checkify`: run-time checks as values."""

from tracejit._src import checkify_rules as _rules  # noqa: F401  (the rules checkify applies)
from tracejit._src.checkify import (
    Error,
    ErrorCategory,
    JaxRuntimeError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    index_checks,
    init_error,
    nan_checks,
    user_checks,
)

__all__ = [
    "Error",
    "ErrorCategory",
    "JaxRuntimeError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]
