"""`tracejit.ad_checkpoint` (`jax.ad_checkpoint`): naming values for checkpoint policies."""

from tracejit._src.checkpoint import (  # noqa: F401
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
)
