"""`tracejit.extend.core` (`jax.extend.core`): primitives and the objects jaxprs are made of,
with the attributes libraries read (`closed.jaxpr.eqns`, `eqn.primitive.name`, `eqn.params`,
`eqn.invars`, `var.aval`, `closed.consts`, `closed.in_avals`, ...)."""

from tracejit._src.core import (  # noqa: F401
    Primitive,
    find_top_trace,
    get_opaque_trace_state,
    mapped_aval,
    unmapped_aval,
)
from tracejit._src.errors import InconclusiveDimensionOperation, JaxprTypeError  # noqa: F401
from tracejit._src.jaxpr import (  # noqa: F401
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    check_jaxpr,
    jaxpr_as_fun,
    jaxprs_in_params,
)
