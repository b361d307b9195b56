"""`tracejit.interpreters.ad` (`jax.interpreters.ad`): the JVP and transpose rule registries,
symbolic zeros and undefined primals (contracts in `tracejit._src.interpreters.ad`)."""

from tracejit._src.interpreters.ad import (  # noqa: F401
    JVPTrace,
    JVPTracer,
    Zero,
    add_tangents,
    instantiate_zeros,
    zeros_like_aval,
)
from tracejit._src.interpreters.ad import jvp_rules as primitive_jvps  # noqa: F401
from tracejit._src.interpreters.ad import transpose_rules as primitive_transposes  # noqa: F401
from tracejit._src.interpreters.transpose import (  # noqa: F401
    UndefinedPrimal,
    is_undefined_primal,
)
