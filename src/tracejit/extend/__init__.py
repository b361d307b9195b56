"""`tracejit.extend` (`jax.extend`): what libraries built on tracejit read of its internals;
for now `extend.core`, the objects of jaxprs and primitives."""

from tracejit.extend import core  # noqa: F401
