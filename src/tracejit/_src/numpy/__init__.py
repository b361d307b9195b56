"""The implementation of `tracejit.numpy`; importing it attaches the array operators."""

from tracejit._src.numpy import array_methods  # noqa: F401  (attaches operators and methods)
