"""Testing helpers (`jax.test_util`)."""

from tracejit._src.test_util import check_grads, check_jvp, check_vjp  # noqa: F401
