"""`tracejit.interpreters.batching` (`jax.interpreters.batching`): the batching rule registries
(contracts in `tracejit._src.interpreters.batching`); a batch dim of None is `not_mapped`."""

from tracejit._src.interpreters.batching import BatchTrace, BatchTracer  # noqa: F401
from tracejit._src.interpreters.batching import batch_rules as primitive_batchers  # noqa: F401
from tracejit._src.interpreters.registration import axis_primitive_batchers  # noqa: F401

not_mapped = None
